package reports

import (
	"math"
	"time"
)

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
// maxFlowSeries flows of the capture. A series is a row of timelineMaxBins
// × 8 bytes (see flowRows), so the per-flow series cost at most
// maxFlowSeries × 1600 bytes (6.5 MB), allocated seriesChunkFlows rows at
// a time as flows get packets; flows past the cap are still in RoCEBits
// but have no series of their own.
const maxFlowSeries = 4096

// SeriesFlows is how many flows of a pass get a throughput series of their
// own: the first ones, in the order they appear.
const SeriesFlows = maxFlowSeries

// CloseSeries tells the Collector of one shard of a pass (see
// MergeShards) that none of the flows it has yet to see can be among the
// pass's first SeriesFlows: the flows of every shard that appeared before
// its next frame already number that many. They then get no series row,
// which MergeShards would drop (up to 6.5 MB a shard). It changes no
// result; a Collector that is the whole pass needs no such call.
func (c *Collector) CloseSeries() {
	s := &c.c
	if !s.seriesClosed {
		s.seriesClosed, s.seriesEnd = true, c.Table.Len()
	}
}

// SeriesRows is how many flows have a series row: what the series cost,
// for tests.
func (c *Collector) SeriesRows() int {
	n := 0
	for i := range maxFlowSeries {
		if _, off := c.c.series.at(i); off >= 0 {
			n++
		}
	}
	return n
}

// FlowCount is the number of flows the Collector's table holds.
func (c *Collector) FlowCount() int { return c.Table.Len() }

// keepsSeries says whether flow ID id gets a series.
func (s *collectorState) keepsSeries(id int) bool {
	return id <= maxFlowSeries && (!s.seriesClosed || id <= s.seriesEnd)
}

// timeline holds the whole-capture series in fixed arrays (no allocation
// per packet) and the bin geometry. Bins are timelineFirstBin << shift
// wide; index works in integer nanoseconds (a subtraction, a division by a
// constant and a shift), and binAt remembers the span of the last bin it
// gave, where most frames fall: a frame in it costs two compares.
type timeline struct {
	start   time.Time
	startNs int64 // start in Unix nanoseconds
	shift   uint  // bin width is timelineFirstBin << shift
	bin     time.Duration
	n       int // bins in use: highest index seen + 1

	// cur is the bin of the frames at curLo up to but excluding curHi,
	// a bin in use (below n) that binOf returned last; curLo == curHi
	// (none) until then and after widen.
	cur          int
	curLo, curHi int64

	// roce is the RoCE bits, as integers like the per-flow series
	// (flowRows): a frame adds them with a shift and an add, not a
	// conversion, a multiplication and a float add.
	roce                 [timelineMaxBins]uint64
	cnps, ce, retx, gaps [timelineMaxBins]float64
}

// init starts the bins at start, of flows.TimeNanos startNs.
func (t *timeline) init(start time.Time, startNs int64) {
	t.start, t.startNs, t.bin = start, startNs, timelineFirstBin
}

// binAt returns the bin of a frame at ns (flows.FrameAt.Nanos), as index
// does: the bin binOf gave last when ns is in its span (cur), else binOf's.
// Small enough to inline.
func (t *timeline) binAt(ns int64, s *collectorState) int {
	if ns >= t.curLo && ns < t.curHi {
		return t.cur
	}
	return t.binOf(ns, s)
}

// binOf is index, which it remembers in cur, curLo and curHi for binAt
// when ns is not before the start (those go to bin 0, a bin of other
// frames too).
func (t *timeline) binOf(ns int64, s *collectorState) int {
	i := t.index(ns, s)
	if ns >= t.startNs {
		// ns-startNs did not wrap (index widened the bins until i was in
		// range): the frames of bin i are the bin's width from its start,
		// which is at or before ns.
		w := int64(t.bin)
		lo := t.startNs + int64(i)*w
		hi := lo + w
		if hi < lo {
			hi = math.MaxInt64 // past the int64 range: the last nanosecond is not taken
		}
		t.cur, t.curLo, t.curHi = i, lo, hi
	}
	return i
}

// index returns the bin of a frame at ns (flows.FrameAt.Nanos), widening
// the bins first if it is past the last one. Frames before the start
// (slightly out of order) go to bin 0.
func (t *timeline) index(ns int64, s *collectorState) int {
	d := ns - t.startNs
	if d < 0 || ns < t.startNs {
		d = 0 // before the start, or so far after it that d wrapped
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
	t.curLo, t.curHi = 0, 0 // binAt's bin is of the old width
	t.shift++
	t.bin *= 2
	for _, a := range t.all() {
		for i := range timelineMaxBins / 2 {
			a[i] = a[2*i] + a[2*i+1]
		}
		clear(a[timelineMaxBins/2:])
	}
	for i := range timelineMaxBins / 2 {
		t.roce[i] = t.roce[2*i] + t.roce[2*i+1]
	}
	clear(t.roce[timelineMaxBins/2:])
	s.series.halve(t.n)
	t.n = (t.n + 1) / 2
}

// all lists the whole-capture series but roce.
func (t *timeline) all() []*[timelineMaxBins]float64 {
	return []*[timelineMaxBins]float64{&t.cnps, &t.ce, &t.retx, &t.gaps}
}

// export copies the series out, each t.n bins long, with a per-flow series
// for each of the first maxFlowSeries flows that had a packet.
func (t *timeline) export(series *flowRows) *Timeline {
	mk := func(a *[timelineMaxBins]float64) Series {
		return Series{Start: t.start, Bin: t.bin, Bins: append([]float64(nil), a[:t.n]...)}
	}
	var roce []float64 // nil for no bins, as mk's
	for _, b := range t.roce[:t.n] {
		roce = append(roce, float64(b))
	}
	tl := &Timeline{
		RoCEBits:    Series{Start: t.start, Bin: t.bin, Bins: roce},
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
	for i := range maxFlowSeries {
		row, off := series.at(i)
		if off < 0 {
			continue
		}
		bins := make([]float64, t.n)
		for k := off; k < t.n; k++ {
			bins[k] = float64(row[k])
		}
		tl.FlowBits[i+1] = Series{Start: t.start, Bin: t.bin, Bins: bins}
	}
	return tl
}

// seriesChunkFlows is how many flows' rows are allocated together, when
// the first of them gets a packet: 64 rows of timelineMaxBins × 8 bytes,
// 100 KB.
const seriesChunkFlows = 64

// flowRows are the throughput series of the first maxFlowSeries flows: a
// fixed row of timelineMaxBins counters per flow, indexed by absolute bin.
// The counter a packet adds to is then at an address computed from its
// flow's index and its bin alone, which the look-ahead can prefetch (see
// Collector.PrefetchFlow); with a growing slice per flow it would be behind
// a header that has to be loaded first, at another random place.
type flowRows struct {
	chunks [maxFlowSeries / seriesChunkFlows]*seriesChunk // flow index i in chunks[i/seriesChunkFlows]
}

// seriesChunk holds the rows of seriesChunkFlows consecutive flows. off is
// each flow's first bin, that of its first packet, or -1 before it: the
// series starts there, and a frame slightly out of order (before off)
// counts in bin off. Every packet so far is in a bin below the timeline's
// n, so off is too.
type seriesChunk struct {
	off  [seriesChunkFlows]int16
	rows [seriesChunkFlows][timelineMaxBins]uint64
}

// chunk returns the chunk of flow index i, allocating it on first use.
func (r *flowRows) chunk(i int) *seriesChunk {
	c := r.chunks[i/seriesChunkFlows]
	if c == nil {
		c = &seriesChunk{}
		for j := range c.off {
			c.off[j] = -1
		}
		r.chunks[i/seriesChunkFlows] = c
	}
	return c
}

// at returns the row of flow index i and its first bin, -1 (and no row)
// for a flow without packets.
func (r *flowRows) at(i int) (*[timelineMaxBins]uint64, int) {
	c := r.chunks[i/seriesChunkFlows]
	if c == nil || c.off[i%seriesChunkFlows] < 0 {
		return nil, -1
	}
	return &c.rows[i%seriesChunkFlows], int(c.off[i%seriesChunkFlows])
}

// add counts bits in bin for flow index i, below maxFlowSeries.
func (r *flowRows) add(i, bin int, bits uint64) {
	c := r.chunk(i)
	j := i % seriesChunkFlows
	if c.off[j] < 0 {
		c.off[j] = int16(bin)
	}
	c.rows[j][max(bin, int(c.off[j]))] += bits
}

// put sets the row and first bin of flow index i: MergeShards copies a
// shard's series to the flow's index in the merged pass.
func (r *flowRows) put(i int, row *[timelineMaxBins]uint64, off int) {
	c := r.chunk(i)
	c.off[i%seriesChunkFlows], c.rows[i%seriesChunkFlows] = int16(off), *row
}

// halve merges pairs of bins in every row, absolute bin b becoming b/2,
// for timeline.widen. n is the timeline's bins in use before: no row
// counts past it.
func (r *flowRows) halve(n int) {
	for _, c := range r.chunks {
		if c == nil {
			continue
		}
		for j := range c.rows {
			if c.off[j] < 0 {
				continue
			}
			row := &c.rows[j]
			for b := int(c.off[j]) / 2; b < (n+1)/2; b++ {
				row[b] = row[2*b] + row[2*b+1]
			}
			clear(row[(n+1)/2 : n])
			c.off[j] /= 2
		}
	}
}
