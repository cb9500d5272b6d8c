package render

import (
	"html/template"
	"math"
	"strconv"
	"time"
)

// Chart geometry, in SVG user units (the SVG scales to the page width).
const (
	chartW    = 1120.0
	plotLeft  = 88.0
	plotRight = 24.0
	plotW     = chartW - plotLeft - plotRight
)

// plot is the rectangle a chart draws its series in, over a time span.
type plot struct {
	s          *svg
	x, y, w, h float64
	span       span
}

// newPlot draws the plot background; bg is distinct per chart so that
// the screenshot test can find each plot.
func newPlot(s *svg, y, h float64, sp span, bg string) plot {
	p := plot{s: s, x: plotLeft, y: y, w: plotW, h: h, span: sp}
	s.rect(p.x, p.y, p.w, p.h, bg)
	return p
}

// X is the horizontal position of t, clamped to the plot.
func (p plot) X(t time.Time) float64 {
	d := p.span.seconds()
	if d <= 0 {
		return p.x
	}
	return p.x + p.w*math.Min(math.Max(p.span.offset(t)/d, 0), 1)
}

// Y is the vertical position of v on a scale to top, within y..y+h.
func (p plot) Y(v, top, y, h float64) float64 {
	return y + h - h*math.Min(math.Max(v/top, 0), 1)
}

// valueAxis draws horizontal grid lines and labels for sc over y..y+h.
func (p plot) valueAxis(sc scale, l labeler, y, h float64) {
	for _, v := range sc.ticks() {
		py := p.Y(v, sc.Top, y, h)
		p.s.line(p.x, py, p.x+p.w, py, gridColor, 1)
		p.s.text(p.x-8, py+4, "end", "tick", l.label(v))
	}
}

// timeAxis draws time ticks under the plot and the axis title.
func (p plot) timeAxis() {
	d := p.span.seconds()
	mul, unit := timeUnit(d)
	step := niceStep(d * mul / 8)
	places := decimals(step)
	base := p.y + p.h
	p.s.line(p.x, base, p.x+p.w, base, axisColor, 1)
	for i := 0; i <= 40; i++ {
		v := float64(i) * step
		if v > d*mul*(1+1e-9) {
			break
		}
		x := p.x + p.w*v/(d*mul)
		p.s.line(x, base, x, base+5, axisColor, 1)
		p.s.text(x, base+19, "middle", "tick", strconv.FormatFloat(v, 'f', places, 64)+" "+unit)
	}
	p.s.text(p.x+p.w/2, base+38, "middle", "axis", "time since "+stamp(p.span.from)+" ("+unit+")")
}

// timeUnit is the unit of a time axis over d seconds, and how many of it
// make a second: microseconds up to a millisecond, then milliseconds,
// seconds, minutes, hours and days, so that a capture one packet long or
// days long gets short tick labels ("0.2 µs", "10 h"), not "0.0002 ms"
// or "250000 s".
func timeUnit(d float64) (mul float64, unit string) {
	switch {
	case d < 1e-3:
		return 1e6, "µs"
	case d < 1:
		return 1e3, "ms"
	case d < 5*60:
		return 1, "s"
	case d < 5*3600:
		return 1.0 / 60, "min"
	case d < 10*86400:
		return 1.0 / 3600, "h"
	}
	return 1.0 / 86400, "d"
}

// noDataHeight is the height of a chart that has nothing to draw.
const noDataHeight = 120.0

// emptyChart is a chart with a blank plot and why it is blank.
func emptyChart(label, bg, why string) template.HTML {
	var s svg
	s.open(chartW, noDataHeight+16, label)
	p := newPlot(&s, 8, noDataHeight, span{}, bg)
	p.noData(why)
	return s.close()
}

// noData writes why a plot is empty in its middle.
func (p plot) noData(why string) {
	p.s.text(p.x+p.w/2, p.y+p.h/2+5, "middle", "nodata", why)
}

// legend draws a colour swatch and a label at (x, y).
func legend(s *svg, x, y float64, color, label string, bar bool) {
	if bar {
		s.rect(x, y-9, 14, 10, color)
	} else {
		s.line(x, y-4, x+18, y-4, color, 3)
	}
	s.text(x+24, y, "start", "legend", label)
}

// Colours of the charts. Series colours are the Okabe-Ito palette, which
// stays distinct for colour-blind readers.
const (
	gridColor = "#e4e7ec"
	axisColor = "#98a2b3"

	bgThroughput = "#f5f8fc"
	bgCongestion = "#f9f6fc"
	bgEvents     = "#fcf7f6"

	colorAllRoCE = "#8a8f98"
	colorCE      = "#e69f00"
	colorCNP     = "#6a3d9a"
	colorRetx    = "#c62828"
	colorPSNGap  = "#0072b2"
)

// flowColor draws the flow of rank i among the top flows.
func flowColor(i int) string {
	return [...]string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#56b4e9"}[i%5]
}
