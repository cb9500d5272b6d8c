package flows

import (
	"testing"
	"time"
)

// TestEarlyResponses: ACKs captured before the requests they acknowledge
// (the responses' file's clock ahead of the requests') count, with the
// time by which the first came before its request; an ACK past requests
// the mirror missed, followed by later requests, does not; nor does a
// capture in the wire's order.
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
