package filter

import (
	"strconv"
	"strings"
)

// protoQ is a protocol qualifier (libpcap's Q_LINK, Q_IP, ...).
type protoQ uint8

const (
	qDefault protoQ = iota
	qLink
	qIP
	qARP
	qRARP
	qSCTP
	qTCP
	qUDP
	qICMP
	qIGMP
	qIGRP
	qPIM
	qVRRP
	qCARP
	qATALK
	qAARP
	qDECnet
	qLAT
	qSCA
	qMOPDL
	qMOPRC
	qIPv6
	qICMPv6
	qAH
	qESP
	qISO
	qSTP
	qIPX
	qNetBEUI
)

var protoNames = [...]string{
	qDefault: "", qLink: "ether", qIP: "ip", qARP: "arp", qRARP: "rarp",
	qSCTP: "sctp", qTCP: "tcp", qUDP: "udp", qICMP: "icmp", qIGMP: "igmp",
	qIGRP: "igrp", qPIM: "pim", qVRRP: "vrrp", qCARP: "carp", qATALK: "atalk",
	qAARP: "aarp", qDECnet: "decnet", qLAT: "lat", qSCA: "sca", qMOPDL: "mopdl",
	qMOPRC: "moprc", qIPv6: "ip6", qICMPv6: "icmp6", qAH: "ah", qESP: "esp",
	qISO: "iso", qSTP: "stp", qIPX: "ipx", qNetBEUI: "netbeui",
}

func (p protoQ) String() string { return protoNames[p] }

// dirQ is a direction qualifier.
type dirQ uint8

const (
	dDefault dirQ = iota
	dSrc
	dDst
	dSrcOrDst
	dSrcAndDst
)

var dirNames = [...]string{"", "src", "dst", "src or dst", "src and dst"}

// addrQ is an address-type qualifier.
type addrQ uint8

const (
	aDefault addrQ = iota
	aHost
	aNet
	aPort
	aPortrange
	aGateway
	aProto
	aProtochain
)

var addrNames = [...]string{"", "host", "net", "port", "portrange", "gateway", "proto", "protochain"}

// qual is the qualifier set that applies to an id. undef marks libpcap's
// "qerr": an id that follows a term without qualifiers has no meaning.
type qual struct {
	proto protoQ
	dir   dirQ
	addr  addrQ
	undef bool
}

// qualUndef is libpcap's qerr.
var qualUndef = qual{undef: true}

func (q qual) String() string {
	var w []string
	for _, s := range []string{q.proto.String(), dirNames[q.dir], addrNames[q.addr]} {
		if s != "" {
			w = append(w, s)
		}
	}
	return strings.Join(w, " ")
}

// expr is a boolean node of the syntax tree. String gives a fully
// parenthesized form that shows precedence and qualifier inheritance.
type expr interface{ String() string }

// binExpr is "l and r" or "l or r" (op is tAnd or tOr).
type binExpr struct {
	op   tokKind
	l, r expr
}

func (e *binExpr) String() string {
	op := " and "
	if e.op == tOr {
		op = " or "
	}
	return "(" + e.l.String() + op + e.r.String() + ")"
}

// notExpr is "not x".
type notExpr struct{ x expr }

func (e *notExpr) String() string { return "(not " + e.x.String() + ")" }

// valKind is the lexical kind of an id.
type valKind uint8

const (
	vNum     valKind = iota // 80
	vHID                    // 10.1 or 10.1.2.3
	vHIDLen                 // 10.1.0.0/16
	vHIDMask                // 10.1.0.0 mask 255.255.0.0
	vHID6                   // fe80::1
	vHID6Len                // fe80::/64
	vEID                    // 00:11:22:33:44:55
	vID                     // name
)

// primExpr is an id with the qualifiers that apply to it, written or
// inherited: "tcp dst port 80", or the "81" of "port 80 or 81".
type primExpr struct {
	q    qual
	kind valKind
	tok  token  // the id token
	num  uint32 // vNum value; vHIDLen and vHID6Len prefix length
	mask string // vHIDMask mask text
}

func (e *primExpr) String() string {
	v := e.tok.text
	switch e.kind {
	case vNum:
		v = strconv.FormatUint(uint64(e.num), 10)
	case vHIDLen, vHID6Len:
		v += "/" + strconv.FormatUint(uint64(e.num), 10)
	case vHIDMask:
		v += " mask " + e.mask
	}
	if s := e.q.String(); s != "" {
		return s + " " + v
	}
	return v
}

// abbrevExpr is a protocol name alone: "tcp", "ip6", "arp".
type abbrevExpr struct {
	proto protoQ
	tok   token
}

func (e *abbrevExpr) String() string { return e.proto.String() }

// relExpr is "arith relop arith". op is tEq, tNeq, tLt, tLe, tGt or tGe.
type relExpr struct {
	op   tokKind
	l, r arith
	tok  token
}

var relNames = map[tokKind]string{tEq: "=", tNeq: "!=", tLt: "<", tLe: "<=", tGt: ">", tGe: ">="}

func (e *relExpr) String() string {
	return "(" + e.l.String() + " " + relNames[e.op] + " " + e.r.String() + ")"
}

// otherExpr is one of libpcap's "other" primitives: less, greater, vlan,
// broadcast, multicast, inbound, outbound, ifindex, byte.
type otherExpr struct {
	tok   token   // the keyword
	proto protoQ  // broadcast, multicast: the protocol qualifier
	hasN  bool    // a number was given
	n     uint32  // less/greater/vlan/ifindex/byte number
	op    tokKind // byte: the operator
	m     uint32  // byte: the operand
	opTok token   // byte: the operator token
}

func (e *otherExpr) String() string {
	s := e.tok.text
	if e.proto != qDefault {
		s = e.proto.String() + " " + s
	}
	if e.hasN {
		s += " " + strconv.FormatUint(uint64(e.n), 10)
	}
	if e.tok.kind == tByte {
		s += " " + e.opTok.text + " " + strconv.FormatUint(uint64(e.m), 10)
	}
	return s
}

// arith is a node of an arithmetic expression.
type arith interface{ String() string }

// numArith is a number.
type numArith struct{ v uint32 }

func (a *numArith) String() string { return strconv.FormatUint(uint64(a.v), 10) }

// lenArith is "len": the length of the packet on the wire.
type lenArith struct{}

func (*lenArith) String() string { return "len" }

// loadArith is "proto[idx:size]".
type loadArith struct {
	proto   protoQ
	idx     arith
	size    uint32
	tok     token // the protocol name
	sizeTok token // the size number, if written
}

func (a *loadArith) String() string {
	return a.proto.String() + "[" + a.idx.String() + ":" + strconv.FormatUint(uint64(a.size), 10) + "]"
}

// binArith is "l op r".
type binArith struct {
	op   tokKind
	l, r arith
	tok  token
}

var arithNames = map[tokKind]string{
	tPlus: "+", tMinus: "-", tMul: "*", tDiv: "/", tMod: "%", tBitAnd: "&",
	tBitOr: "|", tXor: "^", tLsh: "<<", tRsh: ">>",
}

func (a *binArith) String() string {
	return "(" + a.l.String() + " " + arithNames[a.op] + " " + a.r.String() + ")"
}

// negArith is "-x".
type negArith struct{ x arith }

func (a *negArith) String() string { return "(-" + a.x.String() + ")" }
