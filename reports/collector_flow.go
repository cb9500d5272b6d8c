package reports

import (
	"maps"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// gsiQPN is QP1, the General Services Interface: RDMA CM MADs go there.
// They are management datagrams, not RoCE data, and are left out of the
// DSCP and ECN-capability checks (their DSCP is the port default).
const gsiQPN = 1

// DSCP classes of rareObs.wrong.
const (
	dscpData = 0
	dscpCNP  = 1
)

// Per-flow DSCP and ECN-capability counts.
//
// Most of them are the flow's own counters seen another way, so they are
// derived when asked for (flowCounts) rather than counted per packet: with
// many flows interleaved packet by packet, per-flow state every packet
// updates costs a cache miss per packet. Only what the flow counters cannot
// tell, the packets on a wrong DSCP and the data packets that are not
// ECN-capable, is noted as it comes, in a rareObs made on the flow's first
// such packet: on a healthy network there are none.

// flowCounts is one flow's packets by DSCP class and by ECN capability.
type flowCounts struct {
	data, cnp           uint64 // packets by DSCP class
	dataWrong, cnpWrong uint64

	// ectData and notECTData count the data packets (requests and READ
	// responses, the packets DCQCN rate-limits) by ECN capability.
	ectData, notECTData uint64
}

// countsOf derives the counts of f, whose rare packets r noted (nil if it
// had none). Every packet the Collector observes is one Table.AddFlow
// accounted to f, and every packet accounted to f is observed (a mirror's
// copy is neither), so:
//   - the CNPs are f.CNPs (the table's CNP class is bth.Opcode.IsCNP, as
//     observe's), and the data packets are the others, except on QP1,
//     whose packets other than CNPs observe skips;
//   - the data packets that ECN capability is checked on, the requests and
//     READ responses, are those the flow sequences, Requests.Packets and
//     ReadResponses.Packets, and the datagrams of a UD flow's other
//     source QPs, which are requests in no PSN space (OtherSenders).
func countsOf(f *flows.Flow, r *rareObs) flowCounts {
	c := flowCounts{cnp: f.CNPs}
	if f.Key.DestQP != gsiQPN {
		c.data = f.Packets - f.CNPs
		c.ectData = f.Requests.Packets + f.ReadResponses.Packets + f.OtherSenders()
	}
	if r != nil {
		c.dataWrong, c.cnpWrong = r.dataWrong, r.cnpWrong
		c.notECTData = r.notECTData
		c.ectData -= r.notECTData
	}
	return c
}

// rareObs is what the rare packets of a flow leave: those on a wrong DSCP
// or (tagged) on a wrong 802.1Q priority, the data packets that are not
// ECN-capable, and CNPs.
type rareObs struct {
	dataWrong, cnpWrong   uint64
	wrong                 [2]map[uint8]uint64 // by class (dscpData, dscpCNP): DSCP → wrong packets; made on the first
	firstWrong, lastWrong flows.FrameRef      // over both classes (DSCPCheck's First, Last)
	classFirst, classLast [2]flows.FrameRef   // by class: the dscp_mismatch finding of that class cites them

	notECTData  uint64
	firstNotECT flows.FrameRef

	// pcp is the tagged packets on a wrong 802.1Q priority, by class
	// (dscpData, dscpCNP); made on the first.
	pcp *[2]wrongPCP

	// cnps are the flow's first and last CNP: when the CNPs that slowed
	// its QP came (the flow's own span is that of its ACKs too).
	cnps frameSpan
}

// wrongValues returns the flow's wrong DSCP values of class (dscpData,
// dscpCNP) with their packet counts; nil if there were none.
func (r *rareObs) wrongValues(class int) map[uint8]uint64 {
	if r == nil {
		return nil
	}
	return r.wrong[class]
}

// cnpSpanOf is the flow's first and last CNP (ok false if it had none).
func (r *rareObs) cnpSpanOf() frameSpan {
	if r == nil {
		return frameSpan{}
	}
	return r.cnps
}

// firstNotECTOf is the flow's first data packet that was not ECN-capable
// (zero if none was).
func (r *rareObs) firstNotECTOf() flows.FrameRef {
	if r == nil {
		return flows.FrameRef{}
	}
	return r.firstNotECT
}

// mayBeRare says whether observe may note p: it does not when p is no CNP,
// untagged, on the data DSCP and ECN-capable, the common case, which
// Collector.AddFrame (addRare) then spares the call.
func mayBeRare(p *packet.Packet, cfg *Config) bool {
	return p.ECN&3 == 0 || p.DSCP != cfg.DataDSCP || p.HasVLAN || p.BTH.Opcode.IsCNP()
}

// observe notes p, a packet of flow id, if it is rare. A packet that is
// not touches no per-flow state.
func (s *collectorState) observe(id int, p *packet.Packet, at *flows.FrameRef, cfg *Config) {
	op := p.BTH.Opcode
	if op.IsCNP() {
		r := s.rareState(id)
		r.cnps.add(*at)
		if p.DSCP != cfg.CNPDSCP {
			r.wrongDSCP(dscpCNP, p.DSCP, at)
		}
		if p.HasVLAN && p.PCP != cfg.CNPPCP {
			r.wrongPCP(dscpCNP, p.PCP, at)
		}
		return
	}
	if p.BTH.DestQP == gsiQPN {
		return
	}
	if p.DSCP != cfg.DataDSCP {
		s.rareState(id).wrongDSCP(dscpData, p.DSCP, at)
	}
	// Untagged frames, the common case, cost this one branch.
	if p.HasVLAN {
		if p.PCP != cfg.DataPCP {
			s.rareState(id).wrongPCP(dscpData, p.PCP, at)
		} else {
			s.taggedData++
		}
	}
	if p.ECN&3 == 0 && (op.IsRequest() || op.IsReadResponse()) {
		r := s.rareState(id)
		if r.notECTData == 0 {
			r.firstNotECT = *at
		}
		r.notECTData++
	}
}

// wrongDSCP notes a packet of class (dscpData, dscpCNP) on DSCP v.
func (r *rareObs) wrongDSCP(class int, v uint8, at *flows.FrameRef) {
	if r.dataWrong+r.cnpWrong == 0 {
		r.firstWrong = *at
	}
	r.lastWrong = *at
	if class == dscpCNP {
		if r.cnpWrong == 0 {
			r.classFirst[class] = *at
		}
		r.cnpWrong++
	} else {
		if r.dataWrong == 0 {
			r.classFirst[class] = *at
		}
		r.dataWrong++
	}
	r.classLast[class] = *at
	if r.wrong[class] == nil {
		r.wrong[class] = map[uint8]uint64{}
	}
	r.wrong[class][v]++
}

// wrongPCP is one class's tagged packets of a flow whose innermost VLAN
// tag is not on the class's priority (IEEE 802.1Q §6.9.3).
type wrongPCP struct {
	packets     uint64
	byValue     [8]uint64 // by the PCP they carried
	first, last flows.FrameRef
}

// wrongPCP notes a tagged packet of class (dscpData, dscpCNP) on
// priority v.
func (r *rareObs) wrongPCP(class int, v uint8, at *flows.FrameRef) {
	if r.pcp == nil {
		r.pcp = new([2]wrongPCP)
	}
	w := &r.pcp[class]
	if w.packets == 0 {
		w.first = *at
	}
	w.last = *at
	w.packets++
	w.byValue[v&7]++
}

// wrongPCPOf is the flow's wrong-priority packets of class (dscpData,
// dscpCNP); nil if it had none.
func (r *rareObs) wrongPCPOf(class int) *wrongPCP {
	if r == nil || r.pcp == nil || r.pcp[class].packets == 0 {
		return nil
	}
	return &r.pcp[class]
}

// rareState returns the rare observations of flow id, making them.
func (s *collectorState) rareState(id int) *rareObs {
	if len(s.rare) < id {
		s.rare = append(s.rare, make([]*rareObs, id-len(s.rare))...)
	}
	r := s.rare[id-1]
	if r == nil {
		r = new(rareObs)
		s.rare[id-1] = r
	}
	return r
}

// rareOf returns the rare observations of flow id, nil if it had none.
func (s *collectorState) rareOf(id int) *rareObs {
	if id > len(s.rare) {
		return nil
	}
	return s.rare[id-1]
}

// check is the DSCPCheck of f, flow id of the Collector.
func (s *collectorState) check(id int, f *flows.Flow) DSCPCheck {
	r := s.rareOf(id)
	n := countsOf(f, r)
	d := DSCPCheck{FlowID: id, Data: n.data, CNP: n.cnp, DataWrong: n.dataWrong, CNPWrong: n.cnpWrong}
	if n.dataWrong+n.cnpWrong > 0 {
		d.WrongValues = maps.Clone(r.wrong[dscpData])
		if d.WrongValues == nil {
			d.WrongValues = map[uint8]uint64{}
		}
		for v, k := range r.wrong[dscpCNP] {
			d.WrongValues[v] += k
		}
		first, last := r.firstWrong, r.lastWrong
		d.First, d.Last = &first, &last
	}
	return d
}
