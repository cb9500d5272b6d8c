package packet

import (
	"encoding/binary"

	"github.com/rocedump/rocedump/capture"
)

// PeekRoCEv2IPv4 reads the IPv4 source and destination addresses of a
// RoCEv2 frame in the commonest mirror layout without decoding it:
// Ethernet (link type lt) with at most fastMaxTags VLAN tags, an IPv4
// header (any IHL) that is not a fragment and whose total length holds the
// UDP ports, and a UDP header to port 4791 (IBTA vol 1 Annex A17 §A17.2.3). ok is false for every other
// frame and for one cut before the UDP destination port.
//
// It validates nothing more: Decode may still find the frame malformed or
// cut before its BTH. What it guarantees (the fuzz test checks it) is that
// Decode makes of an accepted frame a RoCE packet, a malformed one, or, for
// an IPv4 header too bad to read, an other frame (KindOther) without
// addresses; never an IP conversation or a PFC frame. And a RoCE packet's
// Src and Dst are these addresses (a BTH follows UDP port 4791 directly:
// there is no inner frame). A worker that takes a share of the flows by address (see
// flows.ShardOfIPv4) can so skip the frames of other shares for the cost of
// a few loads.
func PeekRoCEv2IPv4(lt capture.LinkType, data []byte) (src, dst uint32, ok bool) {
	if lt != capture.LinkTypeEthernet || len(data) < etherHeaderLen {
		return 0, 0, false
	}
	off := etherHeaderLen
	et := binary.BigEndian.Uint16(data[12:])
	for tags := 0; isVLANTag(et); tags++ {
		if tags == fastMaxTags || len(data) < off+vlanTagLen {
			return 0, 0, false
		}
		et = binary.BigEndian.Uint16(data[off+2:])
		off += vlanTagLen
	}
	if et != etherTypeIPv4 || len(data) < off+ipv4MinHeaderLen {
		return 0, 0, false
	}
	ip := data[off:]
	const moreFragments, offsetMask = 0x2000, 0x1fff
	hl := int(ip[0]&0x0f) * 4
	if ip[0]>>4 != 4 || hl < ipv4MinHeaderLen || ip[9] != 17 || binary.BigEndian.Uint16(ip[6:])&(moreFragments|offsetMask) != 0 ||
		len(ip) < hl+4 || int(binary.BigEndian.Uint16(ip[2:])) < hl+4 || binary.BigEndian.Uint16(ip[hl+2:]) != PortRoCEv2 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(ip[12:]), binary.BigEndian.Uint32(ip[16:]), true
}
