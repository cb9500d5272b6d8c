package flows

import (
	"math"
	"slices"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

// RetxStats is what a flow's requests show of loss and recovery: resend
// episodes by cause, re-issued READs, and the PSN gaps of its requests
// classified as lost in the fabric or missed by the mirror. See the package
// doc, "Retransmissions and loss", for the exact rules.
type RetxStats struct {
	// GBNEpisodes counts go-back-N episodes: resend runs that a PSN
	// sequence error NAK from the responder started; GBNResent the
	// request packets resent in them.
	GBNEpisodes, GBNResent uint64
	// GBNRecovery is, per episode, the time from the NAK to the first
	// resend; GBNCatchUp, per episode that got there, from the NAK to the
	// first request past the highest PSN sent before the episode.
	GBNRecovery, GBNCatchUp Durations

	// Timeouts counts resend runs with no NAK or RNR NAK before them (the
	// requester's ACK timer expired); TimeoutResent the packets resent in
	// them; TimeoutWait, per run, the time from the previous request
	// packet of the flow to the first resend: the timeout it waited.
	Timeouts, TimeoutResent uint64
	TimeoutWait             Durations

	// RNRRetries counts resend runs that an RNR NAK started; RNRResent
	// the packets resent in them; RNRWait, per run, the time from the RNR
	// NAK to the first resend.
	RNRRetries, RNRResent uint64
	RNRWait               Durations

	// ReissuedReads counts RDMA READ requests that re-issue the rest of
	// the previous READ (see the package doc): the requester missed a
	// response packet. They are counted in Requests.Retransmitted too.
	ReissuedReads uint64
	// (The request packets resent after re-issued READs, right after
	// them, are Flow.ReissueResent: a method, as Reordered.)

	// MirrorLostPSNs counts request PSNs that a gap skipped and that the
	// responder acknowledged past before any copy of them was captured,
	// or received (an RNR NAK or a fatal NAK named them or an earlier
	// PSN of their gap): delivered, but missed by the mirror. MirrorGaps
	// counts the gaps with at least one such PSN.
	MirrorLostPSNs, MirrorGaps uint64
	// FabricLostPSNs counts request PSNs that a gap skipped and that were
	// later resent (captured out of order) or named missing by a PSN
	// sequence error NAK: lost before they reached the responder.
	// FabricGaps counts the gaps with at least one such PSN.
	FabricLostPSNs, FabricGaps uint64

	// MoreEvents counts the events beyond the first MaxRetxEvents, which
	// RetxEvents does not keep.
	MoreEvents uint64
}

// Durations summarises a set of time intervals.
type Durations struct {
	N        uint64 // intervals
	Min, Max time.Duration
	Sum      time.Duration
}

func (d *Durations) add(x time.Duration) {
	x = max(x, 0)
	if d.N == 0 || x < d.Min {
		d.Min = x
	}
	if x > d.Max {
		d.Max = x
	}
	d.Sum += x
	d.N++
}

// Mean is the mean interval, 0 for none.
func (d Durations) Mean() time.Duration {
	if d.N == 0 {
		return 0
	}
	return d.Sum / time.Duration(d.N)
}

// RetxEventKind says what a RetxEvent is.
type RetxEventKind uint8

// Retransmission and loss events. NAKs are events of the flow that carries
// them (the responder's flow); the others of the request flow.
const (
	EventNAK           RetxEventKind = iota // a NAK (Code: its NAK code)
	EventRNRNAK                             // an RNR NAK (Code: its RNR timer)
	EventGoBackN                            // the first resend of a go-back-N episode (Wait: from the NAK)
	EventTimeout                            // the first resend of a timeout (Wait: since the previous request)
	EventRNRRetry                           // the first resend after an RNR NAK (Wait: from the RNR NAK; Code: its timer)
	EventReissuedRead                       // a re-issued RDMA READ request
	EventMirrorLoss                         // PSNs of a gap the responder acknowledged past (At: the packet after the gap)
	EventFabricLoss                         // PSNs of a gap that were resent or NAKed (At: the packet after the gap)
	EventReissueResend                      // the first resend after a re-issued READ, of the requests that followed the READ (Wait: since the re-issue)

	numRetxEventKinds
)

var retxEventNames = [numRetxEventKinds]string{
	"nak", "rnr_nak", "go_back_n", "timeout", "rnr_retry", "reissued_read", "mirror_loss", "fabric_loss", "reissue_resend",
}

// String returns the kind's snake_case name ("go_back_n", "mirror_loss", ...).
func (k RetxEventKind) String() string {
	if k < numRetxEventKinds {
		return retxEventNames[k]
	}
	return "event"
}

// MaxRetxEvents is how many events a flow keeps (the first ones).
const MaxRetxEvents = 32

// RetxEvent is one retransmission or loss event of a flow, for evidence and
// timelines.
type RetxEvent struct {
	Kind  RetxEventKind
	At    FrameRef
	PSN   uint32        // the NAK's PSN, the first resent PSN, the first PSN of the loss
	Code  uint8         // NAK code (EventNAK) or RNR timer (EventRNRNAK, EventRNRRetry)
	Count uint32        // packets resent (episodes) or PSNs lost (mirror and fabric loss)
	Wait  time.Duration // episodes: see the kinds
}

// RetxEvents returns the flow's first MaxRetxEvents events in capture
// order; Retx.MoreEvents says how many more there were.
func (f *Flow) RetxEvents() []RetxEvent {
	if f.retx == nil {
		return nil
	}
	return slices.Clone(f.retx.events)
}

// RetxSpan returns the first and last frame of the flow's events of kind
// k, all of them (not only those RetxEvents keeps), and whether there was
// one. An episode (go-back-N, timeout, RNR retry, a re-issued READ's
// recovery) spans its resends: its event is at its first resend, and the
// last frame of its kind is the last resend of the latest episode.
func (f *Flow) RetxSpan(k RetxEventKind) (first, last FrameRef, ok bool) {
	if f.retx == nil || k >= numRetxEventKinds {
		return FrameRef{}, FrameRef{}, false
	}
	s := &f.retx.spans[k]
	return s.first, s.last, s.ok
}

// FatalNAKs is the number of NAKs this flow carries whose code puts the
// requester's QP in the error state: invalid request, remote access error,
// remote operational error, invalid RD request (every code but PSN
// sequence error), and reserved codes.
func (f *Flow) FatalNAKs() uint64 { return f.NAKTotal() - f.NAKs[bth.NAKPSNSequenceError] }

// retxState is a flow's retransmission and loss state. A flow allocates it
// at its first NAK, resend, re-issued READ or request PSN gap, or response
// ahead of its requests (early.go), so a flow without any costs one
// pointer.
type retxState struct {
	pending pendingNAK
	ep      episode
	prevEp  episode // the timeout before ep, if ep followed one (Table.lateNAK)
	loss    lossTracker
	events  []RetxEvent
	spans   [numRetxEventKinds]eventSpan

	// fatal: of the flow that carries responses, it carried a fatal NAK
	// (not one with a reserved code); fatalPSN and fatalAt are the last
	// one's PSN and frame (Table.finishLoss).
	fatal    bool
	fatalPSN uint32
	fatalAt  FrameRef

	// reissue is the last re-issued READ, while its recovery may start:
	// until the next request of the flow (Flow.resend, noteRequest);
	// reissueResent counts the packets resent in such recoveries
	// (Flow.ReissueResent).
	reissue       reissueMark
	reissueResent uint64

	// quietResend is the capture time (FrameAt.Nanos) of the last
	// timeout resend that came oneWayAfter or more after the request
	// before it, 0 if none: see Table.seesReverse.
	quietResend int64

	// held are the fills whose decision, reordered or resent, waits for
	// the next request (see reorder.go), nHeld of them; reordered counts
	// those decided reordered (Flow.Reordered).
	held       [maxHeld]heldFill
	nHeld      uint8
	heldEvents int // len(events) when the first was held
	reordered  uint64
	// reorderBehind and reorderLate: Flow.ReorderDepth.
	reorderBehind uint32
	reorderLate   time.Duration
	// startFilled: the PSNs just before the flow's first request PSN that
	// came as fills of its start (startFill), bit i for FirstPSN-1-i.
	startFilled uint8

	// early: responses captured before the requests they answer
	// (early.go); nil if none was.
	early *earlyState
}

type eventSpan struct {
	first, last FrameRef
	ok          bool
}

// pendingNAK is the last PSN sequence error or RNR NAK for this flow's
// requests: pending while valid, until a resend answers it; after that
// it stays, not valid, for the copy of an RNR NAK that comes after the
// retry (Table.newNAK).
//
// A NAK whose requester was not known when it came is pending on each flow
// it may answer (see Table.noteResponse): from is the flow that carried
// it, and shared says it was pending on more than one. A shared NAK is
// answered only by a resend at its very PSN (see Flow.resend).
type pendingNAK struct {
	valid  bool
	rnr    bool
	shared bool
	copied bool // the capture showed the NAK's mirror copy (Table.newNAK)
	timer  uint8
	psn    uint32
	at     FrameRef
	from   *Flow // the flow that carried it, when its requester was not known
}

// reissueMark is a re-issued RDMA READ whose go-back-N resends may follow
// (IBTA vol 1 ch. 9: the requester re-issues the READ for the rest of the
// data, then sends again every request after it): its PSN and capture
// time (FrameAt.Nanos); and, when the READ it re-issues told its response
// PSNs (nextOK), next, the PSN after them, where the requests that
// followed the READ began, and due, the packets other than CNPs the flow
// carried before the one at next (the READ's and those before it).
type reissueMark struct {
	valid, nextOK bool
	psn, next     uint32
	at            int64
	due           uint64
}

// asks says whether a request at psn, captured at now, behind the flow's
// highest PSN and the first request since the re-issue, is the first
// resend of its recovery rather than a mirror's copy: past the re-issue's
// PSN and less than oneWayAfter after it (a requester that waits that
// long is waiting for its ACK timeout). When the mirror is known to copy
// the connection (copies), made being the flow's copies so far, the copy
// of the request at psn that followed the READ must not be due: a mirror
// delivers a flow's copies in the order of their originals, so that copy
// comes after the copies of the due packets up to the READ, and before
// the copies of the requests after psn; at most psn - next requests came
// between the READ and it (fewer when the mirror missed some). Unknown
// without next: then it is taken for the copy.
func (m *reissueMark) asks(psn uint32, now int64, copies bool, made uint64) bool {
	if !m.valid || psnDiff(psn, m.psn) <= 0 || sinceNanos(now, m.at) >= oneWayAfter {
		return false
	}
	if !copies {
		return true
	}
	d := psnDiff(psn, m.next)
	return m.nextOK && d >= 0 && (made < m.due || made > m.due+uint64(d))
}

// episode is the resend run in progress.
type episode struct {
	active bool
	kind   RetxEventKind // EventGoBackN, EventTimeout, EventRNRRetry or EventReissueResend
	last   uint32        // last PSN resent
	lo     uint32        // lowest PSN resent
	high   uint32        // the highest request PSN when it began
	ended  bool          // a new request ended it (not active): reordered resends may still follow
	// reordered: a resend came before the lowest one (reorderedResend)
	reordered bool
	// For Table.lateNAK: the first PSN resent and its frame, the resends
	// so far, and a timeout's wait and span before the episode.
	first      uint32
	at         FrameRef
	n          uint64
	waitBefore Durations
	spanBefore eventSpan
	wait       time.Duration // a timeout's wait
	lastAt     FrameRef      // its last resend so far
	nakAt      time.Time     // go-back-N: the NAK's time
	event      int           // index of its event in events, -1 if not kept
}

func (f *Flow) ensureRetx() *retxState {
	if f.retx == nil {
		f.retx = &retxState{ep: episode{event: -1}}
	}
	return f.retx
}

// event records an event and returns its index in events, -1 if not kept.
func (f *Flow) event(e RetxEvent) int {
	s := f.ensureRetx()
	sp := &s.spans[e.Kind]
	if !sp.ok {
		sp.first, sp.ok = e.At, true
	}
	sp.last = e.At
	if len(s.events) == MaxRetxEvents {
		f.Retx.MoreEvents++
		return -1
	}
	if s.events == nil {
		s.events = make([]RetxEvent, 0, 8)
	}
	s.events = append(s.events, e)
	return len(s.events) - 1
}

// startFill says whether a request at psn that the sequencer took for a
// retransmission (behind the highest PSN, at no PSN a gap skipped) is
// rather a fill of the flow's start: a PSN just before the first request
// PSN of the flow (at most 8 before, each once), which the capture never
// held, that came less than oneWayAfter after the request before it, with
// no NAK pending and no episode in progress to explain a resend. The
// fabric delivered the flow's first requests out of PSN order (adaptive
// routing: PSN 1, then 0). It is then counted out of order, not
// retransmitted, and goes the way of any fill (holdFill): the next request
// decides whether it was reordered or a resend. A resend of the first
// request after an ACK timeout waited longer; one after a NAK has it
// pending; and a capture that starts mid-stream gains nothing here that a
// fill would not: a PSN before the first is either the original overtaken
// or a resend that the requests after it reveal.
func (f *Flow) startFill(psn uint32, nanos, prev int64) bool {
	d := psnDiff(f.Requests.FirstPSN, psn)
	if d < 1 || d > 8 || !connected(f.Transport) || sinceNanos(nanos, prev) >= oneWayAfter {
		return false
	}
	if s := f.retx; s != nil && (s.pending.valid || s.ep.active || s.startFilled&(1<<(d-1)) != 0) {
		return false
	}
	s := f.ensureRetx()
	s.startFilled |= 1 << (d - 1)
	f.Requests.Retransmitted--
	f.Requests.OutOfOrder++
	return true
}

// noteRequest follows resend episodes and gaps after a request packet at
// psn was sequenced as res (not for re-issued READs); last is the PSN of
// the request before it and prev its capture time (FrameAt.Nanos).
//
// A request in order on a flow that never needed its retransmission
// state (f.retx nil: most packets of a mirror) has nothing to follow:
// that case inlines into Flow.add without the call (BENCHMARKS.md,
// session 20), and noteRequestRest takes the others.
func (f *Flow) noteRequest(res seqResult, psn, last uint32, fa *FrameAt, prev int64) {
	if res != seqInOrder || f.retx != nil {
		f.noteRequestRest(res, psn, last, fa, prev)
	}
}

// noteRequestRest is noteRequest but for a request in order on a flow
// without retransmission state.
func (f *Flow) noteRequestRest(res seqResult, psn, last uint32, fa *FrameAt, prev int64) {
	at := &fa.FrameRef
	if res == seqRetransmit && f.startFill(psn, fa.Nanos, prev) {
		res = seqOutOfOrder
	}
	s := f.retx
	if s != nil && s.nHeld != 0 && res != seqOutOfOrder {
		// The next request after held fills: a retransmission makes
		// them resends, a new request a reordering (reorder.go).
		f.decideHeld(res != seqRetransmit || f.heldBeforeGBN(psn))
	}
	switch res {
	case seqFirst:
		f.noteFirstRequest(at)
		return
	case seqInOrder, seqGap:
		if s != nil && s.early != nil && s.early.valid {
			s.early.request(psn, at)
		}
		if res == seqGap && connected(f.Transport) {
			f.ensureRetx().loss.open(f.Requests.lastGap(), at)
			if r := f.respLink; r != nil && r.resp.acked() {
				// The responder acknowledged part of the gap before
				// the packet after it was captured.
				f.ackedThrough(r.resp.ackedHigh())
			}
			s = f.retx
		}
		if s == nil {
			return
		}
		s.reissue = reissueMark{} // a new request: no recovery of it
		if s.ep.active {
			// The first request past the highest PSN before the episode.
			if s.ep.kind == EventGoBackN {
				f.Retx.GBNCatchUp.add(at.Time.Sub(s.ep.nakAt))
			}
			s.ep.active, s.ep.ended = false, true
		}
		if p := &s.pending; p.valid && p.rnr && p.psn == psn {
			// The RNR retry of a packet the mirror missed: no resend
			// in the capture, but the RNR NAK has its answer (its
			// PSN resent again would be no RNR retry, nor would the
			// retry's mirror copy).
			p.valid = false
		}
		return
	case seqOutOfOrder:
		if f.filledAcross(xRequests, psn) {
			// In order: one parallel file lacked it (xfile.go). For
			// its copy, as any resend.
			f.noteResent(spaceRequests, psn, last, fa.Nanos)
			return
		}
		if f.holdFill(psn, at, sinceNanos(fa.Nanos, prev)) {
			// For its copy, as any resend (repeatsSequenced).
			f.noteResent(spaceRequests, psn, last, fa.Nanos)
			return
		}
		f.fillLoss(psn)
	}
	if !connected(f.Transport) {
		// UD and UC resend nothing (IBTA vol 1 §9.8, unreliable
		// service): a PSN behind the highest is a restarted sender's,
		// counted in Requests, not a resend after a timeout. On QP1 it
		// may be a CM MAD the CM sent again after its own timeout
		// (chapter 12), which is no transport's resend either.
		return
	}
	f.noteResent(spaceRequests, psn, last, fa.Nanos)
	wait := sinceNanos(fa.Nanos, prev)
	if f.resend(psn, at, wait) == EventTimeout && wait >= oneWayAfter {
		f.retx.quietResend = fa.Nanos
	}
}

// sinceNanos is the time from then to now, FrameAt.Nanos both: 0 for a
// time before then, and the longest Duration when the difference does not
// fit one (a time outside the years TimeNanos holds).
func sinceNanos(now, then int64) time.Duration {
	d := now - then
	switch {
	case now < then:
		return 0
	case d < 0:
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(d)
}

// resend accounts a request packet sent again (retransmitted, or filling a
// gap): it continues the current episode or starts one, and returns the
// kind of the episode it starts, numRetxEventKinds if it continues one.
// sincePrev is the time since the flow's previous request packet.
func (f *Flow) resend(psn uint32, at *FrameRef, sincePrev time.Duration) RetxEventKind {
	s := f.ensureRetx()
	p := &s.pending
	ep := &s.ep
	ri := s.reissue
	s.reissue = reissueMark{} // only the first request after it can start its recovery
	switch {
	case p.valid && psn == p.psn:
	case ri.valid && psnDiff(psn, ri.psn) > 0 && sincePrev < oneWayAfter:
		// Right after a re-issued READ, past its PSN: the go-back-N
		// resend of the requests that followed the READ. No ACK timer
		// expired.
		f.startEpisode(EventReissueResend, psn, at, RetxEvent{Kind: EventReissueResend, At: *at, PSN: psn, Count: 1, Wait: sincePrev})
		return EventReissueResend
	case ep.active && psnDiff(psn, ep.last) > 0,
		// A resend burst the fabric reordered (adaptive routing): a
		// resend just before the episode's lowest, right after the
		// one before it; or one past its last resend, up to the highest
		// PSN when it began, right after the new requests that ended
		// it. No NAK pending, no ACK timer waited: the same episode.
		!p.valid && sincePrev < oneWayAfter && ep.active && psnDiff(psn, ep.lo) < 0 && psnDiff(ep.lo, psn) <= 8,
		!p.valid && sincePrev < oneWayAfter && ep.ended && psnDiff(psn, ep.last) > 0 && psnDiff(psn, ep.high) <= 0 &&
			psnDiff(f.Requests.HighPSN, psn) <= 16:
		if psnDiff(psn, ep.last) > 0 {
			ep.last = psn
		} else {
			ep.lo, ep.reordered = psn, true
		}
		f.countResent(ep.kind)
		ep.n++
		if ep.event >= 0 {
			s.events[ep.event].Count++
		}
		s.spans[ep.kind].last = *at // the episode's last resend so far (RetxSpan)
		ep.lastAt = *at
		return numRetxEventKinds
	case p.valid && !p.shared && psnDiff(psn, p.psn) >= 0:
	default:
		// No NAK answered: the requester's ACK timer expired.
		wait := sincePrev
		before, span := f.Retx.TimeoutWait, s.spans[EventTimeout]
		f.Retx.Timeouts++
		f.Retx.TimeoutWait.add(wait)
		f.startEpisode(EventTimeout, psn, at, RetxEvent{Kind: EventTimeout, At: *at, PSN: psn, Count: 1, Wait: wait})
		s.ep.waitBefore, s.ep.spanBefore, s.ep.wait = before, span, wait
		return EventTimeout
	}
	// The resend answers the pending NAK.
	wait := at.Time.Sub(p.at.Time)
	p.valid = false
	if p.rnr {
		f.Retx.RNRRetries++
		f.Retx.RNRWait.add(wait)
		f.startEpisode(EventRNRRetry, psn, at, RetxEvent{Kind: EventRNRRetry, At: *at, PSN: psn, Code: p.timer, Count: 1, Wait: wait})
		return EventRNRRetry
	}
	f.Retx.GBNEpisodes++
	f.Retx.GBNRecovery.add(wait)
	f.startEpisode(EventGoBackN, psn, at, RetxEvent{Kind: EventGoBackN, At: *at, PSN: psn, Count: 1, Wait: wait})
	s.ep.nakAt = p.at.Time
	return EventGoBackN
}

func (f *Flow) startEpisode(kind RetxEventKind, psn uint32, at *FrameRef, e RetxEvent) {
	f.countResent(kind)
	idx := f.event(e)
	f.retx.prevEp = episode{}
	if old := f.retx.ep; old.kind == EventTimeout && (old.active || old.ended) {
		f.retx.prevEp = old // for a NAK captured after both (Table.lateNAK)
	}
	f.retx.ep = episode{active: true, kind: kind, last: psn, lo: psn, high: f.Requests.HighPSN, event: idx, first: psn, at: *at, lastAt: *at, n: 1}
}

func (f *Flow) countResent(kind RetxEventKind) {
	switch kind {
	case EventGoBackN:
		f.Retx.GBNResent++
	case EventRNRRetry:
		f.Retx.RNRResent++
	case EventReissueResend:
		f.retx.reissueResent++
	default:
		f.Retx.TimeoutResent++
	}
}

// ReissueResent is the number of request packets of this flow resent in
// the recovery of a re-issued RDMA READ: go-back-N from the READ, the
// requester sends again, right after the re-issue, the requests that
// followed the READ (IBTA vol 1 ch. 9). The first came less than
// oneWayAfter after the re-issue, with no request between, at a PSN past
// the re-issue's, and answered no NAK; the others continue its episode
// (see the package doc, "Retransmissions and loss"). No ACK timer expired
// for them: they are no timeout. They are counted in
// Requests.Retransmitted (or OutOfOrder), and with ReissuedReads,
// GBNResent, TimeoutResent and RNRResent make up the resends. A method,
// as Reordered: the count lives in the retransmission state (a Flow's
// size is fixed: see Flow).
func (f *Flow) ReissueResent() uint64 {
	if f.retx == nil {
		return 0
	}
	return f.retx.reissueResent
}

// noteReissuedRead accounts a re-issued RDMA READ request.
func (f *Flow) noteReissuedRead(psn uint32, at *FrameRef) {
	if f.held() {
		f.decideHeld(false) // a retransmission: they were resent
	}
	f.Retx.ReissuedReads++
	f.event(RetxEvent{Kind: EventReissuedRead, At: *at, PSN: psn, Count: 1})
	// Its recovery: the requests after the READ it re-issues, sent
	// again right after it (Flow.resend). Table.add stamped its time.
	m := reissueMark{valid: true, psn: psn, at: f.reqW.last}
	if c := f.cold; c != nil {
		for _, l := range [...]*readState{&c.lastRead, &c.prevRead} {
			if d := psnDiff(psn, l.psn); l.valid && d >= 0 && d <= l.span {
				if end, ok := l.lastPSN(f.pmtu); ok {
					m.next, m.nextOK, m.due = psnAdd(end, 1), true, l.before+1
				}
				break
			}
		}
	}
	// A run of resends of its own, for its copy, which may come after
	// the resends that follow it (noteResent: never one with the run
	// before).
	f.noteResent(spaceRequests, psn, psn, m.at)
	f.retx.reissue = m
}

// noteNAK records a NAK or RNR NAK this flow carries.
func (f *Flow) noteNAK(h *bth.BTH, at *FrameRef) {
	switch h.AETH.Kind() {
	case bth.AckKindNAK:
		f.event(RetxEvent{Kind: EventNAK, At: *at, PSN: h.PSN, Code: uint8(h.AETH.NAKCode())})
	case bth.AckKindRNRNAK:
		f.event(RetxEvent{Kind: EventRNRNAK, At: *at, PSN: h.PSN, Code: h.AETH.RNRTimer()})
	}
}

// noteFatal records a fatal NAK at psn that the flow carries.
func (s *retxState) noteFatal(psn uint32, at *FrameRef) {
	s.fatal, s.fatalPSN, s.fatalAt = true, psn, *at
}

// pend makes a PSN sequence error or RNR NAK at psn pending on f, the flow
// whose requests it answers (or may answer: from is then the flow that
// carried it, and shared says it is pending on other flows too). A NAK
// repeated for the PSN already pending keeps the first one's time.
func (f *Flow) pend(rnr bool, timer uint8, psn uint32, at *FrameRef, from *Flow, shared bool) {
	p := &f.ensureRetx().pending
	if p.valid && p.psn == psn && p.rnr == rnr {
		return
	}
	*p = pendingNAK{valid: true, rnr: rnr, shared: shared, timer: timer, psn: psn, at: *at, from: from}
}
