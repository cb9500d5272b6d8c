package flows

import (
	"path/filepath"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
)

// TestRetxAndGaps: after every packet of every generated and real capture,
// the per-packet RetxAndGaps of the packet's flow equals Retransmitted and
// PSNGaps.
func TestRetxAndGaps(t *testing.T) {
	var paths []string
	for _, glob := range []string{"../testdata/pcaps/gen/*.pcap*", "../testdata/pcaps/real/*.pcap*"} {
		m, _ := filepath.Glob(glob)
		paths = append(paths, m...)
	}
	if len(paths) < 20 {
		t.Fatalf("found only %d captures", len(paths))
	}
	reads := 0
	for _, path := range paths {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tab := NewTable(Config{})
		var (
			rec capture.Record
			dec packet.Decoder
			p   packet.Packet
		)
		for r.Next(&rec) == nil {
			if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil {
				continue
			}
			f := tab.AddFlow(&p, FrameRef{Frame: rec.Number, Time: rec.Timestamp})
			if f == nil {
				continue
			}
			retx, gaps := f.RetxAndGaps()
			if retx != f.Retransmitted() || gaps != f.PSNGaps() {
				t.Fatalf("%s frame %d: RetxAndGaps %d, %d; Retransmitted %d, PSNGaps %d", path, rec.Number, retx, gaps, f.Retransmitted(), f.PSNGaps())
			}
			if f.ReadResponses.Packets > 0 {
				reads++
			}
		}
		r.Close()
	}
	if reads == 0 {
		t.Error("no capture had READ responses")
	}
}
