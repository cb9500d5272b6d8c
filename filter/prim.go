package filter

import (
	"net/netip"
	"strconv"
	"strings"
)

// prim compiles an id with its qualifiers (grammar.y's nid and pnum
// actions: gen_ncode, gen_mcode, gen_mcode6, gen_ecode, gen_scode).
func (c *compiler) prim(e *primExpr) cond {
	q, t := e.q, e.tok
	switch e.kind {
	case vNum:
		return c.ncode("", e.num, q, t)
	case vHID:
		switch q.addr {
		case aPort, aPortrange, aProto, aProtochain:
			return c.fail(t, ErrInvalid, "'%s' modifier applied to ip host", addrNames[q.addr])
		}
		return c.ncode(t.text, 0, q, t)
	case vHIDLen:
		return c.mcode(t.text, "", e.num, q, t)
	case vHIDMask:
		return c.mcode(t.text, e.mask, 0, q, t)
	case vHID6, vHID6Len:
		return c.mcode6(t.text, e.num, q, t)
	case vEID:
		return c.ecode(t.text, q, t)
	}
	return c.scode(t.val, q, t)
}

// atoin parses a dotted IPv4 address of 1 to 4 decimal parts and returns
// it right-aligned with its length in bits (libpcap's __pcap_atoin).
func atoin(s string) (addr uint32, bits int, ok bool) {
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.ParseUint(part, 10, 8)
		if err != nil {
			return 0, 0, false
		}
		addr = addr<<8 | uint32(n)
		bits += 8
	}
	return addr, bits, true
}

// ncode compiles a number or a dotted IPv4 address s (gen_ncode). For a
// number s is "" and v is its value.
func (c *compiler) ncode(s string, v uint32, q qual, t token) cond {
	vlen := 32
	if s != "" {
		a, n, ok := atoin(s)
		if !ok {
			return c.fail(t, ErrInvalid, "invalid IPv4 address '%s'", s)
		}
		v, vlen = a, n
	}
	switch q.addr {
	case aDefault, aHost, aNet:
		if q.proto == qLink {
			return c.fail(t, ErrInvalid, "illegal link layer address")
		}
		mask := uint32(0xffffffff)
		if s == "" && q.addr == aNet {
			// "net 10" is 10.0.0.0/8.
			for v != 0 && v&0xff000000 == 0 {
				v <<= 8
				mask <<= 8
			}
		} else {
			// "host 10.1" is 10.1.0.0/16.
			v <<= 32 - vlen
			mask <<= 32 - vlen
		}
		return c.host(v, mask, q.proto, q.dir, q.addr == aNet, t)
	case aPort, aPortrange:
		what := addrNames[q.addr]
		proto, ok := c.portProto(q.proto, what, t)
		if !ok {
			return constCond(false)
		}
		if v > 65535 {
			return c.fail(t, ErrInvalid, "illegal port number %d > 65535", v)
		}
		return c.ports(q.addr == aPort, v, v, proto, q.dir, t)
	case aGateway:
		return c.fail(t, ErrInvalid, "'gateway' requires a name")
	case aProto:
		return c.proto(v, q.proto, t)
	}
	return c.fail(t, ErrUnsupported, "'protochain' is not supported")
}

// portProto maps the protocol qualifier of "port"/"portrange" to an IP
// protocol number, or protoUndef for none.
func (c *compiler) portProto(p protoQ, what string, t token) (uint32, bool) {
	switch p {
	case qDefault:
		return protoUndef, true
	case qTCP:
		return 6, true
	case qUDP:
		return 17, true
	case qSCTP:
		return 132, true
	}
	c.fail(t, ErrInvalid, "illegal qualifier of '%s'", what)
	return 0, false
}

// mcode compiles "A.B.C.D/len" and "A.B.C.D mask M" (gen_mcode).
func (c *compiler) mcode(s1, s2 string, masklen uint32, q qual, t token) cond {
	n, nlen, ok := atoin(s1)
	if !ok {
		return c.fail(t, ErrInvalid, "invalid IPv4 address '%s'", s1)
	}
	n <<= 32 - nlen
	var m uint32
	if s2 != "" {
		mm, mlen, ok := atoin(s2)
		if !ok {
			return c.fail(t, ErrInvalid, "invalid IPv4 address '%s'", s2)
		}
		m = mm << (32 - mlen)
		if n&^m != 0 {
			return c.fail(t, ErrInvalid, "non-network bits set in \"%s mask %s\"", s1, s2)
		}
	} else {
		if masklen > 32 {
			return c.fail(t, ErrInvalid, "mask length must be <= 32")
		}
		if masklen > 0 {
			m = 0xffffffff << (32 - masklen)
		}
		if n&^m != 0 {
			return c.fail(t, ErrInvalid, "non-network bits set in \"%s/%d\"", s1, masklen)
		}
	}
	if q.addr != aNet {
		return c.fail(t, ErrInvalid, "Mask syntax for networks only")
	}
	return c.host(n, m, q.proto, q.dir, true, t)
}

// mcode6 compiles an IPv6 address or prefix (gen_mcode6).
func (c *compiler) mcode6(s string, masklen uint32, q qual, t token) cond {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return c.fail(t, ErrInvalid, "invalid ip6 address %s", s)
	}
	if masklen > 128 {
		return c.fail(t, ErrInvalid, "mask length must be <= 128")
	}
	addr := a.As16()
	var mask [16]byte
	for i := uint32(0); i < masklen; i++ {
		mask[i/8] |= 0x80 >> (i % 8)
	}
	for i := range addr {
		if addr[i]&^mask[i] != 0 {
			return c.fail(t, ErrInvalid, "non-network bits set in \"%s/%d\"", s, masklen)
		}
	}
	switch q.addr {
	case aDefault, aHost:
		if masklen != 128 {
			return c.fail(t, ErrInvalid, "Mask syntax for networks only")
		}
		return c.host6(addr, mask, q.proto, q.dir, false, t)
	case aNet:
		return c.host6(addr, mask, q.proto, q.dir, true, t)
	}
	return c.fail(t, ErrInvalid, "invalid qualifier against IPv6 address")
}

// parseMAC reads a MAC address as pcap_ether_aton does: pairs of hex
// digits, with ':', '.' or '-' between them or not.
func parseMAC(s string) []byte {
	hex := func(b byte) byte {
		switch {
		case b >= '0' && b <= '9':
			return b - '0'
		case b >= 'a' && b <= 'f':
			return b - 'a' + 10
		}
		return b - 'A' + 10
	}
	isHex := func(i int) bool {
		return i < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[i]) >= 0
	}
	var mac []byte
	for i := 0; i < len(s); {
		if s[i] == ':' || s[i] == '.' || s[i] == '-' {
			i++
		}
		d := hex(s[i])
		i++
		if isHex(i) {
			d = d<<4 | hex(s[i])
			i++
		}
		mac = append(mac, d)
	}
	return mac
}

// ecode compiles a MAC address (gen_ecode).
func (c *compiler) ecode(s string, q qual, t token) cond {
	if (q.addr == aHost || q.addr == aDefault) && q.proto == qLink {
		if c.link.kind != linkEthernet {
			return c.fail(t, ErrLinkType, "ethernet addresses supported only on Ethernet (link type is %s)", c.link.name)
		}
		return c.ehost(parseMAC(s), q.dir)
	}
	return c.fail(t, ErrInvalid, "ethernet address used in non-ether expression")
}

// scode compiles a name (gen_scode). Host and network names are not
// resolved; service and protocol names come from built-in tables.
func (c *compiler) scode(name string, q qual, t token) cond {
	switch q.addr {
	case aNet:
		return c.fail(t, ErrInvalid, "unknown network '%s' (network names are not resolved)", name)
	case aDefault, aHost:
		if q.proto == qLink {
			if c.link.kind != linkEthernet {
				return c.fail(t, ErrLinkType, "link-level host names are supported only on Ethernet")
			}
			return c.fail(t, ErrInvalid, "unknown ether host '%s' (host names are not resolved)", name)
		}
		return c.fail(t, ErrInvalid, "unknown host '%s' (host names are not resolved)", name)
	case aGateway:
		return c.fail(t, ErrInvalid, "unknown host '%s' (host names are not resolved)", name)
	case aPort:
		want, ok := c.portProto(q.proto, "port", t)
		if !ok {
			return constCond(false)
		}
		port, proto, ok := lookupPort(name)
		if !ok {
			return c.fail(t, ErrInvalid, "unknown port '%s'", name)
		}
		if proto, ok = c.checkPortProto(want, proto, "port '"+name+"'", t); !ok {
			return constCond(false)
		}
		return c.ports(true, port, port, proto, q.dir, t)
	case aPortrange:
		want, ok := c.portProto(q.proto, "portrange", t)
		if !ok {
			return constCond(false)
		}
		lo, hi, proto, ok := lookupPortRange(name)
		if !ok {
			return c.fail(t, ErrInvalid, "unknown port in range '%s'", name)
		}
		if proto, ok = c.checkPortProto(want, proto, "port in range '"+name+"'", t); !ok {
			return constCond(false)
		}
		for _, p := range []uint32{lo, hi} {
			if p > 65535 {
				return c.fail(t, ErrInvalid, "illegal port number %d > 65535", p)
			}
		}
		return c.ports(false, lo, hi, proto, q.dir, t)
	case aProto:
		switch q.proto {
		case qDefault, qIP, qIPv6:
			v, ok := ipProtocols[name]
			if !ok {
				return c.fail(t, ErrInvalid, "unknown ip proto '%s'", name)
			}
			return c.proto(v, q.proto, t)
		case qLink:
			v, ok := etherProtos[name]
			if !ok {
				return c.fail(t, ErrInvalid, "unknown ether proto '%s'", name)
			}
			return c.proto(v, q.proto, t)
		}
		return c.proto(0, q.proto, t)
	}
	return c.fail(t, ErrUnsupported, "'protochain' is not supported")
}

// checkPortProto reconciles the protocol a service name is defined for
// with the qualifier written before "port".
func (c *compiler) checkPortProto(want, have uint32, what string, t token) (uint32, bool) {
	if want == protoUndef {
		return have, true
	}
	if have != protoUndef && have != want {
		names := map[uint32]string{6: "tcp", 17: "udp", 132: "sctp"}
		c.fail(t, ErrInvalid, "%s is %s", what, names[have])
		return 0, false
	}
	return want, true
}

// lookupPort finds a service name's port, and whether it is TCP only,
// UDP only or both (protoUndef), as pcap_nametoport does.
func lookupPort(name string) (port, proto uint32, ok bool) {
	s, ok := services[name]
	if !ok {
		return 0, 0, false
	}
	switch {
	case s.tcp && s.udp:
		return s.port, protoUndef, true
	case s.tcp:
		return s.port, 6, true
	}
	return s.port, 17, true
}

// lookupPortRange parses "lo-hi" with numbers or service names, as
// pcap_nametoportrange does (sscanf "%d-%d" first).
func lookupPortRange(name string) (lo, hi, proto uint32, ok bool) {
	i := 0
	for i < len(name) && name[i] >= '0' && name[i] <= '9' {
		i++
	}
	if i > 0 && i < len(name) && name[i] == '-' {
		j := i + 1
		neg := j < len(name) && (name[j] == '-' || name[j] == '+')
		if neg {
			j++
		}
		k := j
		for k < len(name) && name[k] >= '0' && name[k] <= '9' {
			k++
		}
		if k > j {
			a, err1 := strconv.ParseUint(name[:i], 10, 32)
			b, err2 := strconv.ParseUint(name[j:k], 10, 32)
			if err1 == nil && err2 == nil {
				if neg && name[j-1] == '-' {
					b = uint64(uint32(-int64(b)))
				}
				return uint32(a), uint32(b), protoUndef, true
			}
		}
	}
	first, second, found := strings.Cut(name, "-")
	if !found {
		return 0, 0, 0, false
	}
	lo, p1, ok1 := lookupPort(first)
	hi, p2, ok2 := lookupPort(second)
	if !ok1 || !ok2 {
		return 0, 0, 0, false
	}
	proto = p2
	if p1 != p2 {
		proto = protoUndef
	}
	return lo, hi, proto, true
}
