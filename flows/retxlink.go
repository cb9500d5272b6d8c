package flows

import "github.com/rocedump/rocedump/decode/bth"

// noteResponse applies a response that s carries (ACK, NAK, READ or atomic
// response) to the flow whose requests it answers: it decides the gaps the
// response acknowledges past and makes a PSN sequence error or RNR NAK
// pending there, for the resend that answers it. A fatal NAK decides its
// own PSN too, which the responder received (see nakedAt), and s keeps
// it for Finish (finishLoss). Pairing is final only at Finish, so this
// uses what is known while packets arrive: see requester.
func (t *Table) noteResponse(s *Flow, h *bth.BTH, at *FrameRef) {
	if h.Ext&bth.HasAETH != 0 && h.AETH.Kind() == bth.AckKindACK {
		// An ACK, most responses: it acknowledges through its own PSN
		// and makes nothing pending.
		t.noteAcked(s, h.PSN, at)
		return
	}
	through, nak, rnr, fatal := h.PSN, false, false, false
	var timer uint8
	if h.Ext&bth.HasAETH != 0 {
		switch h.AETH.Kind() {
		case bth.AckKindNAK:
			// A NAK acknowledges every PSN before its own.
			through = psnAdd(h.PSN, -1)
			switch c := h.AETH.NAKCode(); {
			case c == bth.NAKPSNSequenceError:
				nak = true
			case c <= bth.NAKInvalidRDRequest:
				// A fatal NAK; a reserved code says nothing.
				fatal = true
				s.ensureRetx().noteFatal(h.PSN, at)
			}
		case bth.AckKindRNRNAK:
			through = psnAdd(h.PSN, -1)
			rnr, timer = true, h.AETH.RNRTimer()
		}
	} else if aethCut(h) {
		// An ACK or a NAK: either acknowledges the PSNs before its own.
		through = psnAdd(h.PSN, -1)
	}
	if s.naksHeld {
		t.settleNAKs(s, through)
	}
	r := t.requester(s)
	if r == nil || !r.Requests.started() {
		t.keepUnpaired(s, through, at) // early.go
	}
	if r != nil {
		if (nak || rnr || fatal) && r.held() {
			// Only a new request proves a reordering: decide the
			// held fills as resends, before the NAK.
			r.decideHeld(false)
		}
		r.respLink = s
		if r.Requests.started() && psnDiff(through, r.Requests.seq.expHi) >= 0 {
			// Ahead of the requests captured so far (early.go).
			r.noteAhead(through, at)
		}
		switch {
		case nak || rnr || fatal:
			r.nakedAt(h.PSN, !nak)
		default:
			r.ackedThrough(through)
		}
	}
	if !nak && !rnr {
		return
	}
	if r != nil {
		if t.lateNAK(r, s, h.PSN, rnr, timer, at) {
			return // its resends came first (skew.go)
		}
		r.pend(rnr, timer, h.PSN, at, nil, false)
		return
	}
	// No single requester yet: every flow the NAK may answer holds it,
	// until s's responses get past it (settleNAKs). A resend must then
	// match its PSN, so a flow it does not answer takes it only for a
	// resend at exactly that PSN.
	var cands [maxPairCands]*Flow
	n := 0
	if ev := s.pair; ev != nil && ev.found {
		for _, id := range ev.cands[:ev.n] {
			cands[n] = t.flowAt(id - 1)
			n++
		}
	} else {
		for c := t.byHosts[hostPair{s.Key.Dst, s.Key.Src}].first; c != nil && n < maxPairCands; c = c.hostNext {
			if mayPair(c, s) && fits(c, h.PSN) {
				cands[n] = c
				n++
			}
		}
	}
	for _, c := range cands[:n] {
		if c.held() {
			c.decideHeld(false)
		}
		c.pend(rnr, timer, h.PSN, at, s, n > 1)
	}
	if n > 0 {
		s.naksHeld = true
	}
}

// settleNAKs drops a NAK or RNR NAK that s carried with no single
// requester known, from every flow it is pending on, once a response of s
// gets past its PSN (through is the last PSN the response acknowledges):
// the responder that sent s has its answer, so the NAK asks no flow for a
// resend any more. Without this, a flow the NAK did not answer (another
// QP of the host pair at the same PSNs) keeps it, and takes its next
// resend, a timeout or a mirror's copy, for the go-back-N or RNR retry the
// NAK asked for.
func (t *Table) settleNAKs(s *Flow, through uint32) {
	left := false
	for c := t.byHosts[hostPair{s.Key.Dst, s.Key.Src}].first; c != nil; c = c.hostNext {
		if c.retx == nil {
			continue
		}
		p := &c.retx.pending
		if !p.valid || p.from != s {
			continue
		}
		if psnDiff(through, p.psn) >= 0 {
			p.valid = false
		} else {
			left = true
		}
	}
	s.naksHeld = left
}

// noteAcked is noteResponse for an ACK of s's through PSN (the
// response's own): what noteResponse does for a response that is not a
// NAK. Apart, it spares an ACK noteResponse's tests and flags, which
// the NAKs need, and the call to requester for a flow without a CM
// exchange.
func (t *Table) noteAcked(s *Flow, through uint32, at *FrameRef) {
	if s.naksHeld {
		t.settleNAKs(s, through)
	}
	r := s.pairOne
	if s.hasCM {
		r = t.requester(s)
	}
	if r == nil || !r.Requests.started() {
		t.keepUnpaired(s, through, at) // early.go
	}
	if r == nil {
		return
	}
	if r.respLink != s {
		r.respLink = s
	}
	if r.Requests.started() && psnDiff(through, r.Requests.seq.expHi) >= 0 {
		// Ahead of the requests captured so far (early.go).
		r.noteAhead(through, at)
	}
	r.ackedThrough(through)
}

// requester returns the flow whose requests the responses s carries
// answer, as far as it is known while packets arrive: the flow an RDMA CM
// exchange named, or else the only candidate the responses so far fit (see
// pairEvidence); nil when there is none or more than one.
func (t *Table) requester(s *Flow) *Flow {
	if s.hasCM {
		if s.reqLink == nil {
			s.reqLink = t.Current(s.Key.Reverse(s.CM.SrcQP))
		}
		return s.reqLink
	}
	return s.pairOne
}

// finishLoss decides, once partners are known, what no response decided
// while packets arrived (the flow had no single requester link then, or
// the gap opened after the response): PSNs of its gaps still not captured
// at or below the highest PSN the partner acknowledged (see noteResponse)
// are mirror loss, and so is the gap of the last fatal NAK's PSN from it
// on (the responder received that PSN: see nakedAt). So are PSNs after
// the last request the flow carried, up to that highest PSN or the fatal
// NAK's PSN: the responder acknowledged or received requests the capture
// does not hold (one more mirror gap).
func (t *Table) finishLoss() {
	for _, f := range t.flows {
		if f.held() {
			// Fills held to the end of the capture: resends, unless
			// the responder acknowledged everything after them.
			f.decideHeld(t.heldAcked(f))
		}
	}
	for _, f := range t.flows {
		p := f.Partner
		if p == nil || !p.resp.acked() {
			continue
		}
		a, at := p.resp.ackedHigh(), &p.resp.ackedAt
		if x := p.retx; x != nil && x.fatal {
			if f.retx != nil && f.retx.loss.n > 0 {
				f.nakedAt(x.fatalPSN, true)
			}
			if psnDiff(x.fatalPSN, a) > 0 {
				a, at = x.fatalPSN, &x.fatalAt
			}
		}
		if e := t.epochEnds[f]; e != nil && e.began(at) {
			// The partner's highest acknowledgement came once f's
			// key had begun its next epoch: it may answer the new
			// connection's requests (a responder's flow goes on while
			// the requester's key starts anew, and stays the partner
			// of the epoch it answered first), and says nothing of
			// what f sent or the mirror missed. What the partner had
			// acknowledged when the next epoch began does. (Making
			// requester take the key's current epoch would not do:
			// it moves the live links, but this rule reads the
			// partner's acknowledgements of every epoch at once.)
			if e.resp != p || !e.acked {
				continue
			}
			a, at = e.high, &e.at
		}
		if f.retx != nil && f.retx.loss.n > 0 {
			f.ackedThrough(a)
		}
		s := &f.Requests
		if !s.started() || psnDiff(a, s.seq.expHi) < 0 {
			continue
		}
		n := uint32(psnDiff(a, s.seq.expHi)) + 1
		f.Retx.MirrorLostPSNs += uint64(n)
		f.Retx.MirrorGaps++
		f.event(RetxEvent{Kind: EventMirrorLoss, At: *at, PSN: s.seq.expHi, Count: n})
	}
}

// epochEnd is what a flow's responder link had acknowledged when the
// flow's key began its next epoch (Table.noteEpochEnd), for finishLoss.
type epochEnd struct {
	next  FrameRef // the next epoch's first frame
	resp  *Flow    // the flow's respLink then
	acked bool     // resp had acknowledged a PSN: high, first at at
	high  uint32
	at    FrameRef
}

// began says whether the response at was captured once the next epoch
// had begun (at the same time counts as after, unless the pass saw the
// response first).
func (e *epochEnd) began(at *FrameRef) bool {
	b := &e.next
	return b.Time.Before(at.Time) || b.Time.Equal(at.Time) && b.Seq <= at.Seq
}

// noteEpochEnd notes, as f, the first flow of prev's key's next epoch,
// begins, what prev's responder link had acknowledged (see epochEnd).
func (t *Table) noteEpochEnd(prev, f *Flow) {
	e := &epochEnd{next: f.First, resp: prev.respLink}
	if r := e.resp; r != nil && r.resp.acked() {
		e.acked, e.high, e.at = true, r.resp.ackedHigh(), r.resp.ackedAt
	}
	if t.epochEnds == nil {
		t.epochEnds = map[*Flow]*epochEnd{}
	}
	t.epochEnds[prev] = e
}
