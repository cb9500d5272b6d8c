package reports

import (
	"math/rand/v2"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// TestMayBeRare: AddFrame (addRare) calls observe only for a packet mayBeRare
// passes; observe must then leave the Collector's state as it was for
// every packet mayBeRare does not pass (any DSCP, ECN, tag, PCP, opcode,
// QP), and the draw must hold packets observe does note, so that a
// clause taken out of mayBeRare fails it.
func TestMayBeRare(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 23))
	cfg := Config{}.WithDefaults()
	ops := []bth.Opcode{0x06, 0x07, 0x08, 0x0a, 0x11, 0x04, 0x0c, 0x10, 0x64, 0x80, 0x81}
	at := flows.FrameRef{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Frame: 9}
	noted := 0
	for i := range 20000 {
		p := &packet.Packet{Kind: packet.KindRoCE, HasBTH: true,
			Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2")}
		p.BTH.Opcode = ops[rng.IntN(len(ops))]
		p.BTH.DestQP = uint32(rng.IntN(3))
		p.DSCP = cfg.DataDSCP
		if rng.IntN(4) == 0 {
			p.DSCP = uint8(rng.IntN(64))
		}
		p.ECN = uint8(rng.IntN(4))
		if rng.IntN(2) == 0 {
			p.ECN = 2
		}
		if p.HasVLAN = rng.IntN(4) == 0; p.HasVLAN {
			p.PCP = uint8(rng.IntN(8))
		}
		var s collectorState
		s.observe(1, p, &at, &cfg)
		changed := !reflect.DeepEqual(s, collectorState{})
		if changed {
			noted++
		}
		if changed && !mayBeRare(p, &cfg) {
			t.Fatalf("case %d: observe noted op %v DSCP %d ECN %d VLAN %v PCP %d, which mayBeRare passes over",
				i, p.BTH.Opcode, p.DSCP, p.ECN, p.HasVLAN, p.PCP)
		}
	}
	if noted < 1000 {
		t.Fatalf("only %d of the packets drawn were noted", noted)
	}
}
