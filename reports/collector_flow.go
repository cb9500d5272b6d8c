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
// It is touched by every packet of its flow, so it holds only the counts
// every packet updates (72 bytes, about one cache line); what only the rare
// wrong-DSCP and not-ECT packets need is in flowObsCold, made on the first.
type flowObs struct {
	data, cnp           uint64 // packets by DSCP class
	dataWrong, cnpWrong uint64

	// ectData and notECTData count the data packets (requests and READ
	// responses, the packets DCQCN rate-limits) by ECN capability.
	ectData, notECTData uint64

	// retxSeen and gapsSeen are the low 32 bits of the flow's
	// Retransmitted and PSNGaps after its previous packet (see
	// Collector.addRoCE): one packet adds far less than 2^32, so the
	// difference modulo 2^32 is what it added.
	retxSeen, gapsSeen uint32

	cold *flowObsCold
}

// flowObsCold is the part of a flowObs that only wrong-DSCP and not-ECT
// packets touch.
type flowObsCold struct {
	wrong      [2]map[uint8]uint64 // by class (dscpData, dscpCNP): DSCP → wrong packets; made on the first
	firstWrong flows.FrameRef
	lastWrong  flows.FrameRef
	hasWrong   bool

	firstNotECT flows.FrameRef
}

func (o *flowObs) coldState() *flowObsCold {
	if o.cold == nil {
		o.cold = &flowObsCold{}
	}
	return o.cold
}

// firstNotECT is the flow's first data packet that was not ECN-capable
// (zero if none was).
func (o *flowObs) firstNotECT() flows.FrameRef {
	if o.cold == nil {
		return flows.FrameRef{}
	}
	return o.cold.firstNotECT
}

// wrongValues returns the flow's wrong DSCP values of class (dscpData,
// dscpCNP) with their packet counts; nil if there were none.
func (o *flowObs) wrongValues(class int) map[uint8]uint64 {
	if o.cold == nil {
		return nil
	}
	return o.cold.wrong[class]
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
					o.coldState().firstNotECT = at
				}
				o.notECTData++
			} else {
				o.ectData++
			}
		}
	}
	if wrong >= 0 {
		c := o.coldState()
		if c.wrong[wrong] == nil {
			c.wrong[wrong] = map[uint8]uint64{}
		}
		c.wrong[wrong][p.DSCP]++
		if !c.hasWrong {
			c.firstWrong, c.hasWrong = at, true
		}
		c.lastWrong = at
	}
}

// check is the flow's DSCPCheck.
func (o *flowObs) check(id int) DSCPCheck {
	d := DSCPCheck{FlowID: id, Data: o.data, CNP: o.cnp, DataWrong: o.dataWrong, CNPWrong: o.cnpWrong}
	if c := o.cold; c != nil && c.hasWrong {
		d.WrongValues = maps.Clone(c.wrong[dscpData])
		if d.WrongValues == nil {
			d.WrongValues = map[uint8]uint64{}
		}
		for v, n := range c.wrong[dscpCNP] {
			d.WrongValues[v] += n
		}
		first, last := c.firstWrong, c.lastWrong
		d.First, d.Last = &first, &last
	}
	return d
}
