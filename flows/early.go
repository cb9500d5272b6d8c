package flows

import "time"

// Responses captured before the requests they answer.
//
// A responder acknowledges only what it received, so in a capture that
// keeps the wire's order an ACK, NAK or READ response never comes before
// the request it answers. When the two directions of a connection come
// from different files (a tap or two mirror ports, one file per direction,
// captured by two NICs whose clocks disagree, or with software timestamps
// and their jitter), or from two mirror paths of different latency, the
// responses of one may sort before their requests. The timing rules
// (mirror copies, NAKs and their resends, ACK timeouts, gaps the responder
// acknowledged) then read the wrong order; EarlyResponses says how often
// the capture shows it, so that a report can say so instead of blaming the
// fabric.
//
// A response applied to a flow (Table.noteResponse) that acknowledges a
// PSN at or past the next one the flow's requests expect is ahead of them:
// either the mirror missed those requests (then the next request captured
// lies past the response's PSN: a gap), or they come later, captured after
// their answer. The first request at or before that PSN that is captured
// in order or past a gap (not a resend: a PSN a gap skipped, or one the
// flow carried) proves it: each response ahead pending then counts, and
// the time from the first of them to that request is how much earlier at
// least it was captured than the request it answers. Where responses keep
// coming ahead, so that the requests never get to the highest PSN they
// acknowledged, the first response ahead since the last such probe ended
// is timed against the request at the PSN it acknowledged through, when
// captured (a probe at a time: no memory per response).
//
// Those need the flow whose requests a response answers known while
// packets arrive (Table.requester). When every response of a connection
// came before every request (a short connection, or an offset longer than
// it), the pairing is known only at Finish (finishEarly): a partner that
// carries responses only (no requests of its own, and no CNP, which may
// come first), whose first response acknowledges a PSN the flow's requests
// carried, captured before the flow's first packet, counts as one early
// response, by the time between the two.

// EarlyResponses are the responses captured before the requests they
// answer, of one flow's requests (see Flow.EarlyResponses).
type EarlyResponses struct {
	// N counts the responses (ACKs, NAKs, READ or atomic responses).
	N uint64
	// Lead is the longest time by which one came before a request it
	// answers (at least: it answered that request or a later one);
	// Response and Request are that response and request.
	Lead              time.Duration
	Response, Request FrameRef
}

// earlyState is a flow's EarlyResponses and the responses ahead of its
// requests not yet proven early: pending of them, the first at at, the
// highest PSN any acknowledged through, first acknowledged by the response
// at throughAt. valid stays set, once they are counted, until the
// requests get to through.
type earlyState struct {
	out           EarlyResponses
	valid         bool
	pending       uint64
	through       uint32
	at, throughAt FrameRef
	// probe: the PSN the first response ahead since the last probe
	// ended acknowledged through, and that response (probeAt), while
	// probing: the request at probe tells the lead of that response,
	// where responses keep coming ahead and the requests never get to
	// through.
	probing bool
	probe   uint32
	probeAt FrameRef
}

// EarlyResponses returns the responses captured before this flow's
// requests that they answer; N is 0 when none was.
func (f *Flow) EarlyResponses() EarlyResponses {
	if f.retx == nil || f.retx.early == nil {
		return EarlyResponses{}
	}
	return f.retx.early.out
}

// noteAhead notes a response that acknowledges requests through, at or
// past the PSN the flow's requests expect next.
func (f *Flow) noteAhead(through uint32, at *FrameRef) {
	e := f.ensureEarly()
	if !e.valid || e.pending == 0 {
		e.at = *at
	}
	if !e.valid || psnDiff(through, e.through) > 0 {
		e.through, e.throughAt = through, *at
	}
	if !e.probing {
		e.probing, e.probe, e.probeAt = true, through, *at
	}
	e.valid = true
	e.pending++
}

func (f *Flow) ensureEarly() *earlyState {
	s := f.ensureRetx()
	if s.early == nil {
		s.early = new(earlyState)
	}
	return s.early
}

// request checks a request at psn, sequenced in order or past a gap,
// against the responses ahead of the flow's requests.
func (e *earlyState) request(psn uint32, at *FrameRef) {
	d := psnDiff(psn, e.through)
	if d > 0 {
		// Past every response ahead: those answered requests the
		// mirror missed.
		e.valid, e.pending, e.probing = false, 0, false
		return
	}
	if e.probing && psnDiff(psn, e.probe) >= 0 {
		if psn == e.probe {
			e.lead(e.probeAt, at)
		}
		e.probing = false
	}
	if e.pending > 0 {
		// The first response ahead answered this request or a later one.
		e.out.N += e.pending
		e.pending = 0
		e.lead(e.at, at)
	}
	if d == 0 {
		// The request that the response at throughAt acknowledged first.
		e.lead(e.throughAt, at)
		e.valid = false
	}
}

// lead notes that the response at resp came before the request at req.
func (e *earlyState) lead(resp FrameRef, req *FrameRef) {
	o := &e.out
	if l := req.Time.Sub(resp.Time); o.Response.Frame == 0 || l > o.Lead {
		o.Lead, o.Response, o.Request = l, resp, *req
	}
}

// finishEarly counts, once partners are known, a connection whose first
// response came before its first request (see the top of this file).
func (t *Table) finishEarly() {
	for _, f := range t.flows {
		r := f.Partner
		if r == nil || !f.Requests.started() || r.Requests.started() || r.CNPs != 0 ||
			f.EarlyResponses().N != 0 || !r.First.Time.Before(f.First.Time) {
			continue
		}
		q := r.FirstPSN
		if psnDiff(q, f.Requests.FirstPSN) < 0 || psnDiff(q, f.Requests.HighPSN) > 0 {
			continue // it answered requests before the capture, or others
		}
		e := f.ensureEarly()
		e.out.N = 1
		e.lead(r.First, &f.First)
	}
}
