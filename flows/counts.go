package flows

import (
	"cmp"
	"slices"

	"github.com/rocedump/rocedump/decode/bth"
)

// OpcodeCount is the number of packets of one opcode.
type OpcodeCount struct {
	Opcode bth.Opcode
	Count  uint64
}

// Small counters live in the Flow itself: a flow uses a handful of
// opcodes, one or two DSCP values and usually one UDP source port, and
// following a slice to its backing array on every packet costs a cache
// miss. Each counter keeps its first few values inline, packed one to a
// word (value + 1 in the top byte, the count in the low 56 bits: 7×10^16
// packets), and the rare rest in a slice.
const (
	packShift = 56
	packCount = 1<<packShift - 1
)

// bumpInline counts v in the packed inline words, taking a free word for a
// new value; it reports false when every word holds another value.
func bumpInline(inline []uint64, v uint8) bool {
	tag := (uint64(v) + 1) << packShift
	for i, w := range inline {
		switch {
		case w&^packCount == tag:
			inline[i]++
			return true
		case w == 0:
			inline[i] = tag | 1
			return true
		}
	}
	return false
}

// unpack returns the value and count of a used inline word.
func unpack(w uint64) (v uint8, n uint64) { return uint8(w>>packShift - 1), w & packCount }

// opcodeInline is how many opcodes besides the first a flow counts without
// a slice: a WRITE flow uses FIRST, MIDDLE, LAST and ONLY; an ACK flow,
// ACK and CNP.
const opcodeInline = 3

// Opcode counts: the flow's first opcode has no counter (Flow.opFirst
// names it): every packet is counted once, so its count is the flow's
// packets less the other opcodes' counts, and a flow of one opcode (ACKs)
// writes nothing. The next opcodeInline opcodes are counted in Flow.opInline,
// packed; more in the flow's flowCold.

// opcodeBumped counts op, not the flow's first opcode, in the first or
// second of Flow.opInline when that word already holds it, as
// bumpInline would, and says whether it did; countOpcode takes the rest.
// It inlines into Flow.add: a WRITE flow's MIDDLE and LAST packets,
// half of the benchmark's, then make no call (BENCHMARKS.md, session 20).
func (f *Flow) opcodeBumped(op bth.Opcode) bool {
	tag := (uint64(op) + 1) << packShift
	switch w := &f.opInline; {
	case w[0]&^packCount == tag:
		w[0]++
	case w[1]&^packCount == tag && w[0] != 0:
		w[1]++
	default:
		return false
	}
	return true
}

func (f *Flow) countOpcode(op bth.Opcode) {
	v := uint16(op) + 1
	if v == f.opFirst {
		return
	}
	if f.opFirst == 0 {
		f.opFirst = v
		return
	}
	if bumpInline(f.opInline[:], uint8(op)) {
		return
	}
	cold := f.coldState()
	for i := range cold.opcodes {
		if cold.opcodes[i].Opcode == op {
			cold.opcodes[i].Count++
			return
		}
	}
	cold.opcodes = append(cold.opcodes, OpcodeCount{op, 1})
}

func (f *Flow) coldOpcodes() []OpcodeCount {
	if f.cold == nil {
		return nil
	}
	return f.cold.opcodes
}

// sortedOpcodes returns the opcode counts ordered by opcode; nil if there
// are none.
func (f *Flow) sortedOpcodes() []OpcodeCount { return f.AppendOpcodes(nil) }

// AppendOpcodes appends the opcode counts, ordered by opcode, to dst
// (Opcodes, in dst's storage when it has room: for code that lists the
// opcodes of many flows in turn).
func (f *Flow) AppendOpcodes(dst []OpcodeCount) []OpcodeCount {
	if f.opFirst == 0 {
		return dst
	}
	start := len(dst)
	out := append(dst, OpcodeCount{Opcode: bth.Opcode(f.opFirst - 1)})
	rest := f.Packets
	more := f.coldOpcodes()
	for _, w := range f.opInline {
		if w != 0 {
			v, n := unpack(w)
			out = append(out, OpcodeCount{bth.Opcode(v), n})
			rest -= n
		}
	}
	for _, m := range more {
		rest -= m.Count
	}
	out[start].Count = rest
	out = append(out, more...)
	slices.SortFunc(out[start:], func(a, b OpcodeCount) int { return cmp.Compare(a.Opcode, b.Opcode) })
	return out
}

// ValueCount is the number of packets with one value of a small field
// (a DSCP, an RNR timer).
type ValueCount struct {
	Value uint8
	Count uint64
}

// valueInline is how many DSCP values besides the first a flow counts
// without a slice: a flow's CNPs often use a DSCP of their own.
const valueInline = 1

// DSCP counts work as the opcode counts do: Flow.dscpFirst names the
// first value, whose count is the flow's packets less the others'; the next
// valueInline values are counted in Flow.dscpInline, more in flowCold.

func (f *Flow) countDSCP(v uint8) {
	if uint16(v)+1 == f.dscpFirst {
		return
	}
	if f.dscpFirst == 0 {
		f.dscpFirst = uint16(v) + 1
		return
	}
	if bumpInline(f.dscpInline[:], v) {
		return
	}
	cold := f.coldState()
	cold.dscp = addValue(cold.dscp, v)
}

func (f *Flow) coldDSCP() []ValueCount {
	if f.cold == nil {
		return nil
	}
	return f.cold.dscp
}

// addValue counts v in a list of value counts.
func addValue(vs []ValueCount, v uint8) []ValueCount {
	for i := range vs {
		if vs[i].Value == v {
			vs[i].Count++
			return vs
		}
	}
	return append(vs, ValueCount{v, 1})
}

// sortedDSCP returns the DSCP counts ordered by value; nil if there are
// none.
func (f *Flow) sortedDSCP() []ValueCount { return f.AppendDSCP(nil) }

// AppendDSCP appends the DSCP counts, ordered by value, to dst (DSCP, in
// dst's storage when it has room).
func (f *Flow) AppendDSCP(dst []ValueCount) []ValueCount {
	if f.dscpFirst == 0 {
		return dst
	}
	start := len(dst)
	out := append(dst, ValueCount{Value: uint8(f.dscpFirst - 1)})
	rest := f.Packets
	more := f.coldDSCP()
	for _, w := range f.dscpInline {
		if w != 0 {
			v, n := unpack(w)
			out = append(out, ValueCount{v, n})
			rest -= n
		}
	}
	for _, m := range more {
		rest -= m.Count
	}
	out[start].Count = rest
	out = append(out, more...)
	slices.SortFunc(out[start:], func(a, b ValueCount) int { return cmp.Compare(a.Value, b.Value) })
	return out
}

// sortedValues appends more to out and sorts the result by value; nil if
// both are empty.
func sortedValues(out, more []ValueCount) []ValueCount {
	out = append(out, more...)
	slices.SortFunc(out, func(a, b ValueCount) int { return cmp.Compare(a.Value, b.Value) })
	return out
}

// maxPorts caps the UDP source ports a flow remembers: enough to see ECMP
// entropy, bounded so that memory stays per flow.
const maxPorts = 64

// portsInline is how many ports a portSet keeps without a slice.
const portsInline = 2

// portSet is the set of UDP source ports of a flow, up to maxPorts; more
// says that ports beyond the cap were seen. Ports beyond the inline ones
// are in the flow's flowCold.
type portSet struct {
	inline [portsInline]uint16
	n      uint8 // ports in inline
	more   bool
}

func (f *Flow) addPort(p uint16) {
	s := &f.ports
	for _, q := range s.inline[:s.n] {
		if q == p {
			return
		}
	}
	if int(s.n) < portsInline {
		s.inline[s.n] = p
		s.n++
		return
	}
	if s.more {
		// At the cap: the port is either remembered or beyond it.
		return
	}
	cold := f.coldState()
	for _, q := range cold.ports {
		if q == p {
			return
		}
	}
	if portsInline+len(cold.ports) == maxPorts {
		s.more = true
		return
	}
	cold.ports = append(cold.ports, p)
}

// list returns the ports in the order they were first seen; nil if none.
func (s *portSet) list(cold *flowCold) []uint16 { return s.appendList(nil, cold) }

// appendList appends the ports, in the order they were first seen, to dst.
func (s *portSet) appendList(dst []uint16, cold *flowCold) []uint16 {
	dst = append(dst, s.inline[:s.n]...)
	if cold != nil {
		dst = append(dst, cold.ports...)
	}
	return dst
}

// AppendSrcPorts appends the UDP source ports seen, sorted, to dst, and
// reports whether more than the remembered maximum were seen (SrcPorts, in
// dst's storage when it has room).
func (f *Flow) AppendSrcPorts(dst []uint16) (ports []uint16, more bool) {
	start := len(dst)
	dst = f.ports.appendList(dst, f.cold)
	slices.Sort(dst[start:])
	return dst, f.ports.more
}
