package flows

import (
	"net/netip"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// TestCERing checks the ring's marks per transmission and copies per
// PSN: a first copy with CE marks transmission carried-1 there; a copy
// (with CE or not) at a PSN the ring knows counts there, and with CE
// marks the transmission its place among the PSN's copies names (the
// mirror delivers copies in the order of their originals), if the flow
// carried it and it is not marked yet.
func TestCERing(t *testing.T) {
	type op struct {
		first   bool // a first copy with CE, else a copy
		psn     uint32
		ce      bool   // a copy's
		carried uint64 // the transmissions the flow carried at psn
		want    bool   // for a copy: it marks its packet
	}
	first := func(psn uint32, carried uint64) op { return op{true, psn, true, carried, false} }
	ce := func(psn uint32, carried uint64, want bool) op { return op{false, psn, true, carried, want} }
	plain := func(psn uint32, carried uint64) op { return op{false, psn, false, carried, false} }
	for _, tc := range []struct {
		name string
		mask uint32
		ops  []op
	}{
		{"egress marks only", psnMask, []op{ce(1, 1, true), ce(2, 1, true), ce(3, 1, true), ce(3, 1, false), ce(1, 1, false)}},
		{"both copies CE", psnMask, []op{first(5, 1), ce(5, 1, false), ce(6, 1, true), ce(6, 1, false)}},
		{"resent before the copies", psnMask, []op{ce(1, 2, true), ce(1, 2, true), ce(1, 2, false)}},
		{"resent with CE", psnMask, []op{ce(1, 1, true), first(1, 2), ce(1, 2, false)}},
		// The randomized truth test's case 20262612 (once class D11):
		// an atomic CE before the mirror, RNR-NAKed, retried without CE
		// before its copy came: the copy is the first transmission's.
		{"CE copy after an unmarked resend", psnMask, []op{first(0, 1), ce(0, 2, false), plain(0, 2)}},
		{"both transmissions marked, copies after", psnMask, []op{first(0, 1), ce(0, 2, false), ce(0, 2, true), ce(0, 2, false)}},
		{"resend marked first, original after the mirror", psnMask, []op{first(4, 2), ce(4, 2, true), ce(4, 2, false)}},
		// A copy without CE counts at a PSN past hi on a ring begun: the
		// resend's copy is then the second.
		{"a copy without CE counts", psnMask, []op{first(0, 1), plain(5, 1), first(5, 2), ce(5, 2, false)}},
		// A copy without CE begins a ring: the copies before the
		// flow's first CE count, and a later copy at their PSN repeats
		// a later transmission.
		{"a copy without CE begins a ring", psnMask, []op{plain(5, 1), first(9, 1), ce(5, 2, true)}},
		{"copied before the first CE, resend CE", psnMask, []op{plain(1, 1), first(1, 2), ce(1, 2, false)}},
		{"behind hi", psnMask, []op{first(12, 1), ce(10, 1, true), ce(11, 1, true), ce(12, 1, false), ce(11, 1, false), ce(10, 1, false)}},
		{"a long move", psnMask, []op{first(0, 1), ce(99, 1, true), ce(0, 1, true), ce(98, 1, true), ce(98, 1, false), ce(99, 1, false), ce(36, 1, true), ce(36, 1, false)}},
		{"wrap", psnMask, []op{first(0, 1), ce(psnMask, 1, true), ce(0, 1, false), ce(psnMask, 1, false), ce(1, 1, true)}},
		{"positions wrap", posMask, []op{first(posMask-1, 1), ce(posMask, 1, true), ce(0, 1, true), ce(posMask-1, 1, false), ce(0, 1, false), ce(posMask, 1, false)}},
		{"moves by 32, 33 and 64", psnMask, []op{first(0, 1), first(32, 1), ce(31, 1, true), ce(0, 1, false), ce(32, 1, false), first(65, 1), ce(33, 1, true), ce(64, 1, true), ce(32, 1, false), ce(1, 1, true),
			first(129, 1), ce(65, 1, true), ce(66, 1, true), ce(66, 1, false), ce(129, 1, false)}},
		{"64 behind: unknown", psnMask, []op{first(0, 1), first(64, 1), ce(0, 1, true), ce(0, 1, true), ce(1, 1, true), ce(1, 1, false)}},
		{"at most 4 transmissions", psnMask, []op{first(7, 9), ce(7, 9, true), ce(7, 9, true), ce(7, 9, true), ce(7, 9, false), ce(7, 9, false)}},
	} {
		var r ceRing
		for i, o := range tc.ops {
			if o.first {
				r.first(o.psn, tc.mask, o.carried)
				continue
			}
			if got := r.copied(o.psn, tc.mask, o.ce, o.carried); got != o.want {
				t.Errorf("%s: op %d, a copy (CE %v) at %d (%d carried) marks a packet: %v, want %v", tc.name, i, o.ce, o.psn, o.carried, got, o.want)
			}
		}
	}
}

// TestMirrorCopyCE: a mirror of the ingress and the egress of the
// congested switch. Each packet of a busy QP comes twice, the egress copy
// 3 µs later (30 packets of the flow between), with the CE the switch's
// queue marked it with, which the ingress copy (ECT(0)) lacks; four
// packets arrive marked already (an earlier switch), both copies CE; the
// ACKs' egress copies are CE too, and CNPs come back. Each packet counts
// as CE-marked once, whichever copy shows it, and the counts per
// codepoint still sum to the packets.
func TestMirrorCopyCE(t *testing.T) {
	const n = 100
	var tape []taped
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) FrameRef {
		return FrameRef{Frame: len(tape) + 1, Time: start.Add(time.Duration(i) * 100 * time.Nanosecond)}
	}
	upstream := func(psn uint32) bool { return psn >= 150 && psn < 154 }
	for i := range n {
		p := roce(hostA, hostB, opWriteMid, bQP, uint32(100+i), 1024)
		if upstream(p.BTH.PSN) {
			p.ECN = 3
		}
		tape = append(tape, taped{*p, at(i)})
		if i%10 == 9 {
			tape = append(tape, taped{*roce(hostB, hostA, opAck, aQP, uint32(100+i), 0), at(i)})
			tape = append(tape, taped{*roce(hostB, hostA, bth.OpcodeCNP, aQP, 0, 0), at(i)})
		}
	}
	// Every other copy marked: the PSNs the switch marked.
	egress := func(p *packet.Packet) {
		if p.BTH.PSN%2 == 0 || p.BTH.Opcode == opAck {
			p.ECN = 3
		}
	}
	tab := replay(mirrored(tape, 3*time.Microsecond, notCNP, egress))
	req, resp := tab.Current(key(hostA, hostB, bQP)), tab.Current(key(hostB, hostA, aQP))
	if req.MirrorDuplicates() != n || resp.MirrorDuplicates() != n/10 {
		t.Fatalf("mirror duplicates %d and %d, want %d and %d", req.MirrorDuplicates(), resp.MirrorDuplicates(), n, n/10)
	}
	want := uint64(0)
	for psn := uint32(100); psn < 100+n; psn++ {
		if psn%2 == 0 || upstream(psn) {
			want++
		}
	}
	if req.ECNCE != want || req.ECN != [4]uint64{0, 0, n - want, want} || req.Packets != n {
		t.Errorf("requests: %d packets, ECNCE %d, ECN %v; want %d, %d, %v", req.Packets, req.ECNCE, req.ECN, n, want, [4]uint64{0, 0, n - want, want})
	}
	// The ACKs CE on their copies; the CNPs (ECT(0) here, no copy).
	if resp.ECNCE != n/10 || resp.ECN != [4]uint64{0, 0, n / 10, n / 10} {
		t.Errorf("responses: ECNCE %d, ECN %v; want %d, %v", resp.ECNCE, resp.ECN, n/10, [4]uint64{0, 0, n / 10, n / 10})
	}
}

// TestAddAllocsCE is TestAddAllocs with every data packet and ACK CE:
// the rings follow the flows (the table's slice of them grows with the
// first CE of a flow past its end), never the packets.
func TestAddAllocsCE(t *testing.T) {
	w := newWorkload(2, 4)
	for i := range w.write {
		w.write[i].ECN, w.ack[i].ECN, w.readResp[i].ECN = 3, 3, 3
	}
	tab := NewTable(Config{})
	w.feed(tab, 0, 256*w.conns)
	if len(tab.ce) != tab.Len() {
		t.Fatalf("%d rings for %d flows", len(tab.ce), tab.Len())
	}
	steadyAllocs(t, w, tab)
}

// TestMirrorCopyCEResentOriginal is the randomized truth test's case
// 20262612 (once its known class D11): an atomic at PSN 0, marked CE
// before the mirror (both its copies CE), RNR-NAKed and retried without
// CE; the mirror lags 170 µs, so the CE copy of the original comes after
// the retry. The copy repeats the first transmission (the mirror's
// order), already marked: one CE mark, not two. A WRITE after it, CE on
// its copy only, counts.
func TestMirrorCopyCEResentOriginal(t *testing.T) {
	const us = time.Microsecond
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	atomic := func(ecn uint8) *packet.Packet {
		p := roce(hostA, hostB, bth.Opcode(bth.OpFetchAdd), bQP, 0, 0)
		p.ECN = ecn
		return p
	}
	c.add(us, atomic(3))
	c.add(5*us, nak(hostB, hostA, aQP, 0, 1, true)) // RNR NAK
	c.add(20*us, atomic(2))
	c.add(5*us, roce(hostB, hostA, opAtomicAck, aQP, 0, 0))
	c.add(5*us, roce(hostA, hostB, opWriteOnly, bQP, 1, 64))
	c.add(5*us, roce(hostB, hostA, opAck, aQP, 1, 0))
	egress := func(p *packet.Packet) {
		if p.BTH.Opcode == opWriteOnly {
			p.ECN = 3
		}
	}
	isReq := func(p *packet.Packet) bool { return p.Src == netip.MustParseAddr(hostA) }
	tab := replay(mirrored(tape, 170*us, isReq, egress))
	req := tab.Current(key(hostA, hostB, bQP))
	if req.MirrorDuplicates() != 3 || req.Packets != 3 {
		t.Fatalf("%d packets, %d mirror duplicates; want 3 and 3", req.Packets, req.MirrorDuplicates())
	}
	if want := [4]uint64{0, 0, 1, 2}; req.ECNCE != 2 || req.ECN != want {
		t.Errorf("ECNCE %d, ECN %v; want 2, %v", req.ECNCE, req.ECN, want)
	}
}
