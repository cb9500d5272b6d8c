package packet

import (
	"encoding/binary"

	"github.com/rocedump/rocedump/capture"
)

// PeekRoCEv2IPv4 reads the IPv4 source and destination addresses of a
// RoCEv2 frame in the commonest mirror layouts without decoding it:
// Ethernet (link type lt) with at most fastMaxTags VLAN tags, an IPv4
// header (any IHL) that is not a fragment and whose total length holds the
// UDP ports, and a UDP header to port 4791 (IBTA vol 1 Annex A17
// §A17.2.3); or such a frame mirrored in ERSPAN type I, II or III over GRE
// in an IPv4 header without options, in such an Ethernet frame (the
// addresses are then the mirrored frame's). ok is false for every other
// frame and for one cut before the UDP destination port.
//
// It validates nothing more: Decode may still find the frame malformed or
// cut before its BTH. What it guarantees (the fuzz test checks it) is that
// Decode makes of an accepted frame a RoCE packet, a malformed one, or, for
// an IPv4 header too bad to read, an other frame (KindOther) without
// addresses; never an IP conversation or a PFC frame. And a RoCE packet's
// Src and Dst are these addresses (a BTH follows UDP port 4791 directly:
// there is no inner frame). A worker that takes a share of the flows by
// address (see flows.Split.OfIPv4) can so skip the frames of other shares
// for the cost of a few loads.
func PeekRoCEv2IPv4(lt capture.LinkType, data []byte) (src, dst uint32, ok bool) {
	ip, _, ok := peekRoCEv2IPv4(lt, data)
	if !ok {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:]), true
}

// PeekRoCEv2IPv4QP is PeekRoCEv2IPv4 that also reads the destination QP of
// the BTH (IBTA vol 1 §9.2, bytes 5-7), which makes the flow key
// (flows.Table.PrefetchFlow takes it). hasQP is false when ok is but the
// frame is cut before the BTH's DestQP. The guarantee is
// PeekRoCEv2IPv4's, and for a RoCE packet with a BTH, BTH.DestQP is qp.
func PeekRoCEv2IPv4QP(lt capture.LinkType, data []byte) (src, dst, qp uint32, ok, hasQP bool) {
	// The commonest frames, whole to the DestQP, first: isPlainQP's
	// checks at fixed offsets of one array, behind one bounds check, here
	// (~35 instructions a plain frame, where a call to them cost ~20 more
	// with the values kept across it for the other layouts); every other
	// frame in peekQPOther.
	if lt == capture.LinkTypeEthernet && len(data) >= plainPeekQPLen {
		if h := (*[plainPeekQPLen]byte)(data); isPlainQP(h) {
			src, dst, qp := plainQP(h)
			return src, dst, qp, true, true
		}
	}
	return peekQPOther(lt, data)
}

// peekQPOther is PeekRoCEv2IPv4QP for a frame that is not of isPlainQP's
// layout: the frame that ERSPAN II mirrors (peekERSPAN2Plain) at fixed
// offsets, every other by peekRoCEv2IPv4.
func peekQPOther(lt capture.LinkType, data []byte) (src, dst, qp uint32, ok, hasQP bool) {
	if lt == capture.LinkTypeEthernet && len(data) >= erspan2Len+plainPeekQPLen && isERSPAN2Headers(data) {
		const ip, moreFragments, offsetMask = etherHeaderLen, 0x2000, 0x1fff
		if binary.BigEndian.Uint16(data[ip+6:])&(moreFragments|offsetMask) == 0 &&
			ip+int(binary.BigEndian.Uint16(data[ip+2:])) >= erspan2Len+plainPeekQPLen {
			if h := (*[plainPeekQPLen]byte)(data[erspan2Len:]); isPlainQP(h) {
				src, dst, qp := plainQP(h)
				return src, dst, qp, true, true
			}
		}
	}
	ip, hl, ok := peekRoCEv2IPv4(lt, data)
	if !ok {
		return 0, 0, 0, false, false
	}
	src, dst = binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:])
	if len(ip) >= hl+udpHeaderLen+8 {
		b := ip[hl+udpHeaderLen:]
		return src, dst, uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7]), true, true
	}
	return src, dst, 0, true, false
}

// plainPeekQPLen is the bytes of a frame of Ethernet, IPv4 without options
// and UDP up to the end of the BTH's DestQP.
const plainPeekQPLen = etherHeaderLen + ipv4MinHeaderLen + udpHeaderLen + 8

// isPlainQP is peekPlain for a frame captured at least to the end of the
// DestQP: Ethernet without tags, IPv4 without options that is not a
// fragment and whose total length holds the UDP ports, UDP to port 4791.
//
// Its tests are isPlainIPv4's, in the same loads, and the port's without a
// byte swap.
func isPlainQP(h *[plainPeekQPLen]byte) bool {
	const ip, udp = etherHeaderLen, etherHeaderLen + ipv4MinHeaderLen
	return binary.LittleEndian.Uint32(h[12:])&0xffffff == plainEtherIPv4 &&
		binary.LittleEndian.Uint32(h[ip+6:])&plainFragProtoMask == plainNotFragmentUDP &&
		binary.BigEndian.Uint16(h[ip+2:]) >= ipv4MinHeaderLen+4 && binary.LittleEndian.Uint16(h[udp+2:]) == portRoCEv2LE
}

// plainQP reads the addresses and DestQP of a frame isPlainQP takes; the
// DestQP from the BTH's second word, less its first byte (FECN, BECN,
// resv6a).
func plainQP(h *[plainPeekQPLen]byte) (src, dst, qp uint32) {
	const ip, ib = etherHeaderLen, etherHeaderLen + ipv4MinHeaderLen + udpHeaderLen
	return binary.BigEndian.Uint32(h[ip+12:]), binary.BigEndian.Uint32(h[ip+16:]),
		binary.BigEndian.Uint32(h[ib+4:]) & 0xffffff
}

// peekRoCEv2IPv4 is the peeks' work: it returns the RoCEv2 frame's IPv4
// header (ip[:hl]) and what follows it in the frame. It takes the frame
// as captured, or mirrored in ERSPAN (peekERSPAN): the two commonest
// layouts at fixed offsets (peekPlain, peekERSPAN2Plain), every other by
// the walk (peekWalk), which gives the same for those two
// (TestPeekFixedLayoutsMatchWalk).
func peekRoCEv2IPv4(lt capture.LinkType, data []byte) (ip []byte, hl int, ok bool) {
	if lt != capture.LinkTypeEthernet {
		return nil, 0, false
	}
	if ip, ok := peekPlain(data); ok {
		return ip, ipv4MinHeaderLen, true
	}
	if inner, ok := peekERSPAN2Plain(data); ok {
		if ip, ok := peekPlain(inner); ok {
			return ip, ipv4MinHeaderLen, true
		}
	}
	return peekWalk(data)
}

// peekPlain is peekWalk for a frame of Ethernet without tags, IPv4
// without options and UDP to port 4791, with every check at a fixed
// offset: it returns the IPv4 header and what follows it in the frame, or
// false for any other frame.
func peekPlain(data []byte) (ip []byte, ok bool) {
	const moreFragments, offsetMask = 0x2000, 0x1fff
	if len(data) < etherHeaderLen+ipv4MinHeaderLen+4 || binary.BigEndian.Uint16(data[12:]) != etherTypeIPv4 {
		return nil, false
	}
	ip = data[etherHeaderLen:]
	if ip[0] != 0x45 || ip[9] != protoUDP || binary.BigEndian.Uint16(ip[6:])&(moreFragments|offsetMask) != 0 ||
		binary.BigEndian.Uint16(ip[2:]) < ipv4MinHeaderLen+4 || binary.BigEndian.Uint16(ip[ipv4MinHeaderLen+2:]) != PortRoCEv2 {
		return nil, false
	}
	return ip, true
}

// peekERSPAN2Plain returns the frame that a frame of ERSPAN type II in
// the layout of isERSPAN2Headers mirrors, as peekERSPAN would: from the
// ERSPAN payload to the end of the carrying datagram or of the capture.
// It is false for any other frame.
func peekERSPAN2Plain(data []byte) (frame []byte, ok bool) {
	const ip = etherHeaderLen
	const moreFragments, offsetMask = 0x2000, 0x1fff
	if !isERSPAN2Headers(data) || binary.BigEndian.Uint16(data[ip+6:])&(moreFragments|offsetMask) != 0 {
		return nil, false
	}
	end := ip + int(binary.BigEndian.Uint16(data[ip+2:]))
	switch {
	case end < erspan2Len:
		return nil, false // the walk rejects it or takes it otherwise
	case end < len(data):
		return data[erspan2Len:end], true
	}
	return data[erspan2Len:], true
}

// peekWalk is the walk of the peeks, for every layout they take.
func peekWalk(data []byte) (ip []byte, hl int, ok bool) {
	ip, hl, ok = peekEtherIPv4(data)
	if ok && ip[9] == protoGRE {
		if data, ok = peekERSPAN(ip, hl); !ok {
			return nil, 0, false
		}
		ip, hl, ok = peekEtherIPv4(data)
	}
	if !ok || ip[9] != protoUDP || len(ip) < hl+4 || int(binary.BigEndian.Uint16(ip[2:])) < hl+4 ||
		binary.BigEndian.Uint16(ip[hl+2:]) != PortRoCEv2 {
		return nil, 0, false
	}
	return ip, hl, true
}

// peekEtherIPv4 reads an Ethernet frame with at most fastMaxTags VLAN tags
// and an IPv4 header (any IHL) that is not a fragment, and returns the
// header and what follows it in the frame.
func peekEtherIPv4(data []byte) (ip []byte, hl int, ok bool) {
	if len(data) < etherHeaderLen {
		return nil, 0, false
	}
	off := etherHeaderLen
	et := binary.BigEndian.Uint16(data[12:])
	for tags := 0; isVLANTag(et); tags++ {
		if tags == fastMaxTags || len(data) < off+vlanTagLen {
			return nil, 0, false
		}
		et = binary.BigEndian.Uint16(data[off+2:])
		off += vlanTagLen
	}
	if et != etherTypeIPv4 || len(data) < off+ipv4MinHeaderLen {
		return nil, 0, false
	}
	ip = data[off:]
	const moreFragments, offsetMask = 0x2000, 0x1fff
	hl = int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || hl < ipv4MinHeaderLen || len(ip) < hl || binary.BigEndian.Uint16(ip[6:])&(moreFragments|offsetMask) != 0 {
		return nil, 0, false
	}
	return ip, hl, true
}

// peekERSPAN returns the frame an IPv4 datagram (header ip[:hl], without
// options) mirrors in ERSPAN over GRE as the fast path takes it
// (parseERSPAN): from the GRE payload as far as the IP total length says,
// or as captured when the datagram was cut.
func peekERSPAN(ip []byte, hl int) (frame []byte, ok bool) {
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if hl != ipv4MinHeaderLen || total < hl {
		return nil, false
	}
	b := ip[hl:]
	if total <= len(ip) {
		b = ip[hl:total]
	}
	frame, _, ok = parseERSPAN(b)
	return frame, ok
}
