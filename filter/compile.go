package filter

// compiler turns the syntax tree into conds, walking it in textual order
// as libpcap's parser actions run, because "vlan" changes the offsets that
// every later primitive uses.
type compiler struct {
	src         string
	link        linkLayer
	offLinkType uint32 // protocol field, moved 4 bytes on by each "vlan"
	offNet      uint32 // link-layer payload, likewise
	err         error  // the first error, as libpcap stops at the first
	// optErr is an error that libpcap's optimizer, not its parser, finds
	// (division by a folded zero): it counts only if the relation can
	// be reached at all.
	optErr error
}

// compileTree compiles a syntax tree (nil matches everything).
func compileTree(tree expr, src string, linkType uint32) (cond, error) {
	if tree == nil {
		return constCond(true), nil
	}
	c := newCompiler(src, linkType)
	root := c.expr(tree)
	if c.err != nil {
		return nil, c.err
	}
	return root, nil
}

func newCompiler(src string, linkType uint32) *compiler {
	l := linkLayerFor(linkType)
	return &compiler{src: src, link: l, offLinkType: l.offLinkType, offNet: l.offNet}
}

// fail records an error about token t and returns a placeholder.
func (c *compiler) fail(t token, kind error, format string, args ...any) cond {
	if c.err == nil {
		c.err = errAt(c.src, t, kind, format, args...)
	}
	return constCond(false)
}

// and, or and not build conds. Constants stay in the tree as tests of
// their own, as libpcap's gen_true/gen_false blocks do: where they fall
// decides which loads its optimizer keeps, and the program optimizer
// (program.go) does the folding the same way.
func and(a, b cond) cond {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return &andCond{a: a, b: b}
}

func or(a, b cond) cond { return &orCond{a: a, b: b} }

func not(a cond) cond {
	switch a := a.(type) {
	case constCond:
		return !a
	case *notCond:
		return a.a
	}
	return &notCond{a: a}
}

// alwaysFalse reports whether c can never accept a frame.
func alwaysFalse(c cond) bool {
	switch c := c.(type) {
	case constCond:
		return !bool(c)
	case *andCond:
		return alwaysFalse(c.a) || alwaysFalse(c.b)
	case *orCond:
		return alwaysFalse(c.a) && alwaysFalse(c.b)
	case *notCond:
		return alwaysTrue(c.a)
	}
	return false
}

// alwaysTrue reports whether c accepts every frame it does not abort on.
func alwaysTrue(c cond) bool {
	switch c := c.(type) {
	case constCond:
		return bool(c)
	case *andCond:
		return alwaysTrue(c.a) && alwaysTrue(c.b)
	case *orCond:
		return alwaysTrue(c.a) || alwaysTrue(c.b)
	case *notCond:
		return alwaysFalse(c.a)
	}
	return false
}

// expr compiles a boolean node.
func (c *compiler) expr(e expr) cond {
	switch e := e.(type) {
	case *binExpr:
		l := c.expr(e.l)
		r := c.expr(e.r)
		if e.op == tAnd {
			return and(l, r)
		}
		return or(l, r)
	case *notExpr:
		return not(c.expr(e.x))
	case *primExpr:
		return c.prim(e)
	case *abbrevExpr:
		return c.abbrev(e.proto, e.tok)
	case *relExpr:
		return c.relation(e)
	case *otherExpr:
		return c.other(e)
	}
	panic("filter: unknown syntax node")
}

// relation compiles "l relop r": the protocol checks of both sides, then
// the comparison (gen_relation).
func (c *compiler) relation(e *relExpr) cond {
	c.optErr = nil
	l, lchk := c.arith(e.l)
	r, rchk := c.arith(e.r)
	chk := and(lchk, rchk)
	if c.optErr != nil && !alwaysFalse(chk) && c.err == nil {
		c.err = c.optErr
	}
	c.optErr = nil
	var op cmpOp
	neg := false
	switch e.op {
	case tEq:
		op = opEq
	case tNeq:
		op, neg = opEq, true
	case tGt:
		op = opGt
	case tLe:
		op, neg = opGt, true
	case tGe:
		op = opGe
	case tLt:
		op, neg = opGe, true
	}
	cmp := compare(op, l, r)
	if neg {
		cmp = not(cmp)
	}
	return and(chk, cmp)
}

// compare builds "l op r", using a fixed-offset field compare where it
// can; the result is the same, only faster.
func compare(op cmpOp, l, r val) cond {
	rk, rconst := r.(constVal)
	if lk, ok := l.(constVal); ok && rconst {
		return constCond(op.test(uint32(lk), uint32(rk)))
	}
	if !rconst {
		return &relCond{op: op, a: l, b: r}
	}
	mask := uint32(0xffffffff)
	field := l
	if b, ok := l.(*binVal); ok && b.op == tBitAnd {
		if m, ok := b.b.(constVal); ok {
			field, mask = b.a, uint32(m)
		}
	}
	switch f := field.(type) {
	case *loadVal:
		if i, ok := f.idx.(constVal); ok && uint64(f.base)+uint64(i) <= 0xffffffff {
			return &fieldCond{off: f.base + uint32(i), size: f.size, op: op, mask: mask, k: uint32(rk), rel: true}
		}
	case *transLoadVal:
		if i, ok := f.idx.(constVal); ok {
			return &transCond{nl: f.nl, off: uint32(i), size: f.size, op: op, mask: mask, k: uint32(rk), rel: true}
		}
	}
	return &relCond{op: op, a: l, b: r}
}

// arith compiles an arithmetic node into its value and the protocol
// check that must hold before it is computed.
func (c *compiler) arith(a arith) (val, cond) {
	switch a := a.(type) {
	case *numArith:
		return constVal(a.v), nil
	case *lenArith:
		return wireLenVal{}, nil
	case *negArith:
		v, chk := c.arith(a.x)
		if k, ok := v.(constVal); ok {
			return -k, chk
		}
		return &negVal{a: v}, chk
	case *binArith:
		l, lchk := c.arith(a.l)
		// libpcap's gen_arth keeps only the left operand's protocol
		// check: "1 + udp[8] = 2" tests no protocol at all.
		r, _ := c.arith(a.r)
		return c.fold(a, l, r), lchk
	case *loadArith:
		return c.load(a)
	}
	panic("filter: unknown arithmetic node")
}

// fold builds l op r, folding constants and checking divisors and shift
// counts as libpcap's gen_arth and optimizer do.
func (c *compiler) fold(a *binArith, l, r val) val {
	lk, lconst := l.(constVal)
	rk, rconst := r.(constVal)
	// gen_arth checks the first instruction of the right operand, which
	// is "ld #k" when its leftmost leaf is the literal k: so "x / ip[0]"
	// is refused as a division by zero, as by libpcap. Values that only
	// fold to zero are the optimizer's business, which minds them only
	// where the relation can be reached.
	firstK, firstLit := firstLiteral(a.r)
	shift := a.op == tLsh || a.op == tRsh
	switch {
	case a.op == tDiv && firstLit && firstK == 0:
		c.fail(a.tok, ErrInvalid, "division by zero")
		return constVal(0)
	case a.op == tMod && firstLit && firstK == 0:
		c.fail(a.tok, ErrInvalid, "modulus by zero")
		return constVal(0)
	case shift && firstLit && firstK > 31:
		c.fail(a.tok, ErrInvalid, "shift by more than 31 bits")
		return constVal(0)
	}
	optFail := func(msg string) val {
		if c.optErr == nil {
			c.optErr = errAt(c.src, a.tok, ErrInvalid, "%s", msg)
		}
		return constVal(0)
	}
	switch {
	case a.op == tDiv && rconst && rk == 0:
		return optFail("division by zero")
	case a.op == tMod && rconst && rk == 0:
		return optFail("modulus by zero")
	case lconst && rconst:
		v, _ := alu(a.op, uint32(lk), uint32(rk))
		return constVal(v)
	case rconst && rk == 0:
		switch a.op {
		case tMul, tBitAnd:
			return constVal(0)
		case tPlus, tLsh, tRsh, tBitOr, tXor:
			return l
		}
	case rconst && shift && rk > 31:
		return optFail("shift by more than 31 bits")
	case lconst && lk == 0:
		switch a.op {
		case tPlus, tBitOr, tXor:
			return r
		case tMul, tDiv, tMod, tBitAnd, tLsh, tRsh:
			return constVal(0)
		}
	}
	return &binVal{op: a.op, a: l, b: r}
}

// firstLiteral returns the leftmost leaf of an arithmetic expression if
// it is a number: the k of its first BPF instruction "ld #k".
func firstLiteral(a arith) (uint32, bool) {
	for {
		switch x := a.(type) {
		case *numArith:
			return x.v, true
		case *loadArith:
			a = x.idx
		case *binArith:
			a = x.l
		case *negArith:
			a = x.x
		default:
			return 0, false
		}
	}
}

// load compiles "proto[idx:size]" (gen_load).
func (c *compiler) load(a *loadArith) (val, cond) {
	if a.size != 1 && a.size != 2 && a.size != 4 {
		t := a.sizeTok
		if t.text == "" {
			t = a.tok
		}
		c.fail(t, ErrInvalid, "data size must be 1, 2, or 4")
		return constVal(0), nil
	}
	size := uint8(a.size)
	idx, ichk := c.arith(a.idx)
	switch a.proto {
	case qLink:
		return &loadVal{base: 0, idx: idx, size: size}, ichk
	case qIP, qARP, qRARP, qIPv6:
		return &loadVal{base: c.offNet, idx: idx, size: size}, and(ichk, c.abbrev(a.proto, a.tok))
	case qTCP, qUDP, qSCTP, qICMP, qIGMP, qIGRP, qPIM, qVRRP, qCARP:
		chk := and(ichk, and(c.abbrev(a.proto, a.tok), c.ipNotFrag()))
		return &transLoadVal{nl: c.offNet, idx: idx, size: size}, and(c.abbrev(qIP, a.tok), chk)
	case qICMPv6:
		chk := and(and(ichk, c.abbrev(qIPv6, a.tok)), field(c.offNet+6, 1, ipProtoICMPv6Num))
		return &loadVal{base: c.offNet + 40, idx: idx, size: size}, chk
	}
	c.fail(a.tok, ErrUnsupported, "%q is not supported", a.tok.text+"[...]")
	return constVal(0), nil
}

// other compiles less, greater, vlan, broadcast, multicast, inbound,
// outbound, ifindex and byte.
func (c *compiler) other(e *otherExpr) cond {
	switch e.tok.kind {
	case tLess:
		return not(compare(opGt, wireLenVal{}, constVal(e.n)))
	case tGreater:
		return compare(opGe, wireLenVal{}, constVal(e.n))
	case tVlan:
		return c.vlan(e)
	case tBroadcast:
		return c.broadcast(e)
	case tMulticast:
		return c.multicast(e)
	case tInbound, tOutbound:
		return c.inbound(e)
	case tIfindex:
		if c.link.linkType != linkTypeSLL2 {
			return c.fail(e.tok, ErrLinkType, "ifindex not supported on %s", c.link.name)
		}
		return field(4, 4, e.n)
	case tByte:
		switch e.op {
		case tEq:
			return field(e.n, 1, e.m)
		case tLt:
			return not(&fieldCond{off: e.n, size: 1, op: opGe, mask: 0xffffffff, k: e.m})
		case tGt:
			return &fieldCond{off: e.n, size: 1, op: opGt, mask: 0xffffffff, k: e.m}
		}
		return c.fail(e.opTok, ErrUnsupported, "'byte' with %q is not supported", e.opTok.text)
	}
	panic("filter: unknown primitive")
}
