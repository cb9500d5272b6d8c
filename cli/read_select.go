package cli

import (
	"strconv"
	"strings"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// packetSelector keeps the packets that --qpn and --opcode ask for.
type packetSelector struct {
	qpns    map[uint32]bool
	opcodes [256]bool
	classes []opcodeClass
	any     bool // no --opcode given
}

// opcodeClass is a named group of opcodes accepted by --opcode.
type opcodeClass struct {
	name  string
	match func(p *packet.Packet) bool
}

var opcodeClasses = []opcodeClass{
	{"send", func(p *packet.Packet) bool { return p.BTH.Opcode.IsSend() }},
	{"write", func(p *packet.Packet) bool { return p.BTH.Opcode.IsRDMAWrite() }},
	{"read", func(p *packet.Packet) bool {
		op := p.BTH.Opcode.Operation()
		return op >= bth.OpReadRequest && op <= bth.OpReadResponseOnly && p.BTH.Opcode.Known()
	}},
	{"atomic", func(p *packet.Packet) bool {
		op := p.BTH.Opcode.Operation()
		return p.BTH.Opcode.Known() && (op == bth.OpCompareSwap || op == bth.OpFetchAdd || op == bth.OpAtomicAcknowledge || op == bth.OpAtomicWrite)
	}},
	{"ack", func(p *packet.Packet) bool { return p.BTH.Opcode.IsAck() }},
	{"nak", func(p *packet.Packet) bool {
		return p.BTH.Ext&bth.HasAETH != 0 && p.BTH.AETH.Kind() != bth.AckKindACK
	}},
	{"rnr", func(p *packet.Packet) bool {
		return p.BTH.Ext&bth.HasAETH != 0 && p.BTH.AETH.Kind() == bth.AckKindRNRNAK
	}},
	{"cnp", func(p *packet.Packet) bool { return p.BTH.Opcode.IsCNP() }},
	{"cm", func(p *packet.Packet) bool { return p.HasCM }},
}

func newPacketSelector(qpns, opcodes []string) (*packetSelector, error) {
	s := &packetSelector{any: len(opcodes) == 0}
	for _, q := range qpns {
		v, err := strconv.ParseUint(strings.TrimSpace(q), 0, 32)
		if err != nil || v > 0xFFFFFF {
			return nil, usageErrorf("--qpn %q: want a 24-bit QP number such as 0x11 or 17", q)
		}
		if s.qpns == nil {
			s.qpns = map[uint32]bool{}
		}
		s.qpns[uint32(v)] = true
	}
	for _, o := range opcodes {
		if err := s.addOpcode(strings.TrimSpace(o)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *packetSelector) addOpcode(o string) error {
	if v, err := strconv.ParseUint(o, 0, 8); err == nil {
		s.opcodes[v] = true
		return nil
	}
	lower := strings.ToLower(o)
	for _, c := range opcodeClasses {
		if c.name == lower {
			s.classes = append(s.classes, c)
			return nil
		}
	}
	// A full name (RC_ACKNOWLEDGE) or an operation without its transport
	// (RDMA_WRITE_FIRST matches it under RC, UC and XRC).
	upper := strings.ToUpper(o)
	found := false
	for v := 0; v < 256; v++ {
		name := bth.Opcode(v).String()
		if name == upper || (strings.HasSuffix(name, "_"+upper) && strings.Index(name, "_") == len(name)-len(upper)-1) {
			s.opcodes[v] = true
			found = true
		}
	}
	if !found {
		return usageErrorf("--opcode %q: not an opcode number, name or class (send, write, read, atomic, ack, nak, rnr, cnp, cm)", o)
	}
	return nil
}

func (s *packetSelector) match(p *packet.Packet) bool {
	if s.qpns != nil && (!p.HasBTH || !s.qpns[p.BTH.DestQP]) {
		return false
	}
	if s.any {
		return true
	}
	if !p.HasBTH {
		return false
	}
	if s.opcodes[p.BTH.Opcode] {
		return true
	}
	for _, c := range s.classes {
		if c.match(p) {
			return true
		}
	}
	return false
}
