package render

import (
	"math"
	"time"

	"github.com/rocedump/rocedump/reports"
)

// binned is a series made ready to draw: bins merged so that there are
// at most a given number, values made finite and non-negative.
type binned struct {
	start time.Time
	width time.Duration // of one merged bin
	sum   []float64     // per merged bin
	last  time.Duration // width of the last merged bin, which may be partial
}

// maxValue keeps sums finite and scales computable.
const maxValue = 1e300

// bin merges s to at most maxBins bins; ok is false when s has no bins
// or no bin width.
func bin(s reports.Series, maxBins int) (b binned, ok bool) {
	if len(s.Bins) == 0 || s.Bin <= 0 {
		return b, false
	}
	k := (len(s.Bins) + maxBins - 1) / maxBins
	b = binned{start: s.Start, width: s.Bin * time.Duration(k), sum: make([]float64, (len(s.Bins)+k-1)/k)}
	for i, v := range s.Bins {
		if !(v > 0) || math.IsInf(v, 0) {
			v = 0 // NaN, negative and infinite bins carry no drawable value
		}
		b.sum[i/k] = math.Min(b.sum[i/k]+math.Min(v, maxValue), maxValue)
	}
	b.last = s.Bin * time.Duration(len(s.Bins)-(len(b.sum)-1)*k)
	return b, true
}

// widthOf is the duration of merged bin i.
func (b binned) widthOf(i int) time.Duration {
	if i == len(b.sum)-1 {
		return b.last
	}
	return b.width
}

// perSecond is bin i's sum divided by its duration.
func (b binned) perSecond(i int) float64 { return b.sum[i] / b.widthOf(i).Seconds() }

// end is when the last bin ends.
func (b binned) end() time.Time {
	return b.start.Add(b.width*time.Duration(len(b.sum)-1) + b.last)
}

// total is the sum of all bins.
func (b binned) total() float64 {
	var t float64
	for _, v := range b.sum {
		t += v
	}
	return t
}

// span is the time range of a chart's series.
type span struct{ from, to time.Time }

func spanOf(bs []binned) span {
	var s span
	for i, b := range bs {
		if i == 0 || b.start.Before(s.from) {
			s.from = b.start
		}
		if i == 0 || b.end().After(s.to) {
			s.to = b.end()
		}
	}
	return s
}

// offset is t in seconds since the start of the span.
func (s span) offset(t time.Time) float64 { return t.Sub(s.from).Seconds() }

func (s span) seconds() float64 { return s.to.Sub(s.from).Seconds() }

// timeMul is i as a Duration multiplier.
func timeMul(i int) time.Duration { return time.Duration(i) }
