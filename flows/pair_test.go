package flows

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// realPairs is the pairing every linlinw5 capture must give: "A>B qp"
// flows, two per pair, by method; every flow not named here has no
// partner (QP1 MADs, UC and UD).
//
// The CM captures name their pairs in REQ/REP. For the others the pairs
// were derived from tshark output,
//
//	tshark -r F -Y infiniband -T fields -e frame.time_relative -e ip.src \
//	    -e ip.dst -e infiniband.bth.opcode -e infiniband.bth.destqp \
//	    -e infiniband.bth.psn -e udp.srcport
//
// by taking, for every flow B>A that carries responses (ACKs, READ and
// atomic responses), the flows A>B that had sent a request with exactly the
// response's PSN before the response's time, and intersecting over all its
// responses. Every NCCL capture starts all QPs at PSN 0, so PSN ranges
// alone cannot tell the QPs of one host pair apart (tree2: two QPs each way
// between .11 and .12 and between .12 and .25); the timing does. In
// tree2_node2, for example, 172.30.0.11>.12 qp 0x2c carries its first ACK
// (PSN 0) at 2.417866 s, when among .12>.11 only qp 0x25 had sent PSN 0
// (frame 32, 2.417510 s; qp 0x27 first sends at 2.426320 s), and .12>.11
// qp 0x25's ACK of PSN 24 at 12.438745 s fits .11>.12 qp 0x2c (PSNs 1-24
// in frames 53-77) but not qp 0x2d, which had only reached PSN 1. The
// intersection is a single flow for every flow with responses, the
// relation is mutual, and each pair shares its UDP source port (rxe hashes
// both QPNs into a port both ends use), which the table does not look at:
// it confirms the answer independently.
var realPairs = map[string][]string{
	"linlinw5_rdma_cm.pcap": {
		"10.1.16.62>10.1.16.61 0x3b = 10.1.16.61>10.1.16.62 0x3d cm",
		"10.1.16.62>10.1.16.61 0x3c = 10.1.16.61>10.1.16.62 0x3e cm",
	},
	"linlinw5_rping.pcap":          {"10.1.16.62>10.1.16.61 0x2b = 10.1.16.61>10.1.16.62 0x2c cm"},
	"linlinw5_rdma_atomic_bw.pcap": {"10.1.16.62>10.1.16.61 0x28 = 10.1.16.61>10.1.16.62 0x29 psn"},
	"linlinw5_rdma_read_bw.pcap":   {"10.1.16.62>10.1.16.61 0x1c = 10.1.16.61>10.1.16.62 0x1e psn"},
	"linlinw5_rdma_read_lat.pcap":  {"10.1.16.62>10.1.16.61 0x27 = 10.1.16.61>10.1.16.62 0x28 psn"},
	"linlinw5_rdma_send_bw.pcap":   {"10.1.16.62>10.1.16.61 0x23 = 10.1.16.61>10.1.16.62 0x24 psn"},
	"linlinw5_rdma_write_bw.pcap":  {"10.1.16.62>10.1.16.61 0x1b = 10.1.16.61>10.1.16.62 0x1d psn"},
	"linlinw5_rdma_write_lat.pcap": {"10.1.16.62>10.1.16.61 0x24 = 10.1.16.61>10.1.16.62 0x25 psn"},
	"linlinw5_pingpong_rc.pcap":    {"10.1.16.62>10.1.16.61 0x20 = 10.1.16.61>10.1.16.62 0x21 psn"},
	"linlinw5_pingpong_uc.pcap":    {},
	"linlinw5_pingpong_ud.pcap":    {},
	"linlinw5_nccl_nccl_node0.pcap": {
		"172.30.0.11>172.30.0.25 0x1c = 172.30.0.25>172.30.0.11 0x1d psn",
		"172.30.0.12>172.30.0.25 0x1d = 172.30.0.25>172.30.0.12 0x1f psn",
	},
	"linlinw5_nccl_nccl_node1.pcap": {
		"172.30.0.11>172.30.0.12 0x20 = 172.30.0.12>172.30.0.11 0x1c psn",
		"172.30.0.11>172.30.0.25 0x1c = 172.30.0.25>172.30.0.11 0x1d psn",
	},
	"linlinw5_nccl_nccl_node2.pcap": {
		"172.30.0.11>172.30.0.12 0x20 = 172.30.0.12>172.30.0.11 0x1c psn",
		"172.30.0.12>172.30.0.25 0x1d = 172.30.0.25>172.30.0.12 0x1f psn",
	},
	"linlinw5_nccl_ring2_node0.pcap": {
		"172.30.0.11>172.30.0.25 0x22 = 172.30.0.25>172.30.0.11 0x23 psn",
		"172.30.0.12>172.30.0.25 0x23 = 172.30.0.25>172.30.0.12 0x27 psn",
	},
	"linlinw5_nccl_ring2_node1.pcap": {
		"172.30.0.11>172.30.0.12 0x28 = 172.30.0.12>172.30.0.11 0x22 psn",
		"172.30.0.11>172.30.0.25 0x22 = 172.30.0.25>172.30.0.11 0x23 psn",
	},
	"linlinw5_nccl_ring2_node2.pcap": {
		"172.30.0.11>172.30.0.12 0x28 = 172.30.0.12>172.30.0.11 0x22 psn",
		"172.30.0.12>172.30.0.25 0x23 = 172.30.0.25>172.30.0.12 0x27 psn",
	},
	"linlinw5_nccl_tree2_node0.pcap": {
		"172.30.0.12>172.30.0.25 0x26 = 172.30.0.25>172.30.0.12 0x2b psn",
		"172.30.0.12>172.30.0.25 0x27 = 172.30.0.25>172.30.0.12 0x2e psn",
	},
	"linlinw5_nccl_tree2_node1.pcap": {
		"172.30.0.11>172.30.0.12 0x2c = 172.30.0.12>172.30.0.11 0x25 psn",
		"172.30.0.11>172.30.0.12 0x2d = 172.30.0.12>172.30.0.11 0x27 psn",
	},
	"linlinw5_nccl_tree2_node2.pcap": {
		"172.30.0.11>172.30.0.12 0x2c = 172.30.0.12>172.30.0.11 0x25 psn",
		"172.30.0.11>172.30.0.12 0x2d = 172.30.0.12>172.30.0.11 0x27 psn",
		"172.30.0.12>172.30.0.25 0x26 = 172.30.0.25>172.30.0.12 0x2b psn",
		"172.30.0.12>172.30.0.25 0x27 = 172.30.0.25>172.30.0.12 0x2e psn",
	},
}

// parseFlowName parses "A>B 0xQP".
func parseFlowName(t *testing.T, s string) Key {
	t.Helper()
	addrs, qp, ok := strings.Cut(s, " ")
	src, dst, ok2 := strings.Cut(addrs, ">")
	n, err := strconv.ParseUint(strings.TrimPrefix(qp, "0x"), 16, 32)
	if !ok || !ok2 || err != nil {
		t.Fatalf("bad flow name %q", s)
	}
	return key(src, dst, uint32(n))
}

// TestRealPairs checks pairing, and that the real captures (clean runs,
// no loss) show no retransmission, gap or second epoch.
func TestRealPairs(t *testing.T) {
	for file, pairs := range realPairs {
		t.Run(file, func(t *testing.T) {
			tab := feedFile(t, "../testdata/pcaps/real/"+file)
			byKey := map[Key]*Flow{}
			for _, f := range tab.Flows() {
				if f.Epoch != 0 {
					t.Errorf("%s: epoch %d", flowName(f), f.Epoch)
				}
				if f.Retransmitted() != 0 || f.PSNGaps() != 0 || f.Requests.OutOfOrder+f.ReadResponses.OutOfOrder != 0 {
					t.Errorf("%s: retransmitted %d, gaps %d, out of order %d; want none", flowName(f),
						f.Retransmitted(), f.PSNGaps(), f.Requests.OutOfOrder+f.ReadResponses.OutOfOrder)
				}
				byKey[f.Key] = f
			}
			want := map[*Flow]string{}
			for _, p := range pairs {
				a, rest, _ := strings.Cut(p, " = ")
				b, how := rest[:strings.LastIndexByte(rest, ' ')], rest[strings.LastIndexByte(rest, ' ')+1:]
				x, y := byKey[parseFlowName(t, a)], byKey[parseFlowName(t, b)]
				if x == nil || y == nil {
					t.Fatalf("%s: flow missing", p)
				}
				want[x] = fmt.Sprint(flowName(y), " ", how)
				want[y] = fmt.Sprint(flowName(x), " ", how)
			}
			for _, f := range tab.Flows() {
				got := "none none"
				if f.Partner != nil {
					got = fmt.Sprint(flowName(f.Partner), " ", f.PairedBy)
				}
				w, ok := want[f]
				if !ok {
					w = "none none"
				}
				if got != w {
					t.Errorf("%s: partner %s, want %s", flowName(f), got, w)
				}
			}
		})
	}
}

// TestPairAmbiguous: two QPs from A to B send the same PSNs at the same
// moments, and B ACKs both only after both sent everything. Nothing tells
// which ACK flow answers which QP, so no flow is paired. A third pair, on
// the same hosts, whose first ACK comes between the other two QPs' first
// requests, is told apart by the timing.
func TestPairAmbiguous(t *testing.T) {
	c := newClock(Config{})
	for psn := uint32(0); psn < 10; psn++ {
		c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x101, psn, 64))
		c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x102, psn, 64))
	}
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x201, 9, 0))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x202, 9, 0))

	// QP 0x103 sends PSN 100 and is ACKed before QP 0x104 sends anything;
	// both then go on to the same PSNs. The first ACK to QP 0x203 fits
	// only QP 0x103; once they are linked, QP 0x104 is the only flow left
	// for the ACKs to 0x204.
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x103, 100, 64))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x203, 100, 0))
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x104, 100, 64))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x204, 100, 0))
	for psn := uint32(101); psn < 105; psn++ {
		c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x103, psn, 64))
		c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x104, psn, 64))
	}
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x203, 104, 0))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x204, 104, 0))
	c.tab.Finish()

	wantPartner := map[uint32]uint32{0x103: 0x203, 0x203: 0x103, 0x104: 0x204, 0x204: 0x104}
	for _, f := range c.tab.Flows() {
		got, _ := f.PartnerQPN()
		if want := wantPartner[f.Key.DestQP]; got != want || (want == 0) != (f.Partner == nil) {
			t.Errorf("%s: partner %s, want QP %#x", flowName(f), flowName(f.Partner), want)
		}
	}
}

// TestPairMidConnection: a flow whose responses name PSNs no
// request in the capture had sent yet (the mirror started mid-connection)
// is paired on its later responses.
func TestPairMidConnection(t *testing.T) {
	c := newClock(Config{})
	// ACKs for requests sent before the capture began.
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x201, 4998, 0))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x201, 4999, 0))
	for psn := uint32(5000); psn < 5010; psn++ {
		c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x101, psn, 64))
		c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x201, psn, 0))
	}
	// An unrelated QP with far PSNs.
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x102, 900000, 64))
	reqs := c.flows(key(hostA, hostB, 0x101))
	if len(reqs) != 1 || reqs[0].Partner == nil || reqs[0].Partner.Key.DestQP != 0x201 || reqs[0].PairedBy != PairPSN {
		t.Fatalf("request flow partner %v, want the ACK flow to QP 0x201 by PSN", flowName(reqs[0].Partner))
	}
}

// TestPairCrowded: more QPs than maxPairCands between two hosts, all from
// PSN 0, ACKed one by one right after each request. The first looks find
// too many candidates; later ones, once the QPs' PSNs have spread, pair
// every flow.
func TestPairCrowded(t *testing.T) {
	const n = 2 * maxPairCands
	c := newClock(Config{})
	for qp := uint32(0); qp < n; qp++ {
		c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x100+qp, 0, 64))
	}
	for qp := uint32(0); qp < n; qp++ {
		c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x200+qp, 0, 0))
	}
	// QP i then sends 4*i more requests, each ACKed at once.
	for qp := uint32(0); qp < n; qp++ {
		for psn := uint32(1); psn <= 4*qp; psn++ {
			c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x100+qp, psn, 64))
			c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x200+qp, psn, 0))
		}
	}
	c.tab.Finish()
	for _, f := range c.tab.Flows() {
		// QP 0 sent only PSN 0, like every other QP: it stays ambiguous.
		if f.Key.DestQP&0xff == 0 {
			if f.Partner != nil {
				t.Errorf("%s paired with %s, want no partner", flowName(f), flowName(f.Partner))
			}
			continue
		}
		if f.Partner == nil || f.PairedBy != PairPSN || f.Partner.Key.DestQP&0xff != f.Key.DestQP&0xff {
			t.Errorf("%s paired with %s by %v", flowName(f), flowName(f.Partner), f.PairedBy)
		}
	}
}

// TestPairSoleConnection: the only connection between two hosts is paired
// though its responses do not fit its requests as captured: an ACK past
// the highest request captured (the mirror missed the tail of a message),
// and responses captured before the first request they answer (the mirror
// missed the first ones). The PSNs the mirror missed are then mirror loss.
func TestPairSoleConnection(t *testing.T) {
	t.Run("ACK past the captured requests", func(t *testing.T) {
		c := newClock(Config{})
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))
		c.add(us, roce(hostB, hostA, opAck, aQP, 0, 0))
		// PSNs 1 and 2 (a SEND of two packets) missed by the mirror
		c.add(us, roce(hostB, hostA, opAck, aQP, 2, 0))
		req, resp := only(t, c, key(hostA, hostB, bQP)), only(t, c, key(hostB, hostA, aQP))
		if req.Partner != resp || resp.Partner != req || req.Retx.MirrorLostPSNs != 2 {
			t.Errorf("partners %v, %v; mirror-lost PSNs %d: want each other and 2", req.Partner != nil, resp.Partner != nil, req.Retx.MirrorLostPSNs)
		}
	})
	t.Run("responses before the first captured request", func(t *testing.T) {
		c := newClock(Config{})
		// the requests at PSNs 0 and 1 missed by the mirror
		c.add(us, roce(hostB, hostA, opAck, aQP, 0, 0))
		c.add(us, roce(hostB, hostA, opAck, aQP, 1, 0))
		c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 2, 100))
		c.add(us, roce(hostB, hostA, opAck, aQP, 2, 0))
		req, resp := only(t, c, key(hostA, hostB, bQP)), only(t, c, key(hostB, hostA, aQP))
		if req.Partner != resp || resp.Partner != req {
			t.Errorf("partners %v, %v: want each other", req.Partner != nil, resp.Partner != nil)
		}
	})
}

// TestPairAheadSharedHosts: an ACK past the highest request captured (the
// mirror missed the tail of a WRITE) is the only response of its flow,
// and other connections share the host pair, both ways (NCCL opens
// several QPs per peer). When only one QP's requests lie within pairAhead
// below the ACK, it answers that QP: the flows are paired, and the PSNs
// the mirror missed are mirror loss. When two QPs' requests do (QPs at
// the same PSNs, as NCCL starts them) or the only one is answered by
// another flow already (the mirror missed every request of the QP the
// ACK answers), the capture cannot tell, and the flow stays unpaired.
func TestPairAheadSharedHosts(t *testing.T) {
	const a1, a2, a3, b1, b2, b3 = 0x21, 0x22, 0x23, 0x11, 0x12, 0x13
	// write5 plays a WRITE of five packets from A to B's QP qp at PSNs
	// psn..psn+4, the last two missed by the mirror, and B's ACK of its
	// last PSN to A's QP aqp.
	write5 := func(c *clock, qp, aqp, psn uint32) {
		c.add(us, roce(hostA, hostB, opWriteFrst, qp, psn, 1024))
		c.add(us, roce(hostA, hostB, opWriteMid, qp, psn+1, 1024))
		c.add(us, roce(hostA, hostB, opWriteMid, qp, psn+2, 1024))
		c.add(3*us, roce(hostB, hostA, opAck, aqp, psn+4, 0))
	}
	// other plays the connections that share the host pair: A's QP b2
	// WRITEs to B at PSNs from psn2, each ACKed, and B's QP a3 SENDs to A,
	// each ACKed; they go on after write5 (before, if first).
	other := func(c *clock, psn2 uint32, n int) {
		for i := range uint32(n) {
			c.add(us, roce(hostA, hostB, opWriteOnly, b2, psn2+i, 64))
			c.add(us, roce(hostB, hostA, opAck, a2, psn2+i, 0))
			c.add(us, roce(hostB, hostA, opSendOnly, a3, 9000+i, 64))
			c.add(us, roce(hostA, hostB, opAck, b3, 9000+i, 0))
		}
	}
	partner := func(c *clock, src, dst string, qp uint32) string {
		f := only(t, c, key(src, dst, qp))
		if f.Partner == nil {
			return "none"
		}
		return fmt.Sprintf("%#x %v", f.Partner.Key.DestQP, f.PairedBy)
	}
	check := func(t *testing.T, c *clock, want1 string, lost uint64) {
		t.Helper()
		c.tab.Finish()
		for _, w := range []struct {
			src, dst string
			qp       uint32
			want     string
		}{
			{hostA, hostB, b1, want1}, {hostA, hostB, b2, "0x22 psn"}, {hostB, hostA, a3, "0x13 psn"},
		} {
			if got := partner(c, w.src, w.dst, w.qp); got != w.want {
				t.Errorf("%s>%s QP %#x: partner %s, want %s", w.src, w.dst, w.qp, got, w.want)
			}
		}
		if got := only(t, c, key(hostA, hostB, b1)).Retx.MirrorLostPSNs; got != lost {
			t.Errorf("mirror-lost PSNs %d, want %d", got, lost)
		}
	}
	t.Run("other QPs at far PSNs", func(t *testing.T) {
		c := newClock(Config{})
		other(c, 0x800000, 2)
		write5(c, b1, a1, 100)
		other(c, 0x800002, 2)
		check(t, c, "0x21 psn", 2)
	})
	t.Run("another QP at the same PSNs", func(t *testing.T) {
		c := newClock(Config{})
		// b2 at PSNs 100-101, ACKed only after b1's ACK at 104, which
		// fits it ahead as well as b1. b2 then goes on to PSNs b1 never
		// reached, where its ACKs fit it alone.
		c.add(us, roce(hostA, hostB, opWriteOnly, b2, 100, 64))
		c.add(us, roce(hostA, hostB, opWriteOnly, b2, 101, 64))
		write5(c, b1, a1, 100)
		for psn := uint32(102); psn < 106; psn++ {
			c.add(us, roce(hostA, hostB, opWriteOnly, b2, psn, 64))
		}
		c.add(us, roce(hostB, hostA, opAck, a2, 105, 0))
		other(c, 106, 1)
		check(t, c, "none", 0)
	})
	t.Run("the QP it fits answered by another flow", func(t *testing.T) {
		c := newClock(Config{})
		other(c, 100, 3)
		// b1's WRITE at PSNs 100-104 all missed by the mirror: the ACK
		// fits only b2 ahead, which a2's ACKs answer.
		c.add(3*us, roce(hostB, hostA, opAck, a1, 104, 0))
		c.tab.Finish()
		if got := partner(c, hostB, hostA, a1); got != "none" {
			t.Errorf("the ACK flow of the unseen QP is paired with %s, want none", got)
		}
		if got := partner(c, hostA, hostB, b2); got != "0x22 psn" {
			t.Errorf("QP %#x: partner %s, want 0x22 psn", b2, got)
		}
	})
}

// TestPairReadResponsesPreferReaders: two QPs from A to B at the same
// PSNs, one sending SENDs, the other an RDMA READ whose first response
// the fabric lost before the mirror. The READ responses fit both QPs'
// PSNs, but only one sent a READ: they answer it, while packets arrive,
// so its READ request repeated from the READ's PSN is a re-issue, not a
// mirror's copy.
func TestPairReadResponsesPreferReaders(t *testing.T) {
	const a1, a2, b1, b2 = 0x21, 0x22, 0x11, 0x12
	c := newClock(Config{})
	c.add(us, roce(hostA, hostB, opSendOnly, b1, 0, 64))
	c.add(us, readReq(hostA, hostB, b2, 0, 0x10000, 3*1024))
	c.add(us, roce(hostB, hostA, opAck, a1, 0, 0))
	c.add(us, roce(hostA, hostB, opSendOnly, b1, 1, 64))
	// READ response FIRST at PSN 0 lost before the mirror.
	c.add(us, roce(hostB, hostA, opReadMid, a2, 1, 1024))
	c.add(us, roce(hostB, hostA, opReadLast, a2, 2, 1024))
	c.add(us, roce(hostB, hostA, opAck, a1, 1, 0))
	c.add(2*us, readReq(hostA, hostB, b2, 0, 0x10000, 3*1024)) // the re-issue
	c.add(us, roce(hostB, hostA, opReadFirst, a2, 0, 1024))
	c.add(us, roce(hostB, hostA, opReadMid, a2, 1, 1024))
	c.add(us, roce(hostB, hostA, opReadLast, a2, 2, 1024))
	r2 := only(t, c, key(hostA, hostB, b2))
	if r2.Retx.ReissuedReads != 1 || r2.MirrorDuplicates() != 0 || r2.Requests.Packets != 2 {
		t.Errorf("READ requester: %d re-issued READs, %d mirror duplicates, %d requests; want 1, 0, 2",
			r2.Retx.ReissuedReads, r2.MirrorDuplicates(), r2.Requests.Packets)
	}
	if p := r2.Partner; p == nil || p.Key.DestQP != a2 {
		t.Errorf("READ requester paired with %s, want the flow to QP %#x", flowName(p), a2)
	}
}

// TestPairClaimedTwice: two QPs from A to B at the same PSNs, the requests
// of one all missed by the mirror. Both ACK flows fit only the other QP's
// requests; the one whose responses reach its last request answers it
// (the other stops at PSN 0, where its own QP's atomic was), so the PSN
// the mirror missed before that ACK is mirror loss.
func TestPairClaimedTwice(t *testing.T) {
	const a1, a2, b1 = 0x21, 0x22, 0x11
	c := newClock(Config{})
	c.add(us, roce(hostA, hostB, opWriteFrst, b1, 0, 256))
	c.add(us, roce(hostA, hostB, opWriteMid, b1, 1, 256))
	// WRITE LAST at PSN 2, and QP 0x12's atomic at PSN 0, missed by the mirror.
	c.add(3*us, roce(hostB, hostA, opAtomicAck, a2, 0, 0))
	c.add(us, roce(hostB, hostA, opAck, a1, 2, 0))
	r1 := only(t, c, key(hostA, hostB, b1))
	if p := r1.Partner; p == nil || p.Key.DestQP != a1 {
		t.Errorf("QP %#x paired with %s, want the flow to QP %#x", b1, flowName(p), a1)
	}
	if r1.Retx.MirrorLostPSNs != 1 {
		t.Errorf("mirror-lost PSNs %d, want 1", r1.Retx.MirrorLostPSNs)
	}
	if y2 := only(t, c, key(hostB, hostA, a2)); y2.Partner != nil {
		t.Errorf("the atomic ACK flow is paired with %s, want none", flowName(y2.Partner))
	}
}
