package flows

import (
	"testing"
	"time"
)

// TestEarlyResponses: ACKs captured before the requests they acknowledge
// (the responses' file's clock ahead of the requests') count, with the
// time by which the first came before its request; an ACK past requests
// the mirror missed, followed by later requests, does not; nor does a
// capture in the wire's order. ACKs before the flow's first request count
// too, each (kept until the responses pair the flow, at most maxUnpaired),
// also when the responder's flow carries requests of its own; an ACK of a
// request before the capture does not.
func TestEarlyResponses(t *testing.T) {
	cases := []struct {
		name string
		play func(c *clock)
		n    uint64
		lead time.Duration
	}{
		{
			name: "in order",
			play: func(c *clock) {
				writes(c, bQP, 100, 103, us)
				ack(c, aQP, 103)
				writes(c, bQP, 104, 107, us)
				ack(c, aQP, 107)
			},
		},
		{
			name: "responses early",
			play: func(c *clock) {
				writes(c, bQP, 100, 103, us)
				ack(c, aQP, 103)
				ack(c, aQP, 107)             // 3 µs after 103, before 104..107
				writes(c, bQP, 104, 107, us) // 104 1 µs after it
				c.add(us, roce(hostB, hostA, opAck, aQP, 111, 0))
				c.add(us, roce(hostB, hostA, opAck, aQP, 115, 0))
				writes(c, bQP, 108, 115, 5*us) // 108 5 µs after ACK 111
			},
			n: 3, lead: 40 * us, // ACK 115 1 µs before 108, 108..115 5 µs apart
		},
		{
			// Paired only at Finish: one early response, by the time
			// to the flow's first request.
			name: "every response first",
			play: func(c *clock) {
				c.add(0, roce(hostB, hostA, opAck, aQP, 103, 0))
				writes(c, bQP, 100, 103, us)
			},
			n: 1, lead: us,
		},
		{
			// Three ACKs before the first request, kept until the
			// responses pair the flow; two ahead after it.
			name: "responses before the first requests",
			play: func(c *clock) {
				ack(c, aQP, 103)
				ack(c, aQP, 107)
				ack(c, aQP, 111)             // 1 µs before 100
				writes(c, bQP, 100, 111, us) // 100..111 at 10..21 µs
				ack(c, aQP, 115)             // 24 µs
				ack(c, aQP, 119)             // 27 µs
				writes(c, bQP, 112, 119, us) // 112..119 at 28..35 µs
			},
			n: 5, lead: 8 * us, // ACK 119 at 27 µs, request 119 at 35 µs
		},
		{
			// B's flow carries B's WRITEs and the ACKs of A's, A's
			// flow an ACK of B's before A's first WRITE (NCCL's QP
			// pairs): B's ACKs before A's first request count.
			name: "requests both ways",
			play: func(c *clock) {
				for psn := uint32(500); psn <= 503; psn++ {
					c.add(us, roce(hostB, hostA, opWriteMid, aQP, psn, 1024))
				}
				c.add(us, roce(hostA, hostB, opAck, bQP, 503, 0)) // 5 µs
				ack(c, aQP, 101)                                  // 8 µs
				ack(c, aQP, 103)                                  // 11 µs
				writes(c, bQP, 100, 103, us)                      // 12..15 µs
				ack(c, aQP, 107)                                  // 18 µs
				ack(c, aQP, 111)                                  // 21 µs
				writes(c, bQP, 104, 111, us)                      // 22..29 µs
			},
			n: 4, lead: 8 * us, // ACK 111 at 21 µs, request 111 at 29 µs
		},
		{
			// An ACK of a request before the capture began.
			name: "answers requests before the capture",
			play: func(c *clock) {
				ack(c, aQP, 99)
				writes(c, bQP, 100, 103, us)
				ack(c, aQP, 103)
			},
		},
		{
			// At most maxUnpaired responses wait for their requester.
			name: "more responses first than kept",
			play: func(c *clock) {
				for psn := uint32(0); psn < maxUnpaired+100; psn++ {
					c.add(us, roce(hostB, hostA, opAck, aQP, psn, 0))
				}
				writes(c, bQP, 0, maxUnpaired+99, us)
			},
			n: maxUnpaired, lead: (maxUnpaired + 100) * us, // ACK 0 at 1 µs, request 0 at 613 µs
		},
		{
			name: "mirror missed the tail",
			play: func(c *clock) {
				writes(c, bQP, 100, 103, us)
				ack(c, aQP, 103)
				ack(c, aQP, 107)
				writes(c, bQP, 108, 109, us)
				ack(c, aQP, 109)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			tc.play(c)
			fs := c.flows(key(hostA, hostB, bQP))
			if len(fs) != 1 {
				t.Fatalf("%d flows", len(fs))
			}
			f := fs[0]
			e := f.EarlyResponses()
			if e.N != tc.n || e.Lead != tc.lead {
				t.Errorf("early responses %d, lead %v; want %d, %v", e.N, e.Lead, tc.n, tc.lead)
			}
			if f.Retx.MirrorLostPSNs != 0 && tc.n != 0 {
				t.Errorf("%d PSNs taken for mirror loss", f.Retx.MirrorLostPSNs)
			}
		})
	}
}

// TestKeptResponsesBounded: the responses a table keeps for requesters not
// yet known stop at maxKeptResponses, whatever the number of flows (a
// mirror of responses only would keep maxUnpaired on each), and a flow's
// settled responses give their place back.
func TestKeptResponsesBounded(t *testing.T) {
	defer func(n int) { maxKeptResponses = n }(maxKeptResponses)
	maxKeptResponses = 3 * maxUnpaired / 2
	c := newClock(Config{})
	for qp := uint32(1); qp <= 4; qp++ { // responses only: no request comes
		for psn := uint32(0); psn < maxUnpaired; psn++ {
			c.add(us, roce(hostB, hostA, opAck, 0x100+qp, psn, 0))
		}
	}
	kept := func() int {
		n := 0
		for _, f := range c.tab.flows {
			if f.pair != nil {
				n += len(f.pair.early)
			}
		}
		return n
	}
	if got := kept(); got != maxKeptResponses || c.tab.keptResponses != got {
		t.Fatalf("kept %d responses (counted %d), want the bound %d", got, c.tab.keptResponses, maxKeptResponses)
	}

	// A connection whose requests come settles its kept responses: the
	// table keeps fewer, and its ACKs before the first WRITE count.
	c = newClock(Config{})
	for psn := uint32(0); psn < 10; psn++ {
		c.add(us, roce(hostB, hostA, opAck, aQP, psn, 0))
	}
	writes(c, bQP, 0, 9, us)
	c.add(us, roce(hostB, hostA, opAck, aQP, 9, 0))
	fs := c.flows(key(hostA, hostB, bQP))
	if c.tab.keptResponses != 0 {
		t.Errorf("%d responses still kept after their requests came", c.tab.keptResponses)
	}
	if len(fs) != 1 || fs[0].EarlyResponses().N != 10 {
		t.Errorf("early responses after settling: %d flows", len(fs))
	}
}
