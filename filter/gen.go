package filter

// The generators below follow libpcap's gencode.c function by function
// (gen_linktype, gen_host, gen_port, gen_proto, ...), in the same order
// of tests, so that frames cut short abort at the same places.

// field is "size bytes at off == k".
func field(off uint32, size uint8, k uint32) cond {
	return &fieldCond{off: off, size: size, op: opEq, mask: 0xffffffff, k: k}
}

// fieldOp is "size bytes at off op k".
func fieldOp(off uint32, size uint8, op cmpOp, k uint32) cond {
	return &fieldCond{off: off, size: size, op: op, mask: 0xffffffff, k: k}
}

// mcmp is "(word at off & mask) == k". With mask 0 the optimizer drops
// the load, so it is a constant.
func mcmp(off, k, mask uint32) cond {
	if mask == 0 {
		return constCond(k == 0)
	}
	return &fieldCond{off: off, size: 4, op: opEq, mask: mask, k: k}
}

// snap matches an 802.2 SNAP header with the given OUI and type at off.
func snap(off, oui, ptype uint32) cond {
	return &bytesCond{off: off, want: []byte{0xaa, 0xaa, 0x03,
		byte(oui >> 16), byte(oui >> 8), byte(oui), byte(ptype >> 8), byte(ptype)}}
}

// linktype matches frames whose link layer carries protocol p, an
// Ethernet type or (up to 1500) an 802.2 SAP (gen_linktype).
func (c *compiler) linktype(p uint32, t token) cond {
	switch c.link.kind {
	case linkEthernet:
		return c.etherLinktype(p)
	case linkSLL:
		return c.sllLinktype(p)
	case linkSLL2:
		// libpcap 1.10 compares the protocol field with any value,
		// 802.2 SAPs included.
		return field(c.offLinkType, 2, p)
	case linkRaw:
		switch p {
		case etherTypeIP:
			return &fieldCond{off: 0, size: 1, op: opEq, mask: 0xf0, k: 0x40}
		case etherTypeIPv6:
			return &fieldCond{off: 0, size: 1, op: opEq, mask: 0xf0, k: 0x60}
		}
		return constCond(false)
	case linkIPv4Only:
		return constCond(p == etherTypeIP)
	case linkIPv6Only:
		return constCond(p == etherTypeIPv6)
	case linkNull, linkLoop:
		var afs []uint32
		switch p {
		case etherTypeIP:
			afs = []uint32{afINET}
		case etherTypeIPv6:
			afs = []uint32{afINET6BSD, afINET6FreeBSD, afINET6Darwin}
		}
		if afs == nil {
			return constCond(false)
		}
		var b cond
		for _, af := range afs {
			var t cond = field(0, 4, af)
			if c.link.kind == linkNull {
				// Host byte order of the capturing machine, which
				// the frame alone does not tell: accept either.
				t = &afCond{af: af}
			}
			if b == nil {
				b = t
			} else {
				b = or(b, t)
			}
		}
		return b
	}
	return c.fail(t, ErrLinkType, "protocol filters are not supported on %s", c.link.name)
}

func (c *compiler) etherLinktype(p uint32) cond {
	lt, llc := c.offLinkType, c.offNet
	is8023 := not(fieldOp(lt, 2, opGt, etherMTU))
	switch p {
	case llcSAPISONS, llcSAPIP, llcSAPNetBEUI:
		return and(is8023, field(llc, 2, p<<8|p))
	case llcSAPIPX:
		b := or(field(llc, 1, llcSAPIPX), field(llc, 2, 0xffff))
		b = and(is8023, or(snap(llc, 0, etherTypeIPX), b))
		return or(field(lt, 2, etherTypeIPX), b)
	case etherTypeATalk:
		return or(field(lt, 2, p), and(is8023, snap(llc, 0x080007, p)))
	case etherTypeAARP:
		return or(field(lt, 2, p), and(is8023, snap(llc, 0, p)))
	}
	if p <= etherMTU {
		return and(is8023, field(lt+2, 1, p))
	}
	return field(lt, 2, p)
}

func (c *compiler) sllLinktype(p uint32) cond {
	lt, llc := c.offLinkType, c.offNet
	is8022 := field(lt, 2, sllP8022)
	switch p {
	case llcSAPISONS, llcSAPIP, llcSAPNetBEUI:
		return and(is8022, field(llc, 2, p<<8|p))
	case llcSAPIPX:
		b := and(is8022, or(field(llc, 1, llcSAPIPX), snap(llc, 0, etherTypeIPX)))
		b = or(field(lt, 2, sllP8023), b)
		return or(field(lt, 2, etherTypeIPX), b)
	case etherTypeATalk:
		return or(field(lt, 2, p), and(is8022, snap(llc, 0x080007, p)))
	case etherTypeAARP:
		return or(field(lt, 2, p), and(is8022, snap(llc, 0, p)))
	}
	if p <= etherMTU {
		return and(is8022, field(llc, 1, p))
	}
	return field(lt, 2, p)
}

// ipNotFrag is "not an IPv4 fragment other than the first" (gen_ipfrag).
func (c *compiler) ipNotFrag() cond {
	return not(&fieldCond{off: c.offNet + 6, size: 2, op: opSet, mask: 0x1fff})
}

// abbrev compiles a protocol name used alone (gen_proto_abbrev).
func (c *compiler) abbrev(p protoQ, t token) cond {
	switch p {
	case qSCTP:
		return c.proto(132, qDefault, t)
	case qTCP:
		return c.proto(6, qDefault, t)
	case qUDP:
		return c.proto(17, qDefault, t)
	case qICMP:
		return c.proto(1, qIP, t)
	case qIGMP:
		return c.proto(2, qIP, t)
	case qIGRP:
		return c.proto(9, qIP, t)
	case qPIM:
		return c.proto(103, qDefault, t)
	case qVRRP, qCARP:
		return c.proto(112, qIP, t)
	case qICMPv6:
		return c.proto(58, qIPv6, t)
	case qAH:
		return c.proto(51, qDefault, t)
	case qESP:
		return c.proto(50, qDefault, t)
	case qLink:
		return c.fail(t, ErrSyntax, "link layer applied in wrong context")
	}
	types := map[protoQ]uint32{
		qIP: etherTypeIP, qARP: etherTypeARP, qRARP: etherTypeRARP,
		qIPv6: etherTypeIPv6, qATALK: etherTypeATalk, qAARP: etherTypeAARP,
		qDECnet: etherTypeDECnet, qLAT: etherTypeLAT, qSCA: etherTypeSCA,
		qMOPDL: etherTypeMOPDL, qMOPRC: etherTypeMOPRC, qISO: llcSAPISONS,
		qSTP: llcSAP8021D, qIPX: llcSAPIPX, qNetBEUI: llcSAPNetBEUI,
	}
	return c.linktype(types[p], t)
}

// proto compiles "[p] proto v" (gen_proto).
func (c *compiler) proto(v uint32, p protoQ, t token) cond {
	switch p {
	case qDefault:
		return or(c.proto(v, qIP, t), c.proto(v, qIPv6, t))
	case qLink:
		return c.linktype(v, t)
	case qIP:
		return and(c.linktype(etherTypeIP, t), field(c.offNet+9, 1, v))
	case qIPv6:
		frag := and(field(c.offNet+6, 1, ipProtoFragment), field(c.offNet+40, 1, v))
		return and(c.linktype(etherTypeIPv6, t), or(field(c.offNet+6, 1, v), frag))
	case qARP, qRARP, qLAT, qSCA, qMOPRC, qMOPDL:
		return c.fail(t, ErrInvalid, "%s does not encapsulate another protocol", p)
	case qATALK:
		return c.fail(t, ErrInvalid, "AppleTalk encapsulation is not specifiable")
	case qDECnet:
		return c.fail(t, ErrInvalid, "DECNET encapsulation is not specifiable")
	case qISO:
		return c.fail(t, ErrUnsupported, "'iso proto' is not supported")
	}
	return c.fail(t, ErrInvalid, "'%s proto' is bogus", p)
}

// host compiles an IPv4 host or network (gen_host).
func (c *compiler) host(addr, mask uint32, p protoQ, dir dirQ, isNet bool, t token) cond {
	typ := "host"
	if isNet {
		typ = "net"
	}
	switch p {
	case qDefault:
		b := or(c.hostop(addr, mask, dir, etherTypeIP, 12, 16, t),
			c.hostop(addr, mask, dir, etherTypeARP, 14, 24, t))
		return or(b, c.hostop(addr, mask, dir, etherTypeRARP, 14, 24, t))
	case qIP:
		return c.hostop(addr, mask, dir, etherTypeIP, 12, 16, t)
	case qARP:
		return c.hostop(addr, mask, dir, etherTypeARP, 14, 24, t)
	case qRARP:
		return c.hostop(addr, mask, dir, etherTypeRARP, 14, 24, t)
	case qLink:
		return c.fail(t, ErrInvalid, "link-layer modifier applied to %s", typ)
	case qIPv6:
		return c.fail(t, ErrInvalid, "'ip6' modifier applied to ip %s", typ)
	}
	return c.fail(t, ErrInvalid, "'%s' modifier applied to %s", p, typ)
}

func (c *compiler) hostop(addr, mask uint32, dir dirQ, ethertype, srcOff, dstOff uint32, t token) cond {
	switch dir {
	case dSrc, dDst:
		off := srcOff
		if dir == dDst {
			off = dstOff
		}
		return and(c.linktype(ethertype, t), mcmp(c.offNet+off, addr, mask))
	case dSrcAndDst:
		return and(c.hostop(addr, mask, dSrc, ethertype, srcOff, dstOff, t),
			c.hostop(addr, mask, dDst, ethertype, srcOff, dstOff, t))
	}
	return or(c.hostop(addr, mask, dSrc, ethertype, srcOff, dstOff, t),
		c.hostop(addr, mask, dDst, ethertype, srcOff, dstOff, t))
}

// host6 compiles an IPv6 host or network (gen_host6).
func (c *compiler) host6(addr, mask [16]byte, p protoQ, dir dirQ, isNet bool, t token) cond {
	typ := "host"
	if isNet {
		typ = "net"
	}
	switch p {
	case qDefault, qIPv6:
		return c.hostop6(addr, mask, dir, t)
	case qLink:
		return c.fail(t, ErrInvalid, "link-layer modifier applied to ip6 %s", typ)
	}
	return c.fail(t, ErrInvalid, "'%s' modifier applied to ip6 %s", p, typ)
}

func (c *compiler) hostop6(addr, mask [16]byte, dir dirQ, t token) cond {
	switch dir {
	case dSrc, dDst:
		off := c.offNet + 8
		if dir == dDst {
			off = c.offNet + 24
		}
		var b cond
		for i := 3; i >= 0; i-- {
			a := be32(addr[4*i:])
			m := be32(mask[4*i:])
			b = and(mcmp(off+uint32(4*i), a, m), b)
		}
		return and(c.linktype(etherTypeIPv6, t), b)
	case dSrcAndDst:
		return and(c.hostop6(addr, mask, dSrc, t), c.hostop6(addr, mask, dDst, t))
	}
	return or(c.hostop6(addr, mask, dSrc, t), c.hostop6(addr, mask, dDst, t))
}

func be32(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// ehost compiles an Ethernet address match (gen_ehostop).
func (c *compiler) ehost(mac []byte, dir dirQ) cond {
	switch dir {
	case dSrc:
		return &bytesCond{off: 6, want: mac}
	case dDst:
		return &bytesCond{off: 0, want: mac}
	case dSrcAndDst:
		return and(c.ehost(mac, dSrc), c.ehost(mac, dDst))
	}
	return or(c.ehost(mac, dSrc), c.ehost(mac, dDst))
}

// protoUndef is libpcap's PROTO_UNDEF: TCP, UDP or SCTP.
const protoUndef = 0

// ports compiles "port" (single) and "portrange" for IPv6 and IPv4
// (gen_port6 or gen_port, and the range versions).
func (c *compiler) ports(single bool, lo, hi uint32, ipProto uint32, dir dirQ, t token) cond {
	if lo > hi {
		lo, hi = hi, lo
	}
	atom := func(off uint32, tr bool) cond {
		at := func(op cmpOp, k uint32) cond {
			if tr {
				return &transCond{nl: c.offNet, off: off, size: 2, op: op, mask: 0xffffffff, k: k}
			}
			return fieldOp(c.offNet+40+off, 2, op, k)
		}
		if single {
			return at(opEq, lo)
		}
		return and(at(opGe, lo), not(at(opGt, hi)))
	}
	op := func(proto uint32, v4 bool) cond {
		var b cond
		switch dir {
		case dSrc:
			b = atom(0, v4)
		case dDst:
			b = atom(2, v4)
		case dSrcAndDst:
			b = and(atom(0, v4), atom(2, v4))
		default:
			b = or(atom(0, v4), atom(2, v4))
		}
		if v4 {
			return and(and(field(c.offNet+9, 1, proto), c.ipNotFrag()), b)
		}
		return and(field(c.offNet+6, 1, proto), b)
	}
	protos := func(v4 bool) cond {
		if ipProto != protoUndef {
			return op(ipProto, v4)
		}
		return or(op(132, v4), or(op(6, v4), op(17, v4)))
	}
	v6 := and(c.linktype(etherTypeIPv6, t), protos(false))
	v4 := and(c.linktype(etherTypeIP, t), protos(true))
	return or(v6, v4)
}

// vlan compiles "vlan [id]" and moves later offsets past the tag.
func (c *compiler) vlan(e *otherExpr) cond {
	if c.link.kind != linkEthernet {
		return c.fail(e.tok, ErrLinkType, "no VLAN support for %s", c.link.name)
	}
	if e.hasN && e.n > 0x0fff {
		return c.fail(e.tok, ErrInvalid, "VLAN tag %d greater than maximum 4095", e.n)
	}
	lt := c.offLinkType
	b := or(or(field(lt, 2, etherType8021Q), field(lt, 2, etherType8021AD)), field(lt, 2, etherTypeQinQ))
	if e.hasN {
		b = and(b, &fieldCond{off: c.offNet, size: 2, op: opEq, mask: 0x0fff, k: e.n})
	}
	c.offLinkType += 4
	c.offNet += 4
	return b
}

var etherBroadcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// broadcast compiles "[ether|ip] broadcast" (gen_broadcast). As in
// tcpdump reading a file, the IPv4 netmask is taken to be 0.
func (c *compiler) broadcast(e *otherExpr) cond {
	switch e.proto {
	case qDefault, qLink:
		if c.link.kind != linkEthernet {
			return c.fail(e.tok, ErrLinkType, "not a broadcast link")
		}
		return &bytesCond{off: 0, want: etherBroadcast}
	case qIP:
		const hostmask = 0xffffffff
		b := or(mcmp(c.offNet+16, 0, hostmask), mcmp(c.offNet+16, hostmask, hostmask))
		return and(c.linktype(etherTypeIP, e.tok), b)
	}
	return c.fail(e.tok, ErrInvalid, "only link-layer/IP broadcast filters supported")
}

// multicast compiles "[ether|ip|ip6] multicast" (gen_multicast).
func (c *compiler) multicast(e *otherExpr) cond {
	switch e.proto {
	case qDefault, qLink:
		if c.link.kind != linkEthernet {
			return c.fail(e.tok, ErrLinkType, "link-layer multicast filters supported only on Ethernet")
		}
		return &fieldCond{off: 0, size: 1, op: opSet, mask: 1}
	case qIP:
		return and(c.linktype(etherTypeIP, e.tok), fieldOp(c.offNet+16, 1, opGe, 224))
	case qIPv6:
		return and(c.linktype(etherTypeIPv6, e.tok), field(c.offNet+24, 1, 255))
	}
	return c.fail(e.tok, ErrInvalid, "only IP multicast filters supported")
}

// inbound compiles "inbound" and "outbound" from the LINUX_SLL packet type.
func (c *compiler) inbound(e *otherExpr) cond {
	var out cond
	switch c.link.linkType {
	case linkTypeLinuxSLL:
		out = field(0, 2, sllOutgoing)
	case linkTypeSLL2:
		out = field(10, 1, sllOutgoing)
	default:
		return c.fail(e.tok, ErrLinkType, "inbound/outbound not supported on %s when reading savefiles", c.link.name)
	}
	if e.tok.kind == tInbound {
		return not(out)
	}
	return out
}
