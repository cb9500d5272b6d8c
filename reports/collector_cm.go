package reports

import (
	"net/netip"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// cmKey identifies one connection request: the CM resends a REQ with the
// same local communication ID when it gets no answer.
type cmKey struct {
	src    netip.Addr
	commID uint32
}

type cmState struct {
	seen map[cmKey]bool
	list []CMConnect
}

func (s *cmState) init() { s.seen = map[cmKey]bool{} }

// add records a CM REQ once per (sender, communication ID). A REQ cut
// before its communication ID cannot be told from a resend and is left
// out; one cut before its service ID is kept with ServiceID, PortSpace and
// Port zero (the capture_health finding counts those).
func (s *cmState) add(p *packet.Packet, at *flows.FrameRef) {
	m := &p.CM
	if !m.Has(bth.CMFieldLocalCommID) {
		return
	}
	k := cmKey{p.Src, m.LocalCommID}
	if s.seen[k] {
		return
	}
	s.seen[k] = true
	c := CMConnect{Src: p.Src, Dst: p.Dst, ServiceID: m.ServiceID, LocalQPN: m.LocalQPN, Frame: *at, Unclassified: !m.Has(bth.CMFieldServiceID)}
	if m.IsIPService() {
		c.PortSpace, c.Port = m.PortSpace(), m.Port()
	}
	s.list = append(s.list, c)
}
