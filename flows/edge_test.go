package flows

import (
	"slices"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// want is the part of a flow an edge case checks.
type want struct {
	transport                  bth.Transport
	packets, messages          uint64
	reqPackets, readResps      uint64
	retx, gaps, missing, ooo   uint64
	cnps, becn, truncated, bad uint64
	wire, payload              uint64
	hasPSN                     bool
	firstPSN, lastPSN          uint32
	partner                    uint32 // partner's DestQP; 0: none
	srcQP                      uint32 // 0: none
}

func (w want) check(t *testing.T, f *Flow) {
	t.Helper()
	if f == nil {
		t.Fatal("flow missing")
	}
	got := want{
		transport: f.Transport, packets: f.Packets, messages: f.Messages,
		reqPackets: f.Requests.Packets, readResps: f.ReadResponses.Packets,
		retx: f.Retransmitted(), gaps: f.PSNGaps(),
		missing: f.Requests.MissingPSNs + f.ReadResponses.MissingPSNs,
		ooo:     f.Requests.OutOfOrder + f.ReadResponses.OutOfOrder,
		cnps:    f.CNPs, becn: f.BECN, truncated: f.Truncated, bad: f.ICRCBad,
		wire: f.WireBytes, payload: f.PayloadBytes,
		hasPSN: f.HasPSN, firstPSN: f.FirstPSN, lastPSN: f.LastPSN,
	}
	if q, ok := f.PartnerQPN(); ok {
		got.partner = q
	}
	if f.HasSrcQP {
		got.srcQP = f.SrcQP
	}
	if got != w {
		t.Errorf("%s:\n got %+v\nwant %+v", flowName(f), got, w)
	}
}

func only(t *testing.T, c *clock, k Key) *Flow {
	t.Helper()
	fs := c.flows(k)
	if len(fs) != 1 {
		t.Fatalf("%v: %d flows, want 1", k, len(fs))
	}
	return fs[0]
}

// TestReadSpanInTable: an RDMA READ request consumes one PSN per response
// packet. Before the flow shows its path MTU the next request may come
// anywhere an MTU of 256 to 4096 allows; after, only at the exact PSN.
func TestReadSpanInTable(t *testing.T) {
	req, ack := key(hostA, hostB, 0x11), key(hostB, hostA, 0x22)
	c := newClock(Config{})
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 100, 0x1000, 8192)) // 2..32 PSNs
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 104, 8))   // MTU 2048: in order
	c.add(time.Microsecond, roce(hostA, hostB, opWriteFrst, 0x11, 105, 1024))
	c.add(time.Microsecond, roce(hostA, hostB, opWriteLast, 0x11, 106, 10)) // MTU now known: 1024
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 107, 0x9000, 8192)) // exactly 8 PSNs
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 117, 8))   // 115, 116 missing
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x22, 117, 0))
	want{
		transport: bth.TransportRC, packets: 6, messages: 5, reqPackets: 6,
		gaps: 1, missing: 2, wire: 60 + 52 + 1084 + 56 + 60 + 52, payload: 8 + 1024 + 10 + 8,
		hasPSN: true, firstPSN: 100, lastPSN: 117, partner: 0x22, srcQP: 0x22,
	}.check(t, only(t, c, req))
	want{
		transport: bth.TransportRC, packets: 1, wire: 48,
		hasPSN: true, firstPSN: 117, lastPSN: 117, partner: 0x11, srcQP: 0x11,
	}.check(t, only(t, c, ack))
}

// TestReadResponsesOwnSpace: a flow that carries its own requests and the
// READ responses to the other side's READs sequences them apart; READ
// responses for two READs with WRITEs between them (whose PSNs the
// responses skip) are not a gap.
func TestReadResponsesOwnSpace(t *testing.T) {
	ab, ba := key(hostA, hostB, 0x11), key(hostB, hostA, 0x22)
	c := newClock(Config{})
	// A reads 3 packets at 100..102, writes at 103..104, reads 2 at 105..106.
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 100, 0, 3000))
	c.add(time.Microsecond, roce(hostB, hostA, opReadFirst, 0x22, 100, 1024))
	c.add(time.Microsecond, roce(hostB, hostA, opSendOnly, 0x22, 7000, 16)) // B's own request
	c.add(time.Microsecond, roce(hostB, hostA, opReadMid, 0x22, 101, 1024))
	c.add(time.Microsecond, roce(hostB, hostA, opReadLast, 0x22, 102, 952))
	c.add(time.Microsecond, roce(hostA, hostB, opAck, 0x11, 7000, 0))
	c.add(time.Microsecond, roce(hostA, hostB, opWriteFrst, 0x11, 103, 1024))
	c.add(time.Microsecond, roce(hostA, hostB, opWriteLast, 0x11, 104, 1))
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 105, 4096, 2000))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x22, 104, 0))
	c.add(time.Microsecond, roce(hostB, hostA, opSendOnly, 0x22, 7001, 16))
	c.add(time.Microsecond, roce(hostB, hostA, opReadFirst, 0x22, 105, 1024))
	c.add(time.Microsecond, roce(hostB, hostA, opReadLast, 0x22, 106, 976))
	c.add(time.Microsecond, roce(hostA, hostB, opAck, 0x11, 7001, 0))
	a, b := only(t, c, ab), only(t, c, ba)
	want{
		transport: bth.TransportRC, packets: 6, messages: 3, reqPackets: 4,
		wire: 60 + 48 + 1084 + 48 + 60 + 48, payload: 1025,
		hasPSN: true, firstPSN: 100, lastPSN: 7001, partner: 0x22, srcQP: 0x22,
	}.check(t, a)
	want{
		transport: bth.TransportRC, packets: 8, messages: 2, reqPackets: 2, readResps: 5,
		wire: 1072 + 60 + 1068 + 1000 + 48 + 60 + 1072 + 1024, payload: 1024 + 16 + 1024 + 952 + 16 + 1024 + 976,
		hasPSN: true, firstPSN: 100, lastPSN: 106, partner: 0x11, srcQP: 0x11,
	}.check(t, b)
	if a.pmtu != 1024 || b.pmtu != 1024 {
		t.Errorf("path MTU %d and %d, want 1024 (WRITE FIRST, READ response FIRST)", a.pmtu, b.pmtu)
	}
}

// TestReadReissue: a requester that misses a READ response packet re-issues
// the READ for the rest: a retransmission, not a second message, and it
// shows the path MTU.
func TestReadReissue(t *testing.T) {
	req, resp := key(hostA, hostB, 0x11), key(hostB, hostA, 0x22)
	c := newClock(Config{})
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 1000, 0x10000, 4096))
	c.add(time.Microsecond, roce(hostB, hostA, opReadFirst, 0x22, 1000, 1024))
	c.add(time.Microsecond, roce(hostB, hostA, opReadMid, 0x22, 1001, 1024))
	// 1002 lost before the mirror; 1003 arrives, the requester asks again.
	c.add(time.Microsecond, roce(hostB, hostA, opReadLast, 0x22, 1003, 1024))
	c.add(time.Millisecond, readReq(hostA, hostB, 0x11, 1002, 0x10000+2048, 2048))
	c.add(time.Microsecond, roce(hostB, hostA, opReadFirst, 0x22, 1002, 1024))
	c.add(time.Microsecond, roce(hostB, hostA, opReadLast, 0x22, 1003, 1024))
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 1004, 0x20000, 1024))
	c.add(time.Microsecond, roce(hostB, hostA, opReadOnly, 0x22, 1004, 1024))
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 1005, 4))
	a := only(t, c, req)
	want{
		transport: bth.TransportRC, packets: 4, messages: 3, reqPackets: 4, retx: 1,
		wire: 4*60 - 16 + 4, payload: 4,
		hasPSN: true, firstPSN: 1000, lastPSN: 1005, partner: 0x22, srcQP: 0x22,
	}.check(t, a)
	want{
		transport: bth.TransportRC, packets: 6, readResps: 6, gaps: 1, ooo: 1, retx: 1,
		wire: 1072 + 1068 + 1072 + 1072 + 1072 + 1072, payload: 6 * 1024,
		hasPSN: true, firstPSN: 1000, lastPSN: 1004, partner: 0x11, srcQP: 0x11,
	}.check(t, only(t, c, resp))
	if a.pmtu != 1024 {
		t.Errorf("path MTU %d, want 1024 from the re-issue", a.pmtu)
	}
}

// TestAckCoalescing: a responder ACKs every tenth packet. ACKs are not
// sequenced, so the PSNs they skip are no gap; they still pair.
func TestAckCoalescing(t *testing.T) {
	c := newClock(Config{})
	for psn := uint32(0); psn < 100; psn++ {
		c.add(time.Microsecond, roce(hostA, hostB, opWriteMid, 0x11, psn, 1024))
		if psn%10 == 9 {
			c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x22, psn, 0))
		}
	}
	want{
		transport: bth.TransportRC, packets: 100, reqPackets: 100, wire: 100 * 1068, payload: 100 * 1024,
		hasPSN: true, firstPSN: 0, lastPSN: 99, partner: 0x22, srcQP: 0x22,
	}.check(t, only(t, c, key(hostA, hostB, 0x11)))
	want{
		transport: bth.TransportRC, packets: 10, wire: 480,
		hasPSN: true, firstPSN: 9, lastPSN: 99, partner: 0x11, srcQP: 0x11,
	}.check(t, only(t, c, key(hostB, hostA, 0x22)))
}

// TestUnconnected: UD flows take their source QP from the DETH and have no
// partner; UC flows are sequenced (a lost packet is a gap nobody fills)
// and have no partner either (UC has no responses).
func TestUnconnected(t *testing.T) {
	c := newClock(Config{})
	for psn := uint32(10); psn < 15; psn++ {
		p := roce(hostA, hostB, opUDSend, 0x33, psn, 256)
		p.BTH.DETH = bth.DETH{QKey: 0x11111111, SrcQP: 0x44}
		c.add(time.Microsecond, p)
	}
	for _, psn := range []uint32{0, 1, 3, 4} {
		c.add(time.Microsecond, roce(hostB, hostA, opUCSend, 0x55, psn, 100))
	}
	want{
		transport: bth.TransportUD, packets: 5, messages: 5, reqPackets: 5,
		wire: 5 * (20 + 8 + 20 + 256 + 4), payload: 5 * 256,
		hasPSN: true, firstPSN: 10, lastPSN: 14, srcQP: 0x44,
	}.check(t, only(t, c, key(hostA, hostB, 0x33)))
	want{
		transport: bth.TransportUC, packets: 4, messages: 4, reqPackets: 4, gaps: 1, missing: 1,
		wire: 4 * (20 + 8 + 12 + 100 + 4), payload: 400,
		hasPSN: true, firstPSN: 0, lastPSN: 4,
	}.check(t, only(t, c, key(hostB, hostA, 0x55)))
}

// TestCNPOnly: a flow of CNPs alone (the QP sends UC traffic, so nothing
// else comes back) is a CNP flow with no PSN and no partner; when other
// packets follow, the flow takes their transport.
func TestCNPOnly(t *testing.T) {
	c := newClock(Config{})
	for range 3 {
		c.add(time.Microsecond, roce(hostB, hostA, bth.OpcodeCNP, 0x55, 0, 0))
	}
	c.add(time.Microsecond, roce(hostB, hostA, bth.OpcodeCNPLinux, 0x66, 0, 0))
	c.add(time.Microsecond, roce(hostB, hostA, opAck, 0x66, 7, 0))
	want{
		transport: bth.TransportCNP, packets: 3, cnps: 3, becn: 3, wire: 3 * 60,
	}.check(t, only(t, c, key(hostB, hostA, 0x55)))
	want{
		transport: bth.TransportRC, packets: 2, cnps: 1, becn: 1, wire: 60 + 48,
		hasPSN: true, firstPSN: 7, lastPSN: 7,
	}.check(t, only(t, c, key(hostB, hostA, 0x66)))
}

// TestTruncated: frames cut by the snap length keep their wire length (from
// the IP header) and payload length (from the UDP length); a READ request
// whose RETH was cut consumes an unknown number of PSNs, so the next
// request is no gap.
func TestTruncated(t *testing.T) {
	c := newClock(Config{})
	cut := func(p *packet.Packet, capLen int) *packet.Packet {
		p.CapLen, p.Truncated = capLen, true
		if capLen < 14+20+8+12+16 {
			p.BTH.Ext &^= bth.HasRETH
			p.BTH.Truncated = true
		}
		p.ICRC = bth.ICRCUnchecked
		return p
	}
	c.add(time.Microsecond, cut(roce(hostA, hostB, opWriteOnly, 0x11, 50, 4096), 128))
	c.add(time.Microsecond, cut(readReq(hostA, hostB, 0x11, 51, 0, 1<<20), 64))
	c.add(time.Microsecond, cut(roce(hostA, hostB, opSendOnly, 0x11, 300, 64), 64))
	want{
		transport: bth.TransportRC, packets: 3, messages: 3, reqPackets: 3, truncated: 3,
		wire: (20 + 8 + 28 + 4096 + 4) + 60 + (20 + 8 + 12 + 64 + 4), payload: 4096 + 64,
		hasPSN: true, firstPSN: 50, lastPSN: 300,
	}.check(t, only(t, c, key(hostA, hostB, 0x11)))
}

// TestNAKs: NAKs and RNR NAKs count on the flow that carries them, by code;
// reserved codes go to NAKOther; RNR timers are kept. They come a
// millisecond apart: the same NAK again within MirrorWindow, with nothing
// between, is a mirror's copy (TestMirrorCopies).
func TestNAKs(t *testing.T) {
	c := newClock(Config{})
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 0, 8))
	for _, code := range []uint8{0, 0, 1, 2, 3, 4, 9} {
		c.add(time.Millisecond, nak(hostB, hostA, 0x22, 0, code, false))
	}
	for _, timer := range []uint8{14, 14, 3} {
		c.add(time.Millisecond, nak(hostB, hostA, 0x22, 0, timer, true))
	}
	f := only(t, c, key(hostB, hostA, 0x22))
	if f.NAKs != [5]uint64{2, 1, 1, 1, 1} || f.NAKOther != 1 || f.NAKTotal() != 7 || f.RNRNAKs != 3 {
		t.Errorf("NAKs %v other %d total %d RNR %d; want [2 1 1 1 1] 1 7 3", f.NAKs, f.NAKOther, f.NAKTotal(), f.RNRNAKs)
	}
	if got, w := f.RNRTimers(), []ValueCount{{3, 1}, {14, 2}}; !slices.Equal(got, w) {
		t.Errorf("RNR timers %v, want %v", got, w)
	}
}

// TestICRCBad: a frame whose ICRC did not verify counts on its flow like
// any other (it was on the wire and the receiver dropped it, so its
// resend is a retransmission), and in ICRCBad. The resend comes after the
// requester's ACK timeout: one a microsecond later, with no NAK before it,
// would be a mirror's copy.
func TestICRCBad(t *testing.T) {
	c := newClock(Config{})
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 0, 8))
	bad := roce(hostA, hostB, opSendOnly, 0x11, 1, 8)
	bad.ICRC = bth.ICRCBad
	c.add(time.Microsecond, bad)
	c.add(4*time.Millisecond, roce(hostA, hostB, opSendOnly, 0x11, 1, 8))
	want{
		transport: bth.TransportRC, packets: 3, messages: 2, reqPackets: 3, retx: 1, bad: 1,
		wire: 3 * 52, payload: 24, hasPSN: true, firstPSN: 0, lastPSN: 1,
	}.check(t, only(t, c, key(hostA, hostB, 0x11)))
}

// TestIgnored: packets that are not RoCE, or whose BTH was not captured,
// make no flow.
func TestIgnored(t *testing.T) {
	c := newClock(Config{})
	p := roce(hostA, hostB, opSendOnly, 0x11, 0, 8)
	p.Kind = packet.KindMalformed
	c.add(time.Microsecond, p)
	p = roce(hostA, hostB, opSendOnly, 0x11, 0, 8)
	p.HasBTH = false
	c.add(time.Microsecond, p)
	p = roce(hostA, hostB, opSendOnly, 0x11, 0, 8)
	p.Kind = packet.KindOther
	c.add(time.Microsecond, p)
	c.tab.Finish()
	if c.tab.Len() != 0 {
		t.Errorf("%d flows, want none", c.tab.Len())
	}
}

// TestUnreliableNoResends: UD and UC resend nothing, so a PSN going back
// on such a flow, even a millisecond after the last (what a timeout resend
// looks like on RC), is no timeout episode: the QP1 flow of two CM
// exchanges was reported as "ACK timeouts".
func TestUnreliableNoResends(t *testing.T) {
	c := newClock(Config{})
	for _, psn := range []uint32{10, 11, 12, 5, 6} {
		p := roce(hostA, hostB, opUDSend, bth.CMQPN, psn, 256)
		p.BTH.DETH = bth.DETH{QKey: 0x80010000, SrcQP: bth.CMQPN}
		c.add(time.Millisecond, p)
	}
	for _, psn := range []uint32{0, 1, 2, 1, 2} {
		c.add(time.Millisecond, roce(hostB, hostA, opUCSend, 0x55, psn, 100))
	}
	for _, k := range []Key{key(hostA, hostB, bth.CMQPN), key(hostB, hostA, 0x55)} {
		for _, f := range c.flows(k) {
			if f.Retx != (RetxStats{}) || len(f.RetxEvents()) != 0 {
				t.Errorf("%s flow %s: resend episodes %+v, events %v; want none", f.Transport, flowName(f), f.Retx, f.RetxEvents())
			}
		}
	}
}

// TestDurationClockBack: a capture whose clock goes back (a mirror's
// timestamps are not always monotonic) gives a flow whose last packet is
// earlier than its first: its duration is 0, not negative, and so is its
// mean rate.
func TestDurationClockBack(t *testing.T) {
	c := newClock(Config{})
	c.add(time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 100, 8))
	c.add(10*time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 101, 8))
	c.add(-500*time.Microsecond, roce(hostA, hostB, opSendOnly, 0x11, 102, 8))
	f := only(t, c, key(hostA, hostB, 0x11))
	if d, r := f.Duration(), f.MeanBitsPerSecond(); d != 0 || r != 0 {
		t.Errorf("duration %v, mean rate %v: want 0 and 0", d, r)
	}
}

// TestUDSeveralSenders: two UD QPs of one host send to one destination QP
// (as the processes of an MPI job over UCX's UD transport do), each in its
// own PSN sequence, one far from the other, with an idle spell: one flow,
// whose PSN sequence is its first sender's (no gap, nothing out of order or
// missing, no new epoch), with every datagram in its packets and messages
// and the other sender's in OtherSenders, not in Requests.
func TestUDSeveralSenders(t *testing.T) {
	c := newClock(Config{})
	send := func(dt time.Duration, srcQP, psn uint32) {
		p := roce(hostA, hostB, opUDSend, 0x33, psn, 256)
		p.BTH.DETH = bth.DETH{QKey: 0x11111111, SrcQP: srcQP}
		c.add(dt, p)
	}
	for i := uint32(0); i < 5; i++ {
		send(time.Microsecond, 0x44, 1000+i)
		send(time.Microsecond, 0x45, 500000+i)
	}
	send(2*time.Millisecond, 0x45, 500005) // after idle time, far from the first sender's PSNs
	send(time.Microsecond, 0x44, 1005)
	want{
		transport: bth.TransportUD, packets: 12, messages: 12, reqPackets: 6,
		wire: 12 * (20 + 8 + 20 + 256 + 4), payload: 12 * 256,
		hasPSN: true, firstPSN: 1000, lastPSN: 1005, srcQP: 0x44,
	}.check(t, only(t, c, key(hostA, hostB, 0x33)))
	if n := only(t, c, key(hostA, hostB, 0x33)).OtherSenders(); n != 6 {
		t.Errorf("OtherSenders %d, want 6", n)
	}
}

// TestUDSenderFromCM: a UD flow whose source QP an RDMA CM exchange named
// before its first datagram: another QP's datagrams before the named QP's
// first are in OtherSenders only, so the named QP's first datagram starts
// the PSN space (no gap from PSN 0) and is the flow's FirstPSN.
func TestUDSenderFromCM(t *testing.T) {
	c := newClock(Config{})
	playCM(c, 0x5000, 0x44, 5000, 0x33, 3000)
	send := func(srcQP, psn uint32) {
		p := roce(hostA, hostB, opUDSend, 0x33, psn, 256)
		p.BTH.DETH = bth.DETH{QKey: 0x11111111, SrcQP: srcQP}
		c.add(time.Microsecond, p)
	}
	for i := uint32(0); i < 3; i++ {
		send(0x45, 100+i)
	}
	f := only(t, c, key(hostA, hostB, 0x33))
	want{
		transport: bth.TransportUD, packets: 3, messages: 3,
		wire: 3 * (20 + 8 + 20 + 256 + 4), payload: 3 * 256, srcQP: 0x44,
	}.check(t, f)
	for i := uint32(0); i < 3; i++ {
		send(0x44, 5000+i)
	}
	want{
		transport: bth.TransportUD, packets: 6, messages: 6, reqPackets: 3,
		wire: 6 * (20 + 8 + 20 + 256 + 4), payload: 6 * 256,
		hasPSN: true, firstPSN: 5000, lastPSN: 5002, srcQP: 0x44,
	}.check(t, f)
	if n := f.OtherSenders(); n != 3 {
		t.Errorf("OtherSenders %d, want 3", n)
	}
}

// TestZeroLengthReadAfterRead: an RDMA READ of 0 bytes at the end address
// of the READ before it is a new message, not a re-issue of that READ (a
// re-issue asks for the bytes still to come).
func TestZeroLengthReadAfterRead(t *testing.T) {
	c := newClock(Config{})
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 100, 0x1000, 309))
	c.add(time.Microsecond, readReq(hostA, hostB, 0x11, 101, 0x1000+309, 0))
	f := only(t, c, key(hostA, hostB, 0x11))
	if f.Retransmitted() != 0 || f.Messages != 2 {
		t.Errorf("retransmitted %d, messages %d: want 0 and 2", f.Retransmitted(), f.Messages)
	}
}
