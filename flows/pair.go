package flows

import (
	"net/netip"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// cmKey finds the REQ that a REP answers: the requester's address, the
// responder's address and the requester's communication ID.
type cmKey struct {
	requester, responder netip.Addr
	commID               uint32
}

// cmSide is what a CM exchange says about one of its two flows.
type cmSide struct {
	info CMInfo
	flow *Flow // the flow that took this info, once it has started
}

// cmExchange is one REQ/REP exchange: toResponder is the flow from the
// requester to the responder's QP, toRequester the reverse.
type cmExchange struct {
	req                      bth.CMMAD
	reqFrame                 FrameRef
	haveREP                  bool
	toResponder, toRequester *cmSide
}

// noteCM records an RDMA CM REQ or REP (IBTA vol 1 §12.6.5, §12.6.8): the
// REQ names the requester's QPN and starting PSN, the REP the responder's.
// Once both are seen the two flows of the connection are known before their
// first packet. A REQ or REP whose communication IDs or QPN the snap length
// cut cannot be tied to its flows and is left out: its flows are then
// paired by PSN. A cut service ID or starting PSN is only left unknown.
func (t *Table) noteCM(p *packet.Packet, at *FrameRef) {
	m := &p.CM
	switch m.AttributeID {
	case bth.CMAttrREQ:
		if !m.Has(bth.CMFieldLocalCommID | bth.CMFieldLocalQPN) {
			return
		}
		k := cmKey{requester: p.Src, responder: p.Dst, commID: m.LocalCommID}
		if _, dup := t.cm[k]; dup {
			return // a resent REQ
		}
		t.cm[k] = &cmExchange{req: *m, reqFrame: *at}
	case bth.CMAttrREP:
		if !m.Has(bth.CMFieldLocalCommID | bth.CMFieldRemoteCommID | bth.CMFieldLocalQPN) {
			return
		}
		x := t.cm[cmKey{requester: p.Dst, responder: p.Src, commID: m.RemoteCommID}]
		if x == nil || x.haveREP {
			return // REQ not captured, or a resent REP
		}
		x.haveREP = true
		base := CMInfo{}
		if x.req.Has(bth.CMFieldServiceID) {
			base.ServiceID, base.HasServiceID = x.req.ServiceID, true
			base.IPService, base.PortSpace, base.Port = x.req.IsIPService(), x.req.PortSpace(), x.req.Port()
		}
		// Requester → responder: the requester's requests, to the responder's QPN.
		toResp := base
		toResp.SrcQP, toResp.CommID, toResp.Frame = x.req.LocalQPN, x.req.LocalCommID, x.reqFrame
		toResp.StartPSN, toResp.HasStartPSN = x.req.StartingPSN, x.req.Has(bth.CMFieldStartingPSN)
		toReq := base
		toReq.SrcQP, toReq.CommID, toReq.Frame = m.LocalQPN, m.LocalCommID, *at
		toReq.StartPSN, toReq.HasStartPSN = m.StartingPSN, m.Has(bth.CMFieldStartingPSN)
		x.toResponder = &cmSide{info: toResp}
		x.toRequester = &cmSide{info: toReq}
		kResp := Key{Src: p.Dst, Dst: p.Src, DestQP: m.LocalQPN}
		kReq := Key{Src: p.Src, Dst: p.Dst, DestQP: x.req.LocalQPN}
		t.cmByFlow[kResp] = x.toResponder
		t.cmByFlow[kReq] = x.toRequester
		// The current flow of each key, if any, ends with it: its next
		// packet starts a new epoch (startsEpoch).
		for _, k := range [2]Key{kResp, kReq} {
			if f := t.Current(k); f != nil {
				f.cmPending = true
			}
		}
	}
}

// pairByCM links the two flows of every CM exchange whose flows both
// appeared. Exchanges are independent, so map order does not matter.
func (t *Table) pairByCM() {
	for _, x := range t.cm {
		if x.toResponder == nil || x.toResponder.flow == nil || x.toRequester.flow == nil {
			continue
		}
		a, b := x.toResponder.flow, x.toRequester.flow
		if a.Partner == nil && b.Partner == nil {
			link(a, b, PairCM)
		}
	}
}

// hostPair is a flow's source and destination address.
type hostPair struct{ src, dst netip.Addr }

// maxPairCands bounds the candidate partners one flow follows. A flow whose
// first responses fit more candidates than this looks again later (see
// notePair) and stays unpaired if they never thin out.
const maxPairCands = 16

// pairSlack is how far below a candidate's first captured request PSN a
// response PSN may lie and still fit it: the capture may have begun after
// the request that the response answers.
const pairSlack = 1024

// pairEvidence is what the responses a flow carries say about its partner.
// A response (ACK, NAK, READ or atomic response) from B to A names a PSN
// that A's requester sent to B before the response: candidates are the
// flows from A to B of its transport (mayPair) whose request PSNs covered
// it when it was captured.
// Each later response removes the candidates it does not fit, so the
// evidence is the whole response history, kept in fixed space.
type pairEvidence struct {
	cands    [maxPairCands]int32 // IDs of the candidates (Table.flowAt(id-1))
	since    unixTime            // capture time of the first response that fitted a candidate, once sinceSet
	sinceSet bool
	n        uint8
	found    bool   // cands[:n] are all the candidates that fit every response since
	crowded  bool   // the last look found more than maxPairCands candidates
	nextLook uint64 // while !found: the response count at which to look again

	// early: the responses kept while no requester with requests was
	// known (early.go); firstReq: the flow's first request, when it
	// carried a response before it (firstReq.frame != 0).
	early    []unpairedResp
	firstReq unpairedResp
}

// notePair narrows r's candidate partners with a response at psn: see
// pairEvidence. Until a look finds between 1 and maxPairCands candidates,
// it looks again at exponentially spaced responses (so a crowded address
// pair costs O(flows x log responses), not O(flows x responses)); a look
// after the first only considers flows that began before the first
// response that fitted any. read says the response is an RDMA READ
// response: see preferReaders.
func (t *Table) notePair(r *Flow, psn uint32, at time.Time, read bool) {
	if c := r.pairOne; c != nil && (fits(c, psn) || fitsAhead(c, psn)) {
		return // the evidence stands: its only candidate fits
	}
	ev := r.pair
	if ev == nil {
		ev = &pairEvidence{nextLook: 1}
		r.pair = ev
	}
	if ev.found {
		j := uint8(0)
		for _, id := range ev.cands[:ev.n] {
			if fits(t.flowAt(id-1), psn) {
				ev.cands[j] = id
				j++
			}
		}
		if j == 0 && ev.n == 1 && fitsAhead(t.flowAt(ev.cands[0]-1), psn) {
			j = 1 // the only candidate, past the requests captured
		}
		if read {
			j = t.preferReaders(ev.cands[:j], psn)
		}
		clear(ev.cands[j:ev.n])
		ev.n = j
		r.pairOne = t.onlyCand(ev)
		t.settleKept(r)
		return
	}
	if uint64(r.resp.count) < ev.nextLook {
		return
	}
	ev.nextLook = 2 * uint64(r.resp.count)
	var cands [maxPairCands]int32
	n, crowded := uint8(0), false
	var since time.Time
	if ev.sinceSet {
		since = ev.since.time()
	}
	for c := t.byHosts[hostPair{r.Key.Dst, r.Key.Src}].first; c != nil; c = c.hostNext {
		if !mayPair(c, r) || !fits(c, psn) {
			continue
		}
		if ev.sinceSet && c.First.Time.After(since) {
			continue
		}
		if n == maxPairCands {
			crowded = true
			break
		}
		cands[n] = int32(c.ID)
		n++
	}
	if n == 0 && !crowded {
		if c := t.aheadRequester(r, psn); c != nil {
			cands[0], n = int32(c.ID), 1
		}
	}
	if read && !crowded {
		n = t.preferReaders(cands[:n], psn)
	}
	if n == 0 && !ev.sinceSet {
		return // answers requests the capture does not hold: look again later
	}
	if !ev.sinceSet {
		// A zero capture time leaves the evidence without one, as
		// before any response fitted.
		ev.since, ev.sinceSet = toUnixTime(at), !at.IsZero()
	}
	ev.cands, ev.n, ev.crowded, ev.found = cands, n, crowded, !crowded
	r.pairOne = t.onlyCand(ev)
	t.settleKept(r)
}

// settleKept settles the responses r kept (early.go) once the flow whose
// requests they answer is known with requests.
func (t *Table) settleKept(r *Flow) {
	if len(r.pair.early) == 0 {
		return
	}
	if q := t.requester(r); q != nil && q.Requests.started() {
		t.settleUnpaired(r, q, false)
	}
}

// preferReaders keeps, of the candidates ids that an RDMA READ response
// fits, those that have sent an RDMA READ request, when some have and
// some have not, and returns how many it kept (in ids' first places). A
// READ response answers a READ request; a QP that sent only SENDs,
// WRITEs and atomics at the same PSNs (QPs start alike) answers none.
// When no candidate has sent a READ, the mirror may have missed it (or
// the capture begun after it), and all stay. Of the readers, it keeps
// those whose requests took psn (before the PSN they expect next), when
// some did: a READ response's PSN is one its READ took, and fits lets a
// response name the PSN after a flow's requests (the mirror may have
// missed the request there), which here would keep a QP whose last READ,
// at the same PSN as another QP's longer one, ends just before psn.
func (t *Table) preferReaders(ids []int32, psn uint32) uint8 {
	k := 0
	for _, id := range ids {
		if c := t.flowAt(id - 1); c.cold != nil && c.cold.lastRead.valid {
			ids[k], k = id, k+1
		}
	}
	if k == 0 {
		return uint8(len(ids))
	}
	clear(ids[k:])
	return t.preferTaken(ids[:k], psn)
}

// preferTaken keeps, of the candidates ids, those whose requests took psn
// (it lies before the PSN each expects next), when some did, and returns
// how many it kept (see preferReaders).
func (t *Table) preferTaken(ids []int32, psn uint32) uint8 {
	j := 0
	for _, id := range ids {
		if psnDiff(psn, t.flowAt(id-1).Requests.seq.expHi) < 0 {
			ids[j], j = id, j+1
		}
	}
	if j == 0 {
		return uint8(len(ids))
	}
	clear(ids[j:])
	return uint8(j)
}

// onlyCand returns the only candidate of ev, once found; nil if there are
// none or several. Flow.pairOne keeps it, so that a response of a paired
// flow needs neither the evidence nor more than the candidate's first
// request cache line.
func (t *Table) onlyCand(ev *pairEvidence) *Flow {
	if ev.found && ev.n == 1 {
		return t.flowAt(ev.cands[0] - 1)
	}
	return nil
}

// pairAhead is how far past a candidate's highest expected request PSN a
// response may lie and still fit it when it is the only candidate (the
// only flow the responses so far fit, or the only one the response lies
// that close past, see aheadRequester): the mirror may have missed the
// requests it answers (a coalesced ACK acknowledges every PSN up to its
// own, IBTA vol 1 ch. 9), most often at the tail of a message. Only then:
// between QPs of one host pair whose PSNs run close (NCCL starts every QP
// at PSN 0), it would keep wrong candidates.
const pairAhead = 1024

// fitsAhead says whether a response at psn lies within pairAhead past the
// highest PSN c's requests have reached (see fits).
func fitsAhead(c *Flow, psn uint32) bool {
	s := &c.Requests
	d := psnDiff(psn, s.seq.expHi)
	return s.started() && d > 0 && d <= pairAhead
}

// aheadRequester returns the flow whose requests a response r carries at
// psn answers when no flow's requests fit it as captured (see fits): the
// only flow of r's connected transport from r's destination to its source
// whose requests psn lies within pairAhead past (fitsAhead), and which no
// other flow's responses answered while packets arrived (respLink); nil if
// there are none or several. The mirror missed the requests the response
// acknowledges, most often a message's tail. Other connections between
// the two hosts do not hide it: their PSNs are elsewhere (more than
// pairAhead away), or the response fits them ahead as well and then
// stays undecided (QPs at the same PSNs, as NCCL's, which start at 0).
func (t *Table) aheadRequester(r *Flow, psn uint32) *Flow {
	var only *Flow
	for c := t.byHosts[hostPair{r.Key.Dst, r.Key.Src}].first; c != nil; c = c.hostNext {
		if !mayPair(c, r) || !fitsAhead(c, psn) {
			continue
		}
		if only != nil {
			return nil
		}
		only = c
	}
	if only != nil && only.respLink != nil && only.respLink != r {
		return nil
	}
	return only
}

// soleRequester returns the only flow of r's connected transport from r's
// destination to its source, other than r (see mayPair): the one whose requests r's
// responses can answer when no flow's requests fit them as captured; nil
// if there are none or several.
func (t *Table) soleRequester(r *Flow) *Flow {
	var sole *Flow
	for c := t.byHosts[hostPair{r.Key.Dst, r.Key.Src}].first; c != nil; c = c.hostNext {
		if !mayPair(c, r) || !c.Requests.started() {
			continue
		}
		if sole != nil {
			return nil
		}
		sole = c
	}
	return sole
}

// fits says whether a response at psn can answer one of c's requests as c
// stands when the response is captured: c has sent psn (it lies between
// c's first request PSN, less pairSlack, and the highest PSN c's requests
// have reached: the PSN after the highest, or the end of its last READ's
// response PSNs).
func fits(c *Flow, psn uint32) bool {
	s := &c.Requests
	return s.started() && psnDiff(psn, s.FirstPSN) >= -pairSlack && psnDiff(psn, s.seq.expHi) <= 0
}

// allows says whether the evidence leaves c as a partner.
func (ev *pairEvidence) allows(c *Flow) bool {
	if ev == nil || !ev.found {
		return false
	}
	for _, id := range ev.cands[:ev.n] {
		if int(id) == c.ID {
			return true
		}
	}
	return false
}

// compatible says whether x and y, flows in opposite directions between
// two hosts, can be the two directions of one connection: the responses
// each carries (if any) fit the other's requests, and at least one of them
// carries responses.
func compatible(x, y *Flow) bool {
	if x.pair == nil && y.pair == nil {
		return false
	}
	return (x.pair == nil || x.pair.allows(y)) && (y.pair == nil || y.pair.allows(x))
}

// pairSole pairs, of the flows pairByPSN left alone, the two directions of
// the only connection between two hosts: y carries responses, x is the
// only connected-transport flow back (and y the only one from x's
// destination), and x's requests reach y's highest response PSN, or
// pairAhead short of it (requests the mirror missed). Evidence gathered
// while packets arrived may not have come to a decision for such a pair:
// the responses came before any captured request they answer (the mirror
// missed the first ones), or too few came after it to look again.
func (t *Table) pairSole() {
	for _, y := range t.flows {
		if y.Partner != nil || !y.resp.started || !connected(y.Transport) {
			continue
		}
		x := t.soleRequester(y)
		if x == nil || x.Partner != nil || !t.onlyConnected(y) {
			continue
		}
		if psn := y.resp.high(); fits(x, psn) || fitsAhead(x, psn) {
			link(x, y, PairPSN)
		}
	}
}

// onlyConnected says whether f is the only flow of its connected transport
// from its source to its destination (see mayPair).
func (t *Table) onlyConnected(f *Flow) bool {
	for c := t.byHosts[hostPair{f.Key.Src, f.Key.Dst}].first; c != nil; c = c.hostNext {
		if mayPair(c, f) {
			return false
		}
	}
	return true
}

// pairByPSN pairs the connected-transport flows that CM did not: a flow y
// carrying responses claims x when x is the only unpaired flow compatible
// with it, and x and y are linked when nobody else claims x, or when of
// the flows that claim x only y's responses reach x's highest request PSN
// (see reachesLast). Pairing repeats while it links flows, since each
// link removes two flows from the others' options. A flow with no such
// unique evidence stays unpaired.
func (t *Table) pairByPSN() {
	var claims []psnClaims // by flow ID - 1 (the flow's index in t.flows)
	for {
		if claims == nil {
			claims = make([]psnClaims, len(t.flows))
		} else {
			clear(claims)
		}
		claimed := false
		for _, y := range t.flows {
			if y.Partner != nil || y.pair == nil || !y.pair.found {
				continue
			}
			var only *Flow
			n := 0
			for _, id := range y.pair.cands[:y.pair.n] {
				x := t.flowAt(id - 1)
				if x.Partner == nil && compatible(x, y) {
					only = x
					n++
				}
			}
			if n == 1 {
				claims[only.ID-1].add(y, only)
				claimed = true
			}
		}
		if !claimed {
			return
		}
		linked := false
		for _, x := range t.flows {
			c := &claims[x.ID-1]
			if c.n == 0 || x.Partner != nil {
				continue
			}
			y := c.first
			if c.n > 1 {
				y = nil
				if c.reaching == 1 {
					y = c.reacher
				}
			}
			if y == nil || y.Partner != nil {
				continue
			}
			link(x, y, PairPSN)
			linked = true
		}
		if !linked {
			return
		}
	}
}

// psnClaims are the flows that claim a flow x in a round of pairByPSN
// (x is the only candidate left of each), as x needs them: how many, the
// first, and how many reach x's last request (reachesLast) with the last
// of those. When several claim x, the one that reaches x's last request,
// if it is the only one, is x's partner.
type psnClaims struct {
	n, reaching    int32
	first, reacher *Flow
}

// add counts y's claim on x.
func (c *psnClaims) add(y, x *Flow) {
	c.n++
	if c.n == 1 {
		c.first = y
	}
	if reachesLast(y, x) {
		c.reaching++
		c.reacher = y
	}
}

// reachesLast says whether the responses y carries reach the highest PSN
// of x's requests. A responder answers every request message, the last
// one too (its last packet asks for an ACK, IBTA vol 1 ch. 9; an ACK may
// cover several), so the flow that answers x gets there unless the
// capture ended first or the mirror missed that response. When several
// flows claim x (each has x as its only candidate left: the others
// answer requests the mirror missed, of QPs at the same PSNs), one that
// stops short of x's last request answers another QP's.
func reachesLast(y, x *Flow) bool {
	return y.resp.started && x.Requests.started() && psnDiff(y.resp.high(), x.Requests.HighPSN) >= 0
}

// mayPair says whether c, a flow between r's hosts, may be a direction of
// a connection r's responses answer (or, the same way as r, compete with
// r's): another flow of a connected transport, r's own. A QP's requests
// and its responses share its transport (RC, XRC or RD), which every
// packet's opcode names, so an XRC ACK never answers an RC QP's requests,
// whatever PSNs the two share.
func mayPair(c, r *Flow) bool {
	return c != r && connected(c.Transport) && c.Transport == r.Transport
}

func connected(t bth.Transport) bool {
	return t == bth.TransportRC || t == bth.TransportXRC || t == bth.TransportRD
}

func link(a, b *Flow, how PairMethod) {
	a.Partner, b.Partner = b, a
	a.PairedBy, b.PairedBy = how, how
}
