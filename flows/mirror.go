package flows

import (
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// Mirror copies: a mirror session whose sources overlap (both directions
// of two ports on the path, or ingress and egress of one switch) delivers
// a packet twice, the second copy the switch's latency plus queueing after
// the first: microseconds, hundreds of microseconds under congestion, so
// that on a busy QP other packets of the flow come between the two. The
// copy may differ in TTL, MAC addresses, DSCP or ECN (the egress copy was
// routed and perhaps marked), never in its transport headers. See the
// package doc, "Mirror copies", for the rule and why it holds.

// slotShift sets the slots of capture time the rule counts in: 2^18 ns,
// 262.144 µs. A copy is recognised when it is captured in the same slot as
// the packet it repeats or in the next one: always within 262 µs of it,
// never 524 µs or more after it. A resend that no NAK, RNR NAK or re-issued
// READ asked for comes after the requester's local ACK timeout, 4.096 µs ×
// 2^n (IBTA vol 1 §9.7.6.1.3, n ≥ 1; NCCL_IB_TIMEOUT sets n, and in
// practice the timeout is seconds), so only a timeout of n ≤ 6 (262 µs)
// could be taken for a copy.
const slotShift = 18

// MirrorWindow is how long after a packet its mirror copy is always
// recognised; copies 2 × MirrorWindow or more after it never are (see
// slotShift).
const MirrorWindow = time.Duration(1 << slotShift)

func slotOf(ns int64) int64 { return ns >> slotShift }

// inWindow says whether a packet k slots after another (the difference of
// their slotOf) is within the window; a packet a slot before the other (a
// capture a little out of time order) is too.
func inWindow(k int64) bool { return k >= -1 && k <= 1 }

// marksSet marks a mark that is set; a PSN has 24 bits.
const marksSet = 1 << 31

// marks follow a run of packets whose PSNs rise (the first copies of a
// PSN space, the responses a flow carries, a run of resends): for the slot
// of the run's last packet and for the slot before, the mark the run had
// reached (its highest PSN, or its last) before that slot's first packet.
// A PSN past the mark of a slot the run has since reached was captured
// after that slot began. Keeping them takes a compare per packet and a few
// stores per slot.
type marks struct {
	cur, prev uint32 // with marksSet; prev only when the slot before had packets of the run
}

// begin starts the marks at a run's first packet, at psn (a PSN, or with
// mask posMask a response position).
func (m *marks) begin(psn, mask uint32) { *m = marks{cur: (psn-1)&mask | marksSet} }

// turn starts a new slot at a packet of the run; mark is how far the run
// had got before it, next says the run's last packet was in the slot
// before.
func (m *marks) turn(mark uint32, next bool) {
	prev := uint32(0)
	if next {
		prev = m.cur
	}
	m.cur, m.prev = mark|marksSet, prev
}

// passed says whether the run reached psn after the start of the slot
// before the current one, where the run's last packet was k slots ago: it
// captured psn within the window.
func (m *marks) passed(psn uint32, k int64) bool {
	mark := m.inWindow(k)
	return mark != 0 && psnDiff(psn, mark&psnMask) > 0
}

// passedPos is passed for response positions.
func (m *marks) passedPos(pos uint32, k int64) bool {
	mark := m.inWindow(k)
	return mark != 0 && posDiff(pos, mark&posMask) > 0
}

// inWindow returns the oldest mark within the window of a packet k slots
// after the run's last, 0 if none.
func (m *marks) inWindow(k int64) uint32 {
	switch {
	case !inWindow(k):
		return 0
	case k <= 0 && m.prev != 0:
		return m.prev
	}
	return m.cur
}

// stamps are marks with the time of the run's last packet (the requests'
// PSNs, a run of resends).
type stamps struct {
	marks
	last int64 // FrameAt.Nanos of the run's last packet
}

// begin starts the stamps at a run's first packet, at psn, at now.
func (w *stamps) begin(psn uint32, now int64) {
	w.marks.begin(psn, psnMask)
	w.last = now
}

// note accounts a packet of the run at now; mark is how far the run had
// got before it.
func (w *stamps) note(mark uint32, now int64) {
	if s, l := slotOf(now), slotOf(w.last); s != l {
		w.turn(mark, s == l+1)
	}
	w.last = now
}

// passed says whether the run captured psn within the window of now.
func (w *stamps) passed(psn uint32, now int64) bool {
	return w.marks.passed(psn, slotOf(now)-slotOf(w.last))
}

// stampRequest accounts a request at psn, at now, in f.reqW: call it
// before observe. (Flow.add has it inline: see turns.)
func (f *Flow) stampRequest(psn uint32, now int64) {
	if f.reqW.turns(now, f.Requests.Packets == 0) {
		f.turnRequests(psn, now)
	}
	f.reqW.last = now
}

// turns says whether a packet of the run at now is its first or the first
// of another slot than its last packet's: then turn, before last = now.
// Small enough to inline, unlike a function that calls turn: the
// per-packet path calls turn only when turns says so.
func (w *stamps) turns(now int64, first bool) bool {
	return (now^w.last)>>slotShift != 0 || first
}

// turnRequests starts the requests' stamps at their first packet, at psn,
// or a new slot of capture time at now.
func (f *Flow) turnRequests(psn uint32, now int64) {
	s, w := &f.Requests, &f.reqW
	if s.Packets == 0 {
		w.marks.begin(psn, psnMask)
		return
	}
	w.marks.turn(s.HighPSN, slotOf(now) == slotOf(w.last)+1)
}

// behind says whether a sequenced packet at psn, of opcode class c, may
// be a copy: s carried psn before (it is at or behind the highest PSN), or
// it is an RDMA READ request at the last PSN (a re-issued READ, whose PSN
// is ahead). One compare for a packet in order. The first packet of the
// space may pass: repeatsSequenced turns it down.
func (s *PSNStats) behind(psn uint32, c opBits) bool {
	return psnAtOrBehind(psn, s.HighPSN) || c&opReadRequest != 0 && psn == s.LastPSN
}

// psnAtOrBehind is psnDiff(a, b) <= 0 in a subtraction and a compare.
func psnAtOrBehind(a, b uint32) bool { return (a-b-1)&psnMask >= psnHalf-1 }

// posAtOrBehind is psnAtOrBehind for response positions: a response at or
// behind the highest of a flow's may be a copy. A flow's first response
// may pass: repeatsResponse turns it down.
func posAtOrBehind(a, b uint32) bool { return (a-b-1)&posMask >= posHalf-1 }

// resendRun is the last run of resends of a PSN space: PSNs lo..hi, each
// the one after the one before, the stamps following the last PSN resent.
type resendRun struct {
	lo, hi uint32
	w      stamps
	ok     bool
}

// continues says whether a resend at psn, after the space's last PSN
// last, continues the run.
func (r *resendRun) continues(psn, last uint32) bool {
	return r.ok && r.hi == last && psn == psnAdd(last, 1)
}

// note accounts a resend at psn at now, after the space's last PSN last.
func (r *resendRun) note(psn, last uint32, now int64) {
	if r.continues(psn, last) {
		r.w.note(r.hi, now)
		r.hi = psn
		return
	}
	*r = resendRun{lo: psn, hi: psn, ok: true}
	r.w.begin(psn, now)
}

// holds says whether the run resent psn.
func (r *resendRun) holds(psn uint32) bool {
	return r.ok && psnDiff(psn, r.lo) >= 0 && psnDiff(psn, r.hi) <= 0
}

// passed says whether the run resent psn within the window of now.
func (r *resendRun) passed(psn uint32, now int64) bool {
	return r.ok && psnDiff(psn, r.lo) >= 0 && psnDiff(psn, r.hi) <= 0 && r.w.passed(psn, now)
}

// pendingPSN is a PSN a resend is asked for at.
type pendingPSN struct {
	psn uint32
	ok  bool
}

// PSN spaces, indexing flowCold.resent.
const (
	spaceRequests = iota
	spaceReadResponses
)

// copied says whether p, of opcode class c, captured at at, at or behind
// the highest PSN of its space or response of f (see repeats), or a CNP
// (cnpCopied), or from another file than f's last packet, is a mirror's
// copy or a parallel file's (see "Copies across files"), and counts it in
// f's MirrorDuplicates or FileCopies if so. Out of Table.addFlow, whose
// packets in order from the file of the flow's last packet do not call it.
func (t *Table) copied(f *Flow, p *packet.Packet, c opBits, at *FrameAt) bool {
	now := at.Nanos
	t.copyAcross = false
	sp, psn, seq := fileSpaceOf(p, c)
	if t.par != nil && f.Packets != 0 && (at.File != f.Last.File || f.cold != nil && f.cold.files != nil) {
		if c&opCNP != 0 {
			if copied, ok := t.cnpAcross(f, p, at); ok {
				return copied
			}
		} else if !seq || f.otherSender(&p.BTH) {
			if x := f.coldFiles(); x != nil {
				x.syncFiles(f) // before its packet makes another file f's last
			}
		} else {
			switch t.acrossFiles(f, p, c, sp, psn, f.behindIn(sp, psn, c), at) {
			case fileFirst:
				return false
			case fileCopy:
				return t.copiedAcross(f)
			case fileOwn:
				if t.resentAcross(f, sp, psn, at) || t.mirrorCopiedAcross(f, sp, psn, at) {
					return t.copiedAcross(f)
				}
				// The flow's times are the clock of the file that
				// carried its packets first: its own mirror copy is
				// judged on that clock.
				if t.copiedOne(f, p, c, now-f.cold.files.shiftFor(at.File, sp, psn)) {
					f.cold.files.seq(at.File).countCopy(sp, psn)
					return true
				}
				f.cold.files.resent(sp, at.File)
				return false
			}
		}
	}
	if seq && !f.behindIn(sp, psn, c) {
		return false // in order, from another file than the flow's last packet
	}
	return t.copiedOne(f, p, c, now)
}

// copiedAcross counts a parallel file's copy of a packet of f.
func (t *Table) copiedAcross(f *Flow) bool {
	f.cold.files.copies++
	t.copyAcross, t.copyMarked = true, false
	return true
}

// coldFiles is f's per-file state, nil if none.
func (f *Flow) coldFiles() *fileSeqs {
	if f.cold == nil {
		return nil
	}
	return f.cold.files
}

// behindIn says whether a packet at psn (position) of space sp, of
// opcode class c, is at or behind f's highest there: Table.addFlow's
// compares.
func (f *Flow) behindIn(sp int, psn uint32, c opBits) bool {
	switch sp {
	case xRequests:
		return f.Requests.behind(psn, c)
	case xReadResponses:
		return f.ReadResponses.behind(psn, c)
	}
	return posAtOrBehind(psn, f.resp.top)
}

// copiedOne is copied by the rules for one file (see "Mirror copies").
func (t *Table) copiedOne(f *Flow, p *packet.Packet, c opBits, now int64) bool {
	if c&opCNP != 0 {
		return t.cnpCopied(f, p, now) // cnp.go
	}
	if f.otherSender(&p.BTH) {
		return false // another UD sender's PSNs are its own
	}
	twoWay := t.seesReverse(f, now) && !t.reverseElsewhere(f)
	if c&opReadRequest != 0 && !(f.readCopyDue(p.BTH.PSN, now) && f.repeats(p, c, now, twoWay)) &&
		(t.reissuesLost(f, p.BTH.PSN) || t.resentRead(f, p.BTH.PSN)) {
		return false
	}
	if !f.repeats(p, c, now, twoWay) || t.newNAK(f, &p.BTH, now) {
		return false
	}
	cs := f.coldState()
	cs.copies++
	if sp, psn, ok := fileSpaceOf(p, c); ok {
		cs.spaceCopies[sp]++
		if t.par != nil {
			cs.noteCopied(sp, psn)
		}
	}
	if c&opRequest != 0 && p.BTH.PSN == f.Requests.LastPSN {
		cs.lag = now - f.reqW.last // the mirror's lag (readCopyDue)
	}
	t.copyMarked = t.copyCE(f, p, c) // the CE a copy carries, its place in the mirror's order (ce.go)
	return true
}

// repeats says whether p, of opcode class c, captured at now, is a mirror
// copy of a packet f counted (see the package doc, "Mirror copies"),
// given that it is at or behind the highest PSN of its space or, a
// response, the highest response (behind, posAtOrBehind): the compare the
// common path pays, in Table.addFlow.
//
// twoWay says the capture holds packets the other way between f's hosts
// (seesReverse), where the NAKs and re-issued READs that ask for resends
// travel.
func (f *Flow) repeats(p *packet.Packet, c opBits, now int64, twoWay bool) bool {
	h := &p.BTH
	switch {
	case c&opRequest != 0:
		return f.repeatsSequenced(spaceRequests, h.PSN, false, now, twoWay)
	case c&opReadResponse != 0:
		return f.repeatsSequenced(spaceReadResponses, h.PSN, c&opOpens != 0, now, twoWay)
	}
	return f.repeatsResponse(p, now)
}

// seesReverse says whether the capture, at now, may show the packets
// that travel from f's destination to its source: it has had one, on any
// QP, or f began less than oneWayAfter ago, or resent after a quiet
// oneWayAfter less than oneWayAfter ago. A mirror of one direction
// only shows no NAK and no re-issued READ, so a go-back-N's resends there,
// a few microseconds after the packets they resend, look like a mirror's
// copies lagging behind: once a flow has gone oneWayAfter without a packet
// the other way between its hosts, only its last packet repeated is taken
// for a copy (see repeatsSequenced), and the rest counts as resent, as
// before the rule. In a flow's first oneWayAfter the other way may just
// not have answered yet; nor after a timeout that followed oneWayAfter or
// more with no request (retxState.quietResend): the requester waited that
// long for an answer, and when the first packets were lost, none came
// back in the flow's first oneWayAfter, whichever way the mirror looks.
// A go-back-N's resends, a round trip after the packets they resend,
// never start that grace again.
func (t *Table) seesReverse(f *Flow, now int64) bool {
	if _, ok := t.byHosts[hostPair{f.Key.Dst, f.Key.Src}]; ok {
		return true
	}
	from := TimeNanos(f.First.Time, f.First.Time.UnixNano())
	if r := f.retx; r != nil && r.quietResend > from {
		from = r.quietResend
	}
	return sinceNanos(now, from) < oneWayAfter
}

// oneWayAfter is how long a flow goes without a packet the other way
// between its hosts before the capture is taken to hold one direction
// only (seesReverse): a millisecond is hundreds of round trips.
const oneWayAfter = time.Millisecond

// repeatsSequenced says whether a request or READ response at psn, which
// its space carried before, is a copy rather than a resend: nothing asked
// for a resend at psn, it does not continue a run of resends, it does not
// fill a gap, and the space carried psn within the window (the requests'
// stamps say when, or for READ responses the marks of all the responses,
// whose positions only go forward too), or one of its last runs of
// resends did (the last and runsBefore more: noteResent). opens says the
// packet is a READ response FIRST or ONLY.
func (f *Flow) repeatsSequenced(space int, psn uint32, opens bool, now int64, twoWay bool) bool {
	s := &f.Requests
	if space == spaceReadResponses {
		s = &f.ReadResponses
	}
	if s.Packets == 0 || f.resendAsked(space, psn, opens, now) || psn == psnAdd(s.LastPSN, 1) || s.inGap(psn) {
		return false
	}
	if space == spaceRequests {
		// The last request again within the window: a resend of it
		// needs a NAK, which only a later PSN draws, or a timeout.
		if psn == s.LastPSN && inWindow(slotOf(now)-slotOf(f.reqW.last)) {
			return true
		}
		if !twoWay {
			return false // see seesReverse
		}
		if f.reqW.passed(psn, now) {
			return true
		}
	} else if !twoWay {
		return false
	} else if r := &f.resp; r.w.passedPos(psn<<1|1, int64(int32(uint32(slotOf(now))-r.slot))) {
		return true
	}
	if c := f.cold; c != nil {
		if c.resent[space].passed(psn, now) {
			return true
		}
		for i := range c.resentBefore[space] {
			if c.resentBefore[space][i].passed(psn, now) {
				return true
			}
		}
	}
	return false
}

// resendAsked says whether a request or READ response at psn, captured at
// now, is the resend something asked for: a re-issued READ (the request
// right after it, past its PSN and within oneWayAfter: go-back-N, the
// resend of the requests that followed the READ; on a connection the
// mirror is known to copy, only while the copy of the request at psn is
// not due, see reissueMark.asks), a PSN sequence error NAK at psn,
// an RNR NAK at psn whose timer has run (the requester waits at least that
// long, IBTA vol 1 Table 45: a packet at psn sooner is a copy of the one
// the RNR NAK refused), or, for a READ response FIRST or ONLY (opens, as
// the responder answers a READ), a re-issued READ from psn, which it then
// answers (a later READ response while it waits: the mirror missed that
// FIRST, as below for requests). The copy of a packet a NAK names,
// delivered after the NAK (a mirror lagging more than a round trip), is
// taken for the resend, and the resend for its copy: the counts hold, the
// recovery time starts at the copy.
//
// A requester answers either NAK by resending every PSN from the NAK's on
// (go-back-N, IBTA vol 1 ch. 9), so while the NAK is pending a request
// at a later PSN is a resend too: the mirror missed the resends before it
// (mirror loss), and the rest of the episode is no copy. Unless the
// mirror is known to copy the connection (f or the flow of its responses
// has mirror duplicates), where that later PSN may be a lagging copy of
// its original; or unless the NAK is pending on other flows too (shared:
// its requester was not known), where only a packet at its PSN answers
// it, as in Flow.resend.
func (f *Flow) resendAsked(space int, psn uint32, opens bool, now int64) bool {
	if space == spaceRequests {
		r := f.retx
		if r == nil {
			return false
		}
		copies := f.MirrorDuplicates() != 0 || f.respLink != nil && f.respLink.MirrorDuplicates() != 0
		if r.reissue.asks(psn, now, copies, f.MirrorDuplicates()) || f.reorderedResend(psn, now, copies) {
			return true
		}
		if !r.pending.valid {
			return false
		}
		p := &r.pending
		switch d := psnDiff(psn, p.psn); {
		case d < 0:
			return false
		case d > 0 && (p.shared || copies):
			return false
		}
		return !p.rnr || sinceNanos(now, TimeNanos(p.at.Time, p.at.Time.UnixNano())) >= bth.RNRTimerDuration(p.timer)
	}
	c := f.cold
	if c == nil || !c.reissue.ok {
		return false
	}
	req := f.reqLink // see Table.requester
	if req == nil {
		req = f.pairOne
	}
	switch d := psnDiff(psn, c.reissue.psn); {
	case d == 0 && opens:
	case d > 0 && f.MirrorDuplicates() == 0 && (req == nil || req.MirrorDuplicates() == 0):
	default:
		return false
	}
	c.reissue.ok = false
	return true
}

// repeatsResponse says whether p, an ACK, NAK or atomic ACK at or behind
// the highest position of the responses f carries (respPos), repeats one
// of them within the window: it is the last ACK or atomic ACK again (the
// same opcode, position, AETH syndrome and MSN; an atomic ACK's opcode is
// not an ACK's, and for these the opcode says the IP length), or it is
// behind the responses since, which passed its position within the
// window. A responder's responses go forward: one behind them
// re-acknowledges a duplicate request, which the requester sends after an
// ACK timeout.
func (f *Flow) repeatsResponse(p *packet.Packet, now int64) bool {
	r := &f.resp
	h := &p.BTH
	if !r.started {
		return false
	}
	k := int64(int32(uint32(slotOf(now)) - r.slot))
	pos := respPos(h)
	if pos == r.top && h.Opcode == f.lastOp && inWindow(k) && h.AETH.Syndrome == r.lastSyn && uint16(h.AETH.MSN) == r.lastMSN {
		return true
	}
	return posDiff(pos, r.top) < 0 && r.w.passedPos(pos, k)
}

// noteResent accounts a resend (a packet of space sequenced retransmitted
// or out of order) at psn, after the space's last PSN last, for its copy.
// A resend that starts a run keeps the runs before it (resentBefore, the
// last runsBefore): a timeout's or RNR retry's resends, then new packets,
// then a go-back-N or another retry, all within a mirror's lag, and the
// copies of the first run come after the later ones.
func (f *Flow) noteResent(space int, psn, last uint32, now int64) {
	// No resend when one parallel file lacked it (xfile.go), but for its
	// copy as one.
	f.filledAcross(space, psn)
	c := f.coldState()
	r := &c.resent[space]
	if !r.continues(psn, last) {
		b := &c.resentBefore[space]
		copy(b[1:], b[:])
		b[0] = *r
	}
	r.note(psn, last, now)
}

// runsBefore is how many runs of resends a PSN space keeps before its
// last, for their copies: each run needs a NAK, an RNR timer or a timeout
// of its own, so a few fit within a mirror's lag.
const runsBefore = 3

// expectResend notes that the requester re-issued a READ from psn: the READ
// response at psn this flow carries next is a resend, not a copy.
func (f *Flow) expectResend(psn uint32) {
	f.coldState().reissue = pendingPSN{psn: psn, ok: true}
}

// newNAK says whether h, a response of f that repeats one f carried,
// captured at now, is a PSN sequence error or RNR NAK sent again rather
// than a copy: the requester has answered the NAK since (a resend took
// it, see Flow.resend), as when the resend is lost too and the responder
// NAKs the PSN again. For a PSN sequence error NAK the mirror must also
// not be known to copy the connection's packets (neither f nor the
// requester has a mirror duplicate yet): a mirror lagging more than a
// round trip delivers the copy after the resend. Whatever the lag, a NAK
// behind a response captured since (the ACK of the resend) is a copy.
//
// An RNR NAK's copy comes before the retry, which waits for its timer,
// unless the mirror lags more than the timer: then, on a connection the
// mirror is known to copy, the first RNR NAK at the retried PSN within
// the window of the one the retry answered, before the capture showed
// that one's copy, is the copy. The mirror delivers every packet of the
// connection twice, so the copy is due; a second RNR NAK (the responder
// refusing the retry too) comes a round trip after the retry, and the
// copy only later when the mirror lags more than the timer and a round
// trip: then the two are taken the other way round (see the package doc,
// "What the rule cannot tell"). Without a requester known yet, a repeated
// NAK is a copy.
func (t *Table) newNAK(f *Flow, h *bth.BTH, now int64) bool {
	if h.Ext&bth.HasAETH == 0 {
		return false
	}
	rnr := false
	switch h.AETH.Kind() {
	case bth.AckKindRNRNAK:
		rnr = true
	case bth.AckKindNAK:
		if h.AETH.NAKCode() != bth.NAKPSNSequenceError {
			return false
		}
	default:
		return false
	}
	if posDiff(respPos(h), f.resp.top) < 0 {
		// The responder has answered past it since (an ACK at its PSN):
		// it does not NAK what it has acknowledged, so this is a copy,
		// lagging behind the resend that answered the NAK.
		return false
	}
	r := t.requester(f)
	if r == nil {
		return false
	}
	copies := f.MirrorDuplicates()+r.MirrorDuplicates() != 0
	if !rnr && copies {
		return false
	}
	s := r.retx
	if s == nil {
		return true
	}
	p := &s.pending
	switch {
	case p.psn != h.PSN || p.rnr != rnr:
		return true
	case p.valid:
		p.copied = true // the copy of the NAK pending
		return false
	case !rnr || p.copied || !copies:
		return true
	}
	// The retry answered the RNR NAK before its copy came: this is the
	// copy if within the window of the NAK.
	if !inWindow(slotOf(now) - slotOf(TimeNanos(p.at.Time, p.at.Time.UnixNano()))) {
		return true
	}
	p.copied = true
	return false
}

// reissuesLost says whether an RDMA READ request of f at psn, at or behind
// its highest PSN, re-issues a READ whose response packet at psn went
// missing before the mirror: the READ responses answering f skipped that
// PSN (an open gap, or, for f's last READ, they began past it:
// readBeganPast). A requester that sees a READ's responses skip a PSN
// (an implied NAK, IBTA vol 1 ch. 9) asks again from the missing PSN: for
// the READ's first response, with the READ's own PSN and address; for a
// READ before the last one still outstanding, behind the last. It comes a
// few microseconds after the first READ, as a mirror's copy would, but a
// copy cannot fill a gap in the other direction. It notes the PSN so that
// Flow.rereads counts the request as a re-issue.
//
// A READ at the PSN of the last re-issue (noteReissue), while the
// responses that answer f have carried nothing since, is that re-issue's
// copy (the gap stays open until the answer comes), for repeats to
// decide: a requester asks again only when a response shows a PSN
// missing, or after its timeout.
func (t *Table) reissuesLost(f *Flow, psn uint32) bool {
	s := t.readResponseGap(f, psn)
	if s == nil {
		return false
	}
	c := f.coldState()
	if l := &c.lastLost; l.from == s && l.psn == psn && l.n == s.ReadResponses.Packets {
		return false
	}
	c.lostRead = pendingPSN{psn: psn, ok: true}
	return true
}

// readCopyDue says whether an RDMA READ request of f at psn, the PSN of
// one of its last two READs or of the READ whose first responses the
// READ responses answering f skipped last (flowCold.missedRead: the
// copy of a READ lags as long after it as the mirror does, and more READs
// may have come in between), comes where the mirror's copy of that READ is
// due: the mirror copies f, and the copies captured so far are exactly as
// many as the packets (CNPs aside) f carried before that READ, and so are
// those of the flow whose responses answered f then (the connection's
// other direction, copied by the same mirror). A mirror delivers the
// copies of a connection's packets in the order of their originals (they
// wait in one queue), so once the copy of every packet before the READ
// has come, and none of the READ's, the READ's is next. Then the READ
// is its copy, not a re-issue, though the READ responses answering f
// skipped psn (Table.reissuesLost) or went past it (Table.resentRead):
// the mirror missed the READ's first response, and the copy, lagging more
// than a round trip, comes after the later ones, as a re-issue would. A
// re-issue, sent a round trip after the READ, comes before the READ's copy
// unless the mirror lags less than that (then the copy came first, and
// the re-issue is the READ again after its copy); it is taken for the
// copy only when the mirror's lag puts the copy of the last packet before
// the READ, either way, ahead of the re-issue and the READ's own after it
// (see the package doc, "What the rule cannot tell"). Where the READ is
// f's first packet, no copy tells that the mirror copies f, and the READ
// again is left to the rules that follow.
func (f *Flow) readCopyDue(psn uint32, now int64) bool {
	c := f.cold
	if c == nil || c.copies == 0 {
		return false
	}
	return c.lastRead.copyDue(psn, c.copies, c.lag, now) || c.prevRead.copyDue(psn, c.copies, c.lag, now) ||
		c.missedRead.copyDue(psn, c.copies, c.lag, now)
}

// copyDue says whether l is a READ at psn whose copy is the next the
// mirror owes, copies of its flow's packets captured so far (see
// readCopyDue): the copies of the packets before it, both ways, and,
// where the mirror's lag is known (lag, from the copy of a last request),
// now is at least half of it after the READ.
func (l *readState) copyDue(psn uint32, copies uint64, lag, now int64) bool {
	return l.valid && l.psn == psn && l.before == copies && (l.resp == nil || l.resp.MirrorDuplicates() == l.respBefore) &&
		2*(now-l.at) >= lag
}

// lostReissue is the last re-issued READ request (Table.noteReissue):
// its PSN, and the flow of the READ responses that answer it with their
// count then.
type lostReissue struct {
	from *Flow
	psn  uint32
	n    uint64
}

// resentRead says whether an RDMA READ request of f at psn, the PSN of
// one of its last two READs, is that READ sent again rather than a
// mirror's copy, on a flow the mirror is not known to copy: f carried a
// packet before that READ, and no copy of it came (f has no mirror
// duplicates), and the READ responses answering f have gone past psn
// since. A mirror delivers the copies of a flow's packets in the order of
// their originals (they wait in one queue), so the copy of the READ would
// come after the copy of the packet before it; and a requester re-issues
// a READ after the responses that showed it one missing: here the mirror
// saw the READ's first response, which the fabric lost after it (the
// requester re-issues the READ from its own PSN, with its own address and
// length, Flow.rereads cannot tell it from a copy). It makes the flow of
// the READ responses expect the answer again (noteReissue). The READ
// counts as resent without a NAK (a timeout, as the capture shows no
// response missing). Where f's first packet is the READ, or the mirror
// copies f, the capture alone does not tell (see the package doc, "What
// the rule cannot tell").
func (t *Table) resentRead(f *Flow, psn uint32) bool {
	c := f.cold
	if c == nil || c.copies != 0 {
		return false
	}
	if l := &c.lastRead; !(l.valid && l.psn == psn && l.before != 0) {
		if l = &c.prevRead; !(l.valid && l.psn == psn && l.before != 0) {
			return false
		}
	}
	if !t.readAnswered(f, psn) {
		return false
	}
	t.noteReissue(f, psn)
	return true
}

// readAnswered says whether the READ responses that answer f's requests
// (found as readResponseGap finds them) went past psn.
func (t *Table) readAnswered(f *Flow, psn uint32) bool {
	s := f.respLink
	if s == nil && f.CM != nil {
		s = t.Current(f.Key.Reverse(f.CM.SrcQP))
	}
	if s != nil {
		return s.readResp && psnDiff(s.ReadResponses.HighPSN, psn) > 0
	}
	n := 0
	for c := t.byHosts[hostPair{f.Key.Dst, f.Key.Src}].first; c != nil && n < maxPairCands; c = c.hostNext {
		if c.readResp {
			if psnDiff(c.ReadResponses.HighPSN, psn) > 0 {
				return true
			}
			n++
		}
	}
	return false
}

// readResponseGap returns the flow whose READ responses, answering f's
// requests, skipped psn (an open gap, or they began past f's last READ at
// psn) and have not carried it since, nil if none: the flow
// whose responses answered f last, or the reverse flow of f's RDMA CM
// exchange; with neither, any flow from f's responder back (at most
// maxPairCands), as noteReissue looks for them.
func (t *Table) readResponseGap(f *Flow, psn uint32) *Flow {
	s := f.respLink
	if s == nil && f.CM != nil {
		s = t.Current(f.Key.Reverse(f.CM.SrcQP))
	}
	if s != nil {
		if s.readResp && (s.ReadResponses.inGap(psn) || f.readBeganPast(&s.ReadResponses, psn)) {
			return s
		}
		return nil
	}
	n := 0
	for c := t.byHosts[hostPair{f.Key.Dst, f.Key.Src}].first; c != nil && n < maxPairCands; c = c.hostNext {
		if c.readResp {
			if c.ReadResponses.inGap(psn) {
				return c
			}
			n++
		}
	}
	return nil
}

// readBeganPast says whether the READ responses r, which answer f's
// requests, began within the response PSNs of f's last READ, at psn, but
// past its first: the READ was captured with its responses still to come,
// so the first of them were lost (the requester then re-issues the READ
// from its first PSN, IBTA vol 1 ch. 9), where inGap sees no gap, there
// being no response before. Only once for a READ: the first repeat is
// its re-issue, later ones (a mirror's copies of it) are not.
func (f *Flow) readBeganPast(r *PSNStats, psn uint32) bool {
	if f.cold == nil || !r.started() {
		return false
	}
	l := &f.cold.lastRead
	d := psnDiff(r.FirstPSN, psn)
	if !l.valid || l.reissued || l.psn != psn || d <= 0 || d > l.span {
		return false
	}
	l.reissued = true
	return true
}

// noteReissue makes the READ re-issued at psn on f, a request flow,
// expected on the flow that carries its READ responses: the flow whose
// responses answered f's requests last, or the reverse flow of f's RDMA CM
// exchange; with neither, every flow from the responder back whose READ
// responses reached psn (at most maxPairCands), as noteResponse does for a
// NAK.
func (t *Table) noteReissue(f *Flow, psn uint32) {
	s := f.respLink
	if s == nil && f.CM != nil {
		s = t.Current(f.Key.Reverse(f.CM.SrcQP))
	}
	if s != nil {
		s.expectResend(psn)
		f.coldState().lastLost = lostReissue{from: s, psn: psn, n: s.ReadResponses.Packets}
		return
	}
	n := 0
	for c := t.byHosts[hostPair{f.Key.Dst, f.Key.Src}].first; c != nil && n < maxPairCands; c = c.hostNext {
		if c.readResp && psnDiff(psn, c.ReadResponses.HighPSN) <= 0 {
			c.expectResend(psn)
			n++
		}
	}
}
