package reports

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// oldFlowSeries is the per-flow series as it was before flowRows: a slice
// from the bin of the flow's first packet on, growing as bins come. It is
// the reference flowRows must match.
type oldFlowSeries struct {
	off  int
	bits []uint64
}

func (s *oldFlowSeries) add(bin int, bits uint64) {
	if len(s.bits) == 0 {
		s.off = bin
	}
	i := max(bin-s.off, 0)
	for len(s.bits) <= i {
		s.bits = append(s.bits, 0)
	}
	s.bits[i] += bits
}

func (s *oldFlowSeries) halve() {
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

// oldExport is the per-flow part of timeline.export over oldFlowSeries.
func oldExport(t *timeline, series []oldFlowSeries) map[int]Series {
	out := map[int]Series{}
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
		out[i+1] = Series{Start: t.start, Bin: t.bin, Bins: bins}
	}
	return out
}

// TestFlowRowsMatchOldSeries drives a real timeline with random frames of
// random flows (times spread from microseconds to seconds so the bins
// widen, some frames out of order, before their flow's first bin or before
// the start, some adding zero bits) and checks after every frame that the
// rows hold what the old per-flow slices held, absolute bin for absolute
// bin, and that the export is the same.
func TestFlowRowsMatchOldSeries(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for trial := range 40 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			var s collectorState
			s.tl.init(start, start.UnixNano())
			ref := make([]oldFlowSeries, maxFlowSeries)
			step := []int64{1, 3, 50, 1000, 100000}[trial%5]
			flowsIn := 1 + rng.IntN(300) // flows 0..flowsIn-1, plus a few at the end of the range
			var us int64
			shift := s.tl.shift
			for k := range 3000 {
				us += rng.Int64N(step + 1)
				ts := us
				if rng.IntN(8) == 0 {
					ts -= rng.Int64N(4*step + 2) // out of order; before the start now and then
				}
				bin := s.tl.index(start.Add(time.Duration(ts)*time.Microsecond).UnixNano(), &s)
				for ; shift < s.tl.shift; shift++ {
					for i := range ref {
						ref[i].halve()
					}
				}
				// New flows join as the capture goes on, so many have
				// their first bin past the frames out of order.
				i := rng.IntN(1 + flowsIn*k/3000)
				if rng.IntN(40) == 0 {
					i = maxFlowSeries - 1 - rng.IntN(2*seriesChunkFlows)
				}
				bits := uint64(rng.IntN(4)) * 8000
				s.series.add(i, bin, bits)
				ref[i].add(bin, bits)
				checkRow(t, &s, ref, i)
			}
			for i := range ref {
				checkRow(t, &s, ref, i)
			}
			if got, want := s.tl.export(&s.series).FlowBits, oldExport(&s.tl, ref); !reflect.DeepEqual(got, want) {
				t.Fatalf("export differs from the old series' (%d and %d flows)", len(got), len(want))
			}
		})
	}
}

// checkRow compares flow index i's row with the old series, and checks
// that its first bin is below the timeline's n (PrefetchFlow relies on it).
func checkRow(t *testing.T, s *collectorState, ref []oldFlowSeries, i int) {
	t.Helper()
	row, off := s.series.at(i)
	if len(ref[i].bits) == 0 {
		if off != -1 {
			t.Fatalf("flow %d: first bin %d without packets", i, off)
		}
		return
	}
	var want [timelineMaxBins]uint64
	copy(want[ref[i].off:], ref[i].bits)
	if off != ref[i].off || *row != want {
		t.Fatalf("flow %d: first bin %d, row %v; want %d, %v", i, off, row, ref[i].off, want)
	}
	if off >= s.tl.n {
		t.Fatalf("flow %d: first bin %d, past the %d bins in use", i, off, s.tl.n)
	}
}

// flowKey is the key PrefetchFlow takes for a RoCE packet over IPv4.
func flowKey(p *packet.Packet) (src, dst, qp uint32, ok bool) {
	if p.Kind != packet.KindRoCE || !p.HasBTH || !p.Src.Is4() || !p.Dst.Is4() {
		return 0, 0, 0, false
	}
	s, d := p.Src.As4(), p.Dst.As4()
	return binary.BigEndian.Uint32(s[:]), binary.BigEndian.Uint32(d[:]), p.BTH.DestQP, true
}

// TestPrefetchFlowChangesNothing feeds the same frames to two Collectors,
// one of them asked to prefetch every RoCE frame's flow a few frames ahead
// (as cli's look-ahead does) and for keys it does not hold, and checks
// that PrefetchFlow returns the table's flow index, allocates nothing and
// leaves every output as it is. The synthetic capture has more flows than
// get a series, so flows with a row and flows past the cap are both
// prefetched.
func TestPrefetchFlowChangesNothing(t *testing.T) {
	synthetic := func() ([]packet.Packet, []flows.FrameRef) {
		s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		var pkts []packet.Packet
		var refs []flows.FrameRef
		for k := range 3 * (maxFlowSeries + 200) {
			qp := uint32(k % (maxFlowSeries + 200))
			pkts = append(pkts, *roce("10.0.0.1", "10.0.0.2", qp, opWriteOnly, uint32(k), 26, 2))
			refs = append(refs, s.ref(float64(k)*7))
		}
		return pkts, refs
	}
	inputs := map[string]func() ([]packet.Packet, []flows.FrameRef){
		"synthetic": synthetic,
		"congestion": func() ([]packet.Packet, []flows.FrameRef) {
			return decodeAll(t, genCapture(t, "congestion"))
		},
	}
	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			pkts, refs := input()
			plain := NewCollector(flows.NewTable(flows.Config{}), Config{})
			hinted := NewCollector(flows.NewTable(flows.Config{}), Config{})
			const ahead = 4
			for i := range pkts {
				if j := i + ahead; j < len(pkts) {
					if src, dst, qp, ok := flowKey(&pkts[j]); ok {
						if got, want := hinted.PrefetchFlow(src, dst, qp).Index(), hinted.Table.PrefetchFlow(src, dst, qp).Index(); got != want {
							t.Fatalf("frame %d: PrefetchFlow = %d, table's %d", j, got, want)
						}
						if got := hinted.PrefetchFlow(src^1, dst, qp).Index(); got != -1 {
							t.Fatalf("frame %d: PrefetchFlow of an unknown key = %d", j, got)
						}
					}
				}
				plain.Add(&pkts[i], refs[i])
				hinted.Add(&pkts[i], refs[i])
			}
			allocs := testing.AllocsPerRun(5, func() {
				for i := range pkts {
					if src, dst, qp, ok := flowKey(&pkts[i]); ok {
						hinted.PrefetchFlow(src, dst, qp)
					}
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per pass of PrefetchFlow", allocs)
			}
			plain.Finish()
			hinted.Finish()
			if !reflect.DeepEqual(plain.Timeline(), hinted.Timeline()) {
				t.Error("timelines differ")
			}
			if !reflect.DeepEqual(plain.Table.Flows(), hinted.Table.Flows()) {
				t.Error("flows differ")
			}
			if !reflect.DeepEqual(plain.DSCP(), hinted.DSCP()) || !reflect.DeepEqual(plain.ECN(), hinted.ECN()) {
				t.Error("DSCP or ECN differ")
			}
		})
	}
}
