package flows

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
)

// TestReorderedGoBackN: a go-back-N burst the fabric reordered (the
// NAK's PSN resent after the one after it) is resends, one episode, not
// a resend and mirror copies: nothing shows that the mirror copies the
// connection.
func TestReorderedGoBackN(t *testing.T) {
	c := newClock(Config{})
	writes(c, bQP, 100, 109, us)
	ack(c, aQP, 104)
	c.add(us, nak(hostB, hostA, aQP, 105, 0, false))
	c.add(2*us, roce(hostA, hostB, opWriteMid, bQP, 106, 1024))
	c.add(us, roce(hostA, hostB, opWriteMid, bQP, 105, 1024))
	writes(c, bQP, 107, 111, us)
	ack(c, aQP, 111)
	f := only(t, c, key(hostA, hostB, bQP))
	r := f.Retx
	if f.MirrorDuplicates() != 0 || r.GBNEpisodes != 1 || r.GBNResent != 5 || r.Timeouts != 0 {
		t.Errorf("mirror copies %d, go-back-N %d of %d resends, timeouts %d; want 0, 1 of 5, 0",
			f.MirrorDuplicates(), r.GBNEpisodes, r.GBNResent, r.Timeouts)
	}
}

// allParallel says every two files overlap in time.
type allParallel struct{}

func (allParallel) Parallel(a, b int) bool { return a != b }

// twoFiles feeds a table as the merge of two files, one per direction:
// A's packets (requests) from file 0, B's (responses) from file 1.
type twoFiles struct{ *clock }

func newTwoFiles() twoFiles {
	c := newClock(Config{})
	c.tab.SetParallelFiles(allParallel{})
	return twoFiles{c}
}

// add feeds p, dt after the previous packet, from the file of its source.
func (c twoFiles) add(dt time.Duration, p *packet.Packet) {
	c.now = c.now.Add(dt)
	c.frame++
	file := 0
	if p.Src == netip.MustParseAddr(hostB) {
		file = 1
	}
	c.tab.Add(p, FrameRef{File: file, Frame: c.frame, Time: c.now})
}

func (c twoFiles) writes(from, to uint32, dt time.Duration) {
	for psn := from; psn != psnAdd(to, 1); psn = psnAdd(psn, 1) {
		c.add(dt, roce(hostA, hostB, opWriteMid, bQP, psn, 1024))
	}
}

func eventsOf(f *Flow) string {
	var s []string
	for _, e := range f.RetxEvents() {
		s = append(s, fmt.Sprintf("%v@%dx%d", e.Kind, e.PSN, e.Count))
	}
	return strings.Join(s, " ")
}

// TestLateNAKStartsGoBackN: two files, one per direction, the responses'
// clock ahead: the NAK sorts after the resends it asked for. They are
// its go-back-N (recovery time unknown: 0), not mirror copies, nor a
// timeout and an unanswered NAK; the resends that filled its gap too.
func TestLateNAKStartsGoBackN(t *testing.T) {
	cases := []struct {
		name   string
		play   func(c twoFiles)
		want   RetxStats
		events string
	}{
		{
			name: "lost after the mirror",
			play: func(c twoFiles) {
				c.writes(100, 104, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 101, 0))
				c.writes(105, 109, us)
				c.writes(105, 109, us) // the resends, before the NAK
				c.add(us, roce(hostB, hostA, opAck, aQP, 104, 0))
				c.add(0, nak(hostB, hostA, aQP, 105, 0, false))
				c.writes(110, 111, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 111, 0))
			},
			want:   RetxStats{GBNEpisodes: 1, GBNResent: 5, GBNRecovery: durs(0), GBNCatchUp: durs(us)},
			events: "go_back_n@105x5",
		},
		{
			name: "lost before the mirror",
			play: func(c twoFiles) {
				c.writes(100, 104, us)
				c.writes(107, 107, us) // 105, 106 missing
				c.writes(105, 107, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 104, 0))
				c.add(0, nak(hostB, hostA, aQP, 105, 0, false))
				c.writes(108, 109, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 109, 0))
			},
			want: RetxStats{GBNEpisodes: 1, GBNResent: 3, GBNRecovery: durs(0), GBNCatchUp: durs(us),
				FabricLostPSNs: 2, FabricGaps: 1},
			events: "fabric_loss@105x1 go_back_n@105x3 fabric_loss@106x1", // each fill as it came
		},
		{
			// Both NAKs after both bursts.
			name: "two bursts",
			play: func(c twoFiles) {
				c.writes(100, 104, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 101, 0))
				c.writes(105, 109, us)
				c.writes(105, 109, us) // the first NAK's resends
				c.writes(110, 112, us)
				c.writes(110, 112, us) // the second's
				c.add(us, roce(hostB, hostA, opAck, aQP, 104, 0))
				c.add(0, nak(hostB, hostA, aQP, 105, 0, false))
				c.add(us, roce(hostB, hostA, opAck, aQP, 109, 0))
				c.add(0, nak(hostB, hostA, aQP, 110, 0, false))
				c.writes(113, 114, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 114, 0))
			},
			want:   RetxStats{GBNEpisodes: 2, GBNResent: 8, GBNRecovery: durs(0, 0), GBNCatchUp: durs(us)},
			events: "go_back_n@105x5 go_back_n@110x3",
		},
		{
			// The RNR timer (code 1: 10 µs) less than the skew.
			name: "RNR NAK after its retry",
			play: func(c twoFiles) {
				c.writes(100, 101, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 100, 0))
				c.writes(102, 103, us)
				c.add(20*us, roce(hostA, hostB, opSendOnly, bQP, 102, 256)) // the retry
				c.writes(103, 103, us)
				c.add(us, nak(hostB, hostA, aQP, 102, 1, true))
				c.writes(104, 105, us)
				c.add(us, roce(hostB, hostA, opAck, aQP, 105, 0))
			},
			want:   RetxStats{RNRRetries: 1, RNRResent: 2, RNRWait: durs(0)},
			events: "rnr_retry@102x2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newTwoFiles()
			tc.play(c)
			f := only(t, c.clock, key(hostA, hostB, bQP))
			if f.MirrorDuplicates() != 0 {
				t.Errorf("%d mirror copies", f.MirrorDuplicates())
			}
			if f.Retx != tc.want {
				t.Errorf("retx %+v\nwant %+v", f.Retx, tc.want)
			}
			if s := eventsOf(f); s != tc.events {
				t.Errorf("events %q, want %q", s, tc.events)
			}
			checkResendSum(t, f)
		})
	}
}
