package flows

import (
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/internal/testcaps"
)

// TestAddFlowDelta: for every packet of every generated and real capture,
// AddFlowDelta returns the flow AddFlow does and what the packet added to
// its Retransmitted and PSNGaps: the difference from what the flow's
// previous packet left, from zero for a new flow (or a new epoch of a key).
func TestAddFlowDelta(t *testing.T) {
	paths := testcaps.All(t, "../testdata/pcaps")
	var retxSeen, gapsSeen bool
	for _, path := range paths {
		withDelta, plain := NewTable(Config{}), NewTable(Config{})
		type counts struct{ retx, gaps uint64 }
		left := map[*Flow]counts{} // what each flow of plain had after its previous packet
		decodeEach(t, path, func(rec *capture.Record, p *packet.Packet) {
			at := FrameRef{Frame: rec.Number, Time: rec.Timestamp}
			fa := At(at)
			dups := uint64(0)
			if g := plain.Current(Key{Src: p.Src, Dst: p.Dst, DestQP: p.BTH.DestQP}); g != nil {
				dups = g.MirrorDuplicates()
			}
			f, retx, gaps, copied := withDelta.AddFlowDelta(p, &fa)
			g := plain.AddFlow(p, at)
			if (f == nil) != (g == nil) {
				t.Fatalf("%s frame %d: AddFlowDelta gave flow %v, AddFlow %v", path, rec.Number, f, g)
			}
			if g == nil {
				return
			}
			if copied != (g.MirrorDuplicates() == dups+1) {
				t.Fatalf("%s frame %d: AddFlowDelta says copied %v, AddFlow counted %d mirror duplicates after %d", path, rec.Number, copied, g.MirrorDuplicates(), dups)
			}
			was := left[g]
			now := counts{g.Retransmitted(), g.PSNGaps()}
			left[g] = now
			if f.ID != g.ID || retx != now.retx-was.retx || gaps != now.gaps-was.gaps {
				t.Fatalf("%s frame %d: flow %d added %d retransmissions and %d gaps; flow %d, %d and %d", path, rec.Number,
					f.ID, retx, gaps, g.ID, now.retx-was.retx, now.gaps-was.gaps)
			}
			retxSeen, gapsSeen = retxSeen || retx > 0, gapsSeen || gaps > 0
		})
	}
	if !retxSeen || !gapsSeen {
		t.Errorf("the captures lack a case: retransmission %v, gap %v", retxSeen, gapsSeen)
	}
}
