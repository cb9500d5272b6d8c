package flows

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

// TestReadGapSkipsOtherRequests: A's READ at PSN 1000 (3 responses), four
// WRITEs at 1003-1006, a READ at 1007 (4 responses) whose FIRST, 1007, is
// lost before the mirror. The MIDDLE at 1008 skips one READ response PSN,
// not the WRITEs' four: they take PSNs of the requester's PSN space that
// no READ response carries (IBTA vol 1 §9.7). The READ request tells where
// its responses begin, and so does the ACK of the WRITEs, each alone.
// With neither, the responses cannot tell the WRITEs' PSNs from lost
// responses, and every skipped PSN counts. When the requester re-issues
// the READ, its FIRST fills the one PSN. When the first READ lost its
// LAST, 1002, too, that PSN counts as well (the READ request says where
// its responses end), in one gap with 1007; and so, in one run, when no
// WRITE came between the READs (the second READ then at 1003).
func TestReadGapSkipsOtherRequests(t *testing.T) {
	cases := []struct {
		name                   string
		writeACK, secondRead   bool
		reissue, tailLost      bool
		noWrites               bool
		gaps, missing, ooo, rr uint64
	}{
		{name: "READ request and ACK", writeACK: true, secondRead: true, gaps: 1, missing: 1},
		{name: "READ request, WRITEs acknowledged by the READ responses", secondRead: true, gaps: 1, missing: 1},
		{name: "ACK, READ request not captured", writeACK: true, gaps: 1, missing: 1},
		{name: "neither", gaps: 1, missing: 5},
		{name: "re-issued", writeACK: true, secondRead: true, reissue: true, gaps: 1, ooo: 1, rr: 3},
		{name: "first READ's LAST lost too", writeACK: true, secondRead: true, tailLost: true, gaps: 1, missing: 2},
		{name: "first READ's LAST lost too, WRITEs acknowledged by the READ responses", secondRead: true, tailLost: true, gaps: 1, missing: 2},
		{name: "first READ's LAST lost too, no WRITE between", secondRead: true, tailLost: true, noWrites: true, gaps: 1, missing: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			resp := func(psn uint32, ops ...bth.Opcode) {
				for i, op := range ops {
					c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
				}
			}
			c.add(us, readReq(hostA, hostB, bQP, 1000, 0x10000, 3072))
			resp(1000, opReadFirst, opReadMid)
			if !tc.tailLost {
				resp(1002, opReadLast)
			}
			second := uint32(1007)
			if tc.noWrites {
				second = 1003
			} else {
				writes(c, bQP, 1003, 1006, us)
			}
			if tc.writeACK {
				ack(c, aQP, 1006)
			}
			if tc.secondRead {
				c.add(us, readReq(hostA, hostB, bQP, second, 0x20000, 4096))
			}
			resp(second+1, opReadMid, opReadMid, opReadLast) // its FIRST lost before the mirror
			if tc.reissue {
				c.add(3*us, readReq(hostA, hostB, bQP, second, 0x20000, 4096))
				resp(second, opReadFirst, opReadMid, opReadMid, opReadLast)
			}
			s := only(t, c, key(hostB, hostA, aQP)).ReadResponses
			if s.PSNGaps != tc.gaps || s.MissingPSNs != tc.missing || s.OutOfOrder != tc.ooo || s.Retransmitted != tc.rr {
				t.Errorf("READ responses: %d gaps, %d missing, %d out of order, %d retransmitted; want %d, %d, %d, %d",
					s.PSNGaps, s.MissingPSNs, s.OutOfOrder, s.Retransmitted, tc.gaps, tc.missing, tc.ooo, tc.rr)
			}
		})
	}
}

// TestReadGapLastLostBeforeNextREAD: A's READs at PSN 100 and 102, 2048
// bytes each (two responses at MTU 1024); the first READ's LAST, 101, is
// lost before the mirror, and the second READ's FIRST, 102, follows its
// FIRST. A responder answers READs in order, so 101 is missing (a FIRST
// may begin past the PSN expected only when the READ before is complete).
// The requester re-issues the rest (READ at 101 for 1024 bytes) and sends
// the READ at 102 again; the responder answers both. The re-issue fills
// the gap: no mirror copy anywhere. With WRITEs between the READs, the
// gap holds the first READ's PSN only, not the WRITEs'.
func TestReadGapLastLostBeforeNextREAD(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		writes, reissue        bool
		gaps, missing, ooo, rr uint64
		reissued               uint64
	}{
		{name: "re-issued", reissue: true, gaps: 1, ooo: 1, rr: 2, reissued: 1},
		{name: "not re-issued", gaps: 1, missing: 1},
		{name: "WRITEs between", writes: true, gaps: 1, missing: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			resp := func(psn uint32, ops ...bth.Opcode) {
				for i, op := range ops {
					c.add(us, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
				}
			}
			second := uint32(102)
			c.add(us, readReq(hostA, hostB, bQP, 100, 0x10000, 2048))
			if tc.writes {
				writes(c, bQP, 102, 104, us)
				second = 105
			}
			c.add(us, readReq(hostA, hostB, bQP, second, 0x20000, 2048))
			resp(100, opReadFirst) // its LAST, 101, lost before the mirror
			resp(second, opReadFirst, opReadLast)
			if tc.reissue {
				c.add(3*us, readReq(hostA, hostB, bQP, 101, 0x10400, 1024))
				c.add(us, readReq(hostA, hostB, bQP, second, 0x20000, 2048))
				resp(101, opReadOnly)
				resp(second, opReadFirst, opReadLast)
			}
			rf := only(t, c, key(hostB, hostA, aQP))
			s := rf.ReadResponses
			if s.PSNGaps != tc.gaps || s.MissingPSNs != tc.missing || s.OutOfOrder != tc.ooo || s.Retransmitted != tc.rr {
				t.Errorf("READ responses: %d gaps, %d missing, %d out of order, %d retransmitted; want %d, %d, %d, %d",
					s.PSNGaps, s.MissingPSNs, s.OutOfOrder, s.Retransmitted, tc.gaps, tc.missing, tc.ooo, tc.rr)
			}
			qf := only(t, c, key(hostA, hostB, bQP))
			if qf.Retx.ReissuedReads != tc.reissued {
				t.Errorf("%d re-issued READs, want %d", qf.Retx.ReissuedReads, tc.reissued)
			}
			if d := qf.MirrorDuplicates() + rf.MirrorDuplicates(); d != 0 {
				t.Errorf("%d mirror copies, want none", d)
			}
		})
	}
}
