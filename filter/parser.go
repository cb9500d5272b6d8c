package filter

// The parser follows libpcap's grammar.y, including what its yacc
// conflict resolution makes of it:
//   - "and" and "or" have the same precedence and associate to the left
//     (pcap-filter(7): "Alternation and concatenation have equal
//     precedence"); "not" binds tighter.
//   - An id with no qualifiers after "and"/"or" takes those of the term
//     before it ("host a or b", "port 80 or 81"); after a term that has
//     none (a protocol name, a relation, vlan, ...) it is a syntax error.
//   - In arithmetic, | & << >> + - * / have C's precedence; % and ^ have
//     none in libpcap's grammar, so yacc shifts on them: "a + b % c * d"
//     is "a + (b % (c * d))".

// maxDepth bounds nesting of parentheses and "not"s.
const maxDepth = 200

type parser struct {
	src   string
	toks  []token
	i     int
	depth int
}

// parse returns the syntax tree of src, or nil for an empty expression.
func parse(src string) (expr, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	if p.peek().kind == tEOF {
		return nil, nil
	}
	e, _, err := p.expr(qualUndef)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.syntaxErr(t)
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }

// at returns the token k places ahead (tEOF past the end).
func (p *parser) at(k int) token {
	if p.i+k >= len(p.toks) {
		return p.toks[len(p.toks)-1]
	}
	return p.toks[p.i+k]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) syntaxErr(t token) error {
	if t.kind == tUnsupported {
		return errAt(p.src, t, ErrUnsupported, "%q is not supported", t.text)
	}
	return errAt(p.src, t, ErrSyntax, "")
}

func (p *parser) expect(k tokKind) (token, error) {
	t := p.peek()
	if t.kind != k {
		return t, p.syntaxErr(t)
	}
	return p.next(), nil
}

// enter counts one level of nesting at token t; leave undoes it.
func (p *parser) enter(t token) error {
	p.depth++
	if p.depth > maxDepth {
		return errAt(p.src, t, ErrSyntax, "expression nested too deeply")
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// furthest returns the error that got further into the expression.
func furthest(a, b error) error {
	ea, okA := a.(*Error)
	eb, okB := b.(*Error)
	if okA && okB && eb.Pos > ea.Pos {
		return b
	}
	return a
}

// expr: term { (and|or) (term | id) }. ctx is the qualifier set in force
// before the expression (libpcap's $<blk>0); the returned qual is the one
// an id after it would inherit.
func (p *parser) expr(ctx qual) (expr, qual, error) {
	left, q, err := p.term(ctx)
	if err != nil {
		return nil, q, err
	}
	for {
		op := p.peek()
		if op.kind != tAnd && op.kind != tOr {
			return left, q, nil
		}
		p.next()
		var right expr
		if p.startsID() {
			right, err = p.id(q)
		} else {
			right, q, err = p.term(q)
		}
		if err != nil {
			return nil, q, err
		}
		left = &binExpr{op: op.kind, l: left, r: right}
	}
}

// startsID reports whether the operand after "and"/"or" is a bare id
// (which inherits qualifiers) rather than a term.
func (p *parser) startsID() bool {
	j := p.i
	for p.toks[j].kind == tNot || p.toks[j].kind == tLParen {
		j++
	}
	switch p.toks[j].kind {
	case tHID, tHID6, tEID, tID:
		return true
	case tNum:
		k := j + 1
		for p.toks[k].kind == tRParen {
			k++
		}
		return !isArithOp(p.toks[k].kind) && !isRelop(p.toks[k].kind)
	}
	return false
}

// term: not term | rterm.
func (p *parser) term(ctx qual) (expr, qual, error) {
	if t := p.peek(); t.kind == tNot {
		p.next()
		if err := p.enter(t); err != nil {
			return nil, ctx, err
		}
		x, q, err := p.term(ctx)
		p.leave()
		if err != nil {
			return nil, q, err
		}
		return &notExpr{x: x}, q, nil
	}
	return p.rterm(ctx)
}

func isHeadStart(k tokKind) bool {
	switch k {
	case tSrc, tDst, tHost, tNet, tPort, tPortrange, tProto, tProtochain, tGateway:
		return true
	}
	return false
}

// rterm: head id | ( expr ) | pname | arth relop arth | other.
func (p *parser) rterm(ctx qual) (expr, qual, error) {
	t := p.peek()
	switch t.kind {
	case tLParen:
		// Either "( expr )" or a relation that starts with "(".
		start := p.i
		rel, relErr := p.relation()
		if relErr == nil {
			return rel, qualUndef, nil
		}
		p.i = start
		p.next()
		if err := p.enter(t); err != nil {
			return nil, ctx, err
		}
		e, _, err := p.expr(ctx)
		if err == nil {
			_, err = p.expect(tRParen)
		}
		p.leave()
		if err != nil {
			return nil, ctx, furthest(err, relErr)
		}
		return e, ctx, nil
	case tPname:
		switch nt := p.at(1); {
		case nt.kind == tLBrack:
			e, err := p.relation()
			return e, qualUndef, err
		case isHeadStart(nt.kind):
			return p.headID()
		case nt.kind == tBroadcast || nt.kind == tMulticast:
			p.next()
			return &otherExpr{tok: p.next(), proto: t.proto}, qualUndef, nil
		}
		p.next()
		return &abbrevExpr{proto: t.proto, tok: t}, qualUndef, nil
	case tSrc, tDst, tHost, tNet, tPort, tPortrange, tProto, tProtochain, tGateway:
		return p.headID()
	case tBroadcast, tMulticast, tInbound, tOutbound:
		p.next()
		return &otherExpr{tok: t}, qualUndef, nil
	case tLess, tGreater, tIfindex:
		p.next()
		n, err := p.expect(tNum)
		if err != nil {
			return nil, qualUndef, err
		}
		return &otherExpr{tok: t, hasN: true, n: n.num}, qualUndef, nil
	case tVlan:
		p.next()
		e := &otherExpr{tok: t}
		if k := p.peek().kind; k == tNum || k == tLParen {
			n, err := p.pnum()
			if err != nil {
				return nil, qualUndef, err
			}
			e.hasN, e.n = true, n.num
		}
		return e, qualUndef, nil
	case tByte:
		p.next()
		n, err := p.expect(tNum)
		if err != nil {
			return nil, qualUndef, err
		}
		op := p.peek()
		switch op.kind {
		case tBitAnd, tBitOr, tLt, tGt, tEq:
			p.next()
		default:
			return nil, qualUndef, p.syntaxErr(op)
		}
		m, err := p.expect(tNum)
		if err != nil {
			return nil, qualUndef, err
		}
		return &otherExpr{tok: t, hasN: true, n: n.num, op: op.kind, opTok: op, m: m.num}, qualUndef, nil
	case tNum, tLen, tMinus:
		e, err := p.relation()
		return e, qualUndef, err
	}
	return nil, ctx, p.syntaxErr(t)
}

// headID parses "head id" and returns the id with the head's qualifiers.
func (p *parser) headID() (expr, qual, error) {
	q, err := p.head()
	if err != nil {
		return nil, q, err
	}
	e, err := p.id(q)
	return e, q, err
}

// head: [pname] [dqual] [aqual] | [pname] (proto | protochain | gateway).
func (p *parser) head() (qual, error) {
	var q qual
	if p.peek().kind == tPname {
		q.proto = p.next().proto
	}
	switch t := p.peek(); t.kind {
	case tSrc, tDst:
		p.next()
		q.dir = dSrc
		other := tDst
		if t.kind == tDst {
			q.dir, other = dDst, tSrc
		}
		if c := p.peek(); c.kind == tOr || c.kind == tAnd {
			p.next()
			if _, err := p.expect(other); err != nil {
				return q, err
			}
			q.dir = dSrcOrDst
			if c.kind == tAnd {
				q.dir = dSrcAndDst
			}
		}
		switch p.peek().kind {
		case tHost:
			q.addr = aHost
		case tNet:
			q.addr = aNet
		case tPort:
			q.addr = aPort
		case tPortrange:
			q.addr = aPortrange
		default:
			return q, nil
		}
		p.next()
	case tHost, tNet, tPort, tPortrange, tProto, tProtochain, tGateway:
		p.next()
		q.addr = map[tokKind]addrQ{tHost: aHost, tNet: aNet, tPort: aPort,
			tPortrange: aPortrange, tProto: aProto, tProtochain: aProtochain,
			tGateway: aGateway}[t.kind]
	}
	return q, nil
}

// id: not id | ( pid ) | pnum | nid, with qualifiers q.
func (p *parser) id(q qual) (expr, error) {
	switch t := p.peek(); t.kind {
	case tNot:
		p.next()
		if err := p.enter(t); err != nil {
			return nil, err
		}
		x, err := p.id(q)
		p.leave()
		if err != nil {
			return nil, err
		}
		return &notExpr{x: x}, nil
	case tLParen:
		p.next()
		if err := p.enter(t); err != nil {
			return nil, err
		}
		e, err := p.pid(q)
		if err == nil {
			_, err = p.expect(tRParen)
		}
		p.leave()
		return e, err
	}
	return p.value(q)
}

// pid: a list of ids joined by and/or inside parentheses. As in libpcap,
// only a parenthesized number may open it with a parenthesis.
func (p *parser) pid(q qual) (expr, error) {
	var left expr
	if p.peek().kind == tLParen {
		n, err := p.pnum()
		if err != nil {
			return nil, err
		}
		if q.undef {
			return nil, p.syntaxErr(n)
		}
		left = &primExpr{q: q, kind: vNum, tok: n, num: n.num}
	} else {
		var err error
		if left, err = p.id(q); err != nil {
			return nil, err
		}
	}
	for {
		op := p.peek()
		if op.kind != tAnd && op.kind != tOr {
			return left, nil
		}
		p.next()
		right, err := p.id(q)
		if err != nil {
			return nil, err
		}
		left = &binExpr{op: op.kind, l: left, r: right}
	}
}

// pnum: NUM | ( pnum ). It returns the number token.
func (p *parser) pnum() (token, error) {
	t := p.peek()
	if t.kind != tLParen {
		return p.expect(tNum)
	}
	p.next()
	if err := p.enter(t); err != nil {
		return t, err
	}
	n, err := p.pnum()
	if err == nil {
		_, err = p.expect(tRParen)
	}
	p.leave()
	return n, err
}

// value parses one address, number or name with qualifiers q.
func (p *parser) value(q qual) (expr, error) {
	t := p.peek()
	e := &primExpr{q: q, tok: t}
	switch t.kind {
	case tNum:
		p.next()
		e.kind, e.num = vNum, t.num
	case tHID:
		p.next()
		e.kind = vHID
		switch p.peek().kind {
		case tDiv:
			p.next()
			n, err := p.expect(tNum)
			if err != nil {
				return nil, err
			}
			e.kind, e.num = vHIDLen, n.num
		case tMask:
			p.next()
			m, err := p.expect(tHID)
			if err != nil {
				return nil, err
			}
			e.kind, e.mask = vHIDMask, m.text
		}
	case tHID6:
		p.next()
		e.kind, e.num = vHID6, 128
		if p.peek().kind == tDiv {
			p.next()
			n, err := p.expect(tNum)
			if err != nil {
				return nil, err
			}
			e.kind, e.num = vHID6Len, n.num
		}
	case tEID:
		p.next()
		e.kind = vEID
	case tID:
		p.next()
		e.kind = vID
	default:
		return nil, p.syntaxErr(t)
	}
	if q.undef {
		// libpcap: an id with no qualifier to give it a meaning.
		return nil, p.syntaxErr(t)
	}
	return e, nil
}

func isRelop(k tokKind) bool {
	switch k {
	case tEq, tNeq, tLt, tLe, tGt, tGe:
		return true
	}
	return false
}

func isArithOp(k tokKind) bool {
	switch k {
	case tPlus, tMinus, tMul, tDiv, tMod, tBitAnd, tBitOr, tXor, tLsh, tRsh:
		return true
	}
	return false
}

// relation: arth relop arth.
func (p *parser) relation() (expr, error) {
	l, err := p.arith()
	if err != nil {
		return nil, err
	}
	op := p.peek()
	if !isRelop(op.kind) {
		return nil, p.syntaxErr(op)
	}
	p.next()
	r, err := p.arith()
	if err != nil {
		return nil, err
	}
	return &relExpr{op: op.kind, l: l, r: r, tok: op}, nil
}

// arithPrec is the yacc precedence of a binary operator; 0 means none.
func arithPrec(k tokKind) int {
	switch k {
	case tBitOr:
		return 1
	case tBitAnd:
		return 2
	case tLsh, tRsh:
		return 3
	case tPlus, tMinus:
		return 4
	case tMul, tDiv:
		return 5
	}
	return 0 // tMod, tXor
}

type arithOp struct {
	tok   token
	unary bool
}

// reduceBefore reports whether yacc reduces the operator on top of the
// stack before shifting the binary operator la. Unary minus binds
// tightest; with no precedence on either side yacc shifts.
func reduceBefore(top arithOp, la tokKind) bool {
	pl := arithPrec(la)
	if pl == 0 {
		return false
	}
	if top.unary {
		return true
	}
	pt := arithPrec(top.tok.kind)
	return pt != 0 && pt >= pl
}

// arith parses an arithmetic expression by operator precedence.
func (p *parser) arith() (arith, error) {
	var vals []arith
	var ops []arithOp
	reduce := func() {
		o := ops[len(ops)-1]
		ops = ops[:len(ops)-1]
		n := len(vals)
		if o.unary {
			vals[n-1] = &negArith{x: vals[n-1]}
			return
		}
		vals = append(vals[:n-2], &binArith{op: o.tok.kind, l: vals[n-2], r: vals[n-1], tok: o.tok})
	}
	for {
		for t := p.peek(); t.kind == tMinus; t = p.peek() {
			if err := p.enter(t); err != nil {
				return nil, err
			}
			defer p.leave()
			ops = append(ops, arithOp{tok: p.next(), unary: true})
		}
		v, err := p.arithPrimary()
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		t := p.peek()
		if !isArithOp(t.kind) {
			break
		}
		for len(ops) > 0 && reduceBefore(ops[len(ops)-1], t.kind) {
			reduce()
		}
		ops = append(ops, arithOp{tok: p.next()})
	}
	for len(ops) > 0 {
		reduce()
	}
	return vals[0], nil
}

// arithPrimary: NUM | len | ( arth ) | pname [ arth [: NUM] ].
func (p *parser) arithPrimary() (arith, error) {
	t := p.peek()
	switch t.kind {
	case tNum:
		p.next()
		return &numArith{v: t.num}, nil
	case tLen:
		p.next()
		return &lenArith{}, nil
	case tLParen:
		p.next()
		if err := p.enter(t); err != nil {
			return nil, err
		}
		defer p.leave()
		a, err := p.arith()
		if err != nil {
			return nil, err
		}
		if _, err := p.expect(tRParen); err != nil {
			return nil, err
		}
		return a, nil
	case tPname:
		p.next()
		if _, err := p.expect(tLBrack); err != nil {
			return nil, err
		}
		if err := p.enter(t); err != nil {
			return nil, err
		}
		defer p.leave()
		idx, err := p.arith()
		if err != nil {
			return nil, err
		}
		l := &loadArith{proto: t.proto, idx: idx, size: 1, tok: t}
		if p.peek().kind == tColon {
			p.next()
			n, err := p.expect(tNum)
			if err != nil {
				return nil, err
			}
			l.size, l.sizeTok = n.num, n
		}
		if _, err := p.expect(tRBrack); err != nil {
			return nil, err
		}
		return l, nil
	}
	return nil, p.syntaxErr(t)
}
