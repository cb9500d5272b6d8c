package flows

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// TestResponseInOrderStartsNoEpoch: addFlow skips startsEpoch for a packet
// responseInOrder clears, so every such packet must be one startsEpoch
// would not start an epoch with, whatever the flow's response PSNs (near
// the wrap of the 24-bit circle), the configured EpochJump (from 1 to past
// half the circle) and however long the flow was idle. The states are
// drawn at random around the edges of the clauses; a reach one too long,
// a reach not kept short of half the circle, or a clause taken out (the
// class's, the CM's) fails it.
func TestResponseInOrderStartsNoEpoch(t *testing.T) {
	for op := range 256 {
		// startsEpoch takes a request's case before a response's.
		if c := opClass[op]; c&opResponse != 0 && c&opRequest != 0 {
			t.Fatalf("opcode %#x is both a request and a response", op)
		}
	}
	rng := rand.New(rand.NewPCG(23, 1))
	edge := func() uint32 {
		base := []uint32{0, 1, psnHalf - 1, psnHalf, psnHalf + 1, psnMask, psnMask - 1}[rng.IntN(7)]
		return psnAdd(base, int32(rng.IntN(5))-2)
	}
	jumps := []uint32{1, 2, 3, 1 << 16, psnHalf - 3, psnHalf - 2, psnHalf - 1, psnHalf, psnHalf + 1, math.MaxUint32}
	ops := []bth.Opcode{opAck, opAck, opAck, opAtomicAck, opReadFirst, opReadLast, opReadOnly, opWriteMid, opSendOnly, bth.OpcodeCNP}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var draw epochDraw
	for i := range 300000 {
		jump := jumps[rng.IntN(len(jumps))]
		tb := NewTable(Config{EpochJump: jump})
		f := &Flow{ID: 1, Key: Key{DestQP: 7}, Transport: bth.TransportRC}
		f.Last.Time = t0
		r := &f.resp
		r.started = rng.IntN(8) != 0
		if r.started {
			r.top = (edge()<<1 | uint32(rng.IntN(2))) & posMask
		}
		if rng.IntN(4) == 0 {
			// READ responses started too: startsEpoch's READ response case.
			s := &f.ReadResponses
			s.Packets, s.FirstPSN, s.HighPSN = 1, edge(), edge()
			s.seq.expHi = psnAdd(s.HighPSN, 1)
			f.readResp = true
		}
		f.cmPending = rng.IntN(8) == 0
		if f.cmPending {
			tb.cmByFlow[f.Key] = &cmSide{}
		}
		high := r.high()
		var psn uint32
		switch rng.IntN(4) {
		case 0:
			psn = edge()
		case 1:
			psn = psnAdd(high, int32(rng.IntN(7))-3)
		default:
			// About jump past the highest, both sides of the reach.
			psnJump := int32(min(jump, psnHalf+2))
			psn = psnAdd(high, psnJump+int32(rng.IntN(5))-2)
		}
		op := ops[rng.IntN(len(ops))]
		p := roce(hostB, hostA, op, 7, psn, 0)
		if op == opAck && rng.IntN(4) == 0 {
			p.BTH.AETH.Syndrome = 0x60 // a PSN sequence error NAK
		}
		c := opClass[p.BTH.Opcode]
		at := At(FrameRef{Time: t0.Add(time.Second)}) // long idle: only the PSNs decide
		in := f.responseInOrder(psn, c, tb.respReach)
		st := tb.startsEpoch(f, p, c, &at)
		if in && st {
			t.Fatalf("case %d: responseInOrder cleared a packet that starts an epoch: op %#x jump %#x started %v high %#x psn %#x cm %v",
				i, op, jump, r.started, high, psn, f.cmPending)
		}
		draw.note(in, st)
	}
	draw.check(t)
}

// TestResponseInOrderSameFlows: a table whose responseInOrder clears
// nothing (respReach 0: every response goes through startsEpoch) must
// keep the same flows as one that clears the responses in order, packet
// for packet, on crafted sequences: the retransmission cases (NAKs, RNR
// NAKs, timeouts, go-back-N) and random ones of WRITEs and their ACKs,
// with reordered requests, mirror copies of requests and ACKs, duplicate
// and stale ACKs, NAKs, PSNs across the wrap of the 24-bit circle, and
// idle spells after which the PSNs jump or restart (new epochs), under
// short and default EpochJumps.
func TestResponseInOrderSameFlows(t *testing.T) {
	compare := func(t *testing.T, name string, cfg Config, tape []taped) {
		t.Helper()
		fast, slow := NewTable(cfg), NewTable(cfg)
		slow.respReach = 0
		if fast.respReach == 0 {
			t.Fatalf("%s: the table's respReach is 0: the fast path is off", name)
		}
		for i := range tape {
			p := tape[i].p
			fast.Add(&p, tape[i].at)
			p = tape[i].p
			slow.Add(&p, tape[i].at)
		}
		fast.Finish()
		slow.Finish()
		if fast.Len() != slow.Len() {
			t.Fatalf("%s: %d flows, %d without responseInOrder", name, fast.Len(), slow.Len())
		}
		for i, f := range fast.Flows() {
			g := slow.Flows()[i]
			got, want := viewOf(f), viewOf(g)
			if !reflect.DeepEqual(got, want) || f.MirrorDuplicates() != g.MirrorDuplicates() {
				t.Fatalf("%s: flow %s differs in %s:\n  %+v\nwithout responseInOrder:\n  %+v", name, flowName(f), diffFields(got, want), got, want)
			}
		}
	}
	for _, rc := range retxCases {
		var tape []taped
		c := newClock(Config{})
		c.tape = &tape
		rc.play(c)
		compare(t, rc.name, Config{}, tape)
	}
	epochs := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(23, seed))
		cfg := Config{EpochJump: []uint32{0, 1, 3, 8, 100}[rng.IntN(5)]}
		tape, n := randomWriteTape(rng)
		epochs += n
		compare(t, fmt.Sprintf("random %d (EpochJump %d)", seed, cfg.EpochJump), cfg, tape)
	}
	if epochs < 100 {
		t.Fatalf("the draw made %d idle jumps or restarts, want at least 100", epochs)
	}
}

// randomWriteTape plays WRITEs of 1 to 4 packets from A to B on two QP
// pairs and B's ACKs of them (coalesced, duplicated, stale or NAKs), with
// the disorder TestResponseInOrderSameFlows lists, and returns the packets
// with their frames and how many idle jumps or restarts it made.
func randomWriteTape(rng *rand.Rand) (tape []taped, epochs int) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	emit := func(dt time.Duration, p *packet.Packet) {
		now = now.Add(dt)
		frame++
		tape = append(tape, taped{*p, FrameRef{Frame: frame, Time: now, Seq: uint64(frame - 1)}})
	}
	type qp struct {
		req, ack  uint32 // B's QPN (the requests'), A's (the ACKs')
		next      uint32 // the next request PSN
		first     uint32 // the first request PSN of the connection
		lastAcked uint32
	}
	starts := []uint32{0, psnMask - 5, psnMask, psnHalf - 2, rng.Uint32() & psnMask}
	qps := []*qp{{req: 0x11, ack: 0x22}, {req: 0x13, ack: 0x24}}
	for _, q := range qps {
		q.first = starts[rng.IntN(len(starts))]
		q.next, q.lastAcked = q.first, psnAdd(q.first, -1)
	}
	var held *packet.Packet // a request held back, for a reorder
	for range 60 + rng.IntN(60) {
		q := qps[rng.IntN(len(qps))]
		switch k := rng.IntN(20); {
		case k < 8: // a WRITE of n packets
			n := 1 + rng.IntN(4)
			for j := range n {
				op := opWriteMid
				switch {
				case n == 1:
					op = opWriteOnly
				case j == 0:
					op = opWriteFrst
				case j == n-1:
					op = opWriteLast
				}
				p := roce(hostA, hostB, op, q.req, q.next, 1024)
				q.next = psnAdd(q.next, 1)
				switch {
				case held == nil && rng.IntN(10) == 0:
					held = p
					continue
				case rng.IntN(12) == 0:
					emit(time.Microsecond, p) // a mirror's copy
				}
				emit(time.Microsecond, p)
				if held != nil && rng.IntN(2) == 0 {
					emit(time.Microsecond, held)
					held = nil
				}
			}
		case k < 15: // an ACK of the newest PSN, sometimes twice
			psn := psnAdd(q.next, -1)
			p := roce(hostB, hostA, opAck, q.ack, psn, 0)
			emit(2*time.Microsecond, p)
			if rng.IntN(8) == 0 {
				emit(time.Microsecond, p)
			}
			q.lastAcked = psn
		case k < 16: // a stale ACK
			emit(time.Microsecond, roce(hostB, hostA, opAck, q.ack, psnAdd(q.lastAcked, -int32(rng.IntN(4))), 0))
		case k < 17: // a NAK, then the requests resent from its PSN
			psn := psnAdd(q.lastAcked, 1)
			emit(time.Microsecond, nak(hostB, hostA, q.ack, psn, 0, rng.IntN(3) == 0))
			for r := psn; psnDiff(r, q.next) < 0; r = psnAdd(r, 1) {
				emit(time.Microsecond, roce(hostA, hostB, opWriteMid, q.req, r, 1024))
			}
		case k < 18: // an ACK ahead of the requests captured
			emit(time.Microsecond, roce(hostB, hostA, opAck, q.ack, psnAdd(q.next, int32(rng.IntN(6))), 0))
		default: // idle, then the PSNs jump or start again
			epochs++
			now = now.Add(time.Duration(1+rng.IntN(3)) * time.Millisecond)
			if rng.IntN(2) == 0 {
				q.next = psnAdd(q.next, int32(rng.IntN(1<<20)))
			} else {
				q.next = q.first
			}
			q.lastAcked = psnAdd(q.next, -1)
			if rng.IntN(2) == 0 {
				// The ACKs jump first: a response far past the last.
				emit(time.Microsecond, roce(hostB, hostA, opAck, q.ack, psnAdd(q.next, int32(rng.IntN(8))), 0))
			}
		}
	}
	if held != nil {
		emit(time.Microsecond, held)
	}
	return tape, epochs
}
