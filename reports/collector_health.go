package reports

import (
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// healthObs keeps where the capture's bad frames are, for the
// capture_health evidence: the counts themselves come from CaptureInfo.
type healthObs struct {
	icrcBad   frameSpan
	malformed frameSpan
	reasons   map[packet.Reason]uint64 // malformed frames by reason
	// mgmtCut counts QP1 management datagrams cut by the snap length
	// before their MAD header (so they may be CM) or, CM REQs, before
	// their service ID. A MAD whose header shows it is no CM message
	// (packet.Packet.HasMAD without HasCM) is not counted.
	mgmtCut uint64
	// bthCut counts RoCE frames the snap length cut inside their BTH:
	// in no flow (flows keeps only packets whose BTH was captured).
	bthCut uint64
	// headersCut counts frames the snap length cut before their UDP or
	// TCP header (cutBeforeTransport): RoCE or not, nothing tells.
	headersCut uint64
	copies     frameSpan // the mirror's second copies of packets (flows.Flow.MirrorDuplicates)
}

// cutBeforeTransport says whether p, a frame that is neither RoCE nor
// malformed, was cut by the snap length before its UDP or TCP header
// could be read: inside an IP header or a RoCEv1 GRH, inside a mirror's
// GRE, ERSPAN or VXLAN headers, or inside the IP header of the frame they
// carry (ERSPAN III over IPv6 with its platform subheader takes 136 bytes
// to the end of an inner IPv6 header). Such a frame may well be RoCE; a
// frame whose ports were read, or that stopped at a header the decoder
// does not go past (a fragment, Packet.Note), is not counted.
func cutBeforeTransport(p *packet.Packet) bool {
	if !p.Truncated || p.Malformed != packet.ReasonNone || p.Note != packet.ReasonNone || p.HasPFC {
		return false
	}
	switch {
	case p.IPVersion == 0: // no IP header read in the innermost frame
		return p.EtherType == 0x0800 || p.EtherType == 0x86dd || p.EtherType == 0x8915 ||
			p.NEncap > 0 && p.EtherType == 0 // a mirrored frame cut in its Ethernet header
	case p.Proto == 17 || p.Proto == 6: // UDP or TCP header cut, or a VXLAN header
		return p.SrcPort == 0 && p.DstPort == 0 || p.Proto == 17 && p.DstPort == 4789
	case p.Proto == 47: // GRE or ERSPAN header cut
		return true
	}
	return false
}

// notes says whether add might note p, a RoCE or malformed frame: a
// cheap test, inline, that spares every healthy frame the call.
func (h *healthObs) notes(p *packet.Packet) bool {
	return p.Kind == packet.KindMalformed || p.ICRC == bth.ICRCBad || p.Truncated && p.BTH.DestQP == gsiQPN
}

// add notes p, a RoCE or malformed frame, if it is bad.
func (h *healthObs) add(p *packet.Packet, at *flows.FrameRef) {
	switch p.Kind {
	case packet.KindMalformed:
		h.malformed.add(*at)
		if h.reasons == nil {
			h.reasons = map[packet.Reason]uint64{}
		}
		h.reasons[p.Malformed]++
	case packet.KindRoCE:
		if p.ICRC == bth.ICRCBad {
			h.icrcBad.add(*at)
		}
		if p.Truncated && p.HasBTH && p.BTH.DestQP == gsiQPN && !p.BTH.Opcode.IsCNP() &&
			(!p.HasMAD || p.HasCM && p.CM.AttributeID == bth.CMAttrREQ && !p.CM.Has(bth.CMFieldServiceID)) {
			h.mgmtCut++
		}
	}
}
