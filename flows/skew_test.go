package flows

import "testing"

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
