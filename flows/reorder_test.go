package flows

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// reorderCases are request packets captured out of PSN order, reordered
// (adaptive routing, a mirror path) or resent, and what they leave on the
// request flow from A to B's QP bQP (see reorder.go).
var reorderCases = []struct {
	name      string
	play      func(c *clock)
	want      RetxStats
	events    string // kinds and PSNs of the request flow's events
	reordered uint64
	ooo       uint64 // Requests.OutOfOrder
	copies    uint64 // MirrorDuplicates
}{
	{
		name: "two packets reordered: no resend, no loss",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, us) // 102 behind 103: reordered
			writes(c, bQP, 104, 105, us) // new: no go-back-N resend of 103
			ack(c, aQP, 105)
		},
		reordered: 1, ooo: 1,
	},
	{
		name: "three packets 0,1,4,2,3,5: two reordered",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 104, 104, us)
			writes(c, bQP, 102, 103, us) // two fills, held both
			writes(c, bQP, 105, 105, us)
			ack(c, aQP, 105)
		},
		reordered: 2, ooo: 2,
	},
	{
		// The repro of the bug: the fill is followed by the ACKs, which
		// tell a resend from a reordering no more than they did, then by
		// new requests.
		name: "reordered, ACKs before the next request",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, us)
			ack(c, aQP, 101)
			ack(c, aQP, 102)
			ack(c, aQP, 103)
			writes(c, bQP, 104, 105, 5*us)
			ack(c, aQP, 105)
		},
		reordered: 1, ooo: 1,
	},
	{
		name: "a gap the mirror missed, then a reordering",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 104, 104, us) // 102, 103 missing
			writes(c, bQP, 103, 103, us) // reordered; 102 the mirror missed
			writes(c, bQP, 105, 105, us)
			ack(c, aQP, 105)
		},
		want:      RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1},
		events:    "mirror_loss@102x1",
		reordered: 1, ooo: 1,
	},
	{
		name: "a mirror copy after the fill",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, us)
			writes(c, bQP, 102, 102, 2*us) // the fill's copy
			writes(c, bQP, 104, 104, us)
			ack(c, aQP, 104)
		},
		reordered: 1, ooo: 1, copies: 1,
	},
	{
		// Go-back-N without its NAK in the capture: 102 is followed by
		// 103 again.
		name: "true loss, the NAK missed: 0,1,3,2,3,4",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 103, 4*us)
			writes(c, bQP, 104, 104, us)
			ack(c, aQP, 104)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 2, TimeoutWait: durs(4 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x2",
		ooo:    1,
	},
	{
		name: "true loss, two fills then the resends: 0,1,4,2,3,4,5",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 104, 104, us)
			writes(c, bQP, 102, 104, 4*us)
			writes(c, bQP, 105, 105, us)
			ack(c, aQP, 105)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 3, TimeoutWait: durs(4 * us),
			FabricLostPSNs: 2, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x3 fabric_loss@103x1",
		ooo:    2,
	},
	{
		name: "true loss, the NAK captured: go-back-N",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			ack(c, aQP, 101)
			c.add(us, nak(hostB, hostA, aQP, 102, 0, false))
			writes(c, bQP, 102, 103, us)
			writes(c, bQP, 104, 104, us)
			ack(c, aQP, 104)
		},
		want: RetxStats{GBNEpisodes: 1, GBNResent: 2, GBNRecovery: durs(us), GBNCatchUp: durs(3 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 go_back_n@102x2",
		ooo:    1,
	},
	{
		// A PSN sequence error NAK while the fill is held decides it a
		// resend, as when it came.
		name: "a fill held, then a NAK",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, 4*us)
			c.add(us, nak(hostB, hostA, aQP, 103, 0, false))
			writes(c, bQP, 103, 104, us)
			ack(c, aQP, 104)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 1, TimeoutWait: durs(4 * us),
			GBNEpisodes: 1, GBNResent: 1, GBNRecovery: durs(us), GBNCatchUp: durs(2 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x1 go_back_n@103x1",
		ooo:    1,
	},
	{
		name: "a fill held to the end of the capture",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, 4*us)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 1, TimeoutWait: durs(4 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x1",
		ooo:    1,
	},
	{
		// The last request of a flow delivered out of PSN order, then
		// the ACK of every PSN: a go-back-N responder acknowledges 103
		// only after 103 was sent again behind a resent 102, so 102
		// was reordered, not resent after an ACK timeout.
		name: "a fill held to the end of the capture, then the ACK of all",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, us)
			ack(c, aQP, 103)
		},
		reordered: 1, ooo: 1,
	},
	{
		// Two RDMA READs swapped: the first fills its own PSN and its
		// responses' (102..105), none missing, none mirror loss.
		name: "two READ requests reordered",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us) // path MTU 1024
			c.add(us, readReq(hostA, hostB, bQP, 106, 0x10000, 4096))
			c.add(us, readReq(hostA, hostB, bQP, 102, 0x20000, 4096)) // 102..105
			writes(c, bQP, 110, 111, us)
			ack(c, aQP, 111)
		},
		reordered: 1, ooo: 1,
	},
	{
		// 102 lost before the mirror, 104 delivered late (adaptive
		// routing), after the NAK of 102: the go-back-N starts at 102,
		// so 104 before it was the original, reordered, not the NAK's
		// answer (the real one then taken for a timeout).
		name: "reordered after a NAK, then its go-back-N",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us) // 102 lost
			writes(c, bQP, 105, 105, us) // 104 late
			c.add(us, nak(hostB, hostA, aQP, 102, 0, false))
			writes(c, bQP, 104, 104, us) // the original 104
			writes(c, bQP, 102, 106, 2*us)
			ack(c, aQP, 106)
		},
		want: RetxStats{GBNEpisodes: 1, GBNResent: 4, GBNRecovery: durs(3 * us), GBNCatchUp: durs(11 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events:    "fabric_loss@102x1 go_back_n@102x4",
		reordered: 1, ooo: 2,
	},
	{
		// An ACK short of the highest PSN proves nothing: a resend.
		name: "a fill held to the end of the capture, then the ACK of it",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, 4*us)
			ack(c, aQP, 102)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 1, TimeoutWait: durs(4 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x1",
		ooo:    1,
	},
	{
		// The ACK does not decide the fill (nor its PSN mirror loss);
		// the resend of 103 after it does.
		name: "a fill held, an ACK, then the resend",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, 4*us)
			ack(c, aQP, 102)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 104, 104, us)
			ack(c, aQP, 104)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 2, TimeoutWait: durs(4 * us),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x2",
		ooo:    1,
	},
	{
		// The ACK decides the rest of the gap (the mirror missed 102),
		// not the fill held: the resend after it makes 103 fabric loss.
		name: "a fill held, an ACK of the rest of its gap, then the resend",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 104, 104, us)   // 102, 103 missing
			writes(c, bQP, 103, 103, 4*us) // held
			ack(c, aQP, 102)
			writes(c, bQP, 104, 105, us)
			ack(c, aQP, 105)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 2, TimeoutWait: durs(4 * us),
			MirrorLostPSNs: 1, MirrorGaps: 1, FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@103x1 timeout@103x2 mirror_loss@102x1", // in capture order
		ooo:    1,
	},
	{
		// A millisecond with no request before the fill: the requester
		// waited for its ACK timeout, whatever comes next.
		name: "a fill after a quiet millisecond is a resend",
		play: func(c *clock) {
			writes(c, bQP, 100, 101, us)
			writes(c, bQP, 103, 103, us)
			writes(c, bQP, 102, 102, 2*time.Millisecond)
			writes(c, bQP, 104, 104, us)
			ack(c, aQP, 104)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 1, TimeoutWait: durs(2 * time.Millisecond),
			FabricLostPSNs: 1, FabricGaps: 1},
		events: "fabric_loss@102x1 timeout@102x1",
		ooo:    1,
	},
	{
		// Past maxHeld fills, the ones held are decided as resends,
		// and so is the next.
		name: "more fills than held",
		play: func(c *clock) {
			writes(c, bQP, 100, 100, us)
			writes(c, bQP, 106, 106, us) // 101..105 missing
			writes(c, bQP, 101, 105, us)
			writes(c, bQP, 107, 107, us)
			ack(c, aQP, 107)
		},
		want: RetxStats{Timeouts: 1, TimeoutResent: 5, TimeoutWait: durs(us),
			FabricLostPSNs: 5, FabricGaps: 1},
		events: "fabric_loss@101x1 timeout@101x5 fabric_loss@102x1 fabric_loss@103x1 fabric_loss@104x1 fabric_loss@105x1",
		ooo:    5,
	},
	{
		// The flow's first two requests swapped (adaptive routing): 100
		// is just before the first PSN captured, right after it, with
		// nothing to answer: a fill of the start, not a resend after a
		// 1 µs ACK timeout.
		name: "the first two requests swapped",
		play: func(c *clock) {
			writes(c, bQP, 101, 101, us)
			writes(c, bQP, 100, 100, us)
			writes(c, bQP, 102, 104, us)
			ack(c, aQP, 104)
		},
		reordered: 1, ooo: 1,
	},
	{
		// Swapped, then its go-back-N: the next request is a resend, so
		// the fill of the start was one too.
		name: "the first two requests swapped, then resent",
		play: func(c *clock) {
			writes(c, bQP, 101, 101, us)
			writes(c, bQP, 100, 100, us)
			writes(c, bQP, 101, 101, us)
			writes(c, bQP, 102, 102, us)
			ack(c, aQP, 102)
		},
		want:   RetxStats{Timeouts: 1, TimeoutResent: 2, TimeoutWait: durs(us)},
		events: "timeout@100x2",
		ooo:    1,
	},
	{
		// A capture that starts mid-stream, then the requester resends
		// the request before the first captured after its ACK timeout:
		// a resend, not a fill (it waited).
		name: "the request before the first resent after a timeout",
		play: func(c *clock) {
			writes(c, bQP, 101, 102, us)
			writes(c, bQP, 100, 102, 4*time.Millisecond)
			ack(c, aQP, 102)
		},
		want:   RetxStats{Timeouts: 1, TimeoutResent: 3, TimeoutWait: durs(4 * time.Millisecond)},
		events: "timeout@100x3",
	},
	{
		// Swapped, and later the start resent after a timeout: the
		// second 100 is a resend (each PSN fills the start once).
		name: "the first two requests swapped, the first resent later",
		play: func(c *clock) {
			writes(c, bQP, 101, 101, us)
			writes(c, bQP, 100, 100, us)
			writes(c, bQP, 102, 102, us)
			writes(c, bQP, 100, 102, 4*time.Millisecond)
			ack(c, aQP, 102)
		},
		want:      RetxStats{Timeouts: 1, TimeoutResent: 3, TimeoutWait: durs(4 * time.Millisecond)},
		events:    "timeout@100x3",
		reordered: 1, ooo: 1,
	},
	{
		// A timeout's resend burst reordered by the fabric: 377, 376,
		// 378, then new requests, then 379. One timeout, four resent.
		name: "a timeout resend burst reordered",
		play: func(c *clock) {
			writes(c, bQP, 370, 379, us)
			writes(c, bQP, 377, 377, 4*time.Millisecond)
			writes(c, bQP, 376, 376, us)
			writes(c, bQP, 378, 378, us)
			writes(c, bQP, 380, 382, us)
			writes(c, bQP, 379, 379, us)
			ack(c, aQP, 382)
		},
		want:   RetxStats{Timeouts: 1, TimeoutResent: 4, TimeoutWait: durs(4 * time.Millisecond)},
		events: "timeout@377x4",
	},
	{
		// The same PSN resent twice right after is no reordering of one
		// burst: a second resend.
		name: "a resend repeated is a second episode",
		play: func(c *clock) {
			writes(c, bQP, 370, 379, us)
			writes(c, bQP, 377, 378, 4*time.Millisecond)
			writes(c, bQP, 377, 377, us)
			writes(c, bQP, 380, 380, us)
			ack(c, aQP, 380)
		},
		want:   RetxStats{Timeouts: 2, TimeoutResent: 3, TimeoutWait: durs(4*time.Millisecond, us)},
		events: "timeout@377x2 timeout@377x1",
	},
}

// TestReorder checks reorderCases.
func TestReorder(t *testing.T) {
	for _, tc := range reorderCases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			tc.play(c)
			fs := c.flows(key(hostA, hostB, bQP))
			if len(fs) != 1 {
				t.Fatalf("%d flows, want 1", len(fs))
			}
			f := fs[0]
			var events []string
			for _, e := range f.RetxEvents() {
				events = append(events, fmt.Sprintf("%v@%dx%d", e.Kind, e.PSN, e.Count))
			}
			if f.Retx != tc.want {
				t.Errorf("Retx =\n  %+v\nwant\n  %+v", f.Retx, tc.want)
			}
			if s := strings.Join(events, " "); s != tc.events {
				t.Errorf("events = %q, want %q", s, tc.events)
			}
			if f.Reordered() != tc.reordered || f.Requests.OutOfOrder != tc.ooo || f.MirrorDuplicates() != tc.copies {
				t.Errorf("Reordered %d, OutOfOrder %d, MirrorDuplicates %d; want %d, %d, %d",
					f.Reordered(), f.Requests.OutOfOrder, f.MirrorDuplicates(), tc.reordered, tc.ooo, tc.copies)
			}
			if f.Requests.MissingPSNs != tc.want.MirrorLostPSNs {
				t.Errorf("MissingPSNs %d, want %d", f.Requests.MissingPSNs, tc.want.MirrorLostPSNs)
			}
			checkResendSum(t, f)
		})
	}
}
