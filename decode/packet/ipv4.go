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
	p.IPID = uint32(binary.BigEndian.Uint16(b[4:]))
	p.IPTotalLen = total
	p.Proto = b[9]
	p.Src = netip.AddrFrom4([4]byte(b[12:16]))
	p.Dst = netip.AddrFrom4([4]byte(b[16:20]))
	frag := binary.BigEndian.Uint16(b[6:])
	const moreFragments, offsetMask = 0x2000, 0x1fff
	p.Fragment = frag&(moreFragments|offsetMask) != 0
	p.FragOffset = frag & offsetMask

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

// maxIPPayload bounds the payload of an IP datagram whose length is not
// known: that of a first fragment, whose header gives the fragment's.
const maxIPPayload = 0xffff

// l4 decodes the payload of an IP datagram whose protocol is p.Proto;
// payloadLen is its length as the IP header says. A first fragment
// (later ones stop at IP) is decoded further when it carries RoCEv2 or a
// tunnel (carriesDecoded), as a datagram cut where the fragment ends;
// of any other, only the TCP or UDP header is.
func (w *walker) l4(b []byte, payloadLen int) {
	if w.p.Fragment {
		if !w.carriesDecoded(b) {
			w.p.Note = ReasonFragment
			w.fragmentPorts(b)
			return
		}
		// The later fragments are not reassembled: what this one holds
		// is read as a snap length would have cut it (RFC 791 §3.2: the
		// first fragment holds the start of the datagram, and so every
		// header of the RoCE packet or mirrored frame that fits in it).
		// A switch's ERSPAN mirror, sent without DF over a smaller MTU
		// than the mirrored frame's, is fragmented so.
		w.cut, w.ipWhole = true, false
		if w.p.Proto == protoUDP && binary.BigEndian.Uint16(b[2:]) == PortRoCEv2 {
			w.udp(b, maxIPPayload)
			w.wholeLen(payloadLen)
			return
		}
		payloadLen = maxIPPayload
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

// wholeLen sets WholeLen of a first fragment that carries RoCEv2, once
// udp has read its UDP length; fragPayload is the fragment's payload
// length as its IP header says. The IP header is what the fragment's
// total length holds besides that payload, less the IPv6 Fragment header,
// which the whole datagram does not have (RFC 8200 §4.5).
func (w *walker) wholeLen(fragPayload int) {
	p := w.p
	if p.RoCEVersion != 2 || p.UDPLen < udpHeaderLen {
		return
	}
	hdr := p.IPTotalLen - fragPayload
	if p.IPVersion == 6 {
		hdr -= ipv6FragmentLen
	}
	p.WholeLen = hdr + p.UDPLen
}

// carriesDecoded reports whether the payload b of a first fragment, of
// protocol p.Proto, is one the walk decodes beyond its L4 header: UDP to
// the RoCEv2, VXLAN or VXLAN-GPE port, GRE, or IP in IP.
func (w *walker) carriesDecoded(b []byte) bool {
	switch w.p.Proto {
	case protoUDP:
		if len(b) < 4 {
			return false
		}
		port := binary.BigEndian.Uint16(b[2:])
		return port == PortRoCEv2 || port == PortVXLAN || port == PortVXLANGPE
	case protoGRE, protoIPv4, protoIPv6:
		return true
	}
	return false
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
		p.L4Checksum = binary.BigEndian.Uint16(b[6:])
	case p.Proto == protoTCP && len(b) > tcpFlagsOffset:
		p.TCPFlags = b[tcpFlagsOffset]
		if len(b) >= tcpChecksumOffset+2 {
			p.L4Checksum = binary.BigEndian.Uint16(b[tcpChecksumOffset:])
		}
	}
}
