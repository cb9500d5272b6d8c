package filter

import (
	"net/netip"
	"regexp"
	"strings"
)

// tokKind is the kind of a lexical token.
type tokKind uint8

const (
	tEOF  tokKind = iota
	tNum          // number, including named constants such as tcp-syn
	tID           // name: host, port, protocol, "4000-5000"; \name escapes keywords
	tHID          // dotted IPv4 address of 2 to 4 parts
	tHID6         // IPv6 address
	tEID          // MAC address
	tAnd          // and &&
	tOr           // or ||
	tNot          // not !
	tLParen
	tRParen
	tLBrack
	tRBrack
	tColon
	tPlus
	tMinus
	tMul
	tDiv
	tMod
	tBitAnd
	tBitOr
	tXor
	tLsh
	tRsh
	tEq // = ==
	tNeq
	tLt
	tLe
	tGt
	tGe
	tSrc
	tDst
	tHost
	tNet
	tMask
	tPort
	tPortrange
	tProto
	tProtochain
	tGateway
	tPname // protocol name (ether, ip, tcp, ...); token.proto says which
	tLess
	tGreater
	tByte
	tBroadcast
	tMulticast
	tLen
	tInbound
	tOutbound
	tIfindex
	tVlan
	tUnsupported // a pcap-filter(7) keyword this package does not implement
)

// token is one lexical token of a filter expression.
type token struct {
	kind  tokKind
	pos   int    // byte offset in the expression
	text  string // source text
	val   string // tID: the name (without a leading backslash)
	num   uint32 // tNum: the value
	proto protoQ // tPname: the protocol
}

// keyword is what a reserved word lexes to.
type keyword struct {
	kind  tokKind
	proto protoQ
}

// keywords are the reserved words of libpcap's scanner.l. Words this
// package does not implement still lex as keywords, so that they are
// reported as unsupported instead of being taken for host names.
var keywords = map[string]keyword{
	"dst": {tDst, 0}, "src": {tSrc, 0},
	"link": {tPname, qLink}, "ether": {tPname, qLink}, "ppp": {tPname, qLink},
	"slip": {tPname, qLink}, "fddi": {tPname, qLink}, "tr": {tPname, qLink},
	"wlan": {tPname, qLink},
	"arp":  {tPname, qARP}, "rarp": {tPname, qRARP}, "ip": {tPname, qIP},
	"sctp": {tPname, qSCTP}, "tcp": {tPname, qTCP}, "udp": {tPname, qUDP},
	"icmp": {tPname, qICMP}, "igmp": {tPname, qIGMP}, "igrp": {tPname, qIGRP},
	"pim": {tPname, qPIM}, "vrrp": {tPname, qVRRP}, "carp": {tPname, qCARP},
	"ip6": {tPname, qIPv6}, "icmp6": {tPname, qICMPv6}, "ah": {tPname, qAH},
	"esp": {tPname, qESP}, "atalk": {tPname, qATALK}, "aarp": {tPname, qAARP},
	"decnet": {tPname, qDECnet}, "lat": {tPname, qLAT}, "sca": {tPname, qSCA},
	"moprc": {tPname, qMOPRC}, "mopdl": {tPname, qMOPDL}, "iso": {tPname, qISO},
	"stp": {tPname, qSTP}, "ipx": {tPname, qIPX}, "netbeui": {tPname, qNetBEUI},
	"host": {tHost, 0}, "net": {tNet, 0}, "mask": {tMask, 0}, "port": {tPort, 0},
	"portrange": {tPortrange, 0}, "proto": {tProto, 0},
	"protochain": {tProtochain, 0}, "gateway": {tGateway, 0},
	"less": {tLess, 0}, "greater": {tGreater, 0}, "byte": {tByte, 0},
	"broadcast": {tBroadcast, 0}, "multicast": {tMulticast, 0},
	"and": {tAnd, 0}, "or": {tOr, 0}, "not": {tNot, 0},
	"len": {tLen, 0}, "length": {tLen, 0},
	"inbound": {tInbound, 0}, "outbound": {tOutbound, 0},
	"ifindex": {tIfindex, 0}, "vlan": {tVlan, 0},
}

// unsupportedKeywords are reserved by libpcap but not implemented here.
var unsupportedKeywords = strings.Fields(`radio es-is esis is-is isis l1 l2 iih
	lsp snp csnp psnp clnp type subtype direction dir address1 addr1 address2
	addr2 address3 addr3 address4 addr4 ra ta mpls pppoed pppoes geneve lane
	llc metac bcc oam oamf4 oamf4ec oamf4sc sc ilmic vpi vci connectmsg
	metaconnect on ifname rset ruleset rnr rulenum srnr subrulenum reason action
	fisu lssu lsu msu hfisu hlssu hmsu sio opc dpc sls hsio hopc hdpc hsls`)

// namedConstants are the numeric names of libpcap's scanner.l.
var namedConstants = map[string]uint32{
	"icmptype": 0, "icmpcode": 1,
	"icmp-echoreply": 0, "icmp-unreach": 3, "icmp-sourcequench": 4,
	"icmp-redirect": 5, "icmp-echo": 8, "icmp-routeradvert": 9,
	"icmp-routersolicit": 10, "icmp-timxceed": 11, "icmp-paramprob": 12,
	"icmp-tstamp": 13, "icmp-tstampreply": 14, "icmp-ireq": 15,
	"icmp-ireqreply": 16, "icmp-maskreq": 17, "icmp-maskreply": 18,
	"icmp6type": 0, "icmp6code": 1,
	"icmp6-destinationunreach": 1, "icmp6-packettoobig": 2,
	"icmp6-timeexceeded": 3, "icmp6-parameterproblem": 4,
	"icmp6-echo": 128, "icmp6-echoreply": 129,
	"icmp6-multicastlistenerquery": 130, "icmp6-multicastlistenerreportv1": 131,
	"icmp6-multicastlistenerdone": 132, "icmp6-routersolicit": 133,
	"icmp6-routeradvert": 134, "icmp6-neighborsolicit": 135,
	"icmp6-neighboradvert": 136, "icmp6-redirect": 137,
	"icmp6-routerrenum": 138, "icmp6-nodeinformationquery": 139,
	"icmp6-nodeinformationresponse":   140,
	"icmp6-ineighbordiscoverysolicit": 141,
	"icmp6-ineighbordiscoveryadvert":  142,
	"icmp6-multicastlistenerreportv2": 143,
	"icmp6-homeagentdiscoveryrequest": 144,
	"icmp6-homeagentdiscoveryreply":   145, "icmp6-mobileprefixsolicit": 146,
	"icmp6-mobileprefixadvert": 147, "icmp6-certpathsolicit": 148,
	"icmp6-certpathadvert": 149, "icmp6-multicastrouteradvert": 151,
	"icmp6-multicastroutersolicit": 152, "icmp6-multicastrouterterm": 153,
	"tcpflags": 13, "tcp-fin": 0x01, "tcp-syn": 0x02, "tcp-rst": 0x04,
	"tcp-push": 0x08, "tcp-ack": 0x10, "tcp-urg": 0x20, "tcp-ece": 0x40,
	"tcp-cwr": 0x80,
}

// The token patterns of libpcap's scanner.l. The lexer takes the longest
// match at each position, and on a tie the rule listed first there:
// keyword, MAC, number, dotted IPv4, IPv6, named constant, name.
const (
	patN = `(?:0[xX][0-9A-Fa-f]+|[0-9]+)`
	patB = `[0-9A-Fa-f][0-9A-Fa-f]?`
	pB2  = `[0-9A-Fa-f]{4}`
)

var (
	reNum   = mustLongest(`^` + patN)
	reHID   = mustLongest(`^(?:` + patN + `\.` + patN + `\.` + patN + `\.` + patN + `|` + patN + `\.` + patN + `\.` + patN + `|` + patN + `\.` + patN + `)`)
	reMAC   = mustLongest(`^(?:` + patB + `(?::` + patB + `){5}|` + patB + `(?:-` + patB + `){5}|` + patB + `(?:\.` + patB + `){5}|` + pB2 + `\.` + pB2 + `\.` + pB2 + `|` + pB2 + pB2 + pB2 + `)`)
	reBogus = mustLongest(`^` + patB + `:+(?:` + patB + `:+)+`)
	reID    = mustLongest(`^[A-Za-z0-9](?:[-_.A-Za-z0-9]*[.A-Za-z0-9])?`)
)

// mustLongest compiles a pattern for leftmost-longest matching, as flex
// matches.
func mustLongest(pat string) *regexp.Regexp {
	re := regexp.MustCompile(pat)
	re.Longest()
	return re
}

// lex splits a filter expression into tokens, ending with tEOF.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for {
		for i < len(src) && strings.IndexByte(" \t\r\n", src[i]) >= 0 {
			i++
		}
		if i == len(src) {
			return append(toks, token{kind: tEOF, pos: i}), nil
		}
		t, err := lexOne(src, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i += len(t.text)
	}
}

// twoCharOps and oneCharOps are the operators, longest first.
var twoCharOps = map[string]tokKind{
	">=": tGe, "<=": tLe, "!=": tNeq, "==": tEq, "<<": tLsh, ">>": tRsh,
	"&&": tAnd, "||": tOr,
}

var oneCharOps = map[byte]tokKind{
	'+': tPlus, '-': tMinus, '*': tMul, '/': tDiv, '%': tMod, ':': tColon,
	'[': tLBrack, ']': tRBrack, '!': tNot, '<': tLt, '>': tGt, '(': tLParen,
	')': tRParen, '&': tBitAnd, '|': tBitOr, '^': tXor, '=': tEq,
}

// lexOne reads the token that starts at src[i].
func lexOne(src string, i int) (token, error) {
	rest := src[i:]
	c := rest[0]
	if c == '\\' {
		n := 1
		for n < len(rest) && strings.IndexByte(" !()\n\t", rest[n]) < 0 {
			n++
		}
		if n == 1 {
			return token{}, errAt(src, token{pos: i, text: `\`}, ErrSyntax, "")
		}
		return token{kind: tID, pos: i, text: rest[:n], val: rest[1:n]}, nil
	}
	if c == ':' {
		if n := ipv6Len(rest); n > 0 {
			return token{kind: tHID6, pos: i, text: rest[:n]}, nil
		}
	}
	isAlnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	if !isAlnum {
		if len(rest) >= 2 {
			if k, ok := twoCharOps[rest[:2]]; ok {
				return token{kind: k, pos: i, text: rest[:2]}, nil
			}
		}
		if k, ok := oneCharOps[c]; ok {
			return token{kind: k, pos: i, text: rest[:1]}, nil
		}
		return token{}, errAt(src, token{pos: i, text: rest[:1]}, ErrSyntax, "illegal character")
	}

	// Candidates in scanner.l's rule order; the first longest one wins.
	idLen := len(reID.FindString(rest))
	cands := []struct {
		kind tokKind
		n    int
	}{
		{tEOF, 0}, // keyword, filled in below
		{tEID, len(reMAC.FindString(rest))},
		{tNum, len(reNum.FindString(rest))},
		{tHID, len(reHID.FindString(rest))},
		{tHID6, ipv6Len(rest)},
		{tUnsupported, len(reBogus.FindString(rest))}, // bogus MAC address
		{tID, idLen},
	}
	word := rest[:idLen]
	_, isKeyword := keywords[word]
	_, isNamed := namedConstants[word]
	if isKeyword || isNamed || isUnsupportedKeyword(word) {
		cands[0].n = idLen
	}
	best := 0
	for k := range cands {
		if cands[k].n > cands[best].n {
			best = k
		}
	}
	n := cands[best].n
	if n == 0 {
		return token{}, errAt(src, token{pos: i, text: rest[:1]}, ErrSyntax, "illegal character")
	}
	t := token{kind: cands[best].kind, pos: i, text: rest[:n]}
	switch {
	case best == 0 && isKeyword:
		kw := keywords[word]
		t.kind, t.proto = kw.kind, kw.proto
	case best == 0 && isNamed:
		t.kind, t.num = tNum, namedConstants[word]
	case best == 0:
		t.kind = tUnsupported
	case t.kind == tUnsupported:
		return token{}, errAt(src, t, ErrInvalid, "bogus ethernet address %s", t.text)
	case t.kind == tNum:
		v, msg := parseNum(t.text)
		if msg != "" {
			return token{}, errAt(src, t, ErrInvalid, "number %s %s", t.text, msg)
		}
		t.num = v
	case t.kind == tID:
		t.val = t.text
	}
	return t, nil
}

func isUnsupportedKeyword(w string) bool {
	for _, k := range unsupportedKeywords {
		if k == w {
			return true
		}
	}
	return false
}

// ipv6Len returns the length of the longest IPv6 address at the start of s.
func ipv6Len(s string) int {
	n := 0
	for n < len(s) && n < 64 && strings.IndexByte("0123456789abcdefABCDEF:.", s[n]) >= 0 {
		n++
	}
	if strings.IndexByte(s[:n], ':') < 0 {
		return 0
	}
	for ; n >= 2; n-- {
		if a, err := netip.ParseAddr(s[:n]); err == nil && a.Is6() && a.Zone() == "" {
			return n
		}
	}
	return 0
}

// parseNum converts a number token as libpcap's stou does: 0x hex, a
// leading 0 octal, otherwise decimal, and at most 32 bits. It returns a
// non-empty message when the number is bad.
func parseNum(s string) (uint32, string) {
	base, digits := uint64(10), s
	switch {
	case len(s) > 1 && (s[1] == 'x' || s[1] == 'X'):
		base, digits = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, digits = 8, s[1:]
	}
	var n uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			d = uint64(c-'A') + 10
		}
		if d >= base {
			return 0, "contains non-octal digit"
		}
		n = n*base + d
		if n > 0xffffffff {
			return 0, "overflows 32 bits"
		}
	}
	return uint32(n), ""
}
