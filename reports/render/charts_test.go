package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// TestChartsEdgeCases draws each chart from series that are empty, one bin
// long, huge or not numbers at all, and checks what is drawn.
func TestChartsEdgeCases(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	one := func(v float64) reports.Series {
		return reports.Series{Start: start, Bin: time.Millisecond, Bins: []float64{v}}
	}
	many := func(n int, v float64) reports.Series {
		s := reports.Series{Start: start, Bin: time.Microsecond, Bins: make([]float64, n)}
		for i := range s.Bins {
			s.Bins[i] = v * float64(i%7)
		}
		return s
	}
	recs := []flowtable.Record{{ID: 1, Src: "10.0.0.1", Dst: "10.0.0.2", Bytes: 10}}
	tests := []struct {
		name string
		tl   *reports.Timeline
		want []string // in every chart, in order: throughput, congestion, events
		not  []string // in no chart
	}{
		{
			name: "nil timeline (a merged report)",
			tl:   nil,
			want: []string{"No data: a merged report has no time series", "No data: a merged report has no time series", "No data: a merged report has no time series"},
			not:  []string{"the capture has no"},
		},
		{
			name: "empty timeline",
			tl:   &reports.Timeline{},
			want: []string{"No data: the capture has no per-flow", "No data: the capture has no CNP", "No data: the capture has no retransmission"},
		},
		{
			name: "series without bins or bin width",
			tl: &reports.Timeline{FlowBits: map[int]reports.Series{1: {Start: start, Bins: []float64{5}}},
				CNPs: reports.Series{Start: start, Bin: time.Second}, Retransmits: reports.Series{Bins: []float64{1}}},
			want: []string{"No data", "No data", "No data"},
		},
		{
			name: "one bin",
			tl:   &reports.Timeline{FlowBits: map[int]reports.Series{1: one(8e6)}, CNPs: one(3), CEMarks: one(4), Retransmits: one(2), PSNGaps: one(0)},
			want: []string{`<circle cx="592.0"`, `<circle cx="592.0"`, "PSN gaps: 0 total"},
			not:  []string{"No data"},
		},
		{
			name: "huge values",
			tl:   &reports.Timeline{FlowBits: map[int]reports.Series{1: one(1e300), 2: one(math.MaxFloat64)}, CNPs: one(1e200), Retransmits: one(1e18)},
			want: []string{"Ebps", "E/s", "at most 1e+18 per 1.00 ms"},
		},
		{
			name: "not numbers",
			tl: &reports.Timeline{FlowBits: map[int]reports.Series{1: {Start: start, Bin: time.Millisecond, Bins: []float64{math.NaN(), math.Inf(1), -5, 8000}}},
				CEMarks: reports.Series{Start: start, Bin: time.Millisecond, Bins: []float64{math.Inf(-1), 2}}},
			want: []string{"8 Mbps", "2.0k/s", "No data: the capture has no retransmission"},
		},
		{
			name: "many bins are merged",
			tl:   &reports.Timeline{FlowBits: map[int]reports.Series{1: many(100000, 1)}, CEMarks: many(100000, 1), Retransmits: many(100000, 1)},
			want: []string{"ms)", "</svg>", "per 334 µs"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &reports.Report{Flows: recs, Timeline: tc.tl}
			cs := charts(r)
			for i, c := range cs {
				svg := string(c.SVG)
				if !strings.Contains(svg, tc.want[i]) {
					t.Errorf("%s chart lacks %q:\n%s", c.Title, tc.want[i], svg)
				}
				for _, bad := range append(tc.not, "NaN", "Inf") {
					if strings.Contains(svg, bad) {
						t.Errorf("%s chart contains %q", c.Title, bad)
					}
				}
				if !inText(svg, "e+") {
					t.Errorf("%s chart has a coordinate in exponent form", c.Title)
				}
				if len(svg) > 200_000 {
					t.Errorf("%s chart is %d bytes; bins should have been merged", c.Title, len(svg))
				}
			}
		})
	}
}

// inText reports whether every occurrence of s is in a text element, not
// a coordinate.
func inText(svg, s string) bool {
	for _, l := range strings.Split(svg, "\n") {
		if strings.Contains(l, s) && !strings.HasPrefix(l, "<text") && !strings.Contains(l, "<title>") {
			return false
		}
	}
	return true
}

func TestYScale(t *testing.T) {
	tests := []struct {
		max       float64
		top, step float64
		labels    string
	}{
		{0, 1, 0.5, "0 0.5/s 1.0/s"},
		{7, 8, 2, "0 2/s 4/s 6/s 8/s"},
		{380e9, 400e9, 100e9, "0 100 Gbps 200 Gbps 300 Gbps 400 Gbps"},
		{0.3, 0.3, 0.1, "0 0.1/s 0.2/s 0.3/s"},
		{12500, 15000, 5000, "0 5k/s 10k/s 15k/s"},
	}
	for _, tc := range tests {
		sc := yScale(tc.max)
		if math.Abs(sc.Top-tc.top) > 1e-9*tc.top || math.Abs(sc.Step-tc.step) > 1e-9*tc.step {
			t.Errorf("yScale(%v) = %+v, want top %v step %v", tc.max, sc, tc.top, tc.step)
		}
		u := perSecond()
		if strings.Contains(tc.labels, "bps") {
			u = rateUnits()
		}
		l := u.labeler(sc)
		var got []string
		for _, v := range sc.ticks() {
			got = append(got, l.label(v))
		}
		if g := strings.Join(got, " "); g != tc.labels {
			t.Errorf("labels for max %v = %q, want %q", tc.max, g, tc.labels)
		}
	}
}

// TestTimeAxisUnits checks that the time axis picks a unit that keeps its
// tick labels short, from a capture one packet long to one over a year.
func TestTimeAxisUnits(t *testing.T) {
	from := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		span       time.Duration
		unit       string
		ticks, not []string
	}{
		{time.Microsecond, "(µs)", []string{">0.0 µs<", ">0.2 µs<", ">1.0 µs<"}, []string{"ms<"}},
		{300 * time.Microsecond, "(µs)", []string{">0 µs<", ">50 µs<", ">300 µs<"}, nil},
		{20 * time.Millisecond, "(ms)", []string{">0 ms<", ">5 ms<", ">20 ms<"}, nil},
		{2 * time.Second, "(s)", []string{">0.0 s<", ">0.5 s<", ">2.0 s<"}, nil},
		{40 * time.Minute, "(min)", []string{">0 min<", ">5 min<", ">40 min<"}, nil},
		{72 * time.Hour, "(h)", []string{">0 h<", ">10 h<", ">70 h<"}, []string{"000 s<"}},
		{400 * 24 * time.Hour, "(d)", []string{">0 d<", ">100 d<", ">400 d<"}, []string{"000 s<"}},
	}
	for _, tc := range tests {
		var s svg
		s.open(chartW, 300, "test")
		newPlot(&s, 8, 250, span{from, from.Add(tc.span)}, bgThroughput).timeAxis()
		got := string(s.close())
		for _, w := range append([]string{"time since 2025-01-02T03:04:05.000000000Z " + tc.unit}, tc.ticks...) {
			if !strings.Contains(got, w) {
				t.Errorf("span %v: axis lacks %q:\n%s", tc.span, w, got)
			}
		}
		for _, bad := range tc.not {
			if strings.Contains(got, bad) {
				t.Errorf("span %v: axis has %q", tc.span, bad)
			}
		}
	}
}

// TestThroughputChartRanksAllFlows checks that the throughput chart draws
// the flows with the most bytes of the whole report, not the most among
// those that have a series (the first reports.SeriesFlows of a capture),
// and that its caption names the top flows it cannot draw.
func TestThroughputChartRanksAllFlows(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	n := reports.SeriesFlows + 3
	var recs []flowtable.Record
	tl := &reports.Timeline{FlowBits: map[int]reports.Series{}}
	for id := 1; id <= n; id++ {
		r := flowtable.Record{ID: id, Src: "10.0.0.1", Dst: "10.0.0.2", DestQPN: uint32(id), Bytes: uint64(1000 + id%7)}
		if id > reports.SeriesFlows {
			r.Bytes = uint64(1e9 * (id - reports.SeriesFlows)) // the three heaviest came last: no series
		} else {
			tl.FlowBits[id] = reports.Series{Start: start, Bin: time.Millisecond, Bins: []float64{8 * float64(r.Bytes)}}
		}
		recs = append(recs, r)
	}
	tl.RoCEBits = reports.Series{Start: start, Bin: time.Millisecond, Bins: []float64{8 * 6.01e9}}
	// Flows 6 and 13 tie with 4095 at 1006 bytes, the most among those
	// with a series: the top five are 4099, 4098, 4097, 6 and 13.
	r := &reports.Report{Flows: recs, Timeline: tl}
	c := charts(r)[0]
	svg := string(c.SVG)
	for _, id := range []string{"#6 ", "#13 "} {
		if !strings.Contains(svg, "<title>"+id) {
			t.Errorf("chart lacks flow %s, one of the top 5 by bytes", id)
		}
	}
	if got := strings.Count(svg, "<polyline"); got != 3 {
		t.Errorf("chart draws %d lines, want 3 (the top flows with a series and all RoCE traffic)", got)
	}
	for _, id := range []string{"#4099 ", "#4098 ", "#4097 "} {
		if !strings.Contains(c.Caption, id) {
			t.Errorf("caption does not name top flow %s, which has no series: %q", id, c.Caption)
		}
	}
	if !strings.Contains(c.Caption, "first "+strconv.Itoa(reports.SeriesFlows)+" flows") {
		t.Errorf("caption does not say why: %q", c.Caption)
	}
	if !strings.Contains(svg, "All RoCE traffic: 6.01 GB, at most 48.1 Tbps") {
		t.Errorf("chart lacks the lane of all RoCE traffic:\n%s", svg)
	}
	if !strings.Contains(svg, `r="3.5" fill="`+colorAllRoCE+`"`) {
		t.Errorf("the lane's one bin has no dot: a line of one point is not seen")
	}

	// None of the top five has a series: the lane of all RoCE traffic is
	// still drawn, and the plot of the flows says why it is empty. Of
	// flows 4091-4099, the top five are 4099, 4098, 4097, 4094 and 4093.
	tl.FlowBits = map[int]reports.Series{4091: tl.FlowBits[4091], 4092: tl.FlowBits[4092], 4095: tl.FlowBits[4095], 4096: tl.FlowBits[4096]}
	c = charts(&reports.Report{Flows: recs[4090:], Timeline: tl})[0]
	svg = string(c.SVG)
	if strings.Contains(svg, "No data") || !strings.Contains(svg, "All RoCE traffic") || !strings.Contains(svg, "No top flow has a series") {
		t.Errorf("chart with no top flow drawn:\n%s", svg)
	}
	// Without a legend, the chart ends below the time axis's title, with
	// no empty legend row under it.
	var w, h, titleY float64
	if _, err := fmt.Sscanf(svg[strings.Index(svg, "viewBox="):], `viewBox="0 0 %g %g"`, &w, &h); err != nil {
		t.Fatalf("viewBox: %v", err)
	}
	title := svg[:strings.Index(svg, ">time since ")]
	if _, err := fmt.Sscanf(title[strings.LastIndex(title, ` y="`):], ` y="%g"`, &titleY); err != nil {
		t.Fatalf("time axis title: %v", err)
	}
	if h-titleY > 20 || h < titleY+6 {
		t.Errorf("chart without a legend is %g high, its time axis title at y %g: want it to end 6-20 below", h, titleY)
	}
}

// TestThroughputCaptionFewFlows: a capture of fewer flows than the chart
// draws is not captioned as its "5 flows with the most bytes".
func TestThroughputCaptionFewFlows(t *testing.T) {
	for n, want := range map[int]string{
		1:              "Mean rate per time bin of the capture's one flow.",
		3:              "Mean rate per time bin of the capture's 3 flows.",
		chartFlows:     "Mean rate per time bin of the 5 flows with the most bytes.",
		chartFlows + 1: "Mean rate per time bin of the 5 flows with the most bytes.",
	} {
		if got := throughputCaption(n); got != want {
			t.Errorf("%d flows: %q, want %q", n, got, want)
		}
	}
}
