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
	// before their CM header or service ID.
	mgmtCut uint64
	// bthCut counts RoCE frames the snap length cut inside their BTH:
	// in no flow (flows keeps only packets whose BTH was captured).
	bthCut uint64
	copies frameSpan // the mirror's second copies of packets (flows.Flow.MirrorDuplicates)
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
			(!p.HasCM || p.CM.AttributeID == bth.CMAttrREQ && !p.CM.Has(bth.CMFieldServiceID)) {
			h.mgmtCut++
		}
	}
}
