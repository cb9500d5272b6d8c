package reports

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// TestConversationsFragmentCopies: a mirror that delivers each fragment
// of a UDP datagram twice counts each fragment once, the later ones
// (without ports: they follow the first) as the first; fragments of one
// datagram with the same length, told apart by their offset only, are
// no copies of each other. Before, a later fragment's copy counted: 4
// packets where 2 were sent.
func TestConversationsFragmentCopies(t *testing.T) {
	frag := func(off uint16, n int) *packet.Packet {
		p := &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"),
			Proto: protoUDP, IPTotalLen: n, IPID: 0x4242, Fragment: true, FragOffset: off, TTL: 64}
		if off == 0 {
			p.SrcPort, p.DstPort, p.L4Checksum = 40000, 2049, 0xbeef
		}
		return p
	}
	for _, tc := range []struct {
		name            string
		mirrored        bool
		packets, copies uint64
	}{
		{"mirrored", true, 4, 4},
		{"once", false, 4, 0},
	} {
		s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		c := NewCollector(flows.NewTable(flows.Config{}), Config{})
		us := 0.0
		// 4 fragments: the first, two of the same length (offsets 185
		// and 370, in 8-byte units), the last.
		for _, f := range []*packet.Packet{frag(0, 1500), frag(185, 1500), frag(370, 1500), frag(555, 300)} {
			c.Add(f, s.ref(us))
			if tc.mirrored {
				cp := *f
				cp.TTL--
				c.Add(&cp, s.ref(us+2))
			}
			us += 10
		}
		c.Finish()
		got := c.Conversations()
		if len(got) != 1 {
			t.Fatalf("%s: %d conversations, want 1", tc.name, len(got))
		}
		g := got[0]
		if g.Packets != tc.packets || g.Copies != tc.copies || g.Bytes != 3*1500+300 {
			t.Errorf("%s: packets %d, copies %d, bytes %d; want %d, %d, %d", tc.name, g.Packets, g.Copies, g.Bytes, tc.packets, tc.copies, 3*1500+300)
		}
	}
}
