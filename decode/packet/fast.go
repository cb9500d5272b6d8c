package packet

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocedump/rocedump/decode/bth"
)

// The fast path decodes, at fixed offsets, the layouts a switch mirror of a
// RoCE fabric captures nearly all the time, and fills the Packet directly;
// Decode walks every other frame. Its result is the walk's, field for field
// (the tests decode every capture and fuzz input both ways). It takes:
//
//   - Ethernet with at most fastMaxTags 802.1Q/802.1ad/0x9100 tags;
//   - IPv4 without options (IHL 5) that is not a fragment (MF clear, offset
//     0), or IPv6 whose next header is UDP (no extension headers);
//   - UDP to port 4791 (IBTA vol 1 Annex A17 §A17.2.3) with a valid length,
//     then a BTH that was captured whole, a valid transport version and
//     opcode, and a UDP length that holds the opcode's headers, pad and ICRC
//     (§9.2, §9.3); not a MAD to QP1, whose CM the walk decodes;
//   - and the same frame mirrored in ERSPAN type I, II or III
//     (draft-foschiano-erspan-03 §4.1-§4.3; type III only with frame type
//     Ethernet) over GRE (RFC 2784, RFC 2890: any of checksum, key and
//     sequence number) over such an IPv4 or IPv6 header, in such an Ethernet
//     frame.
//
// Anything else, including every header the walk would call malformed or
// cut short before the BTH, falls back to the walk: a frame the fast path
// gives up on costs its checks on top of the walk.

// fastMaxTags is the most VLAN tags per Ethernet frame the fast path takes.
const fastMaxTags = 2

// isVLANTag reports whether EtherType et is a VLAN tag's TPID.
func isVLANTag(et uint16) bool {
	return et == etherTypeVLAN || et == etherTypeQinQ || et == etherTypeQinQOld
}

// fastTags reads the VLAN tags (IEEE 802.1Q §9.6) after the EtherType et of
// the Ethernet frame b, whose EtherType field ends at off, into p.Encap from
// index n on. It returns the EtherType after them, where the network layer
// starts, the new number of Encap layers and the innermost tag's TCI (0 if
// none); ok is false for more than fastMaxTags tags or a tag cut short.
func fastTags(p *Packet, b []byte, off int, et uint16, n int) (_ uint16, _, _ int, tci uint16, tagged, ok bool) {
	for tags := 0; isVLANTag(et); tags++ {
		if tags == fastMaxTags || len(b) < off+vlanTagLen {
			return 0, 0, 0, 0, false, false
		}
		tci = binary.BigEndian.Uint16(b[off:])
		kind := EncapVLAN
		if et != etherTypeVLAN {
			kind = EncapQinQ
		}
		p.Encap[n] = EncapLayer{Kind: kind, ID: uint32(tci & 0x0fff)}
		n++
		tagged = true
		et = binary.BigEndian.Uint16(b[off+2:])
		off += vlanTagLen
	}
	return et, off, n, tci, tagged, true
}

// fastTunnel checks GRE and the ERSPAN header after it (parseERSPAN) at
// the start of b and records them in p.Encap from index n on. It returns
// the mirrored frame, the new number of Encap layers and whether the ERSPAN
// header's T bit says the switch cut the frame.
func fastTunnel(p *Packet, b []byte, n int) (inner []byte, _ int, cut, ok bool) {
	inner, t, ok := parseERSPAN(b)
	if !ok {
		return nil, 0, false, false
	}
	p.Encap[n] = EncapLayer{Kind: EncapGRE, ID: t.key}
	p.Encap[n+1] = EncapLayer{Kind: t.kind, ID: t.session}
	return inner, n + 2, t.cut, true
}

// erspanTunnel is what parseERSPAN read of a mirror's GRE and ERSPAN
// headers.
type erspanTunnel struct {
	key     uint32    // the GRE key (RFC 2890), 0 if none
	kind    EncapKind // EncapERSPAN1, EncapERSPAN2 or EncapERSPAN3
	session uint32    // the ERSPAN session ID, 0 for type I
	cut     bool      // the T bit: the switch cut the mirrored frame
}

// parseERSPAN reads the layouts of a mirror that the fast path and the
// peek take: GRE (RFC 2784, RFC 2890: any of checksum, key and sequence
// number; no routing, version 0) at the start of b with protocol 0x88BE
// (ERSPAN type I without a GRE sequence number, type II with one) or
// 0x22EB (type III of frame type Ethernet), and the ERSPAN header
// (draft-foschiano-erspan-03 §4.1-§4.3). It returns the mirrored frame.
func parseERSPAN(b []byte) (inner []byte, t erspanTunnel, ok bool) {
	if len(b) < greMinHeaderLen {
		return nil, t, false
	}
	flags := binary.BigEndian.Uint16(b)
	proto := binary.BigEndian.Uint16(b[2:])
	if flags&(greVersion|greRouting) != 0 {
		return nil, t, false
	}
	hl := greMinHeaderLen
	if flags&greChecksum != 0 {
		hl += 4
	}
	keyAt := hl
	if flags&greKey != 0 {
		hl += 4
	}
	if flags&greSequence != 0 {
		hl += 4
	}
	if len(b) < hl {
		return nil, t, false
	}
	if flags&greKey != 0 {
		t.key = binary.BigEndian.Uint32(b[keyAt:])
	}
	b = b[hl:]
	switch {
	case proto == etherTypeERSPAN12 && flags&greSequence == 0:
		t.kind = EncapERSPAN1
		return b, t, true
	case proto == etherTypeERSPAN12:
		if len(b) < erspan2HeaderLen || b[0]>>4 != erspan2Version {
			return nil, t, false
		}
		hl, t.kind = erspan2HeaderLen, EncapERSPAN2
	case proto == etherTypeERSPAN3:
		if len(b) < erspan3HeaderLen || b[0]>>4 != erspan3Version || b[10]>>2&0x1f != erspan3FrameEther {
			return nil, t, false
		}
		hl, t.kind = erspan3HeaderLen, EncapERSPAN3
		if b[11]&0x01 != 0 {
			hl += erspan3SubheaderLen
		}
		if len(b) < hl {
			return nil, t, false
		}
	default:
		return nil, t, false
	}
	t.session = uint32(binary.BigEndian.Uint16(b[2:]) & 0x03ff)
	t.cut = b[2]&erspanTruncated != 0
	return b[hl:], t, true
}

// decodeFast decodes an Ethernet frame of one of the layouts the fast path
// takes into p and reports true; it reports false for any other, having
// written p only in part, and the caller then walks the frame.
//
// p holds the zero Packet or what a Decode left in it (see Decode): the
// parts that frames of these layouts leave zero are cleared only when p
// says they may be set (Encap entries up to the old NEncap, CM when HasMAD
// or CM.Contents, PFC when HasPFC, the BTH's extended headers that BTH.Ext
// names).
func decodeFast(data []byte, origLen int, p *Packet) bool {
	if isPlainIPv4(data) {
		return decodePlainIPv4(data, origLen, p)
	}
	if isERSPAN2PlainIPv4(data) {
		return decodeERSPAN2PlainIPv4(data, origLen, p)
	}
	return decodeFastLayers(data, origLen, p)
}

// erspan2Len is the length of what an ERSPAN type II mirror puts before
// the mirrored frame in the layout decodeERSPAN2PlainIPv4 takes: Ethernet
// without tags, IPv4 without options, GRE with a sequence number only
// (RFC 2890 §2.2) and the ERSPAN II header (draft-foschiano-erspan-03
// §4.2).
const erspan2Len = etherHeaderLen + ipv4MinHeaderLen + greMinHeaderLen + 4 + erspan2HeaderLen

// isERSPAN2Headers reports whether an Ethernet frame starts with the
// erspan2Len bytes of headers of an ERSPAN type II mirror in that layout.
// The carrying datagram's length and fragment fields are left to the
// caller.
func isERSPAN2Headers(data []byte) bool {
	const ip, gre = etherHeaderLen, etherHeaderLen + ipv4MinHeaderLen
	return len(data) >= erspan2Len && binary.BigEndian.Uint16(data[12:]) == etherTypeIPv4 &&
		data[ip] == 0x45 && data[ip+9] == protoGRE &&
		binary.BigEndian.Uint16(data[gre:]) == greSequence && binary.BigEndian.Uint16(data[gre+2:]) == etherTypeERSPAN12 &&
		data[gre+8]>>4 == erspan2Version
}

// isERSPAN2PlainIPv4 reports whether an Ethernet frame is the most common
// mirror layout: ERSPAN type II in erspan2Len bytes of headers around a
// frame of decodePlainIPv4's layout.
func isERSPAN2PlainIPv4(data []byte) bool {
	return isERSPAN2Headers(data) && isPlainIPv4(data[erspan2Len:])
}

// decodeERSPAN2PlainIPv4 is decodeFast for isERSPAN2PlainIPv4's layout:
// the mirrored frame is decodePlainIPv4's, cut where the carrying IPv4
// datagram ends and marked truncated when the carrying frame was cut, and
// the mirror's headers become the Packet's first Encap layers, as the walk
// records them.
func decodeERSPAN2PlainIPv4(data []byte, origLen int, p *Packet) bool {
	const ip, erspan = etherHeaderLen, erspan2Len - erspan2HeaderLen
	total := int(binary.BigEndian.Uint16(data[ip+2:]))
	const moreFragments, offsetMask = 0x2000, 0x1fff
	if total < ipv4MinHeaderLen || binary.BigEndian.Uint16(data[ip+6:])&(moreFragments|offsetMask) != 0 {
		return false
	}
	inner := data[erspan2Len:]
	cut := origLen > len(data) || data[erspan+2]&erspanTruncated != 0
	if end := ip + total; end <= len(data) {
		if end < erspan2Len+plainHeadersLen {
			return false
		}
		inner = data[erspan2Len:end]
	} else {
		cut = true
	}
	innerOrig := len(inner)
	if cut {
		innerOrig++ // decodePlainIPv4 marks the packet truncated
	}
	if !decodePlainIPv4(inner, innerOrig, p) {
		return false
	}
	p.CapLen, p.OrigLen = len(data), origLen
	p.Encap[0] = EncapLayer{Kind: EncapEthernet}
	p.Encap[1] = EncapLayer{Kind: EncapIPv4}
	p.Encap[2] = EncapLayer{Kind: EncapGRE}
	p.Encap[3] = EncapLayer{Kind: EncapERSPAN2, ID: uint32(binary.BigEndian.Uint16(data[erspan+2:]) & 0x03ff)}
	p.NEncap = 4
	return true
}

// isPlainIPv4 reports whether an Ethernet frame has no tags and an IPv4
// header without options that carries UDP and is not a fragment (MF clear,
// offset 0), and is long enough to hold a BTH after them: decodePlainIPv4's
// layout.
//
// It tests the EtherType and the IPv4 version and IHL in one 4-byte load,
// the flags, fragment offset and protocol in another, each little-endian
// against the wire's bytes in place (plainEtherIPv4, plainNotFragmentUDP):
// four compares and two byte swaps fewer than field by field.
func isPlainIPv4(data []byte) bool {
	const ip = etherHeaderLen
	return len(data) >= plainHeadersLen && binary.LittleEndian.Uint32(data[12:])&0xffffff == plainEtherIPv4 &&
		binary.LittleEndian.Uint32(data[ip+6:])&plainFragProtoMask == plainNotFragmentUDP
}

// The bytes isPlainIPv4 and isPlainQP test, as a little-endian load of
// them reads them: plainEtherIPv4 is the EtherType 0x0800 and the first
// IPv4 byte 0x45 (version 4, IHL 5: no options), bytes 12-14 of the
// frame; plainNotFragmentUDP is, in bytes 6-9 of the IPv4 header (RFC 791
// §3.1) under plainFragProtoMask, MF and the fragment offset 0 (byte 6's
// low 6 bits, byte 7), the TTL ignored and the protocol 17 (UDP).
const (
	plainEtherIPv4      = etherTypeIPv4>>8 | etherTypeIPv4&0xff<<8 | 0x45<<16
	plainFragProtoMask  = 0xff00ff3f
	plainNotFragmentUDP = protoUDP << 24
)

// portRoCEv2LE is PortRoCEv2 as a little-endian load of the UDP header's
// destination port field reads it.
const portRoCEv2LE = PortRoCEv2>>8 | PortRoCEv2&0xff<<8

// decodeFastLayers is decodeFast for every layout it takes: tags, IPv6,
// mirrors.
func decodeFastLayers(data []byte, origLen int, p *Packet) bool {
	staleEncap := p.NEncap
	truncated := origLen > len(data)
	var (
		frame   = data // the Ethernet frame being decoded: data, then a mirrored one
		n       int    // Encap layers recorded
		et, tci uint16 // EtherType after the tags, innermost tag's TCI
		tagged  bool
		ip      []byte // the IP datagram, trimmed to its length if captured whole
		whole   bool
		hl      int // IP header length
		plen    int // IP payload length as the header says
		proto   uint8
	)
	for mirrored := false; ; mirrored = true {
		if len(frame) < etherHeaderLen {
			return false
		}
		off := etherHeaderLen
		et, tci, tagged = binary.BigEndian.Uint16(frame[12:]), 0, false
		if isVLANTag(et) {
			var ok bool
			if et, off, n, tci, tagged, ok = fastTags(p, frame, off, et, n); !ok {
				return false
			}
		}

		// IPv4 (RFC 791 §3.1) of IHL 5, total length at least 20, neither
		// MF nor a fragment offset; or IPv6 (RFC 8200 §3), whose next
		// header must be UDP or GRE (no extension headers, no jumbogram).
		b := frame[off:]
		var total int
		switch et {
		case etherTypeIPv4:
			if len(b) < ipv4MinHeaderLen || b[0] != 0x45 {
				return false
			}
			total = int(binary.BigEndian.Uint16(b[2:]))
			const moreFragments, offsetMask = 0x2000, 0x1fff
			if total < ipv4MinHeaderLen || binary.BigEndian.Uint16(b[6:])&(moreFragments|offsetMask) != 0 {
				return false
			}
			hl, proto = ipv4MinHeaderLen, b[9]
		case etherTypeIPv6:
			if len(b) < ipv6HeaderLen || b[0]>>4 != 6 {
				return false
			}
			total = ipv6HeaderLen + int(binary.BigEndian.Uint16(b[4:]))
			hl, proto = ipv6HeaderLen, b[6]
		default:
			return false
		}
		plen = total - hl
		if whole = total <= len(b); whole {
			ip = b[:total]
		} else {
			ip = b
			truncated = true
		}
		if proto != protoGRE || mirrored {
			break
		}

		// A mirror: Encap gets the carrying frame's Ethernet header first,
		// then its tags, its IP header, GRE and ERSPAN; the mirrored frame's
		// fields replace the carrying frame's.
		for i := n; i > 0; i-- {
			p.Encap[i] = p.Encap[i-1]
		}
		p.Encap[0] = EncapLayer{Kind: EncapEthernet}
		if et == etherTypeIPv4 {
			p.Encap[n+1] = EncapLayer{Kind: EncapIPv4}
		} else {
			p.Encap[n+1] = EncapLayer{Kind: EncapIPv6}
		}
		var cut, ok bool
		if frame, n, cut, ok = fastTunnel(p, ip[hl:], n+2); !ok {
			return false
		}
		truncated = truncated || cut
	}

	// UDP (RFC 768) to the RoCEv2 port, with a length that fits the IP
	// payload.
	if proto != protoUDP {
		return false
	}
	u := ip[hl:]
	if len(u) < udpHeaderLen || binary.BigEndian.Uint16(u[2:]) != PortRoCEv2 {
		return false
	}
	udpLen := int(binary.BigEndian.Uint16(u[4:]))
	if udpLen < udpHeaderLen || udpLen > plen {
		return false
	}
	ib := u[udpHeaderLen:]
	if n := udpLen - udpHeaderLen; n <= len(ib) {
		ib = ib[:n]
	} else {
		truncated = true
	}
	if len(ib) < bth.BTHLen {
		return false
	}

	p.Kind, p.Malformed, p.Note = KindRoCE, ReasonNone, ReasonNone
	p.CapLen, p.OrigLen = len(data), origLen
	p.Truncated = truncated
	if staleEncap < 0 || staleEncap > MaxEncap {
		staleEncap = MaxEncap
	}
	for i := n; i < staleEncap; i++ {
		p.Encap[i] = EncapLayer{}
	}
	p.NEncap = n
	p.EtherType = et
	p.HasVLAN, p.VLAN, p.PCP = tagged, tci&0x0fff, uint8(tci>>13)
	p.RoCEVersion = 2
	if et == etherTypeIPv4 {
		p.IPVersion = 4
		p.DSCP, p.ECN = ip[1]>>2, ip[1]&0x03
		p.TTL, p.FlowLabel = ip[8], 0
		p.IPID = uint32(binary.BigEndian.Uint16(ip[4:]))
		p.Src = netip.AddrFrom4([4]byte(ip[12:16]))
		p.Dst = netip.AddrFrom4([4]byte(ip[16:20]))
	} else {
		p.IPVersion = 6
		tc := ip[0]<<4 | ip[1]>>4
		p.DSCP, p.ECN = tc>>2, tc&0x03
		p.TTL, p.FlowLabel = ip[7], flowLabel(ip)
		p.IPID = 0
		p.Src = netip.AddrFrom16([16]byte(ip[8:24]))
		p.Dst = netip.AddrFrom16([16]byte(ip[24:40]))
	}
	p.IPTotalLen = hl + plen
	p.Fragment, p.WholeLen = false, 0
	p.Proto = protoUDP
	p.SrcPort, p.DstPort = binary.BigEndian.Uint16(u), PortRoCEv2
	p.UDPLen = udpLen
	p.TCPFlags = 0
	p.L4Checksum, p.FragOffset = binary.BigEndian.Uint16(u[6:]), 0
	if whole {
		ip = ip[:hl+udpLen] // udpLen <= plen: within the datagram
	}
	return finishFast(p, ip, ib, whole, udpLen)
}

// plainHeadersLen is the length of Ethernet without tags, IPv4 without
// options, UDP and BTH.
const plainHeadersLen = etherHeaderLen + ipv4MinHeaderLen + udpHeaderLen + bth.BTHLen

// decodePlainIPv4 is decodeFast for the most common layout, Ethernet
// without tags and IPv4 without options carrying UDP, not a fragment, of
// at least plainHeadersLen bytes, with every header at a fixed offset: a
// frame isPlainIPv4 takes, whose tests it does not repeat.
func decodePlainIPv4(data []byte, origLen int, p *Packet) bool {
	const ipOff, udpOff, ibOff = etherHeaderLen, etherHeaderLen + ipv4MinHeaderLen, plainHeadersLen - bth.BTHLen
	h := (*[plainHeadersLen]byte)(data)
	total := int(binary.BigEndian.Uint16(h[ipOff+2:]))
	udpLen := int(binary.BigEndian.Uint16(h[udpOff+4:]))
	// isPlainIPv4 took the EtherType, IHL, fragment fields and protocol.
	if total < ipv4MinHeaderLen || binary.LittleEndian.Uint16(h[udpOff+2:]) != portRoCEv2LE ||
		udpLen < udpHeaderLen || udpLen > total-ipv4MinHeaderLen {
		return false
	}
	// The UDP datagram ends within the IP datagram (udpLen <= total-20),
	// so only the end of the bytes captured cuts it, and then the IP
	// datagram too. Truncated: the frame or the IP datagram is longer
	// than the bytes captured (one compare, without a branch).
	whole := ipOff+total <= len(data)
	truncated := max(origLen, ipOff+total) > len(data)
	ibEnd := min(udpOff+udpLen, len(data))
	if ibEnd-ibOff < bth.BTHLen {
		return false
	}

	p.Kind, p.Malformed, p.Note = KindRoCE, ReasonNone, ReasonNone
	p.CapLen, p.OrigLen = len(data), origLen
	p.Truncated = truncated
	if stale := p.NEncap; stale != 0 {
		if stale < 0 || stale > MaxEncap {
			stale = MaxEncap
		}
		for i := range stale {
			p.Encap[i] = EncapLayer{}
		}
		p.NEncap = 0
	}
	p.EtherType = etherTypeIPv4
	p.HasVLAN, p.VLAN, p.PCP = false, 0, 0
	p.RoCEVersion = 2
	p.IPVersion = 4
	p.DSCP, p.ECN = h[ipOff+1]>>2, h[ipOff+1]&0x03
	p.TTL, p.FlowLabel = h[ipOff+8], 0
	p.IPID = uint32(binary.BigEndian.Uint16(h[ipOff+4:]))
	p.Src, p.Dst = netip.AddrFrom4([4]byte(h[ipOff+12:ipOff+16])), netip.AddrFrom4([4]byte(h[ipOff+16:ipOff+20]))
	p.IPTotalLen = total
	p.Fragment, p.WholeLen = false, 0
	p.Proto = protoUDP
	p.SrcPort, p.DstPort = binary.BigEndian.Uint16(h[udpOff:]), PortRoCEv2
	p.UDPLen = udpLen
	p.TCPFlags = 0
	p.L4Checksum, p.FragOffset = binary.BigEndian.Uint16(h[udpOff+6:]), 0
	// finishFast, a call fewer.
	payloadLen, ok := fastPayloadLen((*[bth.BTHLen]byte)(h[ibOff:]), udpLen)
	if !ok || isQP1MAD((*[bth.BTHLen]byte)(h[ibOff:]), ibEnd-ibOff) {
		return false
	}
	p.PayloadLen = payloadLen
	p.clearFastStale()
	p.HasBTH = true
	if whole {
		return finishWhole(p, data[ipOff:ibEnd], data[ibOff:ibEnd])
	}
	p.ICRC = bth.ICRCUnchecked
	return p.BTH.DecodeReused(data[ibOff:ibEnd]) == nil
}

// finishFast completes a Packet the fast path has filled up to UDP: the
// large parts that stay zero, the ICRC (Annex A17 §A17.8) of a datagram
// captured whole, and the IB transport headers (IBTA vol 1 §9.2, §9.3) as
// transport decodes them. ip is the IP datagram up to the end of its UDP
// datagram, where the ICRC ends (used only when whole: the IP datagram was
// captured whole), ib the UDP payload as far as captured, at least a BTH.
// decodePlainIPv4 does the same in its own body, a call fewer.
func finishFast(p *Packet, ip, ib []byte, whole bool, udpLen int) bool {
	h := (*[bth.BTHLen]byte)(ib)
	payloadLen, ok := fastPayloadLen(h, udpLen)
	if !ok || isQP1MAD(h, len(ib)) {
		return false
	}
	p.PayloadLen = payloadLen
	p.clearFastStale()
	p.HasBTH = true
	if whole {
		return finishWhole(p, ip, ib)
	}
	p.ICRC = bth.ICRCUnchecked
	return p.BTH.DecodeReused(ib) == nil
}

// fastPayloadLen checks for finishFast the BTH h of a UDP datagram of
// length udpLen and returns its BTH.PayloadLen, read from the opcode and
// pad count in the packet rather than from p.BTH, so that it can run before
// the BTH's decode, the last call. ok is false, for the walk to decode the
// datagram, when the UDP length cannot hold the opcode's headers, pad and
// ICRC, or is a CNP's other than 12+16+4 bytes (BTH.LengthOK; Annex A17
// §A17.9.2).
func fastPayloadLen(h *[bth.BTHLen]byte, udpLen int) (payloadLen int, ok bool) {
	op := bth.Opcode(h[0])
	declLen := udpLen - udpHeaderLen
	if op.IsCNP() {
		return 0, declLen == bth.BTHLen+bth.CNPPayloadLen+bth.ICRCLen
	}
	payloadLen = declLen - op.HeaderLen() - int(h[1]>>4&0x3) - bth.ICRCLen
	return payloadLen, payloadLen >= 0
}

// isQP1MAD reports whether the BTH h, of which ibLen bytes with what
// follows were captured, starts a MAD to QP1: a UD SEND_ONLY to DestQP 1
// whose DETH, the header after its BTH, was captured (what
// BTH.NextLayerType calls a CM MAD). The fast path leaves it to the walk,
// which decodes its CM.
func isQP1MAD(h *[bth.BTHLen]byte, ibLen int) bool {
	return bth.Opcode(h[0]) == bth.OpcodeUDSendOnly && h[5] == 0 && h[6] == 0 && h[7] == bth.CMQPN &&
		ibLen >= bth.BTHLen+bth.DETHLen
}

// clearFastStale zeroes the parts of p that the fast path's frames leave
// zero and that an earlier decode may have set: CM when HasMAD or
// CM.Contents says it may hold a MAD, PFC when HasPFC is set (see Decode).
// One field a statement: a tuple assignment would build the zero values in
// temporaries and copy them.
func (p *Packet) clearFastStale() {
	if p.HasMAD || p.CM.Contents != nil {
		p.HasMAD = false
		p.HasCM = false
		p.CM = bth.CMMAD{}
	}
	if p.HasPFC {
		p.HasPFC = false
		p.PFC = PFCFrame{}
	}
}

// finishWhole is the end of finishFast for a datagram captured whole: its
// ICRC, then its BTH. Apart, so that only the frames that check an ICRC
// keep p and ib across a call.
func finishWhole(p *Packet, ip, ib []byte) bool {
	p.ICRC = bth.VerifyICRCv2(ip)
	return p.BTH.DecodeReused(ib) == nil
}
