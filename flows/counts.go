package flows

import (
	"sort"

	"github.com/rocedump/rocedump/decode/bth"
)

// OpcodeCount is the number of packets of one opcode.
type OpcodeCount struct {
	Opcode bth.Opcode
	Count  uint64
}

// opcodeCounts counts packets per opcode. A flow uses a handful of opcodes,
// so a short slice searched linearly beats a [256] array on memory.
type opcodeCounts []OpcodeCount

func (c *opcodeCounts) add(op bth.Opcode) {
	s := *c
	for i := range s {
		if s[i].Opcode == op {
			s[i].Count++
			return
		}
	}
	*c = append(s, OpcodeCount{op, 1})
}

// sorted returns the counts ordered by opcode.
func (c opcodeCounts) sorted() []OpcodeCount {
	out := append([]OpcodeCount(nil), c...)
	sort.Slice(out, func(i, j int) bool { return out[i].Opcode < out[j].Opcode })
	return out
}

// ValueCount is the number of packets with one value of a small field
// (a DSCP, an RNR timer).
type ValueCount struct {
	Value uint8
	Count uint64
}

type valueCounts []ValueCount

func (c *valueCounts) add(v uint8) {
	s := *c
	for i := range s {
		if s[i].Value == v {
			s[i].Count++
			return
		}
	}
	*c = append(s, ValueCount{v, 1})
}

func (c valueCounts) sorted() []ValueCount {
	out := append([]ValueCount(nil), c...)
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

// maxPorts caps the UDP source ports a flow remembers: enough to see ECMP
// entropy, bounded so that memory stays per flow.
const maxPorts = 64

// portSet is the set of UDP source ports of a flow, up to maxPorts; more
// says that ports beyond the cap were seen.
type portSet struct {
	ports []uint16
	more  bool
}

func (s *portSet) add(p uint16) {
	for _, q := range s.ports {
		if q == p {
			return
		}
	}
	if len(s.ports) == maxPorts {
		s.more = true
		return
	}
	s.ports = append(s.ports, p)
}
