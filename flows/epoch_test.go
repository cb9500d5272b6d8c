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
	playCMCut(c, commID, aQP, aPSN, bQP, bPSN, ^bth.CMFields(0), ^bth.CMFields(0))
}

// playCMCut is playCM with the REQ and REP cut by a snap length: only
// their fields in reqHas and repHas were captured.
func playCMCut(c *clock, commID, aQP, aPSN, bQP, bPSN uint32, reqHas, repHas bth.CMFields) {
	mad := func(src, dst string, psn uint32) *packet.Packet {
		p := roce(src, dst, opUDSend, bth.CMQPN, psn, 256)
		p.BTH.DETH = bth.DETH{QKey: 0x80010000, SrcQP: 1}
		p.HasCM = true
		p.CM.MgmtClass = bth.MgmtClassCM
		return p
	}
	// keep zeroes what was not captured, as bth.CMMAD does.
	keep := func(m *bth.CMMAD, has, f bth.CMFields, v *uint32) {
		if has&f == 0 {
			*v = 0
		} else {
			m.Captured |= f
		}
	}
	req := mad(hostA, hostB, 7)
	m := &req.CM
	m.AttributeID = bth.CMAttrREQ
	m.LocalCommID, m.LocalQPN, m.StartingPSN = commID, aQP, aPSN
	keep(m, reqHas, bth.CMFieldLocalCommID, &m.LocalCommID)
	keep(m, reqHas, bth.CMFieldLocalQPN, &m.LocalQPN)
	keep(m, reqHas, bth.CMFieldStartingPSN, &m.StartingPSN)
	if reqHas&bth.CMFieldServiceID != 0 {
		m.ServiceID = 0x0000000001064e51 // IP CM, TCP port space, port 20049
		m.Captured |= bth.CMFieldServiceID
	}
	m.Truncated = reqHas != ^bth.CMFields(0)
	c.add(10*time.Microsecond, req)
	rep := mad(hostB, hostA, 9)
	m = &rep.CM
	m.AttributeID = bth.CMAttrREP
	m.LocalCommID, m.RemoteCommID, m.LocalQPN, m.StartingPSN = commID^0xffff, commID, bQP, bPSN
	keep(m, repHas, bth.CMFieldLocalCommID, &m.LocalCommID)
	keep(m, repHas, bth.CMFieldRemoteCommID, &m.RemoteCommID)
	keep(m, repHas, bth.CMFieldLocalQPN, &m.LocalQPN)
	keep(m, repHas, bth.CMFieldStartingPSN, &m.StartingPSN)
	m.Truncated = repHas != ^bth.CMFields(0)
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
			// NCCL starts every QP at PSN 0: a new connection on the
			// reused QPN an hour later sends PSN 0 again, after the
			// responder had acknowledged every request of the first.
			// A requester resends only what no ACK covered, so this is
			// no ACK timeout (it was one: 10 resends waiting an hour).
			name: "idle then restart at the same first PSN",
			play: func(c *clock) {
				connection(c, aQP, bQP, 0, 10)
				c.add(time.Hour, nil)
				connection(c, aQP, bQP, 0, 10)
			},
			wantEpochs: 2,
			wantPair:   []PairMethod{PairPSN, PairPSN},
		},
		{
			// The first PSN resent after a timeout, the responder
			// having acknowledged none: a timeout, not a new epoch.
			name: "timeout resend from the first PSN, unacknowledged",
			play: func(c *clock) {
				for psn := uint32(0); psn < 5; psn++ {
					c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
				}
				for psn := uint32(0); psn < 5; psn++ {
					c.add(4*time.Millisecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
				}
				c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 4, 0))
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
		{
			// The READ responses of one READ and of the next, after
			// more than EpochJump PSNs of RDMA WRITEs (ACKed) and idle
			// time: the second follows the last ACK, in the same PSN
			// space, so it is no new connection.
			name: "READ after many WRITEs and idle",
			play: func(c *clock) {
				c.add(time.Microsecond, readReq(hostA, hostB, bQP, 100, 0x1000, 1024))
				c.add(time.Microsecond, roce(hostB, hostA, opReadOnly, aQP, 100, 1024))
				psn := uint32(101)
				for ; psn < 101+70000; psn++ {
					c.add(100*time.Nanosecond, roce(hostA, hostB, opWriteMid, bQP, psn, 1024))
					if psn%1000 == 0 {
						c.add(100*time.Nanosecond, roce(hostB, hostA, opAck, aQP, psn, 0))
					}
				}
				c.add(time.Microsecond, roce(hostB, hostA, opAck, aQP, psn-1, 0))
				c.add(2*time.Millisecond, readReq(hostA, hostB, bQP, psn, 0x1000, 1024))
				c.add(time.Microsecond, roce(hostB, hostA, opReadOnly, aQP, psn, 1024))
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
				if got := reqs[1].Requests.FirstPSN; got != 16227732 && got != 105 && got != 0 {
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

// TestCMCut: a REQ or REP cut by the snap length gives the flows only what
// was captured. The exchange pairs the flows as long as both QPNs and the
// communication IDs were captured (a plain RoCEv2 REQ cut to 128 bytes
// keeps them); a starting PSN or service ID that was not is unknown, never
// zero. An exchange that lost a QPN or communication ID pairs nothing:
// the PSNs do.
func TestCMCut(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	all := ^bth.CMFields(0)
	ids := bth.CMFieldLocalCommID | bth.CMFieldRemoteCommID
	tests := []struct {
		name           string
		reqHas, repHas bth.CMFields
		wantCM         bool
		wantService    bool
		wantReqPSN     bool // the requester's start PSN, on the flow to B
	}{
		{"whole", all, all, true, true, true},
		{"REQ cut before its start PSN", all &^ bth.CMFieldStartingPSN, all, true, true, false},
		{"REQ cut before its QPN", bth.CMFieldLocalCommID | bth.CMFieldServiceID, all, false, false, false},
		{"REQ cut before its service ID", bth.CMFieldLocalCommID, all, false, false, false},
		{"REP cut before its remote comm ID", all, bth.CMFieldLocalCommID, false, false, false},
		{"REP cut before its QPN", all, ids, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock(Config{})
			playCMCut(c, 0x77, aQP, 16227732, bQP, 4242, tt.reqHas, tt.repHas)
			connection(c, aQP, bQP, 16227732, 3)
			toB, toA := c.flows(key(hostA, hostB, bQP)), c.flows(key(hostB, hostA, aQP))
			if len(toB) != 1 || len(toA) != 1 {
				t.Fatalf("%d and %d flows, want one each way", len(toB), len(toA))
			}
			b, a := toB[0], toA[0]
			if (b.CM != nil) != tt.wantCM || (a.CM != nil) != tt.wantCM {
				t.Fatalf("CM info %+v and %+v, want it: %v", b.CM, a.CM, tt.wantCM)
			}
			wantPair := PairPSN
			if tt.wantCM {
				wantPair = PairCM
			}
			if b.PairedBy != wantPair || b.Partner != a {
				t.Errorf("paired by %v with %v, want %v with the reverse flow", b.PairedBy, b.Partner, wantPair)
			}
			if !tt.wantCM {
				return
			}
			if b.CM.HasServiceID != tt.wantService || a.CM.HasServiceID != tt.wantService ||
				tt.wantService && (b.CM.Port != 20049 || !b.CM.IPService) || !tt.wantService && (b.CM.ServiceID != 0 || b.CM.IPService) {
				t.Errorf("service %+v / %+v, want known: %v (port 20049)", *b.CM, *a.CM, tt.wantService)
			}
			if b.CM.HasStartPSN != tt.wantReqPSN || tt.wantReqPSN && b.CM.StartPSN != 16227732 || !tt.wantReqPSN && b.CM.StartPSN != 0 {
				t.Errorf("flow to B: start PSN %d (known %v), want known: %v", b.CM.StartPSN, b.CM.HasStartPSN, tt.wantReqPSN)
			}
			if !a.CM.HasStartPSN || a.CM.StartPSN != 4242 {
				t.Errorf("flow to A: start PSN %d (known %v), want 4242 from the REP", a.CM.StartPSN, a.CM.HasStartPSN)
			}
			if b.CM.SrcQP != aQP || a.CM.SrcQP != bQP {
				t.Errorf("source QPs %#x, %#x; want %#x, %#x", b.CM.SrcQP, a.CM.SrcQP, aQP, bQP)
			}
		})
	}
}

// TestEpochAckNotMirrorLoss: a requester sends PSNs 0-4, acknowledged,
// and after idle time sends 0-4 again, then 5 and 6: a new epoch of its
// key. The responder's ACK of PSN 6 answers the new epoch; counted
// against the old one (the responder's flow stayed the partner of epoch
// 0), it made finishLoss report PSNs 5 and 6 as "mirror missed 2
// packets" of epoch 0, which never sent them.
func TestEpochAckNotMirrorLoss(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	// sent0 is the PSNs the capture holds of epoch 0 (0-4 sent, all
	// acknowledged by the ACK of PSN 4), want0 the mirror loss of epoch 0.
	for _, tc := range []struct {
		sent0 uint32
		want0 uint64
	}{{5, 0}, {3, 2}} {
		c := newClock(Config{})
		for psn := range tc.sent0 {
			c.add(2*time.Microsecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
		}
		c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 4, 0))
		c.add(4100*time.Microsecond, nil)
		for psn := uint32(0); psn < 7; psn++ {
			c.add(2*time.Microsecond, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
		}
		c.add(3*time.Microsecond, roce(hostB, hostA, opAck, aQP, 6, 0))
		c.tab.Finish()
		reqs := c.flows(key(hostA, hostB, bQP))
		if len(reqs) != 2 {
			t.Fatalf("sent %d: %d epochs of the requester's key, want 2", tc.sent0, len(reqs))
		}
		for i, f := range reqs {
			want := tc.want0
			if i > 0 {
				want = 0
			}
			if f.Retx.MirrorLostPSNs != want || f.Retransmitted() != 0 {
				t.Errorf("sent %d: epoch %d: mirror lost %d PSNs in %d gaps, %d resends; want %d lost, no resend",
					tc.sent0, i, f.Retx.MirrorLostPSNs, f.Retx.MirrorGaps, f.Retransmitted(), want)
			}
		}
	}
}
