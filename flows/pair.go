package flows

import (
	"net/netip"

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

// pairByPSN pairs the remaining connected-transport flows: a flow carrying
// responses (ACKs, READ responses) to host A from host B is paired with the
// unpaired flow from A to B whose request PSNs cover the responses' PSNs,
// when exactly one such flow exists.
func (t *Table) pairByPSN() {
	type hostPair struct{ src, dst netip.Addr }
	requesters := map[hostPair][]*Flow{}
	for _, f := range t.flows {
		if f.Partner == nil && f.Requests.Packets > 0 && connected(f.Transport) {
			hp := hostPair{f.Key.Src, f.Key.Dst}
			requesters[hp] = append(requesters[hp], f)
		}
	}
	for _, r := range t.flows {
		if r.Partner != nil || !r.resp.started {
			continue
		}
		var match *Flow
		n := 0
		for _, f := range requesters[hostPair{r.Key.Dst, r.Key.Src}] {
			if f.Partner == nil && f != r && covers(f, r) {
				match = f
				n++
			}
		}
		if n == 1 {
			link(match, r, PairPSN)
		}
	}
}

// covers says whether r's response PSNs lie within f's request PSNs.
func covers(f, r *Flow) bool {
	s := &f.Requests.seq
	// A response may name the PSN after the last request (an ACK for an
	// RDMA READ names the last response PSN), so allow the READ span.
	lo, hi := s.first, psnAdd(s.high, int32(psnDiff(s.expHi, s.high)))
	return psnDiff(r.resp.first, lo) >= 0 && psnDiff(r.resp.high, hi) <= 0
}

func connected(t bth.Transport) bool {
	return t == bth.TransportRC || t == bth.TransportXRC || t == bth.TransportRD
}

func link(a, b *Flow, how PairMethod) {
	a.Partner, b.Partner = b, a
	a.PairedBy, b.PairedBy = how, how
}
