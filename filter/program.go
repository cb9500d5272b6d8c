package filter

import "sort"

// A program is the compiled cond tree laid out as a decision graph, as
// libpcap lays out BPF blocks: every test has a true and a false
// successor; "and", "or" and "not" become edges. The graph is then
// optimized the way libpcap's optimizer (optimize.c) moves branches,
// because that decides which loads a frame cut short still reaches:
//   - a test that an edge on every path to it already settles is jumped
//     over (opt_j, fold_edge), as is a test whose branches meet, or a
//     constant one;
//   - in a chain of "or"ed (or "and"ed) tests, a test of the value the
//     chain's predecessors test is pulled ahead (or_pullup, and_pullup);
//   - a root whose branches meet keeps its loads (opt_root).
//
// So "udp[100] = 1 or udp" accepts a short UDP frame, as libpcap does.
// On whole frames the optimized program and the tree always agree; the
// tests check both that and, through tcpdump, the short-frame answers.

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
	insnConst              // constCond: libpcap's gen_true/gen_false
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
	key    int32  // the tested value, numbered: equal keys, equal values
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
		case insnConst:
			v, ok = 1, true
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
const maxOptimize = 10000

// maxPasses bounds the optimizer's passes. Like libpcap's, the optimizer
// can move branches back and forth for ever; libpcap gives up after 100
// such passes too.
const maxPasses = 100

// builder lays out and optimizes a program.
type builder struct {
	insns []insn
	keys  map[factKey]int32
}

// newProgram builds the optimized program for a cond.
func newProgram(c cond) *program {
	b := &builder{}
	root := b.build(c, termAccept, termReject)
	if len(b.insns) <= maxOptimize {
		saved := append([]insn(nil), b.insns...)
		opt := b.optimize(root)
		if b.cyclic(opt) {
			// Never expected; the unoptimized program is safe.
			b.insns = saved
		} else {
			root = opt
		}
	}
	return b.compact(root)
}

// build lays out c with successors t (true) and f (false) and returns
// its entry.
func (b *builder) build(c cond, t, f int32) int32 {
	switch c := c.(type) {
	case constCond:
		k := uint32(0)
		if c {
			k = 1
		}
		return b.add(insn{kind: insnConst, op: opEq, mask: 0xffffffff, k: k, jt: t, jf: f})
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
	k := factKey{kind: in.kind, rel: in.rel, nl: in.nl, off: in.off, size: in.size, mask: in.mask, expr: in.expr}
	if in.kind == insnConst {
		k.off = in.k // gen_true and gen_false load different constants
	}
	if b.keys == nil {
		b.keys = map[factKey]int32{}
	}
	id, ok := b.keys[k]
	if !ok {
		id = int32(len(b.keys))
		b.keys[k] = id
	}
	in.key = id
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

// key returns the number of the value insn i tests.
func (b *builder) key(i int32) int32 { return b.insns[i].key }

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

// edges is a set of edges kept as a list that shares its tail: the edges
// every path from the root to some point takes (libpcap's edge
// dominators), the nearest first. An edge id is 2*i for the true branch
// of insn i and 2*i+1 for its false branch.
type edges struct {
	edge  int32
	depth int
	next  *edges
}

func (l *edges) push(e int32) *edges {
	d := 1
	if l != nil {
		d = l.depth + 1
	}
	return &edges{edge: e, depth: d, next: l}
}

func (l *edges) len() int {
	if l == nil {
		return 0
	}
	return l.depth
}

// common returns the edges both lists hold: their shared tail.
func common(a, b *edges) *edges {
	for a.len() > b.len() {
		a = a.next
	}
	for b.len() > a.len() {
		b = b.next
	}
	for a != b {
		a, b = a.next, b.next
	}
	return a
}

func edgeOf(i int32, sense bool) int32 {
	if sense {
		return 2 * i
	}
	return 2*i + 1
}

// dominators returns, for each reachable insn, the edges that every path
// from the root to it takes.
func (b *builder) dominators(order []int32) []*edges {
	dom := make([]*edges, len(b.insns))
	seen := make([]bool, len(b.insns))
	for _, i := range order {
		for _, sense := range []bool{true, false} {
			j := b.insns[i].jt
			if !sense {
				j = b.insns[i].jf
			}
			if j < 0 {
				continue
			}
			in := dom[i].push(edgeOf(i, sense))
			if !seen[j] {
				dom[j], seen[j] = in, true
			} else {
				dom[j] = common(dom[j], in)
			}
		}
	}
	return dom
}

// domTree is the dominator tree of the reachable insns, numbered so that
// "d dominates x" is an interval test.
type domTree struct {
	in, out []int32
}

// dominates reports whether insn d is on every path to insn x.
func (t *domTree) dominates(d, x int32) bool {
	return t.in[d] >= 0 && t.in[x] >= 0 && t.in[d] <= t.in[x] && t.out[x] <= t.out[d]
}

// nodeDominators returns the dominator tree of the reachable insns.
func (b *builder) nodeDominators(order []int32) *domTree {
	dom := make([]*edges, len(b.insns)) // insns on every path to i, i first
	pre := make([]*edges, len(b.insns))
	seen := make([]bool, len(b.insns))
	for _, i := range order {
		dom[i] = pre[i].push(i) // every predecessor came earlier in order
		for _, j := range []int32{b.insns[i].jt, b.insns[i].jf} {
			if j < 0 {
				continue
			}
			if !seen[j] {
				pre[j], seen[j] = dom[i], true
			} else {
				pre[j] = common(pre[j], dom[i])
			}
		}
	}
	children := make(map[int32][]int32, len(order))
	for _, i := range order[1:] {
		parent := order[0]
		if dom[i].next != nil { // nil only if the graph had a loop
			parent = dom[i].next.edge
		}
		children[parent] = append(children[parent], i)
	}
	t := &domTree{in: make([]int32, len(b.insns)), out: make([]int32, len(b.insns))}
	for i := range t.in {
		t.in[i], t.out[i] = -1, -1
	}
	clock := int32(0)
	var walk func(i int32)
	walk = func(i int32) {
		t.in[i] = clock
		clock++
		for _, c := range children[i] {
			walk(c)
		}
		t.out[i] = clock
	}
	walk(order[0])
	return t
}

// levels returns the reachable insns by height above the returns, lowest
// first: the order of libpcap's passes.
func (b *builder) levels(order []int32) []int32 {
	level := make(map[int32]int, len(order))
	height := func(j int32) int {
		if j < 0 {
			return 0
		}
		return level[j]
	}
	for n := len(order) - 1; n >= 0; n-- {
		i := order[n]
		level[i] = 1 + max(height(b.insns[i].jt), height(b.insns[i].jf))
	}
	out := append([]int32(nil), order...)
	sort.SliceStable(out, func(x, y int) bool { return level[out[x]] < level[out[y]] })
	return out
}

// inEdge is a branch into an insn.
type inEdge struct {
	pred  int32
	sense bool
}

func (b *builder) inEdges(order []int32) map[int32][]inEdge {
	in := make(map[int32][]inEdge, len(order))
	for _, i := range order {
		if j := b.insns[i].jt; j >= 0 {
			in[j] = append(in[j], inEdge{i, true})
		}
		if j := b.insns[i].jf; j >= 0 {
			in[j] = append(in[j], inEdge{i, false})
		}
	}
	return in
}

// pullup is libpcap's or_pullup (or true) and and_pullup: in a chain of
// tests below v that share v's true (or: false) successor, a test of the
// value v's predecessors test is moved ahead of the first test of another
// value, so that later threading can settle it.
func (b *builder) pullup(v int32, in map[int32][]inEdge, ndom *domTree, or bool) bool {
	edgesIn := in[v]
	if len(edgesIn) == 0 {
		return false
	}
	val := b.key(edgesIn[0].pred)
	for _, e := range edgesIn[1:] {
		if b.key(e.pred) != val {
			return false
		}
	}
	// along is the branch that continues the chain, shared the one
	// that must be common.
	along := func(i int32) *int32 {
		if or {
			return &b.insns[i].jf
		}
		return &b.insns[i].jt
	}
	shared := func(i int32) int32 {
		if or {
			return b.insns[i].jt
		}
		return b.insns[i].jf
	}
	slot := &b.insns[edgesIn[0].pred].jf
	if edgesIn[0].sense {
		slot = &b.insns[edgesIn[0].pred].jt
	}
	atTop := true
	for {
		d := *slot
		if d < 0 || shared(d) != shared(v) || !ndom.dominates(v, d) {
			return false
		}
		if b.key(d) != val {
			break
		}
		slot = along(d)
		atTop = false
	}
	diff := *slot
	same := along(diff)
	for {
		s := *same
		if s < 0 || shared(s) != shared(v) || !ndom.dominates(v, s) {
			return false
		}
		if b.key(s) == val {
			break
		}
		same = along(s)
	}
	pull := *same
	*same = *along(pull)
	*along(pull) = diff
	if atTop {
		for _, e := range edgesIn {
			if e.sense {
				b.insns[e.pred].jt = pull
			} else {
				b.insns[e.pred].jf = pull
			}
		}
	} else {
		*slot = pull
	}
	return true
}

// fold returns where insn v goes when edge e, taken to reach it, settles
// its test (libpcap's fold_edge): e made the same test on the same value,
// or found the value equal to another constant. Otherwise it returns v.
func (b *builder) fold(v, e int32) int32 {
	p, sense := e/2, e%2 == 0
	kv, kp := b.key(v), b.key(p)
	in, pin := &b.insns[v], &b.insns[p]
	if kv != kp || in.op != pin.op {
		return v
	}
	if in.k == pin.k {
		if sense {
			return in.jt
		}
		return in.jf
	}
	if sense && in.op == opEq {
		return in.jf
	}
	return v
}

// thread follows v past tests that the edges settle, and past tests
// whose two branches meet (libpcap's opt_j).
func (b *builder) thread(v int32, dom *edges) int32 {
	for steps := 0; v >= 0 && steps <= len(b.insns); steps++ {
		in := &b.insns[v]
		if in.jt == in.jf {
			v = in.jt
			continue
		}
		next := v
		for e := dom; e != nil && next == v; e = e.next {
			next = b.fold(v, e.edge)
		}
		if next == v {
			return v
		}
		v = next
	}
	return v
}

// optimize rewires edges until nothing changes and returns the root, in
// the passes of libpcap's opt_loop: per pass, jump threading bottom-up
// (opt_j), then or/and pull-ups (or_pullup, and_pullup).
func (b *builder) optimize(root int32) int32 {
	// A constant test has one way out (libpcap's opt_blk).
	for i := range b.insns {
		if in := &b.insns[i]; in.kind == insnConst {
			if in.k == 1 {
				in.jf = in.jt
			} else {
				in.jt = in.jf
			}
		}
	}
	for pass, changed := 0, true; changed && pass < maxPasses; pass++ {
		changed = false
		order := b.order(root)
		dom := b.dominators(order)
		ndom := b.nodeDominators(order)
		levels := b.levels(order)
		for _, i := range levels {
			for _, sense := range []bool{true, false} {
				succ := &b.insns[i].jt
				if !sense {
					succ = &b.insns[i].jf
				}
				if *succ < 0 {
					continue
				}
				if t := b.thread(*succ, dom[i].push(edgeOf(i, sense))); t != *succ {
					*succ = t
					changed = true
				}
			}
		}
		in := b.inEdges(b.order(root))
		for _, i := range levels {
			if b.pullup(i, in, ndom, true) {
				changed = true
			}
			if b.pullup(i, in, ndom, false) {
				changed = true
			}
		}
	}
	// libpcap's opt_root: follow a root whose branches meet; the first
	// root's loads still run before what is left, unless what is left
	// is a return or the root was a constant (it loads nothing).
	r := root
	for r >= 0 && b.insns[r].jt == b.insns[r].jf {
		r = b.insns[r].jt
	}
	if r < 0 || r == root || b.insns[root].kind == insnConst {
		return r
	}
	b.insns[root].jt, b.insns[root].jf = r, r
	return root
}

// cyclic reports whether a loop is reachable from root.
func (b *builder) cyclic(root int32) bool {
	const (
		unseen = iota
		active
		done
	)
	state := make([]uint8, len(b.insns))
	var visit func(i int32) bool
	visit = func(i int32) bool {
		if i < 0 || state[i] == done {
			return false
		}
		if state[i] == active {
			return true
		}
		state[i] = active
		if visit(b.insns[i].jt) || visit(b.insns[i].jf) {
			return true
		}
		state[i] = done
		return false
	}
	return visit(root)
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
