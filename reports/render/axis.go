package render

import (
	"math"
	"strconv"
	"strings"
)

// niceStep is a round step (1, 2 or 5 times a power of ten) near x.
func niceStep(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	switch m := x / p; {
	case m <= 1:
		return p
	case m <= 2:
		return 2 * p
	case m <= 5:
		return 5 * p
	}
	return 10 * p
}

// scale is a linear axis from 0 to Top in steps of Step.
type scale struct{ Top, Step float64 }

// yScale is a scale with about four steps that covers max.
func yScale(max float64) scale {
	if !(max > 0) {
		return scale{Top: 1, Step: 0.5}
	}
	step := niceStep(max / 4)
	return scale{Top: math.Ceil(max/step) * step, Step: step}
}

// ticks are the values 0, Step, ..., Top (at most 12).
func (s scale) ticks() []float64 {
	n := int(math.Round(s.Top / s.Step))
	n = min(max(n, 1), 12)
	out := make([]float64, n+1)
	for i := range out {
		out[i] = float64(i) * s.Top / float64(n)
	}
	return out
}

// units name a quantity at each power of 1000.
type units []string

// rateUnits are bits per second.
func rateUnits() units { return units{"bps", "Kbps", "Mbps", "Gbps", "Tbps", "Pbps", "Ebps"} }

// perSecond are events per second.
func perSecond() units { return units{"/s", "k/s", "M/s", "G/s", "T/s", "P/s", "E/s"} }

// labeler formats the tick labels of one scale with one unit for all.
type labeler struct {
	div      float64
	unit     string
	decimals int
	exp      bool // beyond the largest unit: exponent form
}

func (u units) labeler(s scale) labeler {
	i, div := 0, 1.0
	for i+1 < len(u) && s.Top/div >= 1000 {
		i, div = i+1, div*1000
	}
	return labeler{div: div, unit: u[i], exp: s.Top/div >= 1e6, decimals: decimals(s.Step / div)}
}

// decimals is how many decimal places show step exactly (at most 6).
func decimals(step float64) int {
	for d := 0; d < 6; d++ {
		v := step * math.Pow(10, float64(d))
		if math.Abs(v-math.Round(v)) < 1e-6*math.Max(1, v) {
			return d
		}
	}
	return 6
}

func (l labeler) label(v float64) string {
	var s string
	if l.exp {
		s = strconv.FormatFloat(v/l.div, 'g', 3, 64)
	} else {
		s = strconv.FormatFloat(v/l.div, 'f', l.decimals, 64)
	}
	if v == 0 {
		return "0"
	}
	if strings.Contains(l.unit, "/") { // 5k/s, 500/s
		return s + l.unit
	}
	return s + " " + l.unit
}
