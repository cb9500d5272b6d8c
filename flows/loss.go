package flows

// lossRange is a run of request PSNs a gap skipped whose fate is not yet
// known. Filling a PSN in the middle splits a range; the parts keep the
// gap's id, so that the gap is counted once per class.
type lossRange struct {
	lo, hi         uint32
	gap            uint32   // id of the gap
	at             FrameRef // the packet that showed the gap
	mirror, fabric bool     // the gap already counted in MirrorGaps, FabricGaps
}

// lossTracker holds the undecided PSNs of a flow's request gaps: the last
// maxOpenGaps ranges, as the sequencer does.
type lossTracker struct {
	r      [maxOpenGaps]lossRange
	n      int
	nextID uint32
}

func (l *lossTracker) open(g psnRange, at *FrameRef) {
	l.nextID++
	l.add(lossRange{lo: g.lo, hi: g.hi, gap: l.nextID, at: *at})
}

func (l *lossTracker) add(r lossRange) {
	if l.n == maxOpenGaps {
		copy(l.r[:], l.r[1:])
		l.n--
	}
	l.r[l.n] = r
	l.n++
}

func (l *lossTracker) remove(i int) {
	copy(l.r[i:], l.r[i+1:l.n])
	l.n--
	l.r[l.n] = lossRange{}
}

// markGap sets the class flag on every range of gap id and reports whether
// the gap had not been counted in that class before.
func (l *lossTracker) markGap(id uint32, mirror bool) bool {
	first := true
	for i := range l.n {
		r := &l.r[i]
		if r.gap != id {
			continue
		}
		if mirror {
			first = first && !r.mirror
			r.mirror = true
		} else {
			first = first && !r.fabric
			r.fabric = true
		}
	}
	return first
}

// decided counts n PSNs from lo of range i as mirror- or fabric-lost and
// records the event.
func (f *Flow) decided(i int, lo uint32, n uint32, mirror bool) {
	l := &f.retx.loss
	r := l.r[i]
	newGap := l.markGap(r.gap, mirror)
	kind := EventFabricLoss
	if mirror {
		kind = EventMirrorLoss
		f.Retx.MirrorLostPSNs += uint64(n)
		if newGap {
			f.Retx.MirrorGaps++
		}
	} else {
		f.Retx.FabricLostPSNs += uint64(n)
		if newGap {
			f.Retx.FabricGaps++
		}
	}
	f.event(RetxEvent{Kind: kind, At: r.at, PSN: lo, Count: n})
}

// fillLoss decides psn, a request PSN captured behind a gap: it was resent,
// so it had not reached the responder (fabric loss); unless it is the RNR
// retry of an RNR NAK pending at psn, which says the responder received it
// (see nakedAt).
func (f *Flow) fillLoss(psn uint32) {
	if f.retx == nil {
		return
	}
	if p := &f.retx.pending; p.valid && p.rnr && p.psn == psn {
		f.nakedAt(psn, true)
		return
	}
	l := &f.retx.loss
	if i := l.find(psn); i >= 0 {
		f.decided(i, psn, 1, false)
		gap := l.r[i].gap
		l.cut(i, psn) // with the flags decided set
		f.cutSpan(psn, gap)
	}
}

// cutSpan takes out of the undecided PSNs of gap those after psn that the
// request sequencer filled with the request at psn: an RDMA READ request
// captured out of order takes its responses' PSNs too (PSNStats.observe),
// which no request packet carries, so that they are neither lost nor
// missed by the mirror. A PSN after psn still in one of the sequencer's
// gaps ends them (a gap's PSNs are contiguous, so one of the same gap
// that is not is one the READ took).
func (f *Flow) cutSpan(psn, gap uint32) {
	l := &f.retx.loss
	for q := psnAdd(psn, 1); !f.Requests.inGap(q); q = psnAdd(q, 1) {
		i := l.find(q)
		if i < 0 || l.r[i].gap != gap {
			return
		}
		l.cut(i, q)
	}
}

// find returns the index of the range that holds psn, -1 if none.
func (l *lossTracker) find(psn uint32) int {
	for i := range l.n {
		if r := &l.r[i]; psnDiff(psn, r.lo) >= 0 && psnDiff(psn, r.hi) <= 0 {
			return i
		}
	}
	return -1
}

// cut removes psn from range i, which holds it: the range shrinks, goes,
// or splits in two (the part after psn added last, with the same gap and
// flags).
func (l *lossTracker) cut(i int, psn uint32) {
	r := l.r[i]
	switch {
	case r.lo == r.hi:
		l.remove(i)
	case psn == r.lo:
		l.r[i].lo = psnAdd(psn, 1)
	case psn == r.hi:
		l.r[i].hi = psnAdd(psn, -1)
	default:
		l.r[i].hi = psnAdd(psn, -1)
		r.lo = psnAdd(psn, 1)
		l.add(r)
	}
}

// ackedThrough decides the undecided request PSNs up to a, which the
// responder acknowledged: delivered though not captured (mirror loss). It
// also drops a pending NAK the responder has got past.
func (f *Flow) ackedThrough(a uint32) {
	s := f.retx
	if s == nil {
		return
	}
	if s.pending.valid && psnDiff(a, s.pending.psn) >= 0 {
		s.pending.valid = false
	}
	l := &s.loss
	for i := 0; i < l.n; {
		r := l.r[i]
		if psnDiff(a, r.lo) < 0 {
			i++
			continue
		}
		end := r.hi
		if psnDiff(a, r.hi) < 0 {
			end = a
		}
		f.decided(i, r.lo, uint32(psnDiff(end, r.lo))+1, true)
		if end == r.hi {
			l.remove(i)
			continue
		}
		l.r[i].lo = psnAdd(end, 1)
		i++
	}
}

// nakedAt applies a PSN sequence error NAK (received false), or an RNR
// NAK or fatal NAK (received true), at x to the undecided request PSNs:
// those below x were delivered (mirror loss). A PSN sequence error NAK
// says x had not arrived: x and the rest of its gap are fabric loss. An
// RNR NAK answers x, which the responder received and could not accept
// (IBTA vol 1 §9.7.5.2), and so does a fatal NAK (invalid request, remote
// access or operational error, invalid RD request), which puts the QP in
// the error state (§9.9): x and the rest of its gap are mirror loss,
// though an RNR retry resends them.
func (f *Flow) nakedAt(x uint32, received bool) {
	f.ackedThrough(psnAdd(x, -1))
	if f.retx == nil {
		return
	}
	l := &f.retx.loss
	for i := range l.n {
		r := l.r[i]
		if psnDiff(x, r.lo) < 0 || psnDiff(x, r.hi) > 0 {
			continue
		}
		// ackedThrough left x as the range's first PSN.
		f.decided(i, r.lo, uint32(psnDiff(r.hi, r.lo))+1, received)
		l.remove(i)
		return
	}
}
