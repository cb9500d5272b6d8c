package flows

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/gen"
)

const us = time.Microsecond

// durs is a Durations of the given intervals.
func durs(xs ...time.Duration) Durations {
	var d Durations
	for _, x := range xs {
		d.add(x)
	}
	return d
}

// writes plays WRITE MIDDLE packets from A to B's QP bQP at PSNs from..to
// (inclusive), dt apart.
func writes(c *clock, bQP, from, to uint32, dt time.Duration) {
	for psn := from; psn != psnAdd(to, 1); psn = psnAdd(psn, 1) {
		c.add(dt, roce(hostA, hostB, opWriteMid, bQP, psn, 1024))
	}
}

func ack(c *clock, aQP, psn uint32) {
	c.add(3*us, roce(hostB, hostA, opAck, aQP, psn, 0))
}

// aQP and bQP are the QPs of A and B in retxCases.
const aQP, bQP = 0x22, 0x11

// retxCases are hand-made sequences, one loss and recovery mechanism
// each, with exact times, and what they leave on the request flow from A
// to B's QP bQP.
var retxCases = []struct {
	name          string
	play          func(c *clock)
	want          RetxStats
	reissueResent uint64 // Flow.ReissueResent
	events        string // kinds and PSNs of the request flow's events
}{
	{
		name: "go-back-N, loss after the mirror",
		play: func(c *clock) {
			writes(c, bQP, 100, 109, us)
			ack(c, aQP, 104)
			c.add(us, nak(hostB, hostA, aQP, 105, 0, false))
			writes(c, bQP, 105, 109, 2*us) // first resend 2 µs after the NAK
			writes(c, bQP, 110, 111, us)   // catch-up: 2+4*2+1 = 11 µs after the NAK
			ack(c, aQP, 111)
		},
		want:   RetxStats{GBNEpisodes: 1, GBNResent: 5, GBNRecovery: durs(2 * us), GBNCatchUp: durs(11 * us)},
		events: "go_back_n@105x5",
	},
	{
		name: "go-back-N, loss before the mirror: a gap the NAK names",
		play: func(c *clock) {
			writes(c, bQP, 100, 103, us)
			writes(c, bQP, 106, 107, us) // 104, 105 missing
			ack(c, aQP, 103)
			c.add(us, nak(hostB, hostA, aQP, 104, 0, false))
			writes(c, bQP, 104, 107, us)
			writes(c, bQP, 108, 108, us)
			ack(c, aQP, 108)
		},
		want: RetxStats{GBNEpisodes: 1, GBNResent: 4, GBNRecovery: durs(us), GBNCatchUp: durs(5 * us),
			FabricLostPSNs: 2, FabricGaps: 1},
		events: "fabric_loss@104x2 go_back_n@104x4",
	},
	{
		name: "a second NAK during go-back-N is a second episode",
		play: func(c *clock) {
			writes(c, bQP, 100, 105, us)
			c.add(us, nak(hostB, hostA, aQP, 102, 0, false))
			writes(c, bQP, 102, 103, us)
			c.add(us, nak(hostB, hostA, aQP, 103, 0, false))
			writes(c, bQP, 103, 106, us)
			ack(c, aQP, 106)
		},
		want:   RetxStats{GBNEpisodes: 2, GBNResent: 2 + 3, GBNRecovery: durs(us, us), GBNCatchUp: durs(4 * us)},
		events: "go_back_n@102x2 go_back_n@103x3",
	},
	{
		name: "timeout: resend with no NAK, wait since the previous request",
		play: func(c *clock) {
			writes(c, bQP, 100, 103, us)
			ack(c, aQP, 101)
			writes(c, bQP, 102, 103, 4096*us) // 4096 µs after 103, then 1 µs
			writes(c, bQP, 104, 104, us)
			ack(c, aQP, 104)
		},
		want:   RetxStats{Timeouts: 1, TimeoutResent: 2, TimeoutWait: durs(4096*us + 3*us)},
		events: "timeout@102x2",
	},
	{
		name: "RNR NAK, retry after the timer",
		play: func(c *clock) {
			c.add(us, roce(hostA, hostB, opSendOnly, bQP, 400, 64))
			c.add(us, roce(hostA, hostB, opSendOnly, bQP, 401, 64))
			ack(c, aQP, 400)
			c.add(us, nak(hostB, hostA, aQP, 401, 14, true))
			c.add(1280*us, roce(hostA, hostB, opSendOnly, bQP, 401, 64))
			c.add(us, roce(hostA, hostB, opSendOnly, bQP, 402, 64))
			ack(c, aQP, 402)
		},
		want:   RetxStats{RNRRetries: 1, RNRResent: 1, RNRWait: durs(1280 * us)},
		events: "rnr_retry@401x1",
	},
	{
		// The RNR NAK at 102 says the responder received 102 (and
		// refused it): the mirror missed its copy, the fabric did not
		// lose it, though its retry fills the gap.
		name: "RNR NAK at a PSN the mirror missed: mirror loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			writes(c, bQP, 103, 104, us) // 102 missing
			c.add(us, nak(hostB, hostA, aQP, 102, 14, true))
			writes(c, bQP, 102, 104, 1280*us)
			ack(c, aQP, 104)
		},
		want: RetxStats{RNRRetries: 1, RNRResent: 3, RNRWait: durs(1280 * us),
			MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@102x1 rnr_retry@102x3",
	},
	{
		// As a PSN sequence error NAK decides its PSN's gap from it on
		// lost in the fabric, an RNR NAK decides it delivered: PSNs
		// before 102 the NAK acknowledges, 103 goes with 102.
		name: "RNR NAK inside a gap the mirror missed: the gap is mirror loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 100, us)
			ack(c, aQP, 100)
			writes(c, bQP, 104, 104, us) // 101..103 missing
			c.add(us, nak(hostB, hostA, aQP, 102, 14, true))
			writes(c, bQP, 102, 104, 1280*us)
			ack(c, aQP, 104)
		},
		want: RetxStats{RNRRetries: 1, RNRResent: 3, RNRWait: durs(1280 * us),
			MirrorLostPSNs: 3, MirrorGaps: 1},
		events: "mirror_loss@101x1 mirror_loss@102x2 rnr_retry@102x3",
	},
	{
		// The RNR NAK comes before the packet after the gap is
		// captured: its retry decides the PSN.
		name: "RNR NAK before the gap at its PSN opens: mirror loss at the retry",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			c.add(us, nak(hostB, hostA, aQP, 102, 14, true))
			writes(c, bQP, 103, 103, us) // 102 missing
			writes(c, bQP, 102, 103, 1280*us)
			ack(c, aQP, 103)
		},
		want: RetxStats{RNRRetries: 1, RNRResent: 2, RNRWait: durs(1281 * us),
			MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@102x1 rnr_retry@102x2",
	},
	{
		// 103, sent after 102, is resent because of the RNR NAK: the
		// capture cannot tell whether it had reached the responder,
		// and a PSN the mirror lacks and a resend fills is fabric
		// loss, as in go-back-N.
		name: "RNR NAK, a later PSN the mirror lacks: fabric loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 102, us)
			ack(c, aQP, 101)
			writes(c, bQP, 104, 104, us) // 103 missing
			c.add(us, nak(hostB, hostA, aQP, 102, 14, true))
			writes(c, bQP, 102, 104, 1280*us)
			ack(c, aQP, 104)
		},
		want: RetxStats{RNRRetries: 1, RNRResent: 3, RNRWait: durs(1280 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "rnr_retry@102x3 fabric_loss@103x1",
	},
	{
		// The mirror missed 102, the last request before the RNR NAK:
		// its retry comes in order, no resend in the capture, but it
		// answers the NAK, so that a mirror's copy of the retry is no
		// RNR retry (TestMirrorCopies).
		name: "RNR NAK at a PSN the mirror missed, the last: the retry in order",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			c.add(us, nak(hostB, hostA, aQP, 102, 14, true))
			writes(c, bQP, 102, 103, 1280*us)
			ack(c, aQP, 103)
		},
	},
	{
		// A fatal NAK (here remote access error) answers the request at
		// its PSN (IBTA vol 1 §9.7.5.2): 102 reached the responder,
		// the mirror missed it. The QP goes to the error state: no
		// resend ever fills the gap.
		name: "fatal NAK at a PSN the mirror missed: mirror loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			writes(c, bQP, 103, 104, us) // 102 missing
			c.add(us, nak(hostB, hostA, aQP, 102, 2, false))
		},
		want:   RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@102x1",
	},
	{
		// Before 103 delivered (the NAK acknowledges them), 103
		// received, and the rest of its gap with it, as an RNR NAK
		// decides its gap.
		name: "fatal NAK inside a gap the mirror missed: the gap is mirror loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 100)
			writes(c, bQP, 105, 106, us) // 102..104 missing
			c.add(us, nak(hostB, hostA, aQP, 103, 1, false))
		},
		want:   RetxStats{MirrorLostPSNs: 3, MirrorGaps: 1},
		events: "mirror_loss@102x1 mirror_loss@103x2",
	},
	{
		// The NAK comes before the packet after the gap is captured:
		// Finish decides the gap.
		name: "fatal NAK before the gap at its PSN opens: mirror loss at Finish",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			c.add(us, nak(hostB, hostA, aQP, 102, 3, false))
			writes(c, bQP, 103, 103, us) // 102 missing
		},
		want:   RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@102x1",
	},
	{
		// The request the NAK answers is past the last one captured:
		// the responder received it, one more mirror gap (as for an
		// ACK past the last request).
		name: "fatal NAK at a PSN the mirror missed, the last: mirror loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			c.add(us, nak(hostB, hostA, aQP, 102, 4, false))
		},
		want:   RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@102x1",
	},
	{
		// A reserved NAK code says nothing the specification defines:
		// it acknowledges the PSNs before its own, as every NAK does,
		// and leaves its own undecided.
		name: "NAK with a reserved code in a gap: its PSN undecided",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 100)
			writes(c, bQP, 104, 105, us) // 102, 103 missing
			c.add(us, nak(hostB, hostA, aQP, 103, 9, false))
		},
		want:   RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@102x1",
	},
	{
		name: "re-issued READ",
		play: func(c *clock) {
			c.add(us, readReq(hostA, hostB, bQP, 1000, 0x1000, 4096))
			c.add(4*us, roce(hostB, hostA, opReadFirst, aQP, 1000, 1024))
			c.add(us, readReq(hostA, hostB, bQP, 1001, 0x1400, 3072))
		},
		want:   RetxStats{ReissuedReads: 1},
		events: "reissued_read@1001x1",
	},
	{
		// IBTA vol 1 ch. 9: a requester that misses a READ response
		// re-issues the READ for the rest, then resends, go-back-N, the
		// requests that followed the READ: right after the re-issue, a
		// few µs after their first copies (no mirror copy: nothing but
		// the re-issue came between), with no NAK, and no ACK timer
		// expired. The wait is the re-issue's.
		name: "re-issued READ, then the requests after the READ again",
		play: func(c *clock) { reissuePlay(c, 0, us, false) },
		want: RetxStats{ReissuedReads: 1}, reissueResent: 3,
		events: "reissued_read@1001x1 reissue_resend@1004x3",
	},
	{
		// The same, the READ responses 800 µs late: the resends are past
		// any mirror window of their first copies.
		name: "re-issued READ after slow responses, then the requests after the READ again",
		play: func(c *clock) { reissuePlay(c, 800*us, us, false) },
		want: RetxStats{ReissuedReads: 1}, reissueResent: 3,
		events: "reissued_read@1001x1 reissue_resend@1004x3",
	},
	{
		// The first WRITE after the READ lost before the mirror: its
		// resend fills the gap, held until the next resend decides it.
		name: "re-issued READ, then the requests after the READ again, the first lost before the mirror",
		play: func(c *clock) { reissuePlay(c, 0, us, true) },
		want: RetxStats{ReissuedReads: 1, FabricLostPSNs: 1, FabricGaps: 1}, reissueResent: 3,
		events: "reissued_read@1001x1 fabric_loss@1004x1 reissue_resend@1004x3",
	},
	{
		// 5 ms with no request after the re-issue, then the resends:
		// the requester waited for its ACK timeout.
		name:   "re-issued READ, then a timeout",
		play:   func(c *clock) { reissuePlay(c, 0, 5000*us, false) },
		want:   RetxStats{ReissuedReads: 1, Timeouts: 1, TimeoutResent: 3, TimeoutWait: durs(5000 * us)},
		events: "reissued_read@1001x1 timeout@1004x3",
	},
	{
		name: "mirror gap: the responder ACKs past it",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 100)
			writes(c, bQP, 104, 105, us) // 102, 103 missing
			ack(c, aQP, 105)
		},
		want:   RetxStats{MirrorLostPSNs: 2, MirrorGaps: 1},
		events: "mirror_loss@102x2",
	},
	{
		// The ACK of 102 comes before the packet after the gap: the
		// gap is partly decided as it opens.
		name: "mirror gap ACKed before the packet after it is captured",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 100)
			ack(c, aQP, 102)
			writes(c, bQP, 104, 104, us) // 102, 103 missing
			ack(c, aQP, 104)
		},
		want:   RetxStats{MirrorLostPSNs: 2, MirrorGaps: 1},
		events: "mirror_loss@102x1 mirror_loss@103x1",
	},
	{
		name: "one gap, part delivered, part lost: the NAK splits it",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 100)
			writes(c, bQP, 106, 107, us) // 102..105 missing
			c.add(us, nak(hostB, hostA, aQP, 104, 0, false))
			writes(c, bQP, 104, 107, us)
			ack(c, aQP, 107)
		},
		want: RetxStats{GBNEpisodes: 1, GBNResent: 4, GBNRecovery: durs(us),
			MirrorLostPSNs: 2, MirrorGaps: 1, FabricLostPSNs: 2, FabricGaps: 1},
		events: "mirror_loss@102x2 fabric_loss@104x2 go_back_n@104x4",
	},
	{
		name: "a gap filled by a resend nobody NAKed: fabric loss, timeout",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			ack(c, aQP, 101)
			writes(c, bQP, 103, 103, us) // 102 missing
			writes(c, bQP, 102, 103, 5000*us)
			ack(c, aQP, 103)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 2, TimeoutWait: durs(5000 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x2",
	},
	{
		// (An ACK more than one PSN past the last request would not
		// fit the request flow, and the flows would not pair.)
		name: "tail the capture missed: ACKed past the last request",
		play: func(c *clock) {
			writes(c, bQP, 100, 103, us)
			ack(c, aQP, 101)
			ack(c, aQP, 104)
		},
		want:   RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1},
		events: "mirror_loss@104x1",
	},
	{
		name: "clean traffic",
		play: func(c *clock) {
			connection(c, aQP, bQP, 0xfffffe, 5) // across the PSN wrap
		},
	},
	{
		// The real capture that reused dest QPN 0x11: a new epoch,
		// no resend and no loss.
		name: "QPN reused for a second connection",
		play: func(c *clock) {
			connection(c, aQP, bQP, 7825157, 10)
			c.add(2*time.Second, roce(hostA, hostB, opSendOnly, bQP, 16227732, 64))
			ack(c, aQP, 16227732)
			connection(c, aQP, bQP, 16227733, 9)
		},
	},
}

// reissuePlay: a WRITE packet at 999, a READ at 1000 of 4096 bytes (responses 1000-1003 at MTU
// 1024), WRITE packets at 1004-1006 (the first lost before the mirror with
// lost), the READ's FIRST resp after the READ and a MIDDLE at 1002 (1001
// lost): the requester re-issues the READ from 1001 and, wait later, sends
// 1004-1006 again; the answers, an ACK, and a new WRITE at 1007.
func reissuePlay(c *clock, resp, wait time.Duration, lost bool) {
	writes(c, bQP, 999, 999, us) // shows the path MTU
	c.add(us, readReq(hostA, hostB, bQP, 1000, 0x1000, 4096))
	if lost {
		writes(c, bQP, 1005, 1006, us)
	} else {
		writes(c, bQP, 1004, 1006, us)
	}
	c.add(resp, roce(hostB, hostA, opReadFirst, aQP, 1000, 1024))
	c.add(us, roce(hostB, hostA, opReadMid, aQP, 1002, 1024)) // 1001 lost
	c.add(us, readReq(hostA, hostB, bQP, 1001, 0x1400, 3072))
	c.add(wait-us, nil)
	writes(c, bQP, 1004, 1006, us)
	c.add(us, roce(hostB, hostA, opReadFirst, aQP, 1001, 1024))
	c.add(us, roce(hostB, hostA, opReadMid, aQP, 1002, 1024))
	c.add(us, roce(hostB, hostA, opReadLast, aQP, 1003, 1024))
	ack(c, aQP, 1006)
	writes(c, bQP, 1007, 1007, us)
	ack(c, aQP, 1007)
}

// TestRetxEpisodes checks the episode and loss counters of retxCases.
func TestRetxEpisodes(t *testing.T) {
	for _, tc := range retxCases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			tc.play(c)
			var got RetxStats
			var events []string
			var reissueResent uint64
			for _, f := range c.flows(key(hostA, hostB, bQP)) {
				addRetx(&got, &f.Retx)
				reissueResent += f.ReissueResent()
				for _, e := range f.RetxEvents() {
					events = append(events, fmt.Sprintf("%v@%dx%d", e.Kind, e.PSN, e.Count))
				}
				checkResendSum(t, f)
			}
			if got != tc.want {
				t.Errorf("Retx =\n  %+v\nwant\n  %+v", got, tc.want)
			}
			if s := strings.Join(events, " "); s != tc.events {
				t.Errorf("events = %q, want %q", s, tc.events)
			}
			if reissueResent != tc.reissueResent {
				t.Errorf("resent after re-issued READs: %d, want %d", reissueResent, tc.reissueResent)
			}
		})
	}
}

// addRetx adds the counters of b to a (durations: only when a has none).
func addRetx(a, b *RetxStats) {
	if *a == (RetxStats{}) {
		*a = *b
		return
	}
	a.GBNEpisodes += b.GBNEpisodes
	a.GBNResent += b.GBNResent
	a.Timeouts += b.Timeouts
	a.TimeoutResent += b.TimeoutResent
	a.RNRRetries += b.RNRRetries
	a.RNRResent += b.RNRResent
	a.ReissuedReads += b.ReissuedReads
	a.MirrorLostPSNs += b.MirrorLostPSNs
	a.MirrorGaps += b.MirrorGaps
	a.FabricLostPSNs += b.FabricLostPSNs
	a.FabricGaps += b.FabricGaps
}

// checkResendSum checks that every resend is in exactly one episode.
func checkResendSum(t *testing.T, f *Flow) {
	t.Helper()
	r := &f.Retx
	if got, want := r.GBNResent+r.TimeoutResent+r.RNRResent+f.ReissueResent()+r.ReissuedReads, f.Requests.Retransmitted+f.Requests.OutOfOrder-f.Reordered(); got != want {
		t.Errorf("flow %s: resends in episodes + re-issued READs = %d, want Retransmitted + OutOfOrder - Reordered = %d", flowName(f), got, want)
	}
}

// TestRetxNAKEvents checks that NAKs and RNR NAKs are events of the flow
// that carries them, with their code or timer.
func TestRetxNAKEvents(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	c := newClock(Config{})
	writes(c, bQP, 10, 12, us)
	c.add(us, nak(hostB, hostA, aQP, 11, uint8(bth.NAKRemoteAccessError), false))
	c.add(us, nak(hostB, hostA, aQP, 11, 18, true))
	acks := c.flows(key(hostB, hostA, aQP))[0]
	var got []string
	for _, e := range acks.RetxEvents() {
		got = append(got, fmt.Sprintf("%v@%d/%d frame %d", e.Kind, e.PSN, e.Code, e.At.Frame))
	}
	want := "nak@11/2 frame 4, rnr_nak@11/18 frame 5"
	if s := strings.Join(got, ", "); s != want {
		t.Errorf("events = %q, want %q", s, want)
	}
	if n := acks.FatalNAKs(); n != 1 {
		t.Errorf("FatalNAKs = %d, want 1", n)
	}
	first, last, ok := acks.RetxSpan(EventNAK)
	if !ok || first.Frame != 4 || last.Frame != 4 {
		t.Errorf("RetxSpan(nak) = %d..%d %v, want 4..4", first.Frame, last.Frame, ok)
	}
}

// TestRetxSpanEpisode: the span of an episode's kind ends at its last
// resend, not at its first (where its event is): a go-back-N resending
// PSNs 11 to 13 spans the frames of the three resends.
func TestRetxSpanEpisode(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	c := newClock(Config{})
	writes(c, bQP, 10, 10, us)                      // frame 1
	writes(c, bQP, 12, 13, us)                      // frames 2-3: 11 lost
	c.add(us, nak(hostB, hostA, aQP, 11, 0, false)) // frame 4
	writes(c, bQP, 11, 13, us)                      // frames 5-7: go-back-N
	writes(c, bQP, 14, 14, us)                      // frame 8
	f := c.flows(key(hostA, hostB, bQP))[0]
	first, last, ok := f.RetxSpan(EventGoBackN)
	if !ok || first.Frame != 5 || last.Frame != 7 {
		t.Errorf("RetxSpan(go-back-N) = frames %d..%d %v, want 5..7", first.Frame, last.Frame, ok)
	}
	if f.Retx.GBNEpisodes != 1 || f.Retx.GBNResent != 3 {
		t.Errorf("episodes %d, resent %d; want 1, 3", f.Retx.GBNEpisodes, f.Retx.GBNResent)
	}
}

// TestRetxEventCap checks that a flow keeps its first MaxRetxEvents events,
// counts the rest, and that RetxSpan still sees the last.
func TestRetxEventCap(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	c := newClock(Config{})
	const n = MaxRetxEvents + 8
	for i := range uint32(n) {
		writes(c, bQP, 100+i, 100+i, us)
		writes(c, bQP, 100+i, 100+i, 5*time.Millisecond) // timeout resend
		ack(c, aQP, 100+i)
	}
	f := c.flows(key(hostA, hostB, bQP))[0]
	if f.Retx.Timeouts != n || len(f.RetxEvents()) != MaxRetxEvents || f.Retx.MoreEvents != n-MaxRetxEvents {
		t.Errorf("timeouts %d, events kept %d, more %d; want %d, %d, %d",
			f.Retx.Timeouts, len(f.RetxEvents()), f.Retx.MoreEvents, n, MaxRetxEvents, n-MaxRetxEvents)
	}
	_, last, _ := f.RetxSpan(EventTimeout)
	if last != f.Last && last.Frame != f.Last.Frame {
		t.Errorf("last timeout at frame %d, want %d", last.Frame, f.Last.Frame)
	}
}

// TestRetxLinkAtFinish covers two connections between the same hosts whose
// requests use the same PSNs, so that no response tells them apart while
// packets arrive: the gap one of them shows is decided at Finish, once the
// requests each side sends the other way have paired them. A NAK goes to
// both candidates but only the flow that resends at its PSN takes it.
func TestRetxLinkAtFinish(t *testing.T) {
	const a1, a2, b1, b2 = 0x21, 0x22, 0x11, 0x12
	c := newClock(Config{})
	for psn := uint32(0); psn < 8; psn++ {
		if psn != 3 { // the mirror missed PSN 3 on connection 1
			c.add(us, roce(hostA, hostB, opSendOnly, b1, psn, 64))
		}
		c.add(us, roce(hostA, hostB, opSendOnly, b2, psn, 64))
		c.add(us, roce(hostB, hostA, opAck, a1, psn, 0))
		c.add(us, roce(hostB, hostA, opAck, a2, psn, 0))
	}
	// Connection 2: PSN 8 lost after the mirror, NAK, go-back-N.
	c.add(us, roce(hostA, hostB, opSendOnly, b1, 8, 64))
	c.add(us, roce(hostA, hostB, opSendOnly, b2, 8, 64))
	c.add(us, roce(hostA, hostB, opSendOnly, b2, 9, 64))
	c.add(us, nak(hostB, hostA, a2, 8, 0, false))
	c.add(us, roce(hostA, hostB, opSendOnly, b2, 8, 64))
	c.add(us, roce(hostA, hostB, opSendOnly, b2, 9, 64))
	c.add(us, roce(hostB, hostA, opAck, a2, 9, 0))
	// B's own requests, answered by A: they pair the flows.
	for i := uint32(0); i < 3; i++ {
		c.add(us, roce(hostB, hostA, opSendOnly, a1, 1000+i, 64))
		c.add(us, roce(hostA, hostB, opAck, b1, 1000+i, 0))
		c.add(us, roce(hostB, hostA, opSendOnly, a2, 5000+i, 64))
		c.add(us, roce(hostA, hostB, opAck, b2, 5000+i, 0))
	}
	r1, r2 := c.flows(key(hostA, hostB, b1))[0], c.flows(key(hostA, hostB, b2))[0]
	if r1.Partner == nil || r1.Partner.Key.DestQP != a1 || r2.Partner == nil || r2.Partner.Key.DestQP != a2 {
		t.Fatalf("pairing: %s with %s, %s with %s", flowName(r1), flowName(r1.Partner), flowName(r2), flowName(r2.Partner))
	}
	want1 := RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1}
	want2 := RetxStats{GBNEpisodes: 1, GBNResent: 2, GBNRecovery: durs(us)}
	if r1.Retx != want1 {
		t.Errorf("connection 1: %+v, want %+v", r1.Retx, want1)
	}
	if r2.Retx != want2 {
		t.Errorf("connection 2: %+v, want %+v", r2.Retx, want2)
	}
}

// TestRetxFatalNAKAtFinish checks a fatal NAK that comes while no single
// requester is known (two connections of a host pair at the same PSNs):
// Finish, with the partners known, decides the PSN it names, which the
// mirror missed, mirror loss; the other connection keeps none.
func TestRetxFatalNAKAtFinish(t *testing.T) {
	const a1, a2, b1, b2 = 0x21, 0x22, 0x11, 0x12
	c := newClock(Config{})
	for psn := uint32(0); psn < 8; psn++ {
		c.add(us, roce(hostA, hostB, opSendOnly, b1, psn, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, b2, psn, 64))
		c.add(us, roce(hostB, hostA, opAck, a1, psn, 0))
		c.add(us, roce(hostB, hostA, opAck, a2, psn, 0))
	}
	// Connection 1: the mirror missed PSN 8, which the responder
	// refused with a remote access error NAK.
	c.add(us, roce(hostA, hostB, opSendOnly, b1, 9, 64))
	c.add(us, roce(hostA, hostB, opSendOnly, b2, 8, 64))
	c.add(us, roce(hostA, hostB, opSendOnly, b2, 9, 64))
	c.add(us, nak(hostB, hostA, a1, 8, uint8(bth.NAKRemoteAccessError), false))
	c.add(us, roce(hostB, hostA, opAck, a2, 9, 0))
	// B's own requests, answered by A: they pair the flows.
	for i := uint32(0); i < 3; i++ {
		c.add(us, roce(hostB, hostA, opSendOnly, a1, 1000+i, 64))
		c.add(us, roce(hostA, hostB, opAck, b1, 1000+i, 0))
		c.add(us, roce(hostB, hostA, opSendOnly, a2, 5000+i, 64))
		c.add(us, roce(hostA, hostB, opAck, b2, 5000+i, 0))
	}
	r1, r2 := c.flows(key(hostA, hostB, b1))[0], c.flows(key(hostA, hostB, b2))[0]
	if r1.Partner == nil || r1.Partner.Key.DestQP != a1 || r2.Partner == nil || r2.Partner.Key.DestQP != a2 {
		t.Fatalf("pairing: %s with %s, %s with %s", flowName(r1), flowName(r1.Partner), flowName(r2), flowName(r2.Partner))
	}
	if want := (RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1}); r1.Retx != want {
		t.Errorf("connection 1: %+v, want %+v", r1.Retx, want)
	}
	if r2.Retx != (RetxStats{}) {
		t.Errorf("connection 2: %+v, want none", r2.Retx)
	}
}

// TestRetxCM checks the online link that an RDMA CM exchange gives: the
// gap is decided by the ACK, before Finish.
func TestRetxCM(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	c := newClock(Config{})
	playCM(c, 0x42, aQP, 100, bQP, 9000)
	writes(c, bQP, 100, 101, us)
	writes(c, bQP, 103, 103, us)
	ack(c, aQP, 103)
	r := c.tab.Current(key(hostA, hostB, bQP))
	if r.Retx.MirrorLostPSNs != 1 || r.Retx.MirrorGaps != 1 {
		t.Errorf("before Finish: mirror lost %d in %d gaps, want 1 in 1", r.Retx.MirrorLostPSNs, r.Retx.MirrorGaps)
	}
}

// TestRetxGenerated checks the retransmission counters of every request
// flow of the generated captures against what the scenario did, and that
// the real captures show none.
func TestRetxGenerated(t *testing.T) {
	type want struct {
		gbn, gbnResent, timeouts, timeoutResent, rnr, rnrResent, reissued uint64
		mirror, mirrorGaps, fabric, fabricGaps                            uint64
		recoveryMax, waitMax                                              time.Duration
	}
	retransmissions := map[string]want{
		"gbn-seen":   {gbn: 1, gbnResent: 3},
		"gbn-gap":    {gbn: 1, gbnResent: 3, fabric: 2, fabricGaps: 1},
		"timeout":    {timeouts: 1, timeoutResent: 2, waitMax: 4096 * us},
		"rnr":        {rnr: 1, rnrResent: 1, waitMax: 1280 * us},
		"read-loss":  {reissued: 1},
		"mirror-gap": {mirror: 2, mirrorGaps: 1},
	}
	widespread := map[string]want{}
	for i := range 8 {
		widespread[fmt.Sprintf("q%d", i)] = want{mirror: 1, mirrorGaps: 1}
	}
	exact := map[string]map[string]want{
		"retransmissions":           retransmissions,
		"retx_mirrored":             retransmissions,
		"mirror_erspan2_vlan_trunc": {"w": {gbn: 1, gbnResent: 3}},
		"snaplen64":                 {"a": {gbn: 1, gbnResent: 2}},
		"retx_mixed": {
			"two-gbn":      {gbn: 2, gbnResent: 6, fabric: 1, fabricGaps: 1},
			"rnr-twice":    {rnr: 2, rnrResent: 2, waitMax: 640 * us},
			"tail-mirror":  {mirror: 1, mirrorGaps: 1},
			"mirror-twice": {mirror: 4, mirrorGaps: 2},
			"uc-mirror":    {}, // nothing acknowledges UC: undecided
		},
		"retx_mirror_widespread": widespread,
		// A 16-packet WRITE lost at its 4th packet, behind the mirror:
		// go back to it and resend the 13 packets from there.
		"incident_demo": {"r0-12": {gbn: 1, gbnResent: 13}},
		// Every frame twice: the recovery as without the copies.
		"mirror_dup": {
			"gbn-same":     {gbn: 2, gbnResent: 5, fabric: 2, fabricGaps: 1},
			"timeout-late": {timeouts: 1, timeoutResent: 1, waitMax: 1000 * us},
			"routed-copy":  {rnr: 1, rnrResent: 2, waitMax: 10 * us},
			"read-reissue": {reissued: 1},
		},
	}
	for _, truthPath := range genCaptures(t) {
		name := strings.TrimSuffix(filepath.Base(truthPath), ".truth.json")
		t.Run(name, func(t *testing.T) {
			tr, sc, capPath := loadTruth(t, truthPath)
			tab := feedFile(t, capPath)
			for _, ft := range tr.Flows {
				if ft.Role != "requester" {
					continue
				}
				var f *Flow
				for _, x := range tab.Flows() {
					if x.Key == truthKey(t, ft) {
						f = x
					}
				}
				if f == nil {
					continue
				}
				checkResendSum(t, f)
				w, listed := exact[name][ft.Flow]
				if !listed {
					// Unlisted flows: no loss and no resend.
					if f.Retx != (RetxStats{}) {
						t.Errorf("%s: Retx = %+v, want none", ft.Flow, f.Retx)
					}
					continue
				}
				r := &f.Retx
				got := want{r.GBNEpisodes, r.GBNResent, r.Timeouts, r.TimeoutResent, r.RNRRetries, r.RNRResent, r.ReissuedReads,
					r.MirrorLostPSNs, r.MirrorGaps, r.FabricLostPSNs, r.FabricGaps, r.GBNRecovery.Max, max(r.TimeoutWait.Max, r.RNRWait.Max)}
				if listed && got != w {
					t.Errorf("%s: got %+v, want %+v", ft.Flow, got, w)
				}
				// Against the scenario: mirror drops on requests are
				// mirror loss, gaps that fabric drops left are fabric
				// loss, and the truth's timeouts are timeout episodes.
				var scf *gen.Flow
				for i := range sc.Flows {
					if sc.Flows[i].Name == ft.Flow {
						scf = &sc.Flows[i]
					}
				}
				if scf == nil {
					t.Fatalf("%s: not in the scenario", ft.Flow)
				}
				reqHoles, _ := expectedHoles(scf)
				if scf.Transport == "" || scf.Transport == "RC" {
					if r.FabricLostPSNs != reqHoles.outOfOrder {
						t.Errorf("%s: FabricLostPSNs = %d, want %d", ft.Flow, r.FabricLostPSNs, reqHoles.outOfOrder)
					}
					if r.MirrorLostPSNs != uint64(ft.MirrorDrops) {
						t.Errorf("%s: MirrorLostPSNs = %d, want the truth's mirror drops %d", ft.Flow, r.MirrorLostPSNs, ft.MirrorDrops)
					}
					if r.Timeouts != uint64(ft.Timeouts) {
						t.Errorf("%s: Timeouts = %d, want %d", ft.Flow, r.Timeouts, ft.Timeouts)
					}
				}
			}
		})
	}
	real, _ := filepath.Glob("../testdata/pcaps/real/linlinw5_*.pcap")
	for _, p := range real {
		for _, f := range feedFile(t, p).Flows() {
			if f.Retx != (RetxStats{}) || len(f.RetxEvents()) != 0 {
				t.Errorf("%s: flow %s: Retx = %+v, events %d; want none", filepath.Base(p), flowName(f), f.Retx, len(f.RetxEvents()))
			}
		}
	}
}

// TestRetxAETHCut: a mirror's snap length cut the AETH of the responses
// (ERSPAN with a VLAN, cut at 110 bytes), so a NAK cannot be told from an
// ACK. Such a response at PSN p acknowledges only the PSNs before p, as a
// NAK does: the PSN lost before the mirror that it names is fabric loss
// (resent), not a PSN the responder got and the mirror missed.
func TestRetxAETHCut(t *testing.T) {
	cut := func(p *packet.Packet) *packet.Packet {
		p.BTH.Ext &^= bth.HasAETH
		p.BTH.AETH = bth.AETH{}
		p.BTH.Truncated, p.Truncated = true, true
		p.CapLen = 14 + 20 + 8 + bth.BTHLen + 2
		return p
	}
	c := newClock(Config{})
	writes(c, bQP, 100, 101, us)
	writes(c, bQP, 103, 104, us) // 102 lost before the mirror
	c.add(3*us, cut(nak(hostB, hostA, aQP, 102, 0, false)))
	writes(c, bQP, 102, 104, us) // go-back-N
	c.add(3*us, cut(roce(hostB, hostA, opAck, aQP, 104, 0)))
	f := only(t, c, key(hostA, hostB, bQP))
	if f.Retx.FabricLostPSNs != 1 || f.Retx.MirrorLostPSNs != 0 {
		t.Errorf("FabricLostPSNs %d, MirrorLostPSNs %d; want 1 and 0", f.Retx.FabricLostPSNs, f.Retx.MirrorLostPSNs)
	}
}

// TestRetxSharedNAK: two QPs between the same hosts at the same PSNs (NCCL
// starts every QP at PSN 0), whose ACK flows nothing tells apart yet. An
// RNR NAK to one of them is pending on both; it must not make the other
// QP's later resend an RNR retry: the NAK's own responder getting past it
// settles it everywhere, and a QP it may not answer takes it only for a
// resend at its very PSN.
func TestRetxSharedNAK(t *testing.T) {
	const a1, a2, b1, b2 = 0x21, 0x22, 0x11, 0x12
	start := func() *clock {
		c := newClock(Config{})
		for psn := uint32(0); psn < 2; psn++ {
			c.add(us, roce(hostA, hostB, opSendOnly, b1, psn, 64))
			c.add(us, roce(hostA, hostB, opSendOnly, b2, psn, 64))
		}
		c.add(us, roce(hostB, hostA, opAck, a1, 0, 0))
		c.add(us, roce(hostB, hostA, opAck, a2, 0, 0))
		c.add(us, nak(hostB, hostA, a2, 1, 1, true)) // RNR NAK, 10 µs
		return c
	}
	tests := []struct {
		name string
		play func(c *clock)
	}{
		{"the other QP resends the NAK's PSN after the retry was acknowledged", func(c *clock) {
			c.add(20*us, roce(hostA, hostB, opSendOnly, b2, 1, 64)) // the retry
			c.add(us, roce(hostB, hostA, opAck, a2, 1, 0))
			c.add(time.Millisecond, roce(hostA, hostB, opSendOnly, b1, 1, 64)) // timeout
			c.add(us, roce(hostB, hostA, opAck, a1, 1, 0))
		}},
		{"the other QP resends a later PSN, the retry's ACK not captured", func(c *clock) {
			c.add(us, roce(hostA, hostB, opSendOnly, b1, 2, 64))
			c.add(20*us, roce(hostA, hostB, opSendOnly, b2, 1, 64))            // the retry
			c.add(time.Millisecond, roce(hostA, hostB, opSendOnly, b1, 2, 64)) // timeout
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := start()
			tt.play(c)
			r1, r2 := only(t, c, key(hostA, hostB, b1)), only(t, c, key(hostA, hostB, b2))
			if r1.Retx.RNRRetries != 0 || r1.Retx.Timeouts != 1 {
				t.Errorf("QP %#x (no RNR NAK): %d RNR retries, %d timeouts; want 0 and 1", b1, r1.Retx.RNRRetries, r1.Retx.Timeouts)
			}
			if r2.Retx.RNRRetries != 1 || r2.Retx.Timeouts != 0 {
				t.Errorf("QP %#x (RNR NAK): %d RNR retries, %d timeouts; want 1 and 0", b2, r2.Retx.RNRRetries, r2.Retx.Timeouts)
			}
		})
	}
}
