package flows

import (
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// maxReadSpan caps the extra PSNs one RDMA READ request may consume when
// its length or the path MTU is not known, so that "ahead" keeps meaning
// less than half the PSN space.
const maxReadSpan = psnHalf / 2

// readSpan is the range of extra PSNs an RDMA READ request consumes beyond
// its own: one per response packet after the first.
// The count depends on the path MTU: exact once the flow has shown it
// (pmtu, see learnMTU), else anything an MTU of 256 to 4096 bytes allows. A
// READ whose RETH was cut by the snap length may consume any number.
func readSpan(h *bth.BTH, pmtu uint32) (lo, hi int32) {
	if !h.Opcode.IsReadRequest() {
		return 0, 0
	}
	if h.Ext&bth.HasRETH == 0 {
		return 0, maxReadSpan
	}
	n := uint64(h.RETH.DMALen)
	if pmtu != 0 {
		k := min(responsePackets(n, uint64(pmtu)), maxReadSpan+1)
		return int32(k - 1), int32(k - 1)
	}
	least := responsePackets(n, 4096)
	most := min(responsePackets(n, 256), maxReadSpan+1)
	return int32(least - 1), int32(most - 1)
}

// responsePackets is the number of READ response packets for n bytes at a
// path MTU of mtu: one for a zero-length READ.
func responsePackets(n, mtu uint64) uint64 {
	if n == 0 {
		return 1
	}
	return (n + mtu - 1) / mtu
}

// validMTU says whether n is an IBTA path MTU (256, 512, 1024, 2048, 4096).
func validMTU(n uint64) bool {
	return n >= 256 && n <= 4096 && n&(n-1) == 0
}

// learnMTU records the path MTU from p, a FIRST or MIDDLE packet (opcode
// class opShowsMTU): the FIRST and MIDDLE packets of a SEND, an RDMA WRITE
// or an RDMA READ response carry exactly one path MTU of payload (IBTA vol
// 1 ch. 9). A flow's requests and the READ responses it carries are sent
// by one QP, so they share its MTU.
func (f *Flow) learnMTU(p *packet.Packet) {
	if validMTU(uint64(p.PayloadLen)) {
		f.pmtu = uint16(p.PayloadLen)
	}
}

// readState is the last RDMA READ request a flow carried that was not a
// re-issue.
type readState struct {
	valid bool
	cut   bool // its RETH was not captured: only psn is known
	psn   uint32
	span  int32 // most extra PSNs it may consume
	va    uint64
	end   uint64 // VA + DMA length
	rkey  uint32
	// reissued: a repeat of it was taken for its re-issue because its
	// READ responses began past its PSN (Flow.readBeganPast); later
	// repeats are not.
	reissued bool
	// before: the packets other than CNPs the flow carried before it,
	// whose mirror copies, if the mirror copies the flow, come before its
	// own (Table.resentRead, Flow.readCopyDue); for the same READ sent
	// again (at its PSN: an RNR retry, a timeout's resend), before its
	// first copy, as are resp, respBefore and at.
	before uint64
	// resp is the flow whose responses answered the flow last when it
	// came (respLink), and respBefore its packets then, CNPs aside: the
	// mirror copies the connection's two directions in one queue
	// (Flow.readCopyDue).
	resp       *Flow
	respBefore uint64
	at         int64 // its capture time (FrameAt.Nanos)
}

// noteRead remembers h, an RDMA READ request, and the READ before it (for
// skipOthers).
func (f *Flow) noteRead(h *bth.BTH) {
	c := f.coldState()
	c.prevRead = c.lastRead
	l := &c.lastRead
	*l = readState{valid: true, cut: true, psn: h.PSN, span: maxReadSpan, before: f.Packets - f.CNPs - 1, at: f.reqW.last} // f.Packets counts h
	if r := f.respLink; r != nil {
		l.resp, l.respBefore = r, r.Packets-r.CNPs
	}
	if p := &c.prevRead; p.valid && p.psn == h.PSN {
		// The same READ again (an RNR retry, a resend after a timeout):
		// its copy may be the first one's, which comes after the copies
		// of what came before that one.
		l.before, l.resp, l.respBefore, l.at = p.before, p.resp, p.respBefore, p.at
	}
	if h.Ext&bth.HasRETH == 0 {
		return
	}
	_, hi := readSpan(h, uint32(f.pmtu))
	e := &h.RETH
	l.cut, l.span, l.va, l.end, l.rkey = false, hi, e.VA, e.VA+uint64(e.DMALen), e.RKey
}

// lastPSN is the PSN of the last response packet of r at path MTU mtu,
// and whether it is known: not when the snap length cut r's RETH or mtu
// is 0.
func (r *readState) lastPSN(mtu uint16) (uint32, bool) {
	if !r.valid || r.cut || mtu == 0 {
		return 0, false
	}
	n := min(responsePackets(r.end-r.va, uint64(mtu)), maxReadSpan+1)
	return psnAdd(r.psn, int32(n)-1), true
}

// rereads says whether h, an RDMA READ request, re-issues the rest of the
// previous READ: a requester that misses a response packet asks again from
// that packet's PSN for the remaining bytes (IBTA vol 1 ch. 9), so the
// new READ has the same R_Key and end address, a later VA, and a PSN within
// the first READ's response PSNs. Such a READ is a retransmission, not a new
// message; it also shows the path MTU, (VA - first VA) / (PSN - first PSN).
//
// When the snap length cut the RETH of either READ, the PSNs alone decide:
// a READ after the previous one's PSN and at or before the highest READ
// response that answered this flow re-issues it, since a new READ comes
// after every response to the READs before it; so does a READ at the PSN
// after that response when it was a FIRST or MIDDLE (its READ had more to
// come, so a new READ would come later still): the re-issue of a READ
// whose LAST response was lost.
func (f *Flow) rereads(h *bth.BTH) bool {
	if f.cold == nil {
		return false
	}
	if l := &f.cold.lostRead; l.ok && l.psn == h.PSN {
		// Table.reissuesLost saw its READ responses skip its PSN.
		l.ok = false
		return true
	}
	r := &f.cold.lastRead
	if !r.valid {
		return false
	}
	e := &h.RETH
	if r.cut || h.Ext&bth.HasRETH == 0 {
		s := f.respLink
		if s == nil || !s.readResp || psnDiff(h.PSN, r.psn) <= 0 {
			return false
		}
		d := psnDiff(h.PSN, s.ReadResponses.HighPSN)
		return d <= 0 || d == 1 && s.readOpen
	}
	// A re-issue asks for the bytes still to come: never none (a READ of
	// 0 bytes is legal, and may follow a READ at its end address).
	if e.RKey != r.rkey || e.VA <= r.va || e.VA+uint64(e.DMALen) != r.end || e.DMALen == 0 {
		return false
	}
	d := psnDiff(h.PSN, r.psn)
	if d <= 0 || d > r.span {
		return false
	}
	if done := e.VA - r.va; done%uint64(d) == 0 && validMTU(done/uint64(d)) {
		f.pmtu = uint16(done / uint64(d))
	}
	return true
}

// skipOthers makes the READ responses expect, before s's READ response
// MIDDLE or LAST at psn that is past their expected PSN, the first PSN it
// surely skipped as a READ response, so that the gap it shows holds no
// PSN of another request. The READ responses a flow carries answer the
// partner's READs, and each READ takes PSNs of the requester's one PSN
// space: the WRITEs, SENDs and atomics between two READs take the PSNs
// between their responses (IBTA vol 1 §9.7), which no READ response ever
// carries, and a READ response FIRST or ONLY may begin past them (see
// PSNStats.observe). A MIDDLE or LAST continues a READ whose FIRST the
// capture lacks; that READ began at the latest of:
//
//   - the PSN expected next, after the last READ response;
//   - the partner's last READ request (the requester as Table.requester
//     knows it), when psn lies within its response PSNs and past its
//     own: exactly. A later READ already sent does not tell;
//   - the PSN after the last PSN s's other responses (ACKs, NAKs)
//     acknowledged: the responder answers requests in PSN order, so it had
//     answered those before this READ.
//
// At most psn-1: the PSN before a MIDDLE or LAST is its READ's. The PSNs
// between the expected one and there are other requests', but for those
// of the READ before (the one before the partner's last READ when that is
// psn's, else the last), where its response PSNs are known (its RETH was
// captured, and the path MTU: these responses show it whenever that READ
// lost its tail) and reach past the expected PSN: that READ lost its last
// responses too, or all of them. Those count as skipped as well, one gap
// with psn's (without the READ requests, they cannot be told from the
// other requests' PSNs, and do not count).
func (f *Flow) skipOthers(psn uint32) {
	s := &f.ReadResponses
	exp := s.seq.expHi
	from := exp
	req, mtu := f.readRequester()
	var before *readState
	if req != nil {
		l := &req.cold.lastRead
		if d := psnDiff(psn, l.psn); l.valid && d > 0 && d <= l.span {
			if psnDiff(l.psn, from) > 0 {
				from = l.psn
			}
			before = &req.cold.prevRead
		} else if end, ok := l.lastPSN(mtu); ok && psnDiff(end, psn) < 0 {
			before = l
		}
	}
	if f.resp.started {
		if a := psnAdd(f.resp.ackedHigh(), 1); psnDiff(a, from) > 0 {
			from = a
		}
	}
	if psnDiff(from, psn) >= 0 {
		from = psnAdd(psn, -1)
	}
	if req != nil {
		req.cold.noteMissedRead(from, psn)
	}
	if before != nil && from != exp {
		if end, ok := before.lastPSN(mtu); ok && psnDiff(end, exp) >= 0 && psnDiff(end, from) < 0 {
			lo := exp
			if psnDiff(before.psn, lo) > 0 {
				lo = before.psn
			}
			if psnAdd(end, 1) == from {
				from = lo // one run of READ response PSNs
			} else {
				s.addGap(psnRange{lo, end})
				s.MissingPSNs += uint64(psnDiff(end, lo)) + 1
			}
		}
	}
	s.seq.expLo, s.seq.expHi = from, from
}

// readRequester returns the flow whose READ requests f's READ responses
// answer (Table.requester's link, else the sole partner), nil if there is
// none or it kept no READ (no cold state), and the path MTU f, or else it,
// has shown (0 if neither has).
func (f *Flow) readRequester() (req *Flow, mtu uint16) {
	req = f.reqLink // see Table.requester
	if req == nil {
		req = f.pairOne
	}
	if req == nil || req.cold == nil {
		return nil, 0
	}
	mtu = f.pmtu
	if mtu == 0 {
		mtu = req.pmtu
	}
	return req, mtu
}

// noteMissedRead keeps, of the last two READ requests of c's flow, the
// one whose first response PSNs the gap of the READ responses answering
// it skips, from from up to psn, a MIDDLE or LAST within its response
// PSNs (Flow.skipOthers): the capture lacks its first responses. Its copy,
// when the mirror copies the connection, comes a mirror's lag after it,
// when more READs may have followed it; the rule that tells that copy from
// a re-issue (Flow.readCopyDue) needs what the READ was when it came.
func (c *flowCold) noteMissedRead(from, psn uint32) {
	for _, l := range [...]*readState{&c.lastRead, &c.prevRead} {
		if d := psnDiff(psn, l.psn); l.valid && d > 0 && d <= l.span && psnDiff(l.psn, from) >= 0 {
			c.missedRead = *l
			return
		}
	}
}

// noteReadResponse notes a READ response at psn, of opcode class c: the
// flow carries READ responses, and whether the highest so far leaves its
// READ open (a FIRST or MIDDLE, whose payload also shows the path MTU).
func (f *Flow) noteReadResponse(psn uint32, c opBits) {
	f.readResp = true
	s := &f.ReadResponses
	if c&opOpens != 0 && f.readOpen && s.started() && psnDiff(psn, s.seq.expHi) > 0 {
		f.skipOpenRead(psn)
	}
	if !s.started() || psnDiff(psn, s.HighPSN) > 0 {
		f.readOpen = c&opShowsMTU != 0
	}
}

// skipOpenRead opens the gap that a READ response FIRST or ONLY at psn,
// past the PSN expected next, shows when the highest READ response so far
// left its READ open (a FIRST or MIDDLE): a responder answers the READs
// in order, each READ's responses one after the other, so that READ lost
// its last responses. The gap runs from the PSN expected next to that
// READ's last response PSN, when its request told it (the RETH, and the
// path MTU), else over the expected PSN only (the LAST, at least), and
// never to psn: the PSNs after the READ's are other requests' (PSNStats.
// observe lets a FIRST or ONLY begin past them). Without it, the READ
// that re-issues the lost responses, and their answer, would look like a
// mirror's copies of the READ and responses before.
func (f *Flow) skipOpenRead(psn uint32) {
	s := &f.ReadResponses
	lo := s.seq.expHi
	hi := lo
	if req, mtu := f.readRequester(); req != nil {
		for _, l := range [...]*readState{&req.cold.lastRead, &req.cold.prevRead} {
			if d := psnDiff(s.HighPSN, l.psn); l.valid && d >= 0 && d <= l.span {
				if end, ok := l.lastPSN(mtu); ok && psnDiff(end, hi) > 0 {
					hi = end
				}
				break
			}
		}
	}
	if psnDiff(hi, psn) >= 0 {
		hi = psnAdd(psn, -1)
	}
	s.addGap(psnRange{lo, hi})
	s.MissingPSNs += uint64(psnDiff(hi, lo)) + 1
	s.PSNGaps++
}
