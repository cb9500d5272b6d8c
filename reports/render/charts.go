package render

import (
	"cmp"
	"html/template"
	"slices"
	"strconv"
	"strings"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// chart is one figure of the HTML report.
type chart struct {
	Title, Caption string
	SVG            template.HTML
}

// Limits on what a chart draws.
const (
	chartFlows = 5   // flows in the throughput chart
	maxPoints  = 600 // points per line
	maxBars    = 300 // bars per series
)

// throughputCaption is the caption of the throughput chart of n top
// flows: fewer than chartFlows are every flow of the capture.
func throughputCaption(n int) string {
	switch {
	case n == 1:
		return "Mean rate per time bin of the capture's one flow."
	case n > 1 && n < chartFlows:
		return "Mean rate per time bin of the capture's " + strconv.Itoa(n) + " flows."
	}
	return "Mean rate per time bin of the " + strconv.Itoa(chartFlows) + " flows with the most bytes."
}

// charts draws the three charts of the HTML report.
func charts(r *reports.Report) []chart {
	cs := []chart{
		{"Throughput of the top flows", throughputCaption(chartFlows), ""},
		{"Congestion signals", "ECN CE-marked RoCE packets (bars) and CNPs (line) per second.", ""},
		{"Retransmission events", "Retransmitted packets and PSN gaps per time bin, each lane on its own scale.", ""},
	}
	tl := r.Timeline
	if tl == nil {
		// Only a report not made from packets has none: rocedump merge's,
		// whose JSON reports carry no time bins. Saying "the capture has
		// none" would contradict its findings' counts.
		const why = "No data: a merged report has no time series (each mirror's own report has them)."
		cs[0].SVG = emptyChart("Throughput over time of the top flows", bgThroughput, why)
		cs[1].SVG = emptyChart("CNPs and ECN CE marks over time", bgCongestion, why)
		cs[2].SVG = emptyChart("Retransmission events over time", bgEvents, why)
		return cs
	}
	cs[0].SVG, cs[0].Caption = throughputChart(tl, r.FlowRecords())
	cs[1].SVG = congestionChart(tl)
	cs[2].SVG = eventsChart(tl)
	return cs
}

// topFlows ranks the flows for the throughput chart: every flow of the
// report by bytes, ties by ID (a flow with a series but no record, as a
// test makes, by its series), and returns the first chartFlows with their
// records. Only the first reports.SeriesFlows flows of a capture have a
// series: the top flows can be later ones, which the chart cannot draw.
func topFlows(tl *reports.Timeline, rs flowtable.Source) (ids []int, recs map[int]flowtable.Record) {
	recs = map[int]flowtable.Record{}
	score := map[int]float64{}
	for _, r := range rs.TopByBytes(chartFlows) {
		recs[r.ID], score[r.ID] = r, float64(r.Bytes)
		ids = append(ids, r.ID)
	}
	recorded := map[int]bool{}
	for r := range rs.Rows() {
		if _, ok := tl.FlowBits[r.ID]; ok {
			recorded[r.ID] = true
		}
	}
	for id, s := range tl.FlowBits {
		if recorded[id] {
			continue
		}
		if b, ok := bin(s, len(s.Bins)+1); ok {
			score[id] = b.total() / 8
		}
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b int) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return ids[:min(len(ids), chartFlows)], recs
}

// throughputChart draws the top flows and returns the chart's caption,
// which names the top flows that have no series.
func throughputChart(tl *reports.Timeline, rs flowtable.Source) (template.HTML, string) {
	ids, recs := topFlows(tl, rs)
	type line struct {
		b     binned
		label string
		color string
	}
	var lines []line
	var bs []binned
	var missing []string
	for _, id := range ids {
		label := "#" + strconv.Itoa(id)
		if r, ok := recs[id]; ok {
			label = flowLabel(r) + " · " + flowtable.HumanBytes(r.Bytes)
		}
		s, ok := tl.FlowBits[id]
		if !ok {
			missing = append(missing, label)
			continue
		}
		b, ok := bin(s, maxPoints)
		if !ok {
			continue
		}
		lines = append(lines, line{b, label, flowColor(len(lines))})
		bs = append(bs, b)
	}
	caption := throughputCaption(len(ids))
	if len(missing) > 0 {
		caption += " Not drawn, having no series of their own (only the first " + strconv.Itoa(reports.SeriesFlows) +
			" flows of a capture get one): " + strings.Join(missing, "; ") + "."
	}
	// All RoCE traffic, in a lane of its own above the flows (on their
	// scale it would flatten them): what the top flows are a part of, and
	// the only line when none of them has a series.
	all, okAll := bin(tl.RoCEBits, maxPoints)
	okAll = okAll && all.total() > 0
	if len(lines) == 0 && !okAll {
		return emptyChart("Throughput over time of the top flows", bgThroughput, "No data: the capture has no per-flow time series."), caption
	}
	if okAll {
		bs = append(bs, all)
	}
	const laneTop, laneH, gap, h = 30.0, 70.0, 44.0, 250.0
	top := 16.0
	if okAll {
		top = laneTop + laneH + gap
	}
	legendY := top + h + 66
	rows := (len(lines) + 1) / 2
	height := legendY + float64(rows)*22
	if rows == 0 {
		height = legendY - 16 // no legend: the time axis's title is the last line
	}
	var s svg
	s.open(chartW, height, "Throughput over time of the top flows")
	sp := spanOf(bs)
	if okAll {
		lp := newPlot(&s, laneTop, laneH, sp, bgThroughput)
		peak := 0.0
		for i := range all.sum {
			peak = max(peak, all.perSecond(i))
		}
		s.text(lp.x, laneTop-8, "start", "lane", "All RoCE traffic: "+flowtable.HumanBytes(uint64(min(all.total()/8, 1e19)))+", at most "+flowtable.HumanRate(peak))
		s.text(lp.x-8, laneTop+laneH+4, "end", "tick", "0")
		s.text(lp.x-8, laneTop+4, "end", "tick", flowtable.HumanRate(peak))
		s.line(lp.x, laneTop, lp.x+lp.w, laneTop, gridColor, 1)
		pts := linePoints(lp, all, peak)
		s.polyline(pts, colorAllRoCE, "All RoCE traffic")
		if len(all.sum) <= 60 { // a line of one point is not seen
			for j := 0; j < len(pts); j += 2 {
				s.circle(pts[j], pts[j+1], 3.5, colorAllRoCE)
			}
		}
	}
	p := newPlot(&s, top, h, sp, bgThroughput)
	peak := 0.0
	for _, l := range lines {
		for i := range l.b.sum {
			peak = max(peak, l.b.perSecond(i))
		}
	}
	sc := yScale(peak)
	if len(lines) == 0 {
		p.noData("No top flow has a series of its own: see the caption.")
	} else {
		p.valueAxis(sc, rateUnits().labeler(sc), p.y, p.h)
	}
	p.timeAxis()
	for i, l := range lines {
		pts := linePoints(p, l.b, sc.Top)
		s.polyline(pts, l.color, l.label)
		if len(l.b.sum) <= 60 {
			for j := 0; j < len(pts); j += 2 {
				s.circle(pts[j], pts[j+1], 3.5, l.color)
			}
		}
		legend(&s, plotLeft+float64(i%2)*(plotW/2), legendY+float64(i/2)*22, l.color, l.label, false)
	}
	return s.close(), caption
}

// linePoints are the points of b's rate per bin in p, at the middle of
// each bin, on a scale to top.
func linePoints(p plot, b binned, top float64) []float64 {
	pts := make([]float64, 0, 2*len(b.sum))
	for j := range b.sum {
		mid := b.start.Add(b.width*timeMul(j) + b.widthOf(j)/2)
		pts = append(pts, p.X(mid), p.Y(b.perSecond(j), top, p.y, p.h))
	}
	return pts
}

func congestionChart(tl *reports.Timeline) template.HTML {
	const top, h = 16.0, 220.0
	legendY := top + h + 66
	ce, okCE := bin(tl.CEMarks, maxBars)
	cnp, okCNP := bin(tl.CNPs, maxBars)
	var bs []binned
	if okCE {
		bs = append(bs, ce)
	}
	if okCNP {
		bs = append(bs, cnp)
	}
	if len(bs) == 0 {
		return emptyChart("CNPs and ECN CE marks over time", bgCongestion, "No data: the capture has no CNP or CE-mark time series.")
	}
	var s svg
	s.open(chartW, legendY+10, "CNPs and ECN CE marks over time")
	p := newPlot(&s, top, h, spanOf(bs), bgCongestion)
	peak := 0.0
	for _, b := range bs {
		for i := range b.sum {
			peak = max(peak, b.perSecond(i))
		}
	}
	sc := yScale(peak)
	p.valueAxis(sc, perSecond().labeler(sc), p.y, p.h)
	if peak == 0 {
		p.noData("none")
	}
	if okCE {
		p.bars(ce, sc.Top, p.y, p.h, colorCE, true)
	}
	if okCNP {
		pts := make([]float64, 0, 2*len(cnp.sum))
		for j := range cnp.sum {
			mid := cnp.start.Add(cnp.width*timeMul(j) + cnp.widthOf(j)/2)
			pts = append(pts, p.X(mid), p.Y(cnp.perSecond(j), sc.Top, p.y, p.h))
		}
		s.polyline(pts, colorCNP, "CNPs per second")
		if len(cnp.sum) <= 60 {
			for j := 0; j < len(pts); j += 2 {
				s.circle(pts[j], pts[j+1], 3.5, colorCNP)
			}
		}
	}
	p.timeAxis()
	legend(&s, plotLeft, legendY, colorCE, "CE-marked packets: "+total(ce, okCE), true)
	legend(&s, plotLeft+plotW/2, legendY, colorCNP, "CNPs: "+total(cnp, okCNP), false)
	return s.close()
}

func eventsChart(tl *reports.Timeline) template.HTML {
	const top, laneH, gap = 30.0, 90.0, 40.0
	h := 2*laneH + gap
	lanes := []struct {
		name  string
		s     reports.Series
		color string
	}{
		{"Retransmitted packets", tl.Retransmits, colorRetx},
		{"PSN gaps", tl.PSNGaps, colorPSNGap},
	}
	var bs []binned
	var ok [2]bool
	var b [2]binned
	for i, l := range lanes {
		if b[i], ok[i] = bin(l.s, maxBars); ok[i] {
			bs = append(bs, b[i])
		}
	}
	if len(bs) == 0 {
		return emptyChart("Retransmission events over time", bgEvents, "No data: the capture has no retransmission time series.")
	}
	var s svg
	s.open(chartW, top+h+50, "Retransmission events over time")
	sp := spanOf(bs)
	var p plot
	for i, l := range lanes {
		y := top + float64(i)*(laneH+gap)
		p = newPlot(&s, y, laneH, sp, bgEvents)
		title := l.name + ": " + total(b[i], ok[i])
		if peak := maxSum(b[i]); peak > 0 {
			title += ", at most " + number(peak) + " per " + flowtable.HumanDuration(b[i].width)
		}
		s.text(p.x, y-8, "start", "lane", title)
		if !ok[i] || b[i].total() == 0 {
			p.noData("none")
			continue
		}
		peak := maxSum(b[i])
		s.text(p.x-8, y+laneH+4, "end", "tick", "0")
		s.text(p.x-8, y+4, "end", "tick", number(peak))
		s.line(p.x, y, p.x+p.w, y, gridColor, 1)
		p.bars(b[i], peak, y, laneH, l.color, false)
	}
	p.y, p.h = top, h
	p.timeAxis()
	return s.close()
}

// bars draws one bar per non-zero bin of b, per second when rate is set,
// else the bin's sum, on a scale to top within y..y+h.
func (p plot) bars(b binned, top, y, h float64, color string, rate bool) {
	for i, v := range b.sum {
		if v == 0 {
			continue
		}
		if rate {
			v = b.perSecond(i)
		}
		t0 := b.start.Add(b.width * timeMul(i))
		x0, x1 := p.X(t0), p.X(t0.Add(b.widthOf(i)))
		if x1-x0 > 3 {
			x0, x1 = x0+0.5, x1-0.5 // a hairline between neighbours
		}
		x1 = max(x1, x0+1.5)
		py := p.Y(v, top, y, h)
		p.s.rect(x0, py, x1-x0, max(y+h-py, 1), color)
	}
}

func maxSum(b binned) float64 {
	m := 0.0
	for _, v := range b.sum {
		m = max(m, v)
	}
	return m
}

// total says how many events a series counts, or that it has none.
func total(b binned, ok bool) string {
	if !ok {
		return "no data"
	}
	return number(b.total()) + " total"
}
