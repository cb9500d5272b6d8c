package filter

import (
	"encoding/binary"
	"fmt"
)

// verdict is the result of evaluating a condition on a frame. abort is
// what BPF does when a load falls outside the captured bytes or a
// division by zero happens: the whole filter rejects the frame, even
// under a "not" or on the left of an "or".
type verdict uint8

const (
	reject verdict = iota
	accept
	abort
)

// cond is a compiled boolean node. Filters run the program built from
// the tree (program.go); eval is the plain evaluation of the tree, BPF
// without libpcap's optimizer, which the tests hold the program to. eval
// gets the captured bytes and the length of the packet on the wire.
type cond interface {
	eval(b []byte, wire uint32) verdict
	String() string
}

// val is a compiled arithmetic node; ok is false when BPF would abort.
type val interface {
	value(b []byte, wire uint32) (v uint32, ok bool)
	String() string
}

// load reads a big-endian field of size 1, 2 or 4 at off.
func load(b []byte, off uint64, size uint8) (uint32, bool) {
	if off > uint64(len(b)) || uint64(size) > uint64(len(b))-off {
		return 0, false
	}
	switch size {
	case 1:
		return uint32(b[off]), true
	case 2:
		return uint32(binary.BigEndian.Uint16(b[off:])), true
	}
	return binary.BigEndian.Uint32(b[off:]), true
}

// constCond always gives the same answer.
type constCond bool

func (c constCond) eval([]byte, uint32) verdict {
	if c {
		return accept
	}
	return reject
}

func (c constCond) String() string {
	if c {
		return "true"
	}
	return "false"
}

type andCond struct{ a, b cond }

func (c *andCond) eval(b []byte, wire uint32) verdict {
	if r := c.a.eval(b, wire); r != accept {
		return r
	}
	return c.b.eval(b, wire)
}

func (c *andCond) String() string { return "(" + c.a.String() + " && " + c.b.String() + ")" }

type orCond struct{ a, b cond }

func (c *orCond) eval(b []byte, wire uint32) verdict {
	if r := c.a.eval(b, wire); r != reject {
		return r
	}
	return c.b.eval(b, wire)
}

func (c *orCond) String() string { return "(" + c.a.String() + " || " + c.b.String() + ")" }

type notCond struct{ a cond }

func (c *notCond) eval(b []byte, wire uint32) verdict {
	switch c.a.eval(b, wire) {
	case accept:
		return reject
	case reject:
		return accept
	}
	return abort
}

func (c *notCond) String() string { return "!" + c.a.String() }

// cmpOp is a BPF conditional jump: jeq, jgt, jge, jset.
type cmpOp uint8

const (
	opEq cmpOp = iota
	opGt
	opGe
	opSet // (field & mask) != 0
)

var opNames = [...]string{"==", ">", ">=", "&"}

func (op cmpOp) test(v, k uint32) bool {
	switch op {
	case opEq:
		return v == k
	case opGt:
		return v > k
	case opGe:
		return v >= k
	}
	return v != 0
}

// fieldCond compares a field at a fixed offset: (field & mask) op k.
// rel marks a test that came from a relation ("ip[9] = 17"): libpcap's
// optimizer never carries knowledge between those and its own
// primitives' tests ("ip proto 17"), so neither does the program.
type fieldCond struct {
	off  uint32
	size uint8
	op   cmpOp
	mask uint32
	k    uint32
	rel  bool
}

func (c *fieldCond) eval(b []byte, _ uint32) verdict {
	v, ok := load(b, uint64(c.off), c.size)
	if !ok {
		return abort
	}
	if c.op.test(v&c.mask, c.k) {
		return accept
	}
	return reject
}

func (c *fieldCond) String() string {
	return fmt.Sprintf("[%d:%d]&%#x%s%#x", c.off, c.size, c.mask, opNames[c.op], c.k)
}

// transCond is a fieldCond relative to an IPv4 transport header: the
// field is at nl + 4*(b[nl]&0xf) + off, as BPF's "ldxb 4*([nl]&0xf)".
type transCond struct {
	nl   uint32
	off  uint32
	size uint8
	op   cmpOp
	mask uint32
	k    uint32
	rel  bool
}

func (c *transCond) eval(b []byte, _ uint32) verdict {
	if uint64(c.nl) >= uint64(len(b)) {
		return abort
	}
	x := uint32(b[c.nl]&0xf) * 4
	v, ok := load(b, uint64(c.nl)+uint64(c.off+x), c.size)
	if !ok {
		return abort
	}
	if c.op.test(v&c.mask, c.k) {
		return accept
	}
	return reject
}

func (c *transCond) String() string {
	return fmt.Sprintf("[tp(%d)+%d:%d]&%#x%s%#x", c.nl, c.off, c.size, c.mask, opNames[c.op], c.k)
}

// afCond matches the 4-byte address family of a NULL link-layer header,
// which is in the capturing host's byte order: either order is taken.
type afCond struct{ af uint32 }

// nullAF reads the address family of a NULL header.
func nullAF(b []byte) (uint32, bool) {
	v, ok := load(b, 0, 4)
	if v&0xffff == 0 {
		v = v>>24 | v>>8&0xff00
	}
	return v, ok
}

func (c *afCond) eval(b []byte, _ uint32) verdict {
	v, ok := nullAF(b)
	if !ok {
		return abort
	}
	if v == c.af {
		return accept
	}
	return reject
}

func (c *afCond) String() string { return fmt.Sprintf("af==%d", c.af) }

// bytesCond compares len(want) bytes at off, as libpcap's gen_bcmp: a
// frame too short for the last of them aborts.
type bytesCond struct {
	off  uint32
	want []byte
}

func (c *bytesCond) eval(b []byte, _ uint32) verdict {
	end := uint64(c.off) + uint64(len(c.want))
	if end > uint64(len(b)) {
		return abort
	}
	if string(b[c.off:end]) == string(c.want) {
		return accept
	}
	return reject
}

func (c *bytesCond) String() string { return fmt.Sprintf("[%d:%d]==%x", c.off, len(c.want), c.want) }

// relCond compares two computed values.
type relCond struct {
	op   cmpOp
	a, b val
}

func (c *relCond) eval(b []byte, wire uint32) verdict {
	x, ok := c.a.value(b, wire)
	if !ok {
		return abort
	}
	y, ok := c.b.value(b, wire)
	if !ok {
		return abort
	}
	if c.op.test(x, y) {
		return accept
	}
	return reject
}

func (c *relCond) String() string { return "(" + c.a.String() + opNames[c.op] + c.b.String() + ")" }

// constVal is a number.
type constVal uint32

func (v constVal) value([]byte, uint32) (uint32, bool) { return uint32(v), true }
func (v constVal) String() string                      { return fmt.Sprintf("%#x", uint32(v)) }

// wireLenVal is "len".
type wireLenVal struct{}

func (wireLenVal) value(_ []byte, wire uint32) (uint32, bool) { return wire, true }
func (wireLenVal) String() string                             { return "len" }

// loadVal loads size bytes at base + idx.
type loadVal struct {
	base uint32
	idx  val
	size uint8
}

func (v *loadVal) value(b []byte, wire uint32) (uint32, bool) {
	i, ok := v.idx.value(b, wire)
	if !ok {
		return 0, false
	}
	return load(b, uint64(v.base)+uint64(i), v.size)
}

func (v *loadVal) String() string { return fmt.Sprintf("[%d+%s:%d]", v.base, v.idx, v.size) }

// transLoadVal loads size bytes at nl + (idx + 4*(b[nl]&0xf)), the sum
// in brackets wrapping at 32 bits as BPF's "add x" does.
type transLoadVal struct {
	nl   uint32
	idx  val
	size uint8
}

func (v *transLoadVal) value(b []byte, wire uint32) (uint32, bool) {
	i, ok := v.idx.value(b, wire)
	if !ok || uint64(v.nl) >= uint64(len(b)) {
		return 0, false
	}
	x := uint32(b[v.nl]&0xf) * 4
	return load(b, uint64(v.nl)+uint64(i+x), v.size)
}

func (v *transLoadVal) String() string { return fmt.Sprintf("[tp(%d)+%s:%d]", v.nl, v.idx, v.size) }

// binVal is a BPF ALU operation; op is the token kind of the operator.
type binVal struct {
	op   tokKind
	a, b val
}

func (v *binVal) value(b []byte, wire uint32) (uint32, bool) {
	x, ok := v.a.value(b, wire)
	if !ok {
		return 0, false
	}
	y, ok := v.b.value(b, wire)
	if !ok {
		return 0, false
	}
	return alu(v.op, x, y)
}

func (v *binVal) String() string { return "(" + v.a.String() + arithNames[v.op] + v.b.String() + ")" }

// alu computes x op y as bpf_filter does; ok is false for division or
// modulus by zero, which abort the filter.
func alu(op tokKind, x, y uint32) (uint32, bool) {
	switch op {
	case tPlus:
		return x + y, true
	case tMinus:
		return x - y, true
	case tMul:
		return x * y, true
	case tDiv:
		if y == 0 {
			return 0, false
		}
		return x / y, true
	case tMod:
		if y == 0 {
			return 0, false
		}
		return x % y, true
	case tBitAnd:
		return x & y, true
	case tBitOr:
		return x | y, true
	case tXor:
		return x ^ y, true
	case tLsh:
		if y >= 32 {
			return 0, true
		}
		return x << y, true
	case tRsh:
		if y >= 32 {
			return 0, true
		}
		return x >> y, true
	}
	return 0, false
}

// negVal is "-x" (two's complement).
type negVal struct{ a val }

func (v *negVal) value(b []byte, wire uint32) (uint32, bool) {
	x, ok := v.a.value(b, wire)
	return -x, ok
}

func (v *negVal) String() string { return "-" + v.a.String() }
