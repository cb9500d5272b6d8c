// Package rpcbind decodes the two ONC RPC exchanges with rpcbind (the
// portmapper, port 111) that tell a client where an RPC service listens:
//
//   - version 2 PMAPPROC_GETPORT (RFC 1833 §3.2, RFC 1057 Appendix A):
//     the call names a program, version and IP protocol, the reply the
//     port (0: not registered);
//   - versions 3 and 4 RPCBPROC_GETADDR (RFC 1833 §2.2.1): the call names
//     a program, version and netid ("tcp", "udp", "tcp6", "udp6"), the
//     reply a universal address (RFC 5665 §5.2.3.3, §5.2.3.4: IPv4
//     "h1.h2.h3.h4.p1.p2", IPv6 "x1:...:x8.p1.p2"; empty: not
//     registered).
//
// Messages follow ONC RPC version 2 (RFC 5531 §9): a UDP datagram holds
// one; over TCP each is a record behind a record marker (§11), which
// Record strips. A reply does not say which procedure it answers: it is
// read with the Query of its call, matched by XID and the two ends.
//
// Nothing here panics: input cut short or malformed reads as not an
// exchange (ok false). Nothing allocates but the parse of an IPv6
// universal address (one allocation, in netip).
package rpcbind

import (
	"encoding/binary"
	"net/netip"
)

// Port is rpcbind's TCP and UDP port (RFC 1833 §3).
const Port = 111

// Program is the portmapper's RPC program number (RFC 1833 §2, §3).
const Program = 100000

// procGetPort is PMAPPROC_GETPORT in version 2 and RPCBPROC_GETADDR in
// versions 3 and 4: procedure 3 of each (RFC 1833 §2.1, §3.2).
const procGetPort = 3

// RPC message constants (RFC 5531 §9).
const (
	rpcVersion  = 2
	msgCall     = 0
	msgReply    = 1
	msgAccepted = 0 // reply_stat MSG_ACCEPTED
	success     = 0 // accept_stat SUCCESS
	// maxAuthBody is the longest opaque_auth body (RFC 5531 §8.2).
	maxAuthBody = 400
)

// IP protocol numbers of a version 2 mapping's prot (RFC 1833 §3.1).
const (
	protoTCP = 6
	protoUDP = 17
)

// Query is what a GETPORT or GETADDR call asks rpcbind: the port of
// program Prog, version Vers, over IP protocol Proto (6 TCP, 17 UDP).
type Query struct {
	Version uint32 // rpcbind's protocol version: 2 GETPORT, 3 or 4 GETADDR
	Prog    uint32
	Vers    uint32
	Proto   uint8
}

// xdr reads XDR items (RFC 4506) from a byte slice; a read past its end
// sets bad and returns zero.
type xdr struct {
	b   []byte
	bad bool
}

func (x *xdr) uint32() uint32 {
	if len(x.b) < 4 {
		x.bad = true
		x.b = nil
		return 0
	}
	v := binary.BigEndian.Uint32(x.b)
	x.b = x.b[4:]
	return v
}

// opaque reads variable-length opaque data or a string (RFC 4506 §4.10,
// §4.11) of at most max bytes, and skips its padding to 4 bytes.
func (x *xdr) opaque(max uint32) []byte {
	n := x.uint32()
	if x.bad || n > max || uint64(n) > uint64(len(x.b)) {
		x.bad = true
		x.b = nil
		return nil
	}
	v := x.b[:n]
	pad := (4 - n%4) % 4
	if uint64(n+pad) > uint64(len(x.b)) {
		// The padding of the last item may be cut by the snap length.
		x.b = x.b[n:n]
		return v
	}
	x.b = x.b[n+pad:]
	return v
}

// auth skips an opaque_auth (RFC 5531 §8.2): a flavor and a body.
func (x *xdr) auth() {
	x.uint32()
	x.opaque(maxAuthBody)
}

// ParseCall reads b, one ONC RPC message, as a GETPORT or GETADDR call to
// rpcbind (RFC 5531 §9 call_body; RFC 1833 §3.1 mapping, §2.1 rpcb). A
// version 2 call may be cut by the snap length inside its port, which the
// call does not use. ok is false for any other message, and for a netid
// other than tcp, udp, tcp6 and udp6.
func ParseCall(b []byte) (xid uint32, q Query, ok bool) {
	x := xdr{b: b}
	xid = x.uint32()
	if x.uint32() != msgCall || x.uint32() != rpcVersion || x.uint32() != Program {
		return 0, Query{}, false
	}
	q.Version = x.uint32()
	if x.uint32() != procGetPort || q.Version < 2 || q.Version > 4 {
		return 0, Query{}, false
	}
	x.auth() // credentials
	x.auth() // verifier
	q.Prog = x.uint32()
	q.Vers = x.uint32()
	if q.Version == 2 {
		switch x.uint32() {
		case protoTCP:
			q.Proto = protoTCP
		case protoUDP:
			q.Proto = protoUDP
		}
	} else {
		q.Proto = netidProto(x.opaque(maxNetid))
	}
	if x.bad || q.Proto == 0 {
		return 0, Query{}, false
	}
	return xid, q, true
}

// maxNetid bounds a netid's length; those that name TCP or UDP have 3 or
// 4 characters (RFC 5665 §5.1).
const maxNetid = 32

// netidProto is the IP protocol a netid (RFC 5665 §5.1) names, or 0.
func netidProto(id []byte) uint8 {
	switch string(id) {
	case "tcp", "tcp6":
		return protoTCP
	case "udp", "udp6":
		return protoUDP
	}
	return 0
}

// ParseReply reads b, one ONC RPC message, as a reply that was accepted
// and succeeded (RFC 5531 §9 reply_body, accepted_reply), and returns its
// XID and its results, for Query.Port to read. ok is false for anything
// else: a call, a denied or failed reply, a message cut before its
// results.
func ParseReply(b []byte) (xid uint32, results []byte, ok bool) {
	x := xdr{b: b}
	xid = x.uint32()
	if x.uint32() != msgReply || x.uint32() != msgAccepted {
		return 0, nil, false
	}
	x.auth() // verifier
	if x.uint32() != success || x.bad {
		return 0, nil, false
	}
	return xid, x.b, true
}

// Port reads the results of the reply to q's call: version 2's port
// (RFC 1833 §3.2, an unsigned int), or versions 3 and 4's universal
// address, whose host it returns too (host is the zero Addr for version
// 2). ok is false when the program is not registered (port 0, an empty
// address) and when the results are cut short or malformed.
func (q Query) Port(results []byte) (host netip.Addr, port uint16, ok bool) {
	x := xdr{b: results}
	if q.Version == 2 {
		v := x.uint32()
		if x.bad || v == 0 || v > 0xffff {
			return netip.Addr{}, 0, false
		}
		return netip.Addr{}, uint16(v), true
	}
	ap, ok := ParseUniversalAddr(x.opaque(maxUniversalAddr))
	if x.bad || !ok || ap.Port() == 0 {
		return netip.Addr{}, 0, false
	}
	return ap.Addr(), ap.Port(), true
}

// maxUniversalAddr bounds a universal address: the longest IPv6 one,
// with a zone, is well under it.
const maxUniversalAddr = 128

// ParseUniversalAddr reads a TCP or UDP universal address (RFC 5665
// §5.2.3.3 for IPv4, §5.2.3.4 for IPv6): the host's address, a dot, then
// the port's high and low bytes in decimal, dot-separated.
func ParseUniversalAddr(s []byte) (netip.AddrPort, bool) {
	lo := lastDot(s)
	if lo < 0 {
		return netip.AddrPort{}, false
	}
	hi := lastDot(s[:lo])
	if hi < 0 {
		return netip.AddrPort{}, false
	}
	p1, ok1 := decimalByte(s[hi+1 : lo])
	p2, ok2 := decimalByte(s[lo+1:])
	if !ok1 || !ok2 {
		return netip.AddrPort{}, false
	}
	host, ok := parseHost(s[:hi])
	if !ok {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(host, uint16(p1)<<8|uint16(p2)), true
}

func lastDot(s []byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// decimalByte reads 0 to 255 in decimal, without sign or leading zeros
// beyond a lone 0 (inet_ntop's form, which universal addresses use).
func decimalByte(s []byte) (uint8, bool) {
	if len(s) == 0 || len(s) > 3 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	v := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if v > 255 {
		return 0, false
	}
	return uint8(v), true
}

// parseHost reads a universal address's host: dotted IPv4 without
// allocating, or IPv6 text (with a colon) through netip, which costs the
// string one allocation.
func parseHost(s []byte) (netip.Addr, bool) {
	for _, c := range s {
		if c == ':' {
			a, err := netip.ParseAddr(string(s))
			return a.Unmap(), err == nil && a.Zone() == ""
		}
	}
	var v4 [4]byte
	for i := range 3 {
		d := lastDot(s)
		if d < 0 {
			return netip.Addr{}, false
		}
		b, ok := decimalByte(s[d+1:])
		if !ok {
			return netip.Addr{}, false
		}
		v4[3-i] = b
		s = s[:d]
	}
	b, ok := decimalByte(s)
	if !ok {
		return netip.Addr{}, false
	}
	v4[0] = b
	return netip.AddrFrom4(v4), true
}

// Record returns the message of one TCP record (RFC 5531 §11): b starts
// with a record marker whose last-fragment bit is set, and holds the
// fragment it announces whole. ok is false otherwise: a message in
// several fragments or segments is not read.
func Record(b []byte) ([]byte, bool) {
	if len(b) < 4 {
		return nil, false
	}
	m := binary.BigEndian.Uint32(b)
	const lastFragment = 1 << 31
	n := m &^ lastFragment
	if m&lastFragment == 0 || uint64(n) > uint64(len(b)-4) {
		return nil, false
	}
	return b[4 : 4+n], true
}
