package flows

// Captures whose order is not the wire's: the fabric or a mirror path
// reordered a burst, or the two directions of a connection come from
// files whose clocks disagree (a tap, two mirror ports, one file per
// direction). The rules for one capture in the wire's order (mirror
// copies, NAKs and their resends) then need the corrections here. See
// the package doc, "Responses before their requests".

// reorderedResend says whether a request at psn, captured at now, behind
// the flow's highest PSN, is a resend of the go-back-N episode in
// progress that the fabric delivered out of order rather than a mirror's
// copy, on a connection that the mirror is not known to copy (copies):
//
//   - it lies before the episode's lowest resent PSN (at most 8 before)
//     and at or after the PSN of the NAK that began the episode, and came
//     less than oneWayAfter after the request before it: a go-back-N
//     resends every PSN from the NAK's, so the resend at the NAK's PSN
//     captured after the one after it is the burst reordered; a lagging
//     mirror's copy of it would come after the copies of the PSNs before
//     it;
//   - or it is the PSN after the episode's last resend, once such a
//     resend came (the last request captured is then not the episode's
//     last: repeatsSequenced's "continues a run" would miss it).
func (f *Flow) reorderedResend(psn uint32, now int64, copies bool) bool {
	r := f.retx
	if copies || r == nil || !r.ep.active || r.ep.kind != EventGoBackN || r.pending.rnr {
		return false
	}
	ep := &r.ep
	if psn == psnAdd(ep.last, 1) {
		return ep.reordered
	}
	return psnDiff(psn, ep.lo) < 0 && psnDiff(ep.lo, psn) <= 8 && psnDiff(psn, r.pending.psn) >= 0 &&
		sinceNanos(now, f.reqW.last) < oneWayAfter
}

// reverseElsewhere says whether, in a capture of parallel files, every
// packet captured so far from f's destination to its source came from a
// file parallel to, and other than, the one file that carries f: one
// file per direction, whose clocks may disagree. The NAKs that ask for
// f's resends are then on another clock, and may sort after the resends:
// f's file shows one direction only, where a go-back-N's resends look like
// a lagging mirror's copies (see seesReverse), whatever the other file
// shows.
func (t *Table) reverseElsewhere(f *Flow) bool {
	if t.par == nil || f.coldFiles() != nil {
		return false
	}
	file, seen := f.Last.File, false
	for c := t.byHosts[hostPair{f.Key.Dst, f.Key.Src}].first; c != nil; c = c.hostNext {
		if c.Packets == 0 || c.coldFiles() != nil || c.First.File == file || c.Last.File == file ||
			!t.par.Parallel(file, c.Last.File) {
			return false
		}
		seen = true
	}
	return seen
}

// lateNAK says whether a PSN sequence error NAK, or with rnr an RNR NAK
// with the given timer, at psn, captured at at, for f's requests, came
// after the resends it asked for: f's current or last episode, or the
// timeout just before it, is a timeout whose first resend is at psn,
// captured in another file than the NAK, parallel to it, less than
// MaxFileOffset before it, on a connection the mirror is not known to
// copy (its copies would start at the PSN too). The episode is then made
// the NAK's go-back-N or RNR retry, as if the NAK had come first: its
// recovery time (or RNR wait), which the clocks do not tell, counts as 0,
// and a go-back-N's catch-up time, when the episode ended before the NAK,
// is not known. The NAK asks for no further resend.
func (t *Table) lateNAK(f, s *Flow, psn uint32, rnr bool, timer uint8, at *FrameRef) bool {
	r := f.retx
	if t.par == nil || r == nil || f.MirrorDuplicates() != 0 || s.MirrorDuplicates() != 0 {
		return false
	}
	ep := &r.ep
	if !t.answeredBefore(ep, psn, at) {
		if ep = &r.prevEp; !t.answeredBefore(ep, psn, at) {
			return false
		}
	}
	f.Retx.Timeouts--
	f.Retx.TimeoutResent -= ep.n
	f.Retx.TimeoutWait, r.spans[EventTimeout] = ep.waitBefore, ep.spanBefore
	if cur := &r.ep; ep != cur && cur.kind == EventTimeout {
		// The timeout after it stays one: account it again.
		cur.waitBefore, cur.spanBefore = f.Retx.TimeoutWait, r.spans[EventTimeout]
		f.Retx.TimeoutWait.add(cur.wait)
		widen(&r.spans[EventTimeout], cur.at, cur.lastAt)
	}
	kind := EventGoBackN
	if rnr {
		kind = EventRNRRetry
		f.Retx.RNRRetries++
		f.Retx.RNRResent += ep.n
		f.Retx.RNRWait.add(0)
	} else {
		f.Retx.GBNEpisodes++
		f.Retx.GBNResent += ep.n
		f.Retx.GBNRecovery.add(0)
	}
	widen(&r.spans[kind], ep.at, ep.lastAt)
	if ep.event >= 0 {
		e := &r.events[ep.event]
		e.Kind, e.Wait = kind, 0
		if rnr {
			e.Code = timer
		}
	}
	ep.kind, ep.nakAt = kind, at.Time
	if ep == &r.prevEp {
		r.prevEp = episode{}
	}
	return true
}

// answeredBefore says whether ep is a timeout whose first resend, at psn,
// a NAK at psn captured at at, in a parallel file, came after (lateNAK).
func (t *Table) answeredBefore(ep *episode, psn uint32, at *FrameRef) bool {
	return (ep.active || ep.ended) && ep.kind == EventTimeout && ep.first == psn && ep.at.File != at.File &&
		t.par.Parallel(ep.at.File, at.File) && !at.Time.Before(ep.at.Time) && at.Time.Sub(ep.at.Time) <= MaxFileOffset
}

// widen makes sp span the frames from first to last too.
func widen(sp *eventSpan, first, last FrameRef) {
	if !sp.ok || first.Time.Before(sp.first.Time) {
		sp.first = first
	}
	if !sp.ok || sp.last.Time.Before(last.Time) {
		sp.last = last
	}
	sp.ok = true
}
