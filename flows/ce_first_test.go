package flows

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
)

// ceStep is one frame of a CE scenario: dt after the one before, the
// packet, and for a mirror's copy whether it is one and whether its CE
// makes its packet CE-marked (Table.CopyMarkedCE).
type ceStep struct {
	dt     time.Duration
	p      *packet.Packet
	copy   bool // the table should take it for a mirror's copy
	marked bool // a copy: its CE is a mark not counted yet
}

// playCE feeds steps to a new table and checks each frame's copy and mark.
func playCE(t *testing.T, name string, steps []ceStep) *Table {
	t.Helper()
	tab := NewTable(Config{})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, s := range steps {
		now = now.Add(s.dt)
		at := At(FrameRef{Frame: i + 1, Time: now})
		_, _, _, copied := tab.AddFlowDelta(s.p, &at)
		if copied != s.copy {
			t.Fatalf("%s: frame %d (PSN %d, ECN %d) taken for a copy: %v, want %v", name, i+1, s.p.BTH.PSN, s.p.ECN, copied, s.copy)
		}
		if copied && tab.CopyMarkedCE() != s.marked {
			t.Errorf("%s: frame %d, a copy (PSN %d, ECN %d) marks its packet: %v, want %v", name, i+1, s.p.BTH.PSN, s.p.ECN, tab.CopyMarkedCE(), s.marked)
		}
	}
	tab.Finish()
	return tab
}

// TestCECopiesBeforeFirstMark: a mirror of the ingress and the egress of
// a switch delivers each packet of a WRITE twice, 5 µs apart, before the
// flow carried any CE; then a PSN sequence error NAK asks for a resend
// from PSN 1. The copies of the first transmissions came before the
// flow's first CE, so they name no transmission; yet they were the
// first transmission's, and a copy at that PSN afterwards repeats the
// resend (the mirror delivers a flow's copies in the order of their
// originals). A mark counts once per transmission a switch marked:
//   - resend CE before the mirror: its copy (CE) adds nothing;
//   - resend ECT(0), CE on its copy only: the switch marked it, one mark;
//   - two resends, the first CE before the mirror, the second marked on
//     its copy only: two marks, the second at the second resend's copy.
func TestCECopiesBeforeFirstMark(t *testing.T) {
	const us = time.Microsecond
	w := func(psn uint32, ecn uint8) *packet.Packet {
		p := roce(hostA, hostB, opWriteMid, bQP, psn, 1024)
		p.ECN = ecn
		return p
	}
	orig := func(dt time.Duration, psn uint32, ecn uint8) ceStep { return ceStep{dt: dt, p: w(psn, ecn)} }
	cp := func(dt time.Duration, psn uint32, ecn uint8, marked bool) ceStep {
		return ceStep{dt: dt, p: w(psn, ecn), copy: true, marked: marked}
	}
	resp := func(dt time.Duration, p *packet.Packet) ceStep { return ceStep{dt: dt, p: p} }
	ack := func(psn uint32) *packet.Packet { return roce(hostB, hostA, opAck, aQP, psn, 0) }
	seqNAK := func(psn uint32) *packet.Packet { return nak(hostB, hostA, aQP, psn, 0, false) }
	for _, tc := range []struct {
		name      string
		steps     []ceStep
		ce, ect0  uint64 // the requests' ECNCE (ECN[3]) and ECN[2]
		mirrorDup uint64
	}{
		{"resend CE before the mirror", []ceStep{
			orig(us, 0, 2), orig(us, 1, 2), orig(us, 2, 2),
			cp(3*us, 0, 2, false), cp(us, 1, 2, false), cp(us, 2, 2, false),
			resp(us, seqNAK(1)),
			orig(us, 1, 3), orig(us, 2, 2),
			cp(4*us, 1, 3, false), // the resend's copy: marked before the mirror, counted
			cp(us, 2, 3, true),    // the switch marked the resend of PSN 2
			resp(us, ack(2)),
		}, 2, 3, 5},
		{"resend marked on its copy", []ceStep{
			orig(us, 0, 2), orig(us, 1, 2),
			cp(3*us, 0, 2, false), cp(us, 1, 2, false),
			resp(us, seqNAK(1)),
			orig(us, 1, 2),
			cp(4*us, 1, 3, true),
			orig(us, 2, 3), // the flow's first CE on a first copy, after the copies
			cp(4*us, 2, 3, false),
			resp(us, ack(2)),
		}, 2, 2, 4},
		{"two resends", []ceStep{
			orig(us, 0, 2), orig(us, 1, 2),
			cp(30*us, 0, 2, false), cp(us, 1, 2, false),
			resp(us, seqNAK(1)),
			orig(us, 1, 3), // the first resend, CE before the mirror
			resp(5*us, nak(hostB, hostA, aQP, 1, 1, true)), // RNR NAK
			orig(20*us, 1, 2),     // the RNR retry
			cp(5*us, 1, 3, false), // the first resend's copy
			cp(20*us, 1, 3, true), // the retry's, marked after the ingress
			resp(us, ack(1)),
		}, 2, 2, 4},
	} {
		tab := playCE(t, tc.name, tc.steps)
		f := tab.Current(key(hostA, hostB, bQP))
		if f.MirrorDuplicates() != tc.mirrorDup {
			t.Errorf("%s: %d mirror duplicates, want %d", tc.name, f.MirrorDuplicates(), tc.mirrorDup)
		}
		if f.ECNCE != tc.ce || f.ECN != [4]uint64{0, 0, tc.ect0, tc.ce} {
			t.Errorf("%s: ECNCE %d, ECN %v; want %d, %v", tc.name, f.ECNCE, f.ECN, tc.ce, [4]uint64{0, 0, tc.ect0, tc.ce})
		}
	}
}
