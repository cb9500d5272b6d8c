package flows

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// cnpTape is n CNPs from B to A's QP aQP, gap apart, the first with IPv4
// ID id0 and each next with id0+step (step 0: one constant ID).
func cnpTape(n int, gap time.Duration, id0, step uint16) []taped {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	for i := range n {
		p := roce(hostB, hostA, bth.OpcodeCNP, aQP, 0, 0)
		p.IPID = uint32(id0 + uint16(i)*step)
		c.add(gap, p)
	}
	return tape
}

// TestMirrorCNPCopiesByIPID: a CNP that repeats the IPv4 ID, length, UDP
// source port and PSN of one of its flow's CNPs within the mirror window
// is a copy, once its sender's CNPs have shown two IDs; a sender with one
// constant ID, or ID 0, has none taken for copies.
func TestMirrorCNPCopiesByIPID(t *testing.T) {
	all := func(*packet.Packet) bool { return true }
	for _, tc := range []struct {
		name         string
		tape         []taped
		cnps, copies uint64
	}{
		// The first CNP's copy comes before the sender has shown a
		// second ID: it counts as a CNP (see the package doc).
		{"varying, copy right after", mirrored(cnpTape(5, 3*us, 100, 1), 0, all, nil), 6, 4},
		// Here the sender's second CNP comes before the first copy.
		{"varying, copy 20us later, CNPs between", mirrored(cnpTape(5, 3*us, 100, 1), 20*us, all, nil), 5, 5},
		{"varying, wrapping", mirrored(cnpTape(5, 3*us, 0xfffe, 1), 2*us, all, nil), 6 + 1, 4 - 1}, // the copy of ID 0 is not known
		{"constant ID", mirrored(cnpTape(5, 3*us, 7, 0), 2*us, all, nil), 10, 0},
		{"constant ID, no mirror", cnpTape(6, 3*us, 7, 0), 6, 0},
		{"ID 0", mirrored(cnpTape(5, 3*us, 0, 0), 2*us, all, nil), 10, 0},
		{"varying, no mirror", cnpTape(6, 3*us, 100, 1), 6, 0},
		{"varying, copies past the window", mirrored(cnpTape(3, 2*time.Millisecond, 100, 1), MirrorWindow+us, all, nil), 6, 0},
		{"varying, the same ID again later", append(cnpTape(3, 3*us, 100, 1), cnpTape(1, time.Millisecond, 100, 0)...), 4, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab := replay(tc.tape)
			f := tab.Current(key(hostB, hostA, aQP))
			if f.CNPs != tc.cnps || f.MirrorDuplicates() != tc.copies || f.Packets != tc.cnps {
				t.Errorf("CNPs %d, packets %d, mirror duplicates %d; want %d, %d, %d", f.CNPs, f.Packets, f.MirrorDuplicates(), tc.cnps, tc.cnps, tc.copies)
			}
		})
	}
	// A copy is matched once: a third CNP with the ID counts.
	tape := cnpTape(2, 3*us, 100, 1)
	tape = append(tape, tape[1], tape[1])
	tape[2].at.Time, tape[3].at.Time = tape[1].at.Time.Add(us), tape[1].at.Time.Add(2*us)
	if f := replay(tape).Current(key(hostB, hostA, aQP)); f.CNPs != 3 || f.MirrorDuplicates() != 1 {
		t.Errorf("twice repeated: CNPs %d, mirror duplicates %d; want 3, 1", f.CNPs, f.MirrorDuplicates())
	}
}

// TestMirrorCNPCopyAllocs: a CNP's copy, and a CNP, allocate nothing once
// the flow has had one.
func TestMirrorCNPCopyAllocs(t *testing.T) {
	c := newClock(Config{})
	p := roce(hostB, hostA, bth.OpcodeCNP, aQP, 0, 0)
	for i := range 3 {
		p.IPID = uint32(i + 1)
		c.add(us, p)
	}
	at := FrameAt{FrameRef: FrameRef{Time: c.now}, Nanos: c.now.UnixNano()}
	id := uint32(10)
	n := testing.AllocsPerRun(100, func() {
		id++
		p.IPID = id
		c.tab.AddFrame(p, &at)
		c.tab.AddFrame(p, &at)
	})
	if n != 0 {
		t.Errorf("%v allocations per CNP and copy, want 0", n)
	}
}

// TestMirrorCNPCopyCE: a CNP's copy with CE whose CNP carried ECT(0)
// (marked by the switch after the mirror's first copy) makes the CNP
// CE-marked once, in CNPsCE and ECNCE, as a data packet's copy does; a
// CNP marked before the mirror (both copies CE) counts once; a not-ECT
// CNP's copy with CE is a rewrite of the field, no mark (RFC 3168 §5).
func TestMirrorCNPCopyCE(t *testing.T) {
	all := func(*packet.Packet) bool { return true }
	ce := func(p *packet.Packet) { p.ECN = 3 }
	for _, tc := range []struct {
		name      string
		ecn       uint8
		wantCE    uint64
		wantECN   [4]uint64
		wantMarks int // copies Table.CopyMarkedCE names
	}{
		{"ECT(0), CE on the copy", 2, 5, [4]uint64{0, 0, 0, 5}, 5},
		{"ECT(1), CE on the copy", 1, 5, [4]uint64{0, 0, 0, 5}, 5},
		{"CE on both copies", 3, 5, [4]uint64{0, 0, 0, 5}, 0},
		{"not-ECT, CE on the copy", 0, 0, [4]uint64{5, 0, 0, 0}, 0},
	} {
		tape := cnpTape(5, 3*us, 100, 1)
		for i := range tape {
			tape[i].p.ECN = tc.ecn
		}
		tab := NewTable(Config{})
		marks := 0
		for _, e := range mirrored(tape, 20*us, all, ce) {
			at := At(e.at)
			p := e.p
			if _, _, _, copied := tab.AddFlowDelta(&p, &at); copied && tab.CopyMarkedCE() {
				marks++
			}
		}
		tab.Finish()
		f := tab.Current(key(hostB, hostA, aQP))
		if f.CNPs != 5 || f.MirrorDuplicates() != 5 || f.CNPsCE() != tc.wantCE || f.ECNCE != tc.wantCE || f.ECN != tc.wantECN || marks != tc.wantMarks {
			t.Errorf("%s: CNPs %d, mirror duplicates %d, CNPsCE %d, ECNCE %d, ECN %v, copies marking %d; want 5, 5, %d, %d, %v, %d",
				tc.name, f.CNPs, f.MirrorDuplicates(), f.CNPsCE(), f.ECNCE, f.ECN, marks, tc.wantCE, tc.wantCE, tc.wantECN, tc.wantMarks)
		}
	}
}
