package flows

import (
	"slices"
	"time"
)

// Reordering: a request packet that fills a gap (sequenced out of order)
// is not always a resend. A fabric that sprays a QP's packets over several
// paths (adaptive routing: NVIDIA Spectrum-X, whose NICs put them back in
// order), or a mirror path, may deliver a QP's packets out of PSN order:
// 0, 1, 3, 2 is then 2 reordered, not 2 lost and resent. A requester that
// resends does it go-back-N (IBTA vol 1 §9.7.5): from the PSN a NAK names,
// or after its ACK timeout from the first unacknowledged PSN, every packet
// after it too. So a genuine resend of a PSN p that a gap skipped, behind
// the highest PSN h the flow carried, is followed by the resends of p+1..h,
// which the flow carried already (sequenced retransmitted), unless the
// mirror missed them; a reordered packet is followed by new requests, in
// order or past h, or by other packets of the same gaps.
//
// A fill that no pending NAK asks for and that continues no episode, the
// first after at most oneWayAfter with no request (a fabric reorders by
// microseconds; a millisecond without a request is a requester waiting
// for its ACK timeout), is held undecided (holdFill), and so are the
// fills that follow it, up to maxHeld. The next request packet that is no
// fill (and no mirror copy: those never reach the sequencer) decides
// them: a retransmission (or a re-issued READ) makes them resends,
// decided exactly as they would have been when captured (fillLoss,
// resend); anything else makes them reordered (Flow.Reordered):
// their PSNs leave the open gaps as arrived, neither fabric nor mirror
// loss, and no episode starts. A NAK or RNR NAK applied to the flow while
// fills are held (or pending on it), and Finish, decide them as resends
// too: only a new request proves a reordering. An ACK does not: it
// answers a resend and a reordered packet alike (and one past the highest
// PSN, with no resend of it since, a reordering only), so the fills stay
// held, their PSNs out of the PSNs it decides.

// maxHeld bounds the fills a flow holds undecided: a fill past it decides
// the ones held as resends, and is decided itself as it comes.
const maxHeld = 4

// heldFill is a fill held undecided: its PSN, its frame and the time
// since the request before it (the ACK timeout it waited, if a resend);
// and, when its PSN was undecided (inLoss), the gap it was in (id, frame,
// and whether the gap was counted in FabricGaps when it came). Its PSN
// leaves the undecided ones as it comes, as fillLoss takes it, so that a
// response while it is held does not decide it: only its count waits.
type heldFill struct {
	psn    uint32
	gap    uint32
	inLoss bool
	fabric bool
	at     FrameRef
	gapAt  FrameRef
	wait   time.Duration
	// behind: how many PSNs behind the flow's highest request PSN it
	// came (the positions it was overtaken by, at most).
	behind uint32
	// reissue: the re-issued READ it came right after, whose recovery
	// it may start (retxState.reissue, which it takes).
	reissue reissueMark
}

// holdFill says whether a request at psn that filled a gap, captured at at
// wait after the request before it, is held undecided (see above). When
// it is not, the fills held before it are decided as resends first.
func (f *Flow) holdFill(psn uint32, at *FrameRef, wait time.Duration) bool {
	s := f.retx
	if s == nil || !connected(f.Transport) {
		return false
	}
	if int(s.nHeld) == maxHeld || wait >= oneWayAfter || f.resendAnswers(psn) {
		if s.nHeld != 0 {
			f.decideHeld(f.heldBeforeGBN(psn))
		}
		return false
	}
	h := heldFill{psn: psn, at: *at, wait: wait, reissue: s.reissue, behind: uint32(max(0, psnDiff(f.Requests.HighPSN, psn)))}
	s.reissue = reissueMark{}
	l := &s.loss
	if i := l.find(psn); i >= 0 {
		r := &l.r[i]
		h.inLoss, h.gap, h.gapAt, h.fabric = true, r.gap, r.at, r.fabric
		l.cut(i, psn)
		f.cutSpan(psn, h.gap)
	}
	if s.nHeld == 0 {
		s.heldEvents = len(s.events)
	}
	s.held[s.nHeld] = h
	s.nHeld++
	return true
}

// heldAcked says, at Finish, whether the fills f still holds were
// reordered: after the last of them, the partner acknowledged every
// request f carried (the highest request PSN or later), and f's key began
// no later epoch. A responder acknowledges the highest PSN h only once it
// has every PSN up to h, in order (IBTA vol 1 §9.7.5): had a fill at p < h
// been a go-back-N resend, the original p+1..h arrived out of sequence
// and the requester sent them again after p, which the capture would hold
// as retransmitted (and they would have decided the fills as resends).
// So this is the end of a flow that the fabric delivered out of PSN order
// (adaptive routing), its last request new: not an ACK timeout. What the
// rule cannot tell is the package doc's (a resend whose go-back-N
// followers the mirror all missed).
func (t *Table) heldAcked(f *Flow) bool {
	p := f.Partner
	if p == nil || !p.resp.acked() || psnDiff(p.resp.ackedHigh(), f.Requests.HighPSN) < 0 || t.epochEnds[f] != nil {
		return false
	}
	last, at := &f.retx.held[f.retx.nHeld-1].at, &p.resp.ackedAt
	return at.Time.After(last.Time) || at.Time.Equal(last.Time) && at.Seq > last.Seq
}

// heldBeforeGBN says whether a request at psn, the next after held fills,
// is the go-back-N resend a pending PSN sequence error NAK asked for, at
// its very PSN, behind every fill held: those came after the NAK (a NAK
// decides the fills held before it), at PSNs after the NAK's, before the
// requester resent the NAK's own, which a go-back-N resends first (IBTA
// vol 1 §9.7.5). So they were originals the fabric delivered out of order
// (adaptive routing), not its resends: reordered.
func (f *Flow) heldBeforeGBN(psn uint32) bool {
	s := f.retx
	p := &s.pending
	if s.nHeld == 0 || !p.valid || p.rnr || psn != p.psn {
		return false
	}
	for _, h := range s.held[:s.nHeld] {
		if psnDiff(h.psn, psn) <= 0 {
			return false
		}
	}
	return true
}

// resendAnswers says whether a resend at psn would answer a pending NAK
// (an RNR NAK at psn also makes fillLoss decide it delivered) or continue
// the episode in progress (see Flow.resend): such a fill is a resend
// whatever follows it.
func (f *Flow) resendAnswers(psn uint32) bool {
	s := f.retx
	if p := &s.pending; p.valid && (psn == p.psn || !p.shared && psnDiff(psn, p.psn) >= 0 && p.rnr) {
		return true
	}
	return s.ep.active && psnDiff(psn, s.ep.last) > 0
}

// held says whether f holds fills undecided.
func (f *Flow) held() bool { return f.retx != nil && f.retx.nHeld != 0 }

// decideHeld decides the fills f holds, in the order they came: reordered,
// or resent, as noteRequest would have decided them when they came
// (fillLoss, resend). Nothing that a resend's decision reads changed
// meanwhile: the fills held answer no pending NAK and continue no episode,
// a NAK decides them before it is applied, and an ACK only takes back a
// pending NAK they did not answer, or decides other PSNs.
//
// The events of resends take their place in capture order among those a
// response recorded while the fills were held (mirror loss), as when they
// were decided as they came.
func (f *Flow) decideHeld(reordered bool) {
	s := f.retx
	n := int(s.nHeld)
	s.nHeld = 0
	var later []RetxEvent
	if !reordered && len(s.events) > s.heldEvents {
		later = slices.Clone(s.events[s.heldEvents:])
		s.events = s.events[:s.heldEvents]
		defer func() {
			for _, e := range later {
				if len(s.events) == MaxRetxEvents {
					f.Retx.MoreEvents++
					continue
				}
				s.events = append(s.events, e)
			}
		}()
	}
	for i := range n {
		h := &s.held[i]
		if reordered {
			s.reordered++
			s.reorderBehind = max(s.reorderBehind, h.behind)
			if h.inLoss {
				// Late by the time since the packet that overtook it
				// (the one past its PSN that opened its gap).
				s.reorderLate = max(s.reorderLate, h.at.Time.Sub(h.gapAt.Time))
			}
			continue
		}
		if h.inLoss {
			// fillLoss's decision: fabric loss.
			first := s.loss.markGap(h.gap, false) && !h.fabric
			for j := i + 1; j < n; j++ {
				if g := &s.held[j]; g.inLoss && g.gap == h.gap {
					g.fabric = true
				}
			}
			f.Retx.FabricLostPSNs++
			if first {
				f.Retx.FabricGaps++
			}
			f.event(RetxEvent{Kind: EventFabricLoss, At: h.gapAt, PSN: h.psn, Count: 1})
		}
		// No quietResend: a fill held came less than oneWayAfter
		// after the request before it.
		s.reissue = h.reissue
		f.resend(h.psn, &h.at, h.wait)
	}
	clear(s.held[:n])
}

// Reordered is the number of request packets of this flow captured out of
// PSN order that were no resend: each filled a gap, and the next request
// of the flow was new (in order, past the highest PSN, or filling another
// PSN of the gaps), not the go-back-N resend of a PSN already carried (see
// the package doc, "Retransmissions and loss"). They are counted in
// Requests.OutOfOrder, in no episode, and their PSNs in no loss.
// Reordered is a method, as MirrorDuplicates: the count lives with the
// flow's retransmission state (a Flow's size is fixed: see Flow).
func (f *Flow) Reordered() uint64 {
	if f.retx == nil {
		return 0
	}
	return f.retx.reordered
}

// ReorderDepth says how far the requests Reordered counts were out of
// order: the most PSNs behind the flow's highest request PSN one of them
// came, and the longest time one came after the first request past its
// PSN (the packet whose gap it filled; 0 when none of them was still in
// an undecided gap). Measured once per reordered packet, not per packet.
func (f *Flow) ReorderDepth() (psns uint32, late time.Duration) {
	if f.retx == nil {
		return 0, 0
	}
	return f.retx.reorderBehind, f.retx.reorderLate
}

// SetReordered sets what Reordered returns, for a Flow made from a flow
// record (reports.Merge) rather than by a Table.
func (f *Flow) SetReordered(n uint64) {
	if n != 0 || f.retx != nil {
		f.ensureRetx().reordered = n
	}
}
