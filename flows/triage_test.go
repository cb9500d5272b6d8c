package flows

import "testing"

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
