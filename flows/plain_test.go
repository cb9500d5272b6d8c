package flows

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// plainStep is one packet of a random sequence and its frame.
type plainStep struct {
	p  packet.Packet
	at FrameAt
}

// plainSequence draws a sequence of n packets between two hosts: RC
// requests of several opcodes to one QP, mostly in order, with
// retransmissions, gaps and RDMA READs; their ACKs, NAKs and READ
// responses the other way; UD datagrams from two source QPs (a DETH);
// CNPs. Any packet may carry what addPlain turns down: CE, FECN, BECN, a
// bad ICRC, truncation, another DSCP value or UDP port, RoCEv1, a new
// slot of capture time, a long idle.
func plainSequence(rng *rand.Rand, n int) []plainStep {
	const rcQP, ackQP, udQP = 0x11, 0x22, 0x33
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0
	var reqPSN, udPSN uint32 = psnMask - 20, 100 // the RC requests wrap
	writeOps := []bth.Opcode{opWriteFrst, opWriteMid, opWriteMid, opWriteLast, opWriteOnly, opSendOnly, opUCSend}
	var out []plainStep
	for i := range n {
		var p *packet.Packet
		switch k := rng.IntN(100); {
		case k < 70:
			psn := reqPSN
			switch j := rng.IntN(80); {
			case j == 0:
				psn = psnAdd(reqPSN, 1+int32(rng.IntN(3))) // a gap
			case j == 1:
				psn = psnAdd(reqPSN, -1-int32(rng.IntN(3))) // a resend
			case j == 2:
				psn = psnAdd(reqPSN, 1<<20) // far: a new epoch, if idle
			}
			if rng.IntN(20) == 0 {
				p = readReq(hostA, hostB, rcQP, psn, 0x1000, uint32(1+rng.IntN(3000)))
			} else {
				p = roce(hostA, hostB, writeOps[rng.IntN(len(writeOps))], rcQP, psn, []int{1024, 1024, 4096, 100}[rng.IntN(4)])
			}
			if psnDiff(psn, reqPSN) >= 0 {
				reqPSN = psnAdd(psn, 1)
			}
		case k < 85:
			p = roce(hostB, hostA, opAck, ackQP, psnAdd(reqPSN, -1-int32(rng.IntN(3))), 0)
			if rng.IntN(50) == 0 {
				p.BTH.AETH.Syndrome = 0x60 // a PSN sequence error NAK
			}
		case k < 90:
			op := []bth.Opcode{opReadFirst, opReadMid, opReadLast, opReadOnly}[rng.IntN(4)]
			p = roce(hostB, hostA, op, ackQP, psnAdd(reqPSN, -1), 1024)
		case k < 97:
			p = roce(hostA, hostB, opUDSend, udQP, udPSN, 256)
			p.BTH.DETH = bth.DETH{QKey: 0x1111, SrcQP: uint32(5 + rng.IntN(2))}
			udPSN = psnAdd(udPSN, 1)
		default:
			p = roce(hostB, hostA, bth.OpcodeCNP, ackQP, 0, 0)
		}
		if rng.IntN(20) == 0 {
			p.ECN = 3
		} else if rng.IntN(10) == 0 {
			p.ECN = uint8(rng.IntN(2))
		}
		p.BTH.FECN = p.BTH.FECN || rng.IntN(30) == 0
		p.BTH.BECN = p.BTH.BECN || rng.IntN(30) == 0
		if rng.IntN(30) == 0 {
			p.ICRC = bth.ICRCBad
		}
		if rng.IntN(3) == 0 {
			p.Truncated, p.ICRC = true, bth.ICRCUnchecked
		}
		if rng.IntN(20) == 0 {
			p.DSCP = 10
		}
		if rng.IntN(15) == 0 {
			p.SrcPort = uint16(0xc001 + rng.IntN(3))
		}
		if rng.IntN(40) == 0 {
			p.RoCEVersion = 1
		}
		switch k := rng.IntN(40); {
		case k == 0:
			now = now.Add(300 * time.Microsecond) // the next slot (slotShift)
		case k == 1:
			now = now.Add(2 * time.Millisecond) // the next rate bins
		case k == 2:
			now = now.Add(2 * time.Second) // idle: a far PSN starts an epoch
		default:
			now = now.Add(time.Duration(rng.IntN(2000)) * time.Nanosecond)
		}
		out = append(out, plainStep{*p, At(FrameRef{Frame: i + 1, Time: now, Seq: uint64(i)})})
	}
	return out
}

// TestAddPlainIsAdd: addFlow takes addPlain instead of add for a request
// requestInOrder cleared, when addPlain accepts it; then it returns with
// no change to Retransmitted or PSNGaps and skips noteCE. So at every
// request of random sequences that requestInOrder clears, addPlain must
// either leave every flow as it was and return false, or leave them all
// as add leaves them, with add returning false (no re-issue), moving
// neither count, and the packet without CE. Each flow table is built
// twice from the sequence's packets before, so that add and addPlain
// each change their own. A test addPlain leaves out (of the READ, the
// retransmission state, a flag, the DSCP value, the port, the DETH, the
// opcodes), or an update it misses or adds, fails it; so does a request
// add would not sequence by PSNStats.next.
func TestAddPlainIsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 2))
	var plain, declined int
	seen := map[string]int{}
	for range 250 {
		seq := plainSequence(rng, 60)
		for k := range seq {
			s := &seq[k]
			p, c := &s.p, opClass[s.p.BTH.Opcode]
			a, b := NewTable(Config{}), NewTable(Config{})
			for _, e := range seq[:k] {
				a.AddFlowDelta(&e.p, &e.at)
				b.AddFlowDelta(&e.p, &e.at)
			}
			pk := packKey(p.Src, p.Dst, p.BTH.DestQP)
			fa, fb := a.lookup(pk, p.Src, p.Dst, p.BTH.DestQP), b.lookup(pk, p.Src, p.Dst, p.BTH.DestQP)
			if fa == nil || !fa.requestInOrder(p.BTH.PSN, c) {
				continue
			}
			for name, on := range map[string]bool{
				"READ": c&opReadRequest != 0, "retx": fa.retx != nil, "DETH": p.BTH.Ext&bth.HasDETH != 0,
				"CE": p.ECN == 3, "FECN": p.BTH.FECN, "BECN": p.BTH.BECN, "bad ICRC": p.ICRC == bth.ICRCBad,
				"truncated": p.Truncated, "DSCP": uint16(p.DSCP)+1 != fa.dscpFirst, "port": p.SrcPort != 0xc000,
				"RoCEv1": p.RoCEVersion == 1, "slot": fa.reqW.turns(s.at.Nanos, false),
				"MTU":    c&opShowsMTU != 0 && uint64(p.PayloadLen) != uint64(fa.pmtu),
				"opcode": uint16(p.BTH.Opcode)+1 != fa.opFirst && fa.opInline[1] == 0,
			} {
				if on {
					seen[name]++
				}
			}
			if !fa.addPlain(p, c, &s.at) {
				declined++
				if !reflect.DeepEqual(a.flows, b.flows) {
					t.Fatalf("step %d (%+v): addPlain declined the request but changed its table", k, p.BTH)
				}
				continue
			}
			plain++
			retx, gaps := fb.RetxAndGaps()
			if fb.add(p, c, &s.at) {
				t.Fatalf("step %d (%+v): addPlain took a READ add finds re-issued", k, p.BTH)
			}
			if r, g := fb.RetxAndGaps(); r != retx || g != gaps {
				t.Fatalf("step %d (%+v): addPlain took a request that moved Retransmitted or PSNGaps (%d, %d -> %d, %d)", k, p.BTH, retx, gaps, r, g)
			}
			if p.ECN&3 == 3 {
				t.Fatalf("step %d (%+v): addPlain took a request with CE", k, p.BTH)
			}
			if !reflect.DeepEqual(a.flows, b.flows) {
				t.Fatalf("step %d (%+v): addPlain left\n%+v\nadd\n%+v", k, p.BTH, *fa, *fb)
			}
		}
	}
	// The sequences must reach both outcomes, and every case addPlain
	// turns down on a request requestInOrder clears.
	if plain < 1000 || declined < 1000 {
		t.Errorf("addPlain took %d requests, declined %d: the sequences miss a side", plain, declined)
	}
	for _, name := range []string{"READ", "retx", "DETH", "CE", "FECN", "BECN", "bad ICRC", "truncated", "DSCP", "port", "RoCEv1", "slot", "MTU", "opcode"} {
		if seen[name] < 20 {
			t.Errorf("%d requests in order with %s: too few to tell", seen[name], name)
		}
	}
}
