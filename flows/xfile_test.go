package flows

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
)

// filesOverlap is a ParallelFiles that says every two files overlap
// (parallel captures) or none do (rotated files).
type filesOverlap bool

func (o filesOverlap) Parallel(a, b int) bool { return bool(o) && a != b }

// inFiles returns tape captured in two files: file 0 as the tape has it,
// file 1 with every packet keep selects, offset later (the clocks of two
// hosts disagree), merged in time order, file 0 first at a tie.
func inFiles(tape []taped, offset time.Duration, keep func(i int) bool) []taped {
	out := slices.Clone(tape)
	for i, e := range tape {
		if keep != nil && !keep(i) {
			continue
		}
		e.at.File = 1
		e.at.Time = e.at.Time.Add(offset)
		e.at.Frame += copyFrame
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b taped) int {
		if c := a.at.Time.Compare(b.at.Time); c != 0 {
			return c
		}
		return a.at.File - b.at.File
	})
	return out
}

// replayFiles is replay with the files' overlap told.
func replayFiles(tape []taped, par ParallelFiles) *Table {
	tab := NewTable(Config{})
	tab.SetParallelFiles(par)
	for i := range tape {
		e := &tape[i]
		p := e.p
		tab.Add(&p, e.at)
	}
	tab.Finish()
	return tab
}

// fileOffsets are the clock offsets the tests try: within a mirror's
// window, past it (the 659 µs of two NCCL hosts), milliseconds, tens of
// them; and the second file's clock behind the first's.
var fileOffsets = []time.Duration{3 * time.Microsecond, 659 * time.Microsecond, 3 * time.Millisecond, 40 * time.Millisecond, -700 * time.Microsecond}

// fileCopies sums the flows' FileCopies.
func fileCopies(tab *Table) (n uint64) {
	for _, f := range tab.Flows() {
		n += f.FileCopies()
	}
	return n
}

// TestParallelFiles captures each sequence of retransmission cases in two
// files taken in parallel, the second's clock off by each of fileOffsets:
// every packet, resends included (a resend is in both files, case (c)),
// is counted once, and the flows count what the one capture does.
func TestParallelFiles(t *testing.T) {
	cases := map[string]func(c *clock){}
	for _, tc := range retxCases {
		cases[tc.name] = tc.play
	}
	cases["a timeout's resend 1 ms after"] = func(c *clock) {
		for psn := range uint32(4) {
			c.add(us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
			ack(c, aQP, psn)
		}
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 4, 64))
		c.add(time.Millisecond, roce(hostA, hostB, opWriteOnly, bQP, 4, 64))
		ack(c, aQP, 4)
	}
	for name, play := range cases {
		var tape []taped
		c := newClock(Config{})
		c.tape = &tape
		play(c)
		plain := replay(tape)
		for _, off := range fileOffsets {
			t.Run(fmt.Sprintf("%s/%v", name, off), func(t *testing.T) {
				tab := replayFiles(inFiles(tape, off, nil), filesOverlap(true))
				sameFlows(t, plain, tab, 0, true)
				if n, want := fileCopies(tab), uint64(len(tape)); n+mirrorDups(tab) != want {
					t.Errorf("%d copies across files and %d mirror duplicates, want %d in all", n, mirrorDups(tab), want)
				}
			})
		}
	}
}

func mirrorDups(tab *Table) (n uint64) {
	for _, f := range tab.Flows() {
		n += f.MirrorDuplicates()
	}
	return n
}

// TestParallelFilesResendInOne: a timeout's resend that only one of two
// parallel files captured (the other's capture dropped it: case (b)) is a
// resend, whichever file has it and whichever clock is ahead.
func TestParallelFilesResendInOne(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	for psn := range uint32(4) {
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
		ack(c, aQP, psn)
	}
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 4, 64))
	c.add(2*time.Millisecond, roce(hostA, hostB, opWriteOnly, bQP, 4, 64))
	resend := tape[len(tape)-1].at.Frame
	ack(c, aQP, 4)
	plain := replay(tape)
	if r := plain.Flows()[0].Retx; r.Timeouts != 1 || r.TimeoutResent != 1 {
		t.Fatalf("plain: %+v, want one timeout", r)
	}
	for _, off := range fileOffsets {
		for lacks := range 2 {
			t.Run(fmt.Sprintf("file %d lacks it/%v", lacks, off), func(t *testing.T) {
				tab := replayFiles(lacking(inFiles(tape, off, nil), lacks, resend), filesOverlap(true))
				sameFlows(t, plain, tab, 0, true)
			})
		}
	}
}

// lacking is the frames of two parallel files but the capture of frame
// (of the one-file tape) in file: that file's capture dropped it.
func lacking(two []taped, file, frame int) []taped {
	var out []taped
	for _, e := range two {
		if e.at.File != file || e.at.Frame%copyFrame != frame {
			out = append(out, e)
		}
	}
	return out
}

// TestRotatedFiles: the rotated files of one capture (the second begins
// as the first ends) hold no copies of each other: a timeout's resend
// right after the rotation counts (case (a)).
func TestRotatedFiles(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	for psn := range uint32(4) {
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
		ack(c, aQP, psn)
	}
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 4, 64))
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 5, 64))
	rotate := len(tape)
	c.add(time.Millisecond, roce(hostA, hostB, opWriteOnly, bQP, 4, 64))
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 5, 64))
	ack(c, aQP, 5)
	plain := replay(tape)
	if r := plain.Flows()[0].Retx; r.Timeouts != 1 || r.TimeoutResent != 2 {
		t.Fatalf("plain: %+v, want one timeout, two resent", r)
	}
	rotated := slices.Clone(tape)
	for i := rotate; i < len(rotated); i++ {
		rotated[i].at.File = 1
	}
	sameFlows(t, plain, replayFiles(rotated, filesOverlap(false)), 0, true)
}

// TestParallelFilesMirrorCopies: a flow the mirror copies (each packet
// again 198 µs later), captured in two parallel files that both hold the
// copies: each copy counts once, a mirror duplicate, whatever the clocks'
// offset, and so does a copy only one file holds (the other's capture
// dropped it), judged on the clock of the flow's first file, not taken for
// a resend.
func TestParallelFilesMirrorCopies(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	for psn := range uint32(6) {
		c.add(10*us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
	}
	originals := len(tape)
	c.add(138*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 64)) // 198 µs after PSN 0
	for psn := uint32(1); psn < 6; psn++ {
		c.add(10*us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
	}
	if d := mirrorDups(replay(tape)); d != 6 {
		t.Fatalf("one file: %d mirror duplicates, want 6", d)
	}
	plain := replay(tape[:originals])
	copyOf := tape[len(tape)-1].at.Frame // the copy of PSN 5
	for _, off := range fileOffsets {
		for lacks := range 3 { // 2: neither file lacks it
			t.Run(fmt.Sprintf("file %d lacks a copy/%v", lacks, off), func(t *testing.T) {
				tab := replayFiles(lacking(inFiles(tape, off, nil), lacks, copyOf), filesOverlap(true))
				sameFlows(t, plain, tab, 6, true)
			})
		}
	}
}

// TestParallelFilesCNPs: CNPs captured in two parallel files count once
// (a CNP has no PSN: each file holds the CNPs it captured in order), with
// IPv4 IDs that tell copies or ID 0 that tells none, whatever the clocks'
// offset; a CNP only one file captured counts.
func TestParallelFilesCNPs(t *testing.T) {
	for _, step := range []uint16{0, 1} {
		tape := cnpTape(5, 60*us, 0, step)
		plain := replay(tape)
		if plain.Flows()[0].CNPs != 5 {
			t.Fatalf("plain: %d CNPs, want 5", plain.Flows()[0].CNPs)
		}
		for _, off := range fileOffsets {
			for lacks := range 3 { // 2: neither lacks one
				t.Run(fmt.Sprintf("IP ID step %d/file %d lacks one/%v", step, lacks, off), func(t *testing.T) {
					var two []taped
					for _, e := range inFiles(tape, off, nil) {
						if e.at.File != lacks || e.at.Frame%copyFrame != tape[2].at.Frame {
							two = append(two, e)
						}
					}
					tab := replayFiles(two, filesOverlap(true))
					sameFlows(t, plain, tab, 0, true)
					if n := tab.Flows()[0].CNPs; n != 5 {
						t.Errorf("%d CNPs, want 5", n)
					}
				})
			}
		}
	}
}

// TestParallelFilesMirrorCopyNotIdle: a flow the mirror copies (each
// packet again 43 µs later), acknowledged, captured in two parallel files,
// the second's clock 2 ms behind: the second file's packets come first,
// then the first's, all copies of them, which leave the flow's last
// packet 2 ms back. The first file's mirror copy of the flow's first PSN
// is then no connection begun again (the flow went idle on the second
// file's clock, not on its own): one flow each way, as in one capture
// (class P5 of the QA report of branch qa-three).
func TestParallelFilesMirrorCopyNotIdle(t *testing.T) {
	tape, plain := writesAcked(4, us)
	doubled := mirrored(tape, 43*us, func(*packet.Packet) bool { return true }, nil)
	if d := mirrorDups(replay(doubled)); d != uint64(len(tape)) {
		t.Fatalf("one file: %d mirror duplicates, want %d", d, len(tape))
	}
	for _, off := range []time.Duration{-2 * time.Millisecond, 2 * time.Millisecond, -40 * time.Millisecond} {
		t.Run(off.String(), func(t *testing.T) {
			tab := replayFiles(inFiles(doubled, off, nil), filesOverlap(true))
			sameFlows(t, plain, tab, uint64(len(tape)), true)
			if n := fileCopies(tab); n != uint64(len(doubled)) {
				t.Errorf("%d copies across files, want %d", n, len(doubled))
			}
		})
	}
}

// TestParallelFilesTimeoutResendNotIdle: a flow's first request, lost
// after its capture, resent at its ACK timeout 2.5 ms later, then more
// requests, all acknowledged, in two parallel files whose clocks differ
// by 2 ms: the later file's capture of the resend comes after the earlier
// file's packets acknowledged every request and the flow went idle on
// that file's clock, yet it is the earlier file's resend captured again,
// no connection begun again on the flow's first PSN (seed 20261406 of
// the randomized truth test's parallel mode).
func TestParallelFilesTimeoutResendNotIdle(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 0, 64))
	c.add(2500*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 64))
	ack(c, aQP, 0)
	for psn := uint32(1); psn < 4; psn++ {
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
		ack(c, aQP, psn)
	}
	plain := replay(tape)
	if r := plain.Flows()[0].Retx; r.Timeouts != 1 {
		t.Fatalf("plain: %+v, want one timeout", r)
	}
	for _, off := range []time.Duration{-2 * time.Millisecond, 2 * time.Millisecond} {
		t.Run(off.String(), func(t *testing.T) {
			tab := replayFiles(inFiles(tape, off, nil), filesOverlap(true))
			sameFlows(t, plain, tab, 0, true)
			if n := fileCopies(tab); n != uint64(len(tape)) {
				t.Errorf("%d copies across files, want %d", n, len(tape))
			}
		})
	}
}

// TestParallelFilesDropFilled: a packet that one of two parallel files
// dropped (its host's capture missed it) and the other holds, the file
// that lacks it ahead in capture order (its clock ahead, or the other's
// behind): the file that lacks it shows the PSN after it first, the
// other's packet comes later. It is no PSN gap and no fill out of order
// (nor reordering, nor mirror loss when an ACK of the leading file covers
// it first), as in the one capture: a request, a READ request and a READ
// response, whichever file lacks it and whatever the offset.
func TestParallelFilesDropFilled(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	drop := map[string]int{}
	for psn := range uint32(6) {
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
		if psn == 2 {
			drop["a WRITE"] = tape[len(tape)-1].at.Frame
		}
		ack(c, aQP, psn)
	}
	c.add(us, readReq(hostA, hostB, bQP, 6, 0x1000, 3000))
	drop["a READ request"] = tape[len(tape)-1].at.Frame
	c.add(us, roce(hostB, hostA, opReadFirst, aQP, 6, 1024))
	c.add(us, roce(hostB, hostA, opReadMid, aQP, 7, 1024))
	drop["a READ response"] = tape[len(tape)-1].at.Frame
	c.add(us, roce(hostB, hostA, opReadLast, aQP, 8, 952))
	for psn := uint32(9); psn < 12; psn++ {
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
		ack(c, aQP, psn)
	}
	plain := replay(tape)
	for name, frame := range drop {
		for _, off := range fileOffsets {
			for lacks := range 2 {
				t.Run(fmt.Sprintf("%s/file %d lacks it/%v", name, lacks, off), func(t *testing.T) {
					tab := replayFiles(lacking(inFiles(tape, off, nil), lacks, frame), filesOverlap(true))
					sameFlows(t, plain, tab, 0, true)
					for i, f := range tab.Flows() {
						p := plain.Flows()[i]
						if f.LastPSN != p.LastPSN || f.Reordered() != p.Reordered() {
							t.Errorf("flow %s: last PSN %d, %d reordered, want %d, %d", flowName(f), f.LastPSN, f.Reordered(), p.LastPSN, p.Reordered())
						}
					}
				})
			}
		}
	}
}

// TestParallelFilesMirrorCopyDropped: a connection the mirror copies
// (each packet again 98 µs later), in two parallel files, one of which
// dropped a packet and its copy, the other the copy of the packet before:
// the other file's copy of the first is the mirror's copy of a packet its
// file holds, not the first file's copy captured again (that file showed
// more copies, but none of that PSN), whichever file dropped which and
// whatever the offset (seed 20261195 of the randomized truth test's
// parallel mode). An ACK is tried at offsets within the copies' lag only:
// past it, the ACK the leading file lacks comes from the other file
// behind the highest the flow had, where no gap tells it from a copy.
func TestParallelFilesMirrorCopyDropped(t *testing.T) {
	tape, plain := writesAcked(6, 10*us)
	doubled := mirrored(tape, 98*us, func(*packet.Packet) bool { return true }, nil)
	for _, qp := range []uint32{bQP, aQP} {
		offs := append([]time.Duration{0}, fileOffsets...)
		if qp == aQP {
			offs = offs[:2]
		}
		for _, off := range offs {
			for a := range 2 {
				t.Run(fmt.Sprintf("QP %#x/file %d drops PSN 3/%v", qp, a, off), func(t *testing.T) {
					var two []taped
					for _, e := range inFiles(doubled, off, nil) {
						copied := e.at.Frame%copyFrame != e.at.Frame-e.at.File*copyFrame
						if psn := e.p.BTH.PSN; e.p.BTH.DestQP == qp && (e.at.File == a && psn == 3 || e.at.File != a && copied && psn == 2) {
							continue
						}
						two = append(two, e)
					}
					tab := replayFiles(two, filesOverlap(true))
					sameFlows(t, plain, tab, uint64(len(tape)), true)
				})
			}
		}
	}
}

// TestParallelFilesDropResponse: an ACK that one of two parallel files
// dropped, the file ahead in capture order: the other file's ACK comes
// once the flow's responses went past it, where no gap tells it from
// that file's ACK captured again; the counts do: the other file carried
// more of the flow's responses up to that file's highest than that file
// did. The ACK is counted, whatever the offset; and when the file behind
// began later (it lacks the first ones), an ACK it dropped is no reason
// to count one of its ACKs twice. (An ACK the file ahead dropped is then
// taken for a copy: the other file's count falls short of the run it is
// in.)
func TestParallelFilesDropResponse(t *testing.T) {
	tape, plain := writesAcked(8, 10*us)
	for _, late := range []bool{false, true} {
		for _, off := range fileOffsets {
			lags := 1 // the file behind in capture order
			if off < 0 {
				lags = 0
			}
			for a := range 2 {
				if late && a != lags {
					continue
				}
				t.Run(fmt.Sprintf("file %d drops ACK 5/file %d begins late %v/%v", a, lags, late, off), func(t *testing.T) {
					var two []taped
					for _, e := range inFiles(tape, off, nil) {
						psn := e.p.BTH.PSN
						if e.at.File == a && e.p.BTH.DestQP == aQP && psn == 5 || late && e.at.File == lags && psn < 2 {
							continue
						}
						two = append(two, e)
					}
					tab := replayFiles(two, filesOverlap(true))
					sameFlows(t, plain, tab, 0, true)
				})
			}
		}
	}
}

// writesAcked is the tape of n WRITEs from hostA, each acknowledged, gap
// apart, and the table of the tape in one capture.
func writesAcked(n uint32, gap time.Duration) ([]taped, *Table) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	for psn := range n {
		c.add(gap, roce(hostA, hostB, opWriteOnly, bQP, psn, 64))
		ack(c, aQP, psn)
	}
	return tape, replay(tape)
}
