package flows

import (
	"fmt"
	"testing"

	"github.com/rocedump/rocedump/decode/bth"
)

func TestPSNDiff(t *testing.T) {
	tests := []struct {
		a, b uint32
		want int32
	}{
		{5, 3, 2},
		{3, 5, -2},
		{0x000001, 0xfffffe, 3},
		{0xfffffe, 0x000001, -3},
		{0x7fffff, 0, 0x7fffff},
		{0x800000, 0, -0x800000}, // exactly half: behind
		{16227732, 7825157, -8374641},
	}
	for _, tc := range tests {
		if got := psnDiff(tc.a, tc.b); got != tc.want {
			t.Errorf("psnDiff(%#x, %#x) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// seqStep is one packet fed to a sequencer: its PSN, the extra PSNs it
// consumes (lo..hi, for a READ request), whether it may open a new run
// (a READ response FIRST/ONLY), and what it should be classified as.
type seqStep struct {
	psn    uint32
	lo, hi int32
	opens  bool
	want   seqResult
}

func in(psn uint32) seqStep                 { return seqStep{psn: psn, want: seqInOrder} }
func gap(psn uint32) seqStep                { return seqStep{psn: psn, want: seqGap} }
func ooo(psn uint32) seqStep                { return seqStep{psn: psn, want: seqOutOfOrder} }
func retx(psn uint32) seqStep               { return seqStep{psn: psn, want: seqRetransmit} }
func first(psn uint32) seqStep              { return seqStep{psn: psn, want: seqFirst} }
func (s seqStep) read(lo, hi int32) seqStep { s.lo, s.hi = lo, hi; return s }
func (s seqStep) opening() seqStep          { s.opens = true; return s }

func (r seqResult) String() string {
	return [...]string{"first", "in order", "gap", "out of order", "retransmitted"}[r]
}

func TestSequencer(t *testing.T) {
	type counts struct {
		gaps, ooo, retx, missing uint64
		high                     uint32
	}
	tests := []struct {
		name  string
		steps []seqStep
		want  counts
	}{
		{"in order", []seqStep{first(10), in(11), in(12), in(13)}, counts{high: 13}},
		{"gap", []seqStep{first(10), in(11), gap(14), in(15)}, counts{gaps: 1, missing: 2, high: 15}},
		{"out of order fills the gap", []seqStep{first(10), gap(12), ooo(11), in(13)}, counts{gaps: 1, ooo: 1, high: 13}},
		{"go-back-N after a gap", []seqStep{first(10), gap(13), ooo(11), ooo(12), retx(13), in(14)},
			counts{gaps: 1, ooo: 2, retx: 1, high: 14}},
		{"gap filled from the middle", []seqStep{first(0), gap(10), ooo(5), ooo(1), ooo(9), retx(5), in(11)},
			counts{gaps: 1, ooo: 3, retx: 1, missing: 6, high: 11}},
		{"retransmission", []seqStep{first(10), in(11), in(12), retx(11), retx(12), in(13)}, counts{retx: 2, high: 13}},
		{"duplicate of the highest", []seqStep{first(10), in(11), retx(11)}, counts{retx: 1, high: 11}},
		{"wrap", []seqStep{first(0xfffffe), in(0xffffff), in(0), in(1)}, counts{high: 1}},
		{"gap across the wrap", []seqStep{first(0xfffffe), gap(0x000001), ooo(0xffffff), ooo(0)},
			counts{gaps: 1, ooo: 2, high: 1}},
		{"far behind is a retransmission", []seqStep{first(100), in(101), retx(0xffff00)}, counts{retx: 1, high: 101}},
		{"READ consumes its span", []seqStep{first(100).read(1, 31), in(102), in(103)}, counts{high: 103}},
		{"READ span upper end", []seqStep{first(100).read(1, 31), in(132)}, counts{high: 132}},
		{"beyond a READ span", []seqStep{first(100).read(1, 31), gap(135)}, counts{gaps: 1, missing: 3, high: 135}},
		{"exact READ span", []seqStep{first(100).read(7, 7), in(108), gap(111)}, counts{gaps: 1, missing: 2, high: 111}},
		{"READ response opens a run", []seqStep{first(100), in(101), in(102), in(110).opening(), in(111), gap(113)},
			counts{gaps: 1, missing: 1, high: 113}},
		{"READ response resent", []seqStep{first(100), in(101), in(102), retx(101).opening(), retx(102)},
			counts{retx: 2, high: 102}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s PSNStats
			for i, st := range tc.steps {
				if got := s.observe(st.psn, st.lo, st.hi, st.opens); got != st.want {
					t.Fatalf("step %d (PSN %#x): %v, want %v", i, st.psn, got, st.want)
				}
			}
			got := counts{s.PSNGaps, s.OutOfOrder, s.Retransmitted, s.MissingPSNs, s.HighPSN}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if s.Packets != uint64(len(tc.steps)) || s.FirstPSN != tc.steps[0].psn || s.LastPSN != tc.steps[len(tc.steps)-1].psn {
				t.Errorf("Packets %d FirstPSN %#x LastPSN %#x, want %d %#x %#x", s.Packets, s.FirstPSN, s.LastPSN,
					len(tc.steps), tc.steps[0].psn, tc.steps[len(tc.steps)-1].psn)
			}
		})
	}
}

// TestSequencerBoundedGaps checks that a flow remembers at most
// maxOpenGaps open gaps: a PSN of a forgotten gap that arrives later counts
// as retransmitted, and MissingPSNs keeps counting it (the sequencer can no
// longer tell it arrived).
func TestSequencerBoundedGaps(t *testing.T) {
	var s PSNStats
	s.observe(0, 0, 0, false)
	psn := uint32(0)
	for range maxOpenGaps + 2 { // each jump skips one PSN
		psn += 2
		if r := s.observe(psn, 0, 0, false); r != seqGap {
			t.Fatalf("PSN %d: %v, want gap", psn, r)
		}
	}
	if s.seq.nGaps != maxOpenGaps {
		t.Fatalf("%d open gaps, want %d", s.seq.nGaps, maxOpenGaps)
	}
	if s.MissingPSNs != maxOpenGaps+2 {
		t.Fatalf("MissingPSNs %d, want %d", s.MissingPSNs, maxOpenGaps+2)
	}
	// PSNs 1 and 3 were skipped by the two oldest gaps, now forgotten.
	for _, p := range []uint32{1, 3} {
		if r := s.observe(p, 0, 0, false); r != seqRetransmit {
			t.Errorf("PSN %d of a forgotten gap: %v, want retransmitted", p, r)
		}
	}
	// PSN 5 is in a remembered gap.
	if r := s.observe(5, 0, 0, false); r != seqOutOfOrder {
		t.Errorf("PSN 5: %v, want out of order", r)
	}
	if s.MissingPSNs != maxOpenGaps+1 {
		t.Errorf("MissingPSNs %d, want %d", s.MissingPSNs, maxOpenGaps+1)
	}
	// Splitting a gap in the middle when the table is full keeps it bounded.
	for i := range 4 * maxOpenGaps {
		psn += 10
		s.observe(psn, 0, 0, false)
		s.observe(psn-5, 0, 0, false)
		if s.seq.nGaps > maxOpenGaps {
			t.Fatalf("step %d: %d open gaps", i, s.seq.nGaps)
		}
	}
}

func TestReadSpan(t *testing.T) {
	tests := []struct {
		n      uint32
		pmtu   uint32
		noRETH bool
		lo, hi int32
	}{
		{n: 0, lo: 0, hi: 0},
		{n: 1, lo: 0, hi: 0},
		{n: 256, lo: 0, hi: 0},
		{n: 257, lo: 0, hi: 1},
		{n: 4096, lo: 0, hi: 15},
		{n: 8192, lo: 1, hi: 31},
		{n: 8192, pmtu: 1024, lo: 7, hi: 7},
		{n: 5000, pmtu: 1024, lo: 4, hi: 4},
		{n: 1 << 31, lo: 1<<19 - 1, hi: maxReadSpan},
		{noRETH: true, lo: 0, hi: maxReadSpan},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("%d bytes, MTU %d, no RETH %v", tc.n, tc.pmtu, tc.noRETH)
		p := readReq(hostA, hostB, 1, 0, 0, tc.n)
		if tc.noRETH {
			p.BTH.Ext &^= bth.HasRETH
		}
		lo, hi := readSpan(&p.BTH, tc.pmtu)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: span %d..%d, want %d..%d", name, lo, hi, tc.lo, tc.hi)
		}
	}
	p := roce(hostA, hostB, opWriteOnly, 1, 0, 100)
	if lo, hi := readSpan(&p.BTH, 0); lo != 0 || hi != 0 {
		t.Errorf("WRITE span %d..%d, want 0..0", lo, hi)
	}
}

// TestNextIsObserve checks PSNStats.next against observe: after any
// history (gaps, retransmissions, READ requests' ranges, the wrap), a
// packet at the expected PSN that takes no PSNs beyond its own leaves
// the same state and result either way.
func TestNextIsObserve(t *testing.T) {
	histories := map[string][]seqStep{
		"in order":     {in(10), in(11), in(12)},
		"after a gap":  {in(10), in(14)},
		"after a fill": {in(10), in(14), in(12)},
		"after a READ": {in(10), {psn: 11, lo: 2, hi: 7}},
		"a retransmit": {in(10), in(11), in(11)},
		"at the wrap":  {in(psnMask - 1), in(psnMask)},
	}
	for name, h := range histories {
		var s PSNStats
		for _, st := range h {
			s.observe(st.psn, st.lo, st.hi, st.opens)
		}
		psn := s.seq.expHi
		a, b := s, s
		if a.gaps != nil {
			g := *a.gaps
			a.gaps = &g
		}
		ra, rb := a.observe(psn, 0, 0, false), b.next(psn)
		if ra != rb {
			t.Errorf("%s: next at %d = %d, observe %d", name, psn, rb, ra)
		}
		if (a.gaps == nil) != (b.gaps == nil) || a.gaps != nil && *a.gaps != *b.gaps {
			t.Errorf("%s: next at %d left gaps %v, observe %v", name, psn, b.gaps, a.gaps)
		}
		a.gaps, b.gaps = nil, nil
		if a != b {
			t.Errorf("%s: next at %d left %+v, observe %+v", name, psn, b, a)
		}
	}
}
