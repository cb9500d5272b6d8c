package reports

import "time"

// Time bins of the Timeline. Bins start timelineFirstBin wide at the first
// frame of the capture. When a frame falls past timelineMaxBins bins, the
// bin width doubles and neighbouring bins merge in pairs (bin 2i and 2i+1
// become bin i), as often as needed, so a capture of any length ends with
// between timelineMaxBins/2 and timelineMaxBins bins (or fewer, for a
// capture shorter than timelineMaxBins × 1 µs). Every series, the
// per-flow ones included, is kept on the same bins.
const (
	timelineFirstBin = time.Microsecond
	timelineMaxBins  = 200
)

// maxFlowSeries caps the flows that get a throughput series: the first
// maxFlowSeries flows of the capture. A series holds only the bins from the
// flow's first packet to its last, at most timelineMaxBins × 8 bytes, so the
// per-flow series cost at most maxFlowSeries × 1.6 KB (6.4 MB); flows past
// the cap are still in RoCEBits but have no series of their own.
const maxFlowSeries = 4096

// timeline holds the whole-capture series in fixed arrays (no allocation
// per packet) and the bin geometry. Bins are timelineFirstBin << shift
// wide; index works in integer nanoseconds, so a packet costs a
// subtraction, a division by a constant and a shift.
type timeline struct {
	start   time.Time
	startNs int64 // start in Unix nanoseconds
	shift   uint  // bin width is timelineFirstBin << shift
	bin     time.Duration
	n       int // bins in use: highest index seen + 1

	roce, cnps, ce, retx, gaps [timelineMaxBins]float64
}

func (t *timeline) init(start time.Time) {
	t.start, t.startNs, t.bin = start, start.UnixNano(), timelineFirstBin
}

// index returns the bin of ts, widening the bins first if ts is past the
// last one. Frames before the start (slightly out of order) go to bin 0.
func (t *timeline) index(ts time.Time, s *collectorState) int {
	d := ts.UnixNano() - t.startNs
	if d < 0 {
		d = 0
	}
	us := d / int64(timelineFirstBin)
	i := us >> t.shift
	for i >= timelineMaxBins {
		t.widen(s)
		i = us >> t.shift
	}
	if int(i) >= t.n {
		t.n = int(i) + 1
	}
	return int(i)
}

// widen doubles the bin width, merging pairs of bins in every series.
func (t *timeline) widen(s *collectorState) {
	t.shift++
	t.bin *= 2
	for _, a := range t.all() {
		for i := range timelineMaxBins / 2 {
			a[i] = a[2*i] + a[2*i+1]
		}
		clear(a[timelineMaxBins/2:])
	}
	t.n = (t.n + 1) / 2
	for i := range s.series {
		s.series[i].halve()
	}
}

// all lists the whole-capture series.
func (t *timeline) all() []*[timelineMaxBins]float64 {
	return []*[timelineMaxBins]float64{&t.roce, &t.cnps, &t.ce, &t.retx, &t.gaps}
}

// export copies the series out, each t.n bins long; series are the
// per-flow series of flows 1, 2, ... (at most maxFlowSeries).
func (t *timeline) export(series []flowSeries) *Timeline {
	mk := func(a *[timelineMaxBins]float64) Series {
		return Series{Start: t.start, Bin: t.bin, Bins: append([]float64(nil), a[:t.n]...)}
	}
	tl := &Timeline{
		RoCEBits:    mk(&t.roce),
		CNPs:        mk(&t.cnps),
		CEMarks:     mk(&t.ce),
		Retransmits: mk(&t.retx),
		PSNGaps:     mk(&t.gaps),
		FlowBits:    map[int]Series{},
	}
	if t.bin == 0 { // nothing was added
		tl.RoCEBits.Bin = timelineFirstBin
		tl.CNPs.Bin, tl.CEMarks.Bin, tl.Retransmits.Bin, tl.PSNGaps.Bin = timelineFirstBin, timelineFirstBin, timelineFirstBin, timelineFirstBin
	}
	for i := range series {
		fs := &series[i]
		if len(fs.bits) == 0 {
			continue
		}
		bins := make([]float64, t.n)
		for j, v := range fs.bits {
			if k := fs.off + j; k < t.n {
				bins[k] = float64(v)
			}
		}
		tl.FlowBits[i+1] = Series{Start: t.start, Bin: t.bin, Bins: bins}
	}
	return tl
}

// flowSeries is one flow's bits per bin, from bin off on.
type flowSeries struct {
	off  int
	bits []uint64
}

func (s *flowSeries) add(bin int, bits uint64) {
	if len(s.bits) == 0 {
		s.off = bin
	}
	i := max(bin-s.off, 0) // a frame slightly out of order counts in the first bin
	for len(s.bits) <= i {
		s.bits = append(s.bits, 0)
	}
	s.bits[i] += bits
}

// halve merges pairs of bins in place: absolute bin b becomes b/2.
func (s *flowSeries) halve() {
	off := s.off / 2
	out := s.bits[:0]
	for i, v := range s.bits {
		j := (s.off+i)/2 - off
		if j == len(out) {
			out = append(out, v)
		} else {
			out[j] += v
		}
	}
	s.off, s.bits = off, out
}
