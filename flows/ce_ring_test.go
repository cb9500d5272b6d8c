package flows

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// TestCERing checks the ring's counts of the packets a CE marked at each
// PSN: a first copy with CE marks one (carried 3: always), a copy with CE
// one more while fewer than the packets carried there are.
func TestCERing(t *testing.T) {
	type op struct {
		psn     uint32
		carried uint64 // 0: a first copy with CE
		want    bool   // for a copy
	}
	first := func(psn uint32) op { return op{psn, 0, true} }
	for _, tc := range []struct {
		name string
		ops  []op
	}{
		{"egress marks only", []op{{1, 1, true}, {2, 1, true}, {3, 1, true}, {3, 1, false}, {1, 1, false}}},
		{"both copies CE", []op{first(5), {5, 1, false}, {6, 1, true}, {6, 1, false}}},
		{"resent before the copies", []op{{1, 2, true}, {1, 2, true}, {1, 2, false}}},
		{"resent with CE", []op{{1, 1, true}, first(1), {1, 2, false}}},
		{"behind hi", []op{first(12), {10, 1, true}, {11, 1, true}, {12, 1, false}, {11, 1, false}, {10, 1, false}}},
		{"a long move", []op{first(0), {99, 1, true}, {0, 1, true}, {98, 1, true}, {98, 1, false}, {99, 1, false}, {36, 1, true}, {36, 1, false}}},
		{"wrap", []op{first(0), {psnMask, 1, true}, {0, 1, false}, {psnMask, 1, false}, {1, 1, true}}},
		{"moves by 32, 33 and 64", []op{first(0), first(32), {31, 1, true}, {0, 1, false}, {32, 1, false}, first(65), {33, 1, true}, {64, 1, true}, {32, 1, false}, {1, 1, true},
			first(129), {65, 1, true}, {66, 1, true}, {66, 1, false}, {129, 1, false}}},
		{"at most 3", []op{first(7), first(7), first(7), first(7), {7, 9, false}}},
	} {
		var r ceRing
		for i, o := range tc.ops {
			if o.carried == 0 {
				r.mark(o.psn, psnMask, 3)
				continue
			}
			if got := r.mark(o.psn, psnMask, o.carried); got != o.want {
				t.Errorf("%s: op %d, a copy with CE at %d (%d carried) marks a packet: %v, want %v", tc.name, i, o.psn, o.carried, got, o.want)
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
	i := 256 * w.conns
	if n := testing.AllocsPerRun(1000, func() {
		w.feed(tab, i, i+64)
		i += 64
	}); n != 0 {
		t.Errorf("%v allocations per 64 packets, want 0", n)
	}
}
