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

// DSCP classes of flowObs.wrong.
const (
	dscpData = 0
	dscpCNP  = 1
)

// flowObs is what the Collector notes per flow beyond the flow counters.
type flowObs struct {
	data, cnp           uint64 // packets by DSCP class
	dataWrong, cnpWrong uint64
	wrong               [2]map[uint8]uint64 // by class (dscpData, dscpCNP): DSCP → wrong packets; made on the first
	firstWrong          flows.FrameRef
	lastWrong           flows.FrameRef
	hasWrong            bool

	// ectData and notECTData count the data packets (requests and READ
	// responses, the packets DCQCN rate-limits) by ECN capability.
	ectData, notECTData uint64
	firstNotECT         flows.FrameRef

	series flowSeries

	// retxSeen and gapsSeen are the flow's Retransmitted and PSNGaps after
	// its previous packet (see Collector.addRoCE).
	retxSeen, gapsSeen uint64
}

// observe classifies one packet of the flow.
func (o *flowObs) observe(p *packet.Packet, at flows.FrameRef, cfg *Config) {
	op := p.BTH.Opcode
	if p.BTH.DestQP == gsiQPN && !op.IsCNP() {
		return
	}
	wrong := -1
	if op.IsCNP() {
		o.cnp++
		if p.DSCP != cfg.CNPDSCP {
			o.cnpWrong++
			wrong = dscpCNP
		}
	} else {
		o.data++
		if p.DSCP != cfg.DataDSCP {
			o.dataWrong++
			wrong = dscpData
		}
		if op.IsRequest() || op.IsReadResponse() {
			if p.ECN&3 == 0 {
				if o.notECTData == 0 {
					o.firstNotECT = at
				}
				o.notECTData++
			} else {
				o.ectData++
			}
		}
	}
	if wrong >= 0 {
		if o.wrong[wrong] == nil {
			o.wrong[wrong] = map[uint8]uint64{}
		}
		o.wrong[wrong][p.DSCP]++
		if !o.hasWrong {
			o.firstWrong, o.hasWrong = at, true
		}
		o.lastWrong = at
	}
}

// check is the flow's DSCPCheck.
func (o *flowObs) check(id int) DSCPCheck {
	d := DSCPCheck{FlowID: id, Data: o.data, CNP: o.cnp, DataWrong: o.dataWrong, CNPWrong: o.cnpWrong}
	if o.hasWrong {
		d.WrongValues = maps.Clone(o.wrong[dscpData])
		if d.WrongValues == nil {
			d.WrongValues = map[uint8]uint64{}
		}
		for v, n := range o.wrong[dscpCNP] {
			d.WrongValues[v] += n
		}
		first, last := o.firstWrong, o.lastWrong
		d.First, d.Last = &first, &last
	}
	return d
}
