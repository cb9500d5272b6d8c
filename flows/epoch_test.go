package flows

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

const (
	hostA = "10.1.16.61"
	hostB = "10.1.16.62"
)

// connection plays n SEND_ONLY requests from A's QP aQP to B's QP bQP from
// startPSN, each ACKed.
func connection(c *clock, aQP, bQP, startPSN uint32, n int) {
	for i := range n {
		psn := psnAdd(startPSN, int32(i))
		c.add(2*time.Microsecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
		c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, psn, 0))
	}
}

// playCM plays an RDMA CM REQ from A (QPN aQP, start PSN aPSN) and the
// REP from B (QPN bQP, start PSN bPSN), as UD SEND_ONLY MADs on QP1.
func playCM(c *clock, commID, aQP, aPSN, bQP, bPSN uint32) {
	mad := func(src, dst string, psn uint32) *packet.Packet {
		p := roce(src, dst, opUDSend, bth.CMQPN, psn, 256)
		p.BTH.DETH = bth.DETH{QKey: 0x80010000, SrcQP: 1}
		p.HasCM = true
		p.CM.MgmtClass = bth.MgmtClassCM
		return p
	}
	req := mad(hostA, hostB, 7)
	req.CM.AttributeID = bth.CMAttrREQ
	req.CM.LocalCommID, req.CM.LocalQPN, req.CM.StartingPSN = commID, aQP, aPSN
	req.CM.ServiceID = 0x0000000001064e51 // IP CM, TCP port space, port 20049
	c.add(10*time.Microsecond, req)
	rep := mad(hostB, hostA, 9)
	rep.CM.AttributeID = bth.CMAttrREP
	rep.CM.LocalCommID, rep.CM.RemoteCommID, rep.CM.LocalQPN, rep.CM.StartingPSN = commID^0xffff, commID, bQP, bPSN
	c.add(20*time.Microsecond, rep)
}

// TestEpochs covers connection epochs: a QPN reused for a new connection
// is a new Flow with Epoch+1, never a burst of retransmissions or a gap.
// The PSNs are those of a real capture that reused dest QPN 0x11 (start
// PSNs 7825157 then 16227732, 8402575 apart: more than half the 24-bit PSN
// space, so the second start looks 8374641 PSNs *behind* the first).
func TestEpochs(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	reqKey, ackKey := key(hostA, hostB, bQP), key(hostB, hostA, aQP)
	tests := []struct {
		name       string
		play       func(c *clock)
		wantEpochs int
		wantRetx   uint64
		wantPair   []PairMethod // PairedBy of each epoch of reqKey
	}{
		{
			name: "idle then PSN restart",
			play: func(c *clock) {
				connection(c, aQP, bQP, 7825157, 10)
				c.add(2*time.Second, roce(hostA, hostB, opSendOnly, bQP, 16227732, 64))
				c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 16227732, 0))
				connection(c, aQP, bQP, 16227733, 9)
			},
			wantEpochs: 2,
			wantPair:   []PairMethod{PairPSN, PairPSN},
		},
		{
			name: "CM exchange between",
			play: func(c *clock) {
				connection(c, aQP, bQP, 7825157, 10)
				c.add(time.Second, nil)
				playCM(c, 0x5000, aQP, 16227732, bQP, 3000)
				connection(c, aQP, bQP, 16227732, 10)
			},
			wantEpochs: 2,
			wantPair:   []PairMethod{PairPSN, PairCM},
		},
		{
			// A CM exchange starts a connection even with no idle time
			// and a start PSN close to the old one.
			name: "CM exchange, no idle, near PSN",
			play: func(c *clock) {
				connection(c, aQP, bQP, 100, 10)
				playCM(c, 0x5001, aQP, 105, bQP, 3000)
				connection(c, aQP, bQP, 105, 10)
			},
			wantEpochs: 2,
			wantPair:   []PairMethod{PairPSN, PairCM},
		},
		{
			// Go-back-N straight after the loss: the PSNs go back, but
			// the flow never went idle.
			name: "go-back-N burst, no idle",
			play: func(c *clock) {
				for psn := uint32(1000); psn < 1100; psn++ {
					c.add(time.Microsecond, roce(hostA, hostB, opWriteMid, bQP, psn, 1024))
				}
				c.add(3*time.Microsecond, nak(hostB, hostA, aQP, 1050, 0, false))
				for psn := uint32(1050); psn < 1100; psn++ {
					c.add(time.Microsecond, roce(hostA, hostB, opWriteMid, bQP, psn, 1024))
				}
				c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 1099, 0))
			},
			wantEpochs: 1,
			wantRetx:   50,
			wantPair:   []PairMethod{PairPSN},
		},
		{
			// A timeout resend comes after an idle time longer than
			// EpochIdle, but its PSNs are within the window: no epoch.
			name: "timeout resend after idle",
			play: func(c *clock) {
				connection(c, aQP, bQP, 500, 5)
				for psn := uint32(505); psn < 510; psn++ {
					c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
				}
				for psn := uint32(505); psn < 510; psn++ {
					c.add(4*time.Millisecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
				}
				c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 509, 0))
			},
			wantEpochs: 1,
			wantRetx:   5,
			wantPair:   []PairMethod{PairPSN},
		},
		{
			// After a READ whose RETH the snap length cut, any number of
			// PSNs may have gone to its responses: a request far ahead
			// after idle time is no new connection.
			name: "idle after a READ of unknown length",
			play: func(c *clock) {
				connection(c, aQP, bQP, 1000, 3)
				rd := readReq(hostA, hostB, bQP, 1003, 0, 70000*4096)
				rd.BTH.Ext &^= bth.HasRETH
				c.add(time.Microsecond, rd)
				// The mirror missed all responses but the last.
				c.add(time.Millisecond, roce(hostB, hostA, opReadLast, aQP, 1003+69999, 4096))
				c.add(time.Second, roce(hostA, hostB, opSendOnly, bQP, 1003+70000, 64))
				c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 1003+70000, 0))
			},
			wantEpochs: 1,
			wantPair:   []PairMethod{PairPSN},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			c.add(0, roce(hostA, hostB, opSendOnly, 0x999, 1, 8)) // another flow first
			tc.play(c)
			reqs, acks := c.flows(reqKey), c.flows(ackKey)
			if len(reqs) != tc.wantEpochs || len(acks) != tc.wantEpochs {
				t.Fatalf("epochs: requests %d, ACKs %d; want %d each", len(reqs), len(acks), tc.wantEpochs)
			}
			for i, f := range reqs {
				if f.Epoch != i || acks[i].Epoch != i {
					t.Errorf("epoch %d: Epoch = %d and %d", i, f.Epoch, acks[i].Epoch)
				}
				if f.Partner != acks[i] || acks[i].Partner != f {
					t.Errorf("epoch %d: request flow partner %s, ACK flow partner %s; want each other",
						i, flowName(f.Partner), flowName(acks[i].Partner))
				}
				if f.PairedBy != tc.wantPair[i] {
					t.Errorf("epoch %d: PairedBy = %v, want %v", i, f.PairedBy, tc.wantPair[i])
				}
				if f.PSNGaps() != 0 || f.Requests.OutOfOrder != 0 || f.Requests.MissingPSNs != 0 {
					t.Errorf("epoch %d: gaps %d, out of order %d, missing %d; want none",
						i, f.PSNGaps(), f.Requests.OutOfOrder, f.Requests.MissingPSNs)
				}
			}
			var retx uint64
			for _, f := range reqs {
				retx += f.Retransmitted()
			}
			if retx != tc.wantRetx {
				t.Errorf("Retransmitted = %d, want %d", retx, tc.wantRetx)
			}
			if tc.wantEpochs == 2 {
				if got := reqs[1].Requests.FirstPSN; got != 16227732 && got != 105 {
					t.Errorf("epoch 1 starts at PSN %d", got)
				}
			}
		})
	}
}

// TestEpochCMInfo checks that the CM exchange's information goes to the
// epoch it set up, not to the earlier one.
func TestEpochCMInfo(t *testing.T) {
	c := newClock(Config{})
	connection(c, 0x22, 0x11, 7825157, 3)
	c.add(time.Second, nil)
	playCM(c, 0x77, 0x22, 16227732, 0x11, 4242)
	connection(c, 0x22, 0x11, 16227732, 3)
	reqs := c.flows(key(hostA, hostB, 0x11))
	if len(reqs) != 2 {
		t.Fatalf("%d epochs, want 2", len(reqs))
	}
	if reqs[0].CM != nil {
		t.Errorf("epoch 0 has CM info %+v, want none", *reqs[0].CM)
	}
	cm := reqs[1].CM
	if cm == nil || cm.StartPSN != 16227732 || cm.SrcQP != 0x22 || cm.Port != 20049 {
		t.Fatalf("epoch 1 CM = %+v, want start PSN 16227732 from QP 0x22, port 20049", cm)
	}
	if !reqs[1].HasSrcQP || reqs[1].SrcQP != 0x22 {
		t.Errorf("epoch 1 SrcQP = %#x (%v), want 0x22", reqs[1].SrcQP, reqs[1].HasSrcQP)
	}
}
