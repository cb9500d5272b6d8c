package flows

import (
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/internal/testcaps"
)

// TestRetxAndGaps: after every packet of every generated and real capture,
// the per-packet RetxAndGaps of the packet's flow equals Retransmitted and
// PSNGaps.
func TestRetxAndGaps(t *testing.T) {
	paths := testcaps.All(t, "../testdata/pcaps")
	reads := 0
	for _, path := range paths {
		tab := NewTable(Config{})
		decodeEach(t, path, func(rec *capture.Record, p *packet.Packet) {
			f := tab.AddFlow(p, FrameRef{Frame: rec.Number, Time: rec.Timestamp})
			if f == nil {
				return
			}
			retx, gaps := f.RetxAndGaps()
			if retx != f.Retransmitted() || gaps != f.PSNGaps() {
				t.Fatalf("%s frame %d: RetxAndGaps %d, %d; Retransmitted %d, PSNGaps %d", path, rec.Number, retx, gaps, f.Retransmitted(), f.PSNGaps())
			}
			if f.ReadResponses.Packets > 0 {
				reads++
			}
		})
	}
	if reads == 0 {
		t.Error("no capture had READ responses")
	}
}
