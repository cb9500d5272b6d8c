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

// opcodeInline is how many opcodes a flow counts without a slice: a WRITE
// flow uses FIRST, MIDDLE, LAST and ONLY; an ACK flow, ACK and CNP.
const opcodeInline = 4

// opcodeCounts counts packets per opcode.
type opcodeCounts struct {
	inline [opcodeInline]uint64 // packed (opcode + 1, count); 0 is free
	more   []OpcodeCount
}

func (c *opcodeCounts) add(op bth.Opcode) {
	if bumpInline(c.inline[:], uint8(op)) {
		return
	}
	for i := range c.more {
		if c.more[i].Opcode == op {
			c.more[i].Count++
			return
		}
	}
	c.more = append(c.more, OpcodeCount{op, 1})
}

// sorted returns the counts ordered by opcode; nil if there are none.
func (c *opcodeCounts) sorted() []OpcodeCount {
	var out []OpcodeCount
	for _, w := range c.inline {
		if w != 0 {
			v, n := unpack(w)
			out = append(out, OpcodeCount{bth.Opcode(v), n})
		}
	}
	out = append(out, c.more...)
	sort.Slice(out, func(i, j int) bool { return out[i].Opcode < out[j].Opcode })
	return out
}

// ValueCount is the number of packets with one value of a small field
// (a DSCP, an RNR timer).
type ValueCount struct {
	Value uint8
	Count uint64
}

// valueInline is how many values a valueCounts keeps without a slice.
const valueInline = 2

// valueCounts counts packets per value of a small field.
type valueCounts struct {
	inline [valueInline]uint64 // packed (value + 1, count); 0 is free
	more   []ValueCount
}

func (c *valueCounts) add(v uint8) {
	if bumpInline(c.inline[:], v) {
		return
	}
	for i := range c.more {
		if c.more[i].Value == v {
			c.more[i].Count++
			return
		}
	}
	c.more = append(c.more, ValueCount{v, 1})
}

// sorted returns the counts ordered by value; nil if there are none.
func (c *valueCounts) sorted() []ValueCount {
	var out []ValueCount
	for _, w := range c.inline {
		if w != 0 {
			v, n := unpack(w)
			out = append(out, ValueCount{v, n})
		}
	}
	out = append(out, c.more...)
	sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
	return out
}

// maxPorts caps the UDP source ports a flow remembers: enough to see ECMP
// entropy, bounded so that memory stays per flow.
const maxPorts = 64

// portsInline is how many ports a portSet keeps without a slice.
const portsInline = 2

// portSet is the set of UDP source ports of a flow, up to maxPorts; more
// says that ports beyond the cap were seen.
type portSet struct {
	inline [portsInline]uint16
	n      uint8 // ports in inline
	more   bool
	rest   []uint16 // ports beyond inline
}

func (s *portSet) add(p uint16) {
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
	for _, q := range s.rest {
		if q == p {
			return
		}
	}
	if portsInline+len(s.rest) == maxPorts {
		s.more = true
		return
	}
	s.rest = append(s.rest, p)
}

// list returns the ports in the order they were first seen; nil if none.
func (s *portSet) list() []uint16 {
	var out []uint16
	out = append(out, s.inline[:s.n]...)
	return append(out, s.rest...)
}
