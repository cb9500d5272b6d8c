package flows

import (
	"testing"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// TestReadRNRRetryFirstPacketCopies: a READ that is its flow's first
// packet, refused by an RNR NAK and retried after the timer, answered, on
// a connection the mirror copies 83 µs late: the copy of the first READ
// comes after the answer, and is a copy, as is the retry's. The retry is
// the same READ again: nothing came before the READ whose copy would
// have had to come first (Table.resentRead), so the repeat is no READ
// resent after its answer.
func TestReadRNRRetryFirstPacketCopies(t *testing.T) {
	c := newClock(Config{})
	var tape []taped
	c.tape = &tape
	c.add(us, readReq(hostA, hostB, bQP, 0, 0x10000, 1178))
	c.add(4*us, nak(hostB, hostA, aQP, 0, 2, true)) // RNR NAK, 20 µs
	c.add(20*us, readReq(hostA, hostB, bQP, 0, 0x10000, 1178))
	c.add(4*us, roce(hostB, hostA, opReadFirst, aQP, 0, 1024))
	c.add(0, roce(hostB, hostA, opReadLast, aQP, 1, 154))
	tab := replay(mirrored(tape, 83*us, notCNP, nil))
	var req, resp *Flow
	for _, f := range tab.Flows() {
		switch f.Key {
		case key(hostA, hostB, bQP):
			req = f
		case key(hostB, hostA, aQP):
			resp = f
		}
	}
	if req == nil || resp == nil {
		t.Fatal("flows missing")
	}
	if req.Packets != 2 || req.MirrorDuplicates() != 2 || req.Requests.Retransmitted != 1 || req.Retx.RNRRetries != 1 || req.Retx.Timeouts != 0 {
		t.Errorf("requests: %d packets, %d copies, %d resent, %d RNR retries, %d timeouts; want 2, 2, 1, 1, 0",
			req.Packets, req.MirrorDuplicates(), req.Requests.Retransmitted, req.Retx.RNRRetries, req.Retx.Timeouts)
	}
	if resp.Packets != 3 || resp.MirrorDuplicates() != 3 || resp.ReadResponses.Retransmitted != 0 {
		t.Errorf("responses: %d packets, %d copies, %d resent; want 3, 3, 0",
			resp.Packets, resp.MirrorDuplicates(), resp.ReadResponses.Retransmitted)
	}
}

// TestPairSameTransport: an XRC QP and an RC QP of one host pair, both at
// PSN 0; the mirror copies the RC connection 97 µs late, and the XRC
// responder refuses the XRC QP's third WRITE with an RNR NAK. The XRC
// responses answer the XRC QP only (a QP's requests and responses share
// its transport): the RNR NAK is not pending on the RC QP, whose copies
// stay copies, not an RNR retry, and each connection is paired.
func TestPairSameTransport(t *testing.T) {
	const (
		xrcWriteOnly = bth.Opcode(0xaa)
		xrcAck       = bth.Opcode(0xb1)
		xA, xB       = 0x33, 0x44 // the XRC QPs
	)
	c := newClock(Config{})
	var tape []taped
	c.tape = &tape
	c.add(us, roce(hostA, hostB, opWriteFrst, bQP, 0, 1024))
	c.add(0, roce(hostA, hostB, opWriteLast, bQP, 1, 602))
	c.add(us, roce(hostA, hostB, opWriteFrst, bQP, 2, 1024))
	c.add(0, roce(hostA, hostB, opWriteLast, bQP, 3, 602))
	c.add(3*us, roce(hostB, hostA, opAck, aQP, 1, 0))
	c.add(us, roce(hostB, hostA, opAck, aQP, 3, 0))
	c.add(27*us, roce(hostA, hostB, xrcWriteOnly, xB, 0, 1))
	c.add(us, roce(hostA, hostB, xrcWriteOnly, xB, 1, 1))
	c.add(us, roce(hostA, hostB, xrcWriteOnly, xB, 2, 1))
	c.add(33*us, roce(hostB, hostA, xrcAck, xA, 0, 0))
	c.add(us, roce(hostB, hostA, xrcAck, xA, 1, 0))
	rnr := roce(hostB, hostA, xrcAck, xA, 2, 0)
	rnr.BTH.AETH.Syndrome = 0x21 // RNR NAK, 10 µs
	c.add(us, rnr)
	c.add(10*us, roce(hostA, hostB, xrcWriteOnly, xB, 2, 1))
	c.add(35*us, roce(hostB, hostA, xrcAck, xA, 2, 0))
	rcOnly := func(p *packet.Packet) bool { return p.BTH.Opcode.Transport() == bth.TransportRC }
	tab := replay(mirrored(tape, 97*us, rcOnly, nil))
	for _, f := range tab.Flows() {
		want := struct{ copies, retx, rnr uint64 }{}
		switch f.Key {
		case key(hostA, hostB, bQP):
			want.copies = 4
		case key(hostB, hostA, aQP):
			want.copies = 2
		case key(hostA, hostB, xB):
			want.retx, want.rnr = 1, 1
		}
		got := struct{ copies, retx, rnr uint64 }{f.MirrorDuplicates(), f.Requests.Retransmitted, f.Retx.RNRRetries}
		if got != want {
			t.Errorf("%v: copies, resent, RNR retries = %v, want %v", f.Key, got, want)
		}
		if f.Partner == nil {
			t.Errorf("%v: no partner", f.Key)
		} else if f.Partner.Transport != f.Transport {
			t.Errorf("%v (%v): partner %v (%v)", f.Key, f.Transport, f.Partner.Key, f.Partner.Transport)
		}
	}
}

// TestPairReadResponseTaken: two QPs of one host pair READ at PSN 0, one
// 1058 bytes (two responses at any MTU up to 1024), the other 1 byte (one
// response); the fabric loses the longer READ's first response before the
// mirror. Its last response, at PSN 1, is the one after the short READ's
// requests, which a response may name (fits), but a READ response names a
// PSN its READ took: it answers the long READ's QP only, so the READ
// re-issued from PSN 0 is a re-issue, not a mirror copy.
func TestPairReadResponseTaken(t *testing.T) {
	const cQP, dQP = 0x55, 0x66 // the short READ's QPs: A's, B's
	c := newClock(Config{})
	c.add(us, readReq(hostA, hostB, bQP, 0, 0x10000, 1058))
	c.add(0, readReq(hostA, hostB, dQP, 0, 0x20000, 1))
	c.add(4*us, roce(hostB, hostA, opReadOnly, cQP, 0, 1))
	// the first response to bQP's READ lost before the mirror
	c.add(0, roce(hostB, hostA, opReadLast, aQP, 1, 34))
	c.add(0, readReq(hostA, hostB, bQP, 0, 0x10000, 1058))
	c.add(4*us, roce(hostB, hostA, opReadFirst, aQP, 0, 1024))
	c.add(0, roce(hostB, hostA, opReadLast, aQP, 1, 34))
	req := only(t, c, key(hostA, hostB, bQP))
	if req.Retx.ReissuedReads != 1 || req.MirrorDuplicates() != 0 || req.Packets != 2 {
		t.Errorf("requests: %d re-issued, %d copies, %d packets; want 1, 0, 2", req.Retx.ReissuedReads, req.MirrorDuplicates(), req.Packets)
	}
	if req.Partner == nil || req.Partner.Key != key(hostB, hostA, aQP) {
		t.Errorf("partner %v, want %v", req.Partner, key(hostB, hostA, aQP))
	}
}
