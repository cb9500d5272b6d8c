package packet

import (
	"encoding/binary"
	"net/netip"
)

// IP protocol numbers the walk dispatches on (IANA).
const (
	protoIPv4 = 4  // IP in IP (RFC 2003)
	protoTCP  = 6  // RFC 9293
	protoUDP  = 17 // RFC 768
	protoIPv6 = 41 // IPv6 in IP (RFC 4213)
	protoGRE  = 47 // RFC 2784
)

const ipv4MinHeaderLen = 20

// ipv4 decodes an IPv4 header (RFC 791 §3.1) and what it carries. A
// fragment other than the first is not decoded above IP.
func (w *walker) ipv4(b []byte) {
	p := w.p
	p.clearIP()
	if len(b) < ipv4MinHeaderLen {
		w.short(ReasonBadIP)
		return
	}
	ihl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:]))
	if b[0]>>4 != 4 || ihl < ipv4MinHeaderLen || total < ihl {
		w.malformed(ReasonBadIP)
		return
	}
	p.IPVersion = 4
	p.DSCP, p.ECN = b[1]>>2, b[1]&0x03
	p.TTL = b[8]
	p.IPTotalLen = total
	p.Proto = b[9]
	p.Src = netip.AddrFrom4([4]byte(b[12:16]))
	p.Dst = netip.AddrFrom4([4]byte(b[16:20]))
	frag := binary.BigEndian.Uint16(b[6:])
	const moreFragments, offsetMask = 0x2000, 0x1fff
	p.Fragment = frag&(moreFragments|offsetMask) != 0

	b = w.trim(b, total)
	w.ip, w.ipWhole = b, !w.cut
	if len(b) < ihl {
		w.short(ReasonBadIP)
		return
	}
	if frag&offsetMask != 0 {
		p.Note = ReasonFragment
		return
	}
	w.l4(b[ihl:], total-ihl)
}

// l4 decodes the payload of an IP datagram whose protocol is p.Proto;
// payloadLen is its length as the IP header says. Of a first fragment only
// the TCP or UDP header is decoded.
func (w *walker) l4(b []byte, payloadLen int) {
	if w.p.Fragment {
		w.p.Note = ReasonFragment
		w.fragmentPorts(b)
		return
	}
	switch w.p.Proto {
	case protoUDP:
		w.udp(b, payloadLen)
	case protoTCP:
		w.tcp(b)
	case protoGRE:
		if w.enterTunnel(w.ipEncapKind()) {
			w.gre(b)
		}
	case protoIPv4:
		if w.enterTunnel(w.ipEncapKind()) {
			w.innerFrame()
			w.p.EtherType = etherTypeIPv4
			w.ipv4(b)
		}
	case protoIPv6:
		if w.enterTunnel(w.ipEncapKind()) {
			w.innerFrame()
			w.p.EtherType = etherTypeIPv6
			w.ipv6(b)
		}
	}
}

// fragmentPorts decodes what is there of the TCP or UDP header of a first
// fragment, whose length fields describe the whole datagram.
func (w *walker) fragmentPorts(b []byte) {
	p := w.p
	if p.Proto != protoUDP && p.Proto != protoTCP || len(b) < 4 {
		return
	}
	p.SrcPort = binary.BigEndian.Uint16(b)
	p.DstPort = binary.BigEndian.Uint16(b[2:])
	switch {
	case p.Proto == protoUDP && len(b) >= udpHeaderLen:
		p.UDPLen = int(binary.BigEndian.Uint16(b[4:]))
	case p.Proto == protoTCP && len(b) > tcpFlagsOffset:
		p.TCPFlags = b[tcpFlagsOffset]
	}
}
