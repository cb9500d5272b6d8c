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
// first packet.
func (t *Table) noteCM(p *packet.Packet, at FrameRef) {
	m := &p.CM
	switch m.AttributeID {
	case bth.CMAttrREQ:
		k := cmKey{requester: p.Src, responder: p.Dst, commID: m.LocalCommID}
		if _, dup := t.cm[k]; dup {
			return // a resent REQ
		}
		t.cm[k] = &cmExchange{req: *m, reqFrame: at}
	case bth.CMAttrREP:
		x := t.cm[cmKey{requester: p.Dst, responder: p.Src, commID: m.RemoteCommID}]
		if x == nil || x.haveREP {
			return // REQ not captured, or a resent REP
		}
		x.haveREP = true
		base := CMInfo{
			ServiceID: x.req.ServiceID,
			IPService: x.req.IsIPService(),
			PortSpace: x.req.PortSpace(),
			Port:      x.req.Port(),
		}
		// Requester → responder: the requester's requests, to the responder's QPN.
		toResp := base
		toResp.StartPSN, toResp.SrcQP, toResp.CommID, toResp.Frame = x.req.StartingPSN, x.req.LocalQPN, x.req.LocalCommID, x.reqFrame
		toReq := base
		toReq.StartPSN, toReq.SrcQP, toReq.CommID, toReq.Frame = m.StartingPSN, m.LocalQPN, m.LocalCommID, at
		x.toResponder = &cmSide{info: toResp}
		x.toRequester = &cmSide{info: toReq}
		t.cmByFlow[Key{Src: p.Dst, Dst: p.Src, DestQP: m.LocalQPN}] = x.toResponder
		t.cmByFlow[Key{Src: p.Src, Dst: p.Dst, DestQP: x.req.LocalQPN}] = x.toRequester
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
// flows from A to B whose request PSNs covered it when it was captured.
// Each later response removes the candidates it does not fit, so the
// evidence is the whole response history, kept in fixed space.
type pairEvidence struct {
	since    time.Time // capture time of the first response that fitted a candidate
	cands    [maxPairCands]*Flow
	n        int
	found    bool   // cands[:n] are all the candidates that fit every response since
	crowded  bool   // the last look found more than maxPairCands candidates
	nextLook uint64 // while !found: the response count at which to look again
}

// notePair narrows r's candidate partners with a response at psn: see
// pairEvidence. Until a look finds between 1 and maxPairCands candidates,
// it looks again at exponentially spaced responses (so a crowded address
// pair costs O(flows x log responses), not O(flows x responses)); a look
// after the first only considers flows that began before the first
// response that fitted any.
func (t *Table) notePair(r *Flow, psn uint32, at time.Time) {
	ev := r.pair
	if ev == nil {
		ev = &pairEvidence{nextLook: 1}
		r.pair = ev
	}
	if ev.found {
		j := 0
		for _, c := range ev.cands[:ev.n] {
			if fits(c, psn) {
				ev.cands[j] = c
				j++
			}
		}
		clear(ev.cands[j:ev.n])
		ev.n = j
		return
	}
	if r.resp.count < ev.nextLook {
		return
	}
	ev.nextLook = 2 * r.resp.count
	var cands [maxPairCands]*Flow
	n, crowded := 0, false
	for _, c := range t.byHosts[hostPair{r.Key.Dst, r.Key.Src}] {
		if c == r || !connected(c.Transport) || !fits(c, psn) {
			continue
		}
		if !ev.since.IsZero() && c.First.Time.After(ev.since) {
			continue
		}
		if n == maxPairCands {
			crowded = true
			break
		}
		cands[n] = c
		n++
	}
	if n == 0 && ev.since.IsZero() {
		return // answers requests the capture does not hold: look again later
	}
	if ev.since.IsZero() {
		ev.since = at
	}
	ev.cands, ev.n, ev.crowded, ev.found = cands, n, crowded, !crowded
}

// fits says whether a response at psn can answer one of c's requests as c
// stands when the response is captured: c has sent psn (it lies between
// c's first request PSN, less pairSlack, and the highest PSN c's requests
// have reached: the PSN after the highest, or the end of its last READ's
// response PSNs).
func fits(c *Flow, psn uint32) bool {
	s := &c.Requests.seq
	return s.started && psnDiff(psn, s.first) >= -pairSlack && psnDiff(psn, s.expHi) <= 0
}

// allows says whether the evidence leaves c as a partner.
func (ev *pairEvidence) allows(c *Flow) bool {
	if ev == nil || !ev.found {
		return false
	}
	for _, x := range ev.cands[:ev.n] {
		if x == c {
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

// pairByPSN pairs the connected-transport flows that CM did not: a flow y
// carrying responses claims x when x is the only unpaired flow compatible
// with it, and x and y are linked when nobody else claims x. Pairing
// repeats while it links flows, since each link removes two flows from
// the others' options. A flow with no such unique evidence stays unpaired.
func (t *Table) pairByPSN() {
	for {
		claimedBy := map[*Flow]*Flow{}
		contested := map[*Flow]bool{}
		for _, y := range t.flows {
			if y.Partner != nil || y.pair == nil || !y.pair.found {
				continue
			}
			var only *Flow
			n := 0
			for _, x := range y.pair.cands[:y.pair.n] {
				if x.Partner == nil && compatible(x, y) {
					only = x
					n++
				}
			}
			if n != 1 {
				continue
			}
			if prev := claimedBy[only]; prev != nil && prev != y {
				contested[only] = true
			}
			claimedBy[only] = y
		}
		linked := false
		for _, x := range t.flows {
			y := claimedBy[x]
			if y == nil || contested[x] || x.Partner != nil || y.Partner != nil {
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

func connected(t bth.Transport) bool {
	return t == bth.TransportRC || t == bth.TransportXRC || t == bth.TransportRD
}

func link(a, b *Flow, how PairMethod) {
	a.Partner, b.Partner = b, a
	a.PairedBy, b.PairedBy = how, how
}
