package flows

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

// TestRequestInOrderStartsNoEpoch: addFlow skips startsEpoch for a packet
// requestInOrder clears, so every such packet must be one startsEpoch
// would not start an epoch with, whatever the flow's PSNs (near the wrap
// of the 24-bit circle, a highest PSN half the circle past the first) and
// however long the flow was idle. The states are drawn at random around
// the edges of the clauses; a clause taken out of requestInOrder (the
// first PSN's, the highest PSN's, the CM's) fails it.
func TestRequestInOrderStartsNoEpoch(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 20))
	edge := func() uint32 {
		base := []uint32{0, 1, psnHalf - 1, psnHalf, psnHalf + 1, psnMask, psnMask - 1}[rng.IntN(7)]
		return psnAdd(base, int32(rng.IntN(5))-2)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var draw epochDraw
	for i := range 200000 {
		tb := NewTable(Config{})
		f := &Flow{ID: 1, Key: Key{DestQP: 7}, Transport: bth.TransportRC}
		f.Last.Time = t0
		s := &f.Requests
		s.Packets = uint64(rng.IntN(3))
		s.FirstPSN = edge()
		s.HighPSN = psnAdd(s.FirstPSN, int32(edge()))
		s.seq.expHi = psnAdd(s.HighPSN, int32(rng.IntN(5))-2)
		if rng.IntN(4) == 0 {
			s.seq.expHi = edge()
		}
		f.cmPending = rng.IntN(8) == 0
		if f.cmPending {
			tb.cmByFlow[f.Key] = &cmSide{}
		}
		if rng.IntN(2) == 0 {
			// A partner that acknowledged every request: restarts may hold.
			r := &Flow{ID: 2}
			r.resp.started, r.resp.top = true, (psnAdd(s.HighPSN, 1)<<1)&posMask
			f.respLink = r
		}
		psn := s.seq.expHi
		if rng.IntN(4) == 0 {
			psn = edge()
		}
		op := opSendOnly
		if rng.IntN(8) == 0 {
			op = opAck
		}
		p := roce(hostA, hostB, op, 7, psn, 64)
		c := opClass[p.BTH.Opcode]
		at := At(FrameRef{Time: t0.Add(time.Second)}) // long idle: only the PSNs decide
		in := f.requestInOrder(psn, c)
		st := tb.startsEpoch(f, p, c, &at)
		if in && st {
			t.Fatalf("case %d: requestInOrder cleared a packet that starts an epoch: packets %d first %#x high %#x expHi %#x psn %#x cm %v",
				i, s.Packets, s.FirstPSN, s.HighPSN, s.seq.expHi, psn, f.cmPending)
		}
		draw.note(in, st)
	}
	draw.check(t)
}

// TestNoteRequestInOrderNoop: noteRequest returns at once for a request in
// order on a flow without retransmission state; noteRequestRest, which it
// skips, must then change nothing, whatever else the flow holds.
func TestNoteRequestInOrderNoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 21))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 10000 {
		f := &Flow{ID: 1, Transport: bth.TransportRC}
		if rng.IntN(2) == 0 {
			f.Transport = bth.TransportUD
		}
		s := &f.Requests
		s.Packets = uint64(1 + rng.IntN(3))
		s.FirstPSN = rng.Uint32() & psnMask
		s.HighPSN = psnAdd(s.FirstPSN, int32(rng.IntN(20)))
		s.LastPSN = s.HighPSN
		if rng.IntN(2) == 0 {
			r := &Flow{ID: 2}
			r.resp.started, r.resp.top = true, (s.HighPSN<<1)&posMask
			f.respLink = r
		}
		psn := psnAdd(s.HighPSN, int32(rng.IntN(3))-1)
		fa := At(FrameRef{Time: t0.Add(time.Duration(i) * time.Microsecond), Seq: uint64(i)})
		before := *f
		f.noteRequestRest(seqInOrder, psn, s.LastPSN, &fa, fa.Nanos-int64(rng.IntN(2000)))
		if *f != before {
			t.Fatalf("case %d: noteRequestRest changed a flow without retransmission state for a request in order", i)
		}
	}
}

// TestOpcodeBumped: Flow.add counts an opcode through opcodeBumped, then
// countOpcode when it did not; the counts must be countOpcode's alone, for
// any filling of the inline words and any opcode.
func TestOpcodeBumped(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 22))
	ops := []bth.Opcode{0x06, 0x07, 0x08, 0x0a, 0x11, 0x04, 0x81}
	for i := range 20000 {
		var f Flow
		f.opFirst = uint16(ops[rng.IntN(len(ops))]) + 1
		for range rng.IntN(6) {
			f.countOpcode(ops[rng.IntN(len(ops))])
		}
		if rng.IntN(4) == 0 {
			// Words out of the order countOpcode fills them in.
			f.opInline[0], f.opInline[1] = 0, f.opInline[0]
		}
		op := ops[rng.IntN(len(ops))]
		want, got := f, f
		for _, g := range []*Flow{&want, &got} {
			if g.cold != nil {
				c := *g.cold
				c.opcodes = append([]OpcodeCount(nil), c.opcodes...)
				g.cold = &c
			}
		}
		want.countOpcode(op)
		if uint16(op)+1 != got.opFirst && !got.opcodeBumped(op) {
			got.countOpcode(op)
		}
		if got.opInline != want.opInline || !slices.Equal(got.coldOpcodes(), want.coldOpcodes()) {
			t.Fatalf("case %d: op %#x: opInline %x cold %v, countOpcode alone %x %v", i, op, got.opInline, got.coldOpcodes(), want.opInline, want.coldOpcodes())
		}
	}
}

// epochDraw tallies a random draw of packets against startsEpoch: how
// many an in-order test (requestInOrder, responseInOrder) cleared and how
// many start an epoch. A draw that rarely takes either side tests little.
type epochDraw struct{ cleared, starts int }

func (d *epochDraw) note(cleared, starts bool) {
	if cleared {
		d.cleared++
	}
	if starts {
		d.starts++
	}
}

func (d *epochDraw) check(t *testing.T) {
	t.Helper()
	if d.cleared < 1000 || d.starts < 1000 {
		t.Fatalf("the draw missed a side: %d cleared, %d starting an epoch", d.cleared, d.starts)
	}
}
