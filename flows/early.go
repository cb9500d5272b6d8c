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
// Those need the flow whose requests a response answers known, with
// requests, while packets arrive (Table.requester). A response that comes
// while it is not (the requester has carried no request yet, or no flow's
// requests fit the responses so far) is kept on the flow that carries it,
// up to maxUnpaired of them (keepUnpaired), until it is (settleUnpaired:
// when the responses pair it, or at Finish with the partner): a response
// captured before the requester's first request, acknowledging a PSN its
// requests then carried, is early, by the time to that first request; one
// at or past the PSN the requests expect next is ahead of them, as above
// (at Finish, with no request left to prove it, it does not count).
// A response kept after the first request, at a PSN the requests had
// carried by then, says nothing (the capture does not keep when each PSN
// came); nor does one that fits several QPs' requests (QPs of one host
// pair at the same PSNs), which is not kept.

// EarlyResponses are the responses captured before the requests they
// answer, of one flow's requests (see Flow.EarlyResponses).
type EarlyResponses struct {
	// N counts the responses (ACKs, NAKs, READ or atomic responses): each
	// one captured before the request at the PSN it acknowledges, but
	// for the limits at the top of early.go.
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

// maxUnpaired bounds the responses a flow keeps for a requester not yet
// known with requests (keepUnpaired): 12 KiB a flow at most.
const maxUnpaired = 512

// maxKeptResponses bounds the responses all the flows of a table keep
// (keepUnpaired): 12 MiB. A mirror of one direction, or of responses whose
// requests were never captured, would otherwise keep maxUnpaired on every
// response flow (1.2 GB for 100,000 flows). A variable for tests.
var maxKeptResponses = 1 << 19

// unpairedResp is a response kept by keepUnpaired (or a flow's first
// request: noteFirstRequest): 24 bytes.
type unpairedResp struct {
	nanos   int64 // capture time, Unix nanoseconds
	frame   int
	file    int32
	through uint32 // the last PSN it acknowledges
}

func (u *unpairedResp) ref() FrameRef {
	return FrameRef{File: int(u.file), Frame: u.frame, Time: time.Unix(0, u.nanos)}
}

// keepUnpaired keeps a response of s, acknowledging requests through,
// whose requester was not known or had carried no request when it came.
// Not when the responses so far fit several candidates (or more than
// maxPairCands): it fits their requests, so it is not ahead of them.
// Nor once the table keeps maxKeptResponses.
func (t *Table) keepUnpaired(s *Flow, through uint32, at *FrameRef) {
	ev := s.pair
	if ev == nil || ev.crowded || ev.found && ev.n > 1 || len(ev.early) == maxUnpaired || t.keptResponses >= maxKeptResponses {
		return
	}
	t.keptResponses++
	ev.early = append(ev.early, unpairedResp{at.Time.UnixNano(), at.Frame, int32(at.File), through})
}

// noteFirstRequest keeps the capture of the first request of a flow that
// carried a response before it (its First is not that request).
func (f *Flow) noteFirstRequest(at *FrameRef) {
	if ev := f.pair; ev != nil {
		ev.firstReq = unpairedResp{at.Time.UnixNano(), at.Frame, int32(at.File), 0}
	}
}

// firstRequest is the capture of f's first request, or of a CNP before
// it (earlier, so a response before it came before the request too).
func (f *Flow) firstRequest() FrameRef {
	if ev := f.pair; ev != nil && ev.firstReq.frame != 0 {
		return ev.firstReq.ref()
	}
	return f.First
}

// settleUnpaired applies the responses s kept (keepUnpaired) to r, the
// flow whose requests they answer, now known with requests, and drops
// them: one before r's first request at a PSN r's requests carried is
// early; one at or past the PSN they expect next is ahead of them
// (noteAhead), unless final (Finish: no request will come to prove it).
func (t *Table) settleUnpaired(s, r *Flow, final bool) {
	ev := s.pair
	first := r.firstRequest()
	for i := range ev.early {
		u := &ev.early[i]
		at := u.ref()
		switch {
		case psnDiff(u.through, r.Requests.FirstPSN) < 0:
			// It answered requests before the capture's.
		case psnDiff(u.through, r.Requests.seq.expHi) >= 0:
			if !final {
				r.noteAhead(u.through, &at)
			}
		case at.Time.Before(first.Time):
			e := r.ensureEarly()
			e.out.N++
			e.lead(at, &first)
		}
	}
	t.keptResponses -= len(ev.early)
	ev.early = nil // settled once: the requester is known with requests
}

// finishEarly settles, once partners are known, the responses each flow
// kept for its partner's requests (settleUnpaired).
func (t *Table) finishEarly() {
	for _, f := range t.flows {
		r := f.Partner
		if r == nil || r.pair == nil || len(r.pair.early) == 0 || !f.Requests.started() {
			continue
		}
		t.settleUnpaired(r, f, true)
	}
}
