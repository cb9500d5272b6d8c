package filter

import (
	"fmt"
	"sort"
)

// A program is the compiled cond tree laid out as a decision graph, as
// libpcap lays out BPF blocks: every test has a true and a false
// successor, "and"/"or"/"not" become edges. The graph is then optimized
// the way libpcap's optimizer does, because that decides which loads a
// frame cut short still reaches: a test whose outcome an earlier test
// already settles is jumped over, and so is a test whose two branches
// end up in the same place. Without this, "udp[100] = 1 or udp" would
// reject a short UDP frame that libpcap accepts.

// Terminal successors.
const (
	termReject int32 = -1
	termAccept int32 = -2
)

// insn kinds.
const (
	insnField uint8 = iota // fieldCond
	insnTrans              // transCond
	insnVal                // relCond: a op b, or a op k when b is nil
	insnAF                 // afCond
)

// insn is one test of a program: (value & mask) op k.
type insn struct {
	kind   uint8
	size   uint8
	rel    bool // fieldCond/transCond from a relation
	op     cmpOp
	off    uint32
	nl     uint32
	mask   uint32
	k      uint32
	a, b   val
	expr   string // insnVal: what a and b compute, for facts
	jt, jf int32
}

// program is a decision graph; root may be a terminal.
type program struct {
	insns []insn
	root  int32
}

// run evaluates the program on a frame. It allocates nothing.
func (p *program) run(b []byte, wire uint32) bool {
	i := p.root
	for i >= 0 {
		in := &p.insns[i]
		var v uint32
		var ok bool
		switch in.kind {
		case insnField:
			v, ok = load(b, uint64(in.off), in.size)
		case insnTrans:
			if uint64(in.nl) < uint64(len(b)) {
				x := uint32(b[in.nl]&0xf) * 4
				v, ok = load(b, uint64(in.nl)+uint64(in.off+x), in.size)
			}
		case insnAF:
			v, ok = nullAF(b)
		default:
			v, ok = in.a.value(b, wire)
		}
		k := in.k
		if ok && in.b != nil {
			k, ok = in.b.value(b, wire)
		}
		if !ok {
			// BPF: a load out of bounds, or a division by zero,
			// rejects the packet.
			return false
		}
		if in.op.test(v&in.mask, k) {
			i = in.jt
		} else {
			i = in.jf
		}
	}
	return i == termAccept
}

// factKey identifies the value a test looks at, as libpcap's value
// numbering does: the same load with the same mask.
type factKey struct {
	kind uint8
	rel  bool
	nl   uint32
	off  uint32
	size uint8
	mask uint32
	expr string
}

// maxOptimize bounds the graph size the optimizer works on; larger
// programs run unoptimized (they still match the same full frames).
const maxOptimize = 4000

// builder lays out and optimizes a program.
type builder struct {
	insns []insn
}

// newProgram builds the optimized program for a cond.
func newProgram(c cond) *program {
	b := &builder{}
	root := b.build(c, termAccept, termReject)
	if len(b.insns) <= maxOptimize {
		root = b.optimize(root)
	}
	return b.compact(root)
}

// build lays out c with successors t (true) and f (false) and returns
// its entry.
func (b *builder) build(c cond, t, f int32) int32 {
	switch c := c.(type) {
	case constCond:
		if c {
			return t
		}
		return f
	case *andCond:
		return b.build(c.a, b.build(c.b, t, f), f)
	case *orCond:
		return b.build(c.a, t, b.build(c.b, t, f))
	case *notCond:
		return b.build(c.a, f, t)
	case *bytesCond:
		return b.build(c.expand(), t, f)
	case *fieldCond:
		return b.add(insn{kind: insnField, size: c.size, rel: c.rel, op: c.op, off: c.off, mask: c.mask, k: c.k, jt: t, jf: f})
	case *transCond:
		return b.add(insn{kind: insnTrans, size: c.size, rel: c.rel, op: c.op, off: c.off, nl: c.nl, mask: c.mask, k: c.k, jt: t, jf: f})
	case *afCond:
		return b.add(insn{kind: insnAF, op: opEq, mask: 0xffffffff, k: c.af, jt: t, jf: f})
	case *relCond:
		in := insn{kind: insnVal, op: c.op, mask: 0xffffffff, a: c.a, jt: t, jf: f}
		in.expr = c.a.String()
		if k, ok := c.b.(constVal); ok {
			in.k = uint32(k)
		} else {
			in.b = c.b
			in.expr += " ? " + c.b.String()
		}
		return b.add(in)
	}
	panic("filter: unknown cond")
}

func (b *builder) add(in insn) int32 {
	b.insns = append(b.insns, in)
	return int32(len(b.insns) - 1)
}

// expand splits a byte-string compare into the word, half-word and byte
// tests libpcap's gen_bcmp emits, last bytes first.
func (c *bytesCond) expand() cond {
	var r cond
	size := uint32(len(c.want))
	for size >= 4 {
		w := be32(c.want[size-4:])
		r = and(r, &fieldCond{off: c.off + size - 4, size: 4, op: opEq, mask: 0xffffffff, k: w})
		size -= 4
	}
	for size >= 2 {
		h := uint32(c.want[size-2])<<8 | uint32(c.want[size-1])
		r = and(r, &fieldCond{off: c.off + size - 2, size: 2, op: opEq, mask: 0xffffffff, k: h})
		size -= 2
	}
	if size > 0 {
		r = and(r, &fieldCond{off: c.off, size: 1, op: opEq, mask: 0xffffffff, k: uint32(c.want[0])})
	}
	return r
}

// key returns the value tested by insn i, if it can carry facts.
func (b *builder) key(i int32) (factKey, bool) {
	in := &b.insns[i]
	return factKey{kind: in.kind, rel: in.rel, nl: in.nl, off: in.off, size: in.size, mask: in.mask, expr: in.expr}, true
}

// order returns the insns reachable from root, parents before children.
func (b *builder) order(root int32) []int32 {
	seen := make([]bool, len(b.insns))
	var post []int32
	var visit func(i int32)
	visit = func(i int32) {
		if i < 0 || seen[i] {
			return
		}
		seen[i] = true
		visit(b.insns[i].jt)
		visit(b.insns[i].jf)
		post = append(post, i)
	}
	visit(root)
	for l, r := 0, len(post)-1; l < r; l, r = l+1, r-1 {
		post[l], post[r] = post[r], post[l]
	}
	return post
}

// A fact is what the tests taken so far tell about a value: the outcome
// of one test, or (after "== k" held) the constants the value can be.
type fact struct {
	key   factKey
	isSet bool
	op    cmpOp
	k     uint32
	val   bool     // outcome of "key op k"
	set   []uint32 // isSet: the possible values
}

// edgeFacts returns the facts after taking insn p's branch sense.
func (b *builder) edgeFacts(in []fact, p int32, sense bool) []fact {
	key, _ := b.key(p)
	pin := &b.insns[p]
	out := make([]fact, 0, len(in)+2)
	for _, f := range in {
		if f.key == key && f.isSet && pin.op == opEq && sense {
			continue // replaced below
		}
		out = append(out, f)
	}
	out = append(out, fact{key: key, op: pin.op, k: pin.k, val: sense})
	if pin.op == opEq && sense {
		out = append(out, fact{key: key, isSet: true, set: []uint32{pin.k}})
	}
	return out
}

// meet keeps what holds on both of two ways into an insn.
func meet(a, b []fact) []fact {
	var out []fact
	for _, fa := range a {
		for _, fb := range b {
			if fa.key != fb.key || fa.isSet != fb.isSet {
				continue
			}
			if fa.isSet {
				// libpcap knows only what every way in knows (edge
				// dominators): the same constant, not one of several.
				if fmt.Sprint(fa.set) == fmt.Sprint(fb.set) {
					out = append(out, fa)
				}
				break
			}
			if fa.op == fb.op && fa.k == fb.k && fa.val == fb.val {
				out = append(out, fa)
				break
			}
		}
	}
	return out
}

func unionSorted(a, b []uint32) []uint32 {
	out := make([]uint32, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// facts returns, for each reachable insn, what holds on every way in.
func (b *builder) facts(order []int32) map[int32][]fact {
	in := make(map[int32][]fact, len(order))
	seen := make(map[int32]bool, len(order))
	for n, i := range order {
		if n == 0 {
			seen[i] = true
		}
		for _, sense := range []bool{true, false} {
			j := b.insns[i].jt
			if !sense {
				j = b.insns[i].jf
			}
			if j < 0 {
				continue
			}
			f := b.edgeFacts(in[i], i, sense)
			if !seen[j] {
				in[j], seen[j] = f, true
			} else {
				in[j] = meet(in[j], f)
			}
		}
	}
	return in
}

// settled reports the outcome of insn v's test if facts settle it, as
// libpcap's fold_edge does: the same test was made, or the value is
// known to be one of some constants.
func (b *builder) settled(v int32, facts []fact) (outcome, known bool) {
	key, _ := b.key(v)
	in := &b.insns[v]
	for _, f := range facts {
		if f.key != key {
			continue
		}
		if !f.isSet && f.op == in.op && f.k == in.k {
			return f.val, true
		}
		if f.isSet && in.op == opEq {
			if len(f.set) == 1 && f.set[0] == in.k {
				return true, true
			}
			k := sort.Search(len(f.set), func(n int) bool { return f.set[n] >= in.k })
			if k == len(f.set) || f.set[k] != in.k {
				return false, true
			}
		}
	}
	return false, false
}

// thread follows v past tests that facts settle, and past tests whose
// branches meet (libpcap's opt_j).
func (b *builder) thread(v int32, facts []fact) int32 {
	for v >= 0 {
		in := &b.insns[v]
		if in.jt == in.jf {
			v = in.jt
			continue
		}
		outcome, known := b.settled(v, facts)
		if !known {
			return v
		}
		if outcome {
			v = in.jt
		} else {
			v = in.jf
		}
	}
	return v
}

// optimize rewires edges until nothing changes and returns the root.
func (b *builder) optimize(root int32) int32 {
	for changed := true; changed; {
		changed = false
		order := b.order(root)
		facts := b.facts(order)
		for _, i := range order {
			for _, sense := range []bool{true, false} {
				succ := &b.insns[i].jt
				if !sense {
					succ = &b.insns[i].jf
				}
				if *succ < 0 {
					continue
				}
				if t := b.thread(*succ, b.edgeFacts(facts[i], i, sense)); t != *succ {
					*succ = t
					changed = true
				}
			}
		}
	}
	// libpcap's opt_root: a root whose branches meet is dropped only if
	// that leaves a bare return; otherwise its loads still run first.
	r := root
	for r >= 0 && b.insns[r].jt == b.insns[r].jf {
		r = b.insns[r].jt
	}
	if r < 0 {
		return r
	}
	return root
}

// compact keeps the reachable insns, renumbered.
func (b *builder) compact(root int32) *program {
	if root < 0 {
		return &program{root: root}
	}
	order := b.order(root)
	index := make(map[int32]int32, len(order))
	for n, i := range order {
		index[i] = int32(n)
	}
	p := &program{insns: make([]insn, len(order))}
	remap := func(j int32) int32 {
		if j < 0 {
			return j
		}
		return index[j]
	}
	for n, i := range order {
		in := b.insns[i]
		in.jt, in.jf = remap(in.jt), remap(in.jf)
		p.insns[n] = in
	}
	p.root = index[root]
	return p
}
