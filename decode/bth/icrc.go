package bth

import (
	"encoding/binary"
	"hash/crc32"
)

// ICRCStatus is the outcome of checking a packet's invariant CRC.
type ICRCStatus uint8

// ICRC check outcomes.
const (
	ICRCUnchecked ICRCStatus = iota // not checked: not captured whole, or not RoCE
	ICRCOK                          // the ICRC matches
	ICRCBad                         // the ICRC does not match
)

// String returns "unchecked", "ok" or "bad".
func (s ICRCStatus) String() string {
	switch s {
	case ICRCOK:
		return "ok"
	case ICRCBad:
		return "bad"
	}
	return "unchecked"
}

// MarshalText returns String as bytes, for JSON and YAML.
func (s ICRCStatus) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// maskedLRH stands for the LRH, whose fields are all variant: RoCE computes
// the ICRC over 8 bytes of ones in its place (Annex A17 §A17.8.1, Annex A16).
var maskedLRH = [8]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

const (
	udpHeaderLen  = 8
	ipv6HeaderLen = 40
	protoUDP      = 17
	bthVariantOff = 4 // BTH byte holding FECN, BECN and resv6a
)

// ICRCv2 computes the invariant CRC of a RoCEv2 packet (IBTA Annex A17
// §A17.8, as Linux rxe_icrc.c). ip is the whole IPv4 or IPv6 datagram,
// its 4-byte ICRC trailer included; the CRC covers all but that trailer.
//
// The CRC-32 (IEEE) runs over 8 bytes of ones for the LRH, then the IP
// header with its variant fields set to ones (IPv4: TOS, TTL and header
// checksum, options kept as they are; IPv6: traffic class, flow label and
// hop limit), the UDP header with checksum 0xffff, the BTH with byte 4
// (FECN, BECN, resv6a) 0xff, and the rest unmasked. On the wire the ICRC is
// stored little-endian: the packet is good when
// binary.LittleEndian.Uint32(trailer) equals the value returned.
//
// Errors: a *HeaderError when ip is too short to hold IP, UDP, BTH and ICRC;
// ErrNotRoCEv2 when it is not IPv4 or IPv6 carrying UDP. It does not
// allocate (unless it returns a *HeaderError).
func ICRCv2(ip []byte) (uint32, error) {
	crc, short, need, err := icrcV2(ip)
	if short != "" {
		return 0, shortError(short, len(ip), need)
	}
	return crc, err
}

// icrcV2 does ICRCv2's work without allocating on any path: when ip is too
// short it names the header that did not fit and the bytes needed. Rather
// than copy and mask the headers, it feeds the CRC the packet's bytes and
// 0xff in place of each masked byte.
func icrcV2(ip []byte) (crc uint32, short string, need int, err error) {
	if len(ip) < 1 {
		return 0, "IP", 1, nil
	}
	var ipLen int
	switch ip[0] >> 4 {
	case 4:
		ipLen = int(ip[0]&0x0f) * 4
		if ipLen < 20 {
			return 0, "", 0, ErrNotRoCEv2
		}
		if len(ip) < ipLen {
			return 0, "IPv4", ipLen, nil
		}
		if ip[9] != protoUDP {
			return 0, "", 0, ErrNotRoCEv2
		}
	case 6:
		ipLen = ipv6HeaderLen
		if len(ip) < ipLen {
			return 0, "IPv6", ipLen, nil
		}
		if ip[6] != protoUDP {
			return 0, "", 0, ErrNotRoCEv2
		}
	default:
		return 0, "", 0, ErrNotRoCEv2
	}
	udp := ipLen
	bth := udp + udpHeaderLen
	if len(ip) < bth+BTHLen+ICRCLen {
		return 0, "RoCEv2 packet", bth + BTHLen + ICRCLen, nil
	}
	crc = crc32.Update(0, crc32.IEEETable, maskedLRH[:])
	if ip[0]>>4 == 6 {
		crc = updateByte(crc, ip[0]|0x0f) // traffic class, high nibble
		crc = crc32.Update(crc, crc32.IEEETable, maskedLRH[:3])
		crc = crc32.Update(crc, crc32.IEEETable, ip[4:7]) // payload length, next header
		crc = updateByte(crc, 0xff)                       // hop limit
		crc = crc32.Update(crc, crc32.IEEETable, ip[8:udp+6])
	} else {
		crc = updateByte(crc, ip[0])
		crc = updateByte(crc, 0xff) // TOS
		crc = crc32.Update(crc, crc32.IEEETable, ip[2:8])
		crc = updateByte(crc, 0xff) // TTL
		crc = updateByte(crc, ip[9])
		crc = crc32.Update(crc, crc32.IEEETable, maskedLRH[:2]) // header checksum
		crc = crc32.Update(crc, crc32.IEEETable, ip[12:udp+6])  // addresses, options, UDP
	}
	crc = crc32.Update(crc, crc32.IEEETable, maskedLRH[:2]) // UDP checksum
	return bthICRC(crc, ip[bth:]), "", 0, nil
}

// bthICRC continues crc over a packet from its BTH on: the BTH with byte 4
// masked, then everything but the 4-byte ICRC trailer. p is at least
// BTHLen+ICRCLen bytes.
func bthICRC(crc uint32, p []byte) uint32 {
	crc = crc32.Update(crc, crc32.IEEETable, p[:bthVariantOff])
	crc = updateByte(crc, 0xff)
	return crc32.Update(crc, crc32.IEEETable, p[bthVariantOff+1:len(p)-ICRCLen])
}

// updateByte adds one byte to a CRC-32 (IEEE) as crc32.Update would.
func updateByte(crc uint32, b byte) uint32 {
	c := ^crc
	c = crc32.IEEETable[byte(c)^b] ^ c>>8
	return ^c
}

// ICRCv1 computes the invariant CRC of a RoCEv1 packet (IBTA Annex A16,
// with §7.8.1's masking): grhPacket is everything after the Ethernet header,
// the GRH first and the 4-byte ICRC last. The CRC covers 8 bytes of ones for
// the LRH, the GRH with traffic class, flow label and hop limit set to ones,
// the BTH with byte 4 set to 0xff, and the rest. It does not allocate
// (unless it returns a *HeaderError).
func ICRCv1(grhPacket []byte) (uint32, error) {
	if len(grhPacket) < GRHLen+BTHLen+ICRCLen {
		return 0, shortError("RoCEv1 packet", len(grhPacket), GRHLen+BTHLen+ICRCLen)
	}
	return icrcV1(grhPacket), nil
}

// icrcV1 is ICRCv1 for a packet known to be long enough.
func icrcV1(g []byte) uint32 {
	crc := crc32.Update(0, crc32.IEEETable, maskedLRH[:])
	crc = updateByte(crc, g[0]|0x0f)                        // TClass, high nibble
	crc = crc32.Update(crc, crc32.IEEETable, maskedLRH[:3]) // TClass, FlowLabel
	crc = crc32.Update(crc, crc32.IEEETable, g[4:7])        // PayLen, NxtHdr
	crc = updateByte(crc, 0xff)                             // HopLmt
	crc = crc32.Update(crc, crc32.IEEETable, g[8:GRHLen])   // SGID, DGID
	return bthICRC(crc, g[GRHLen:])
}

// VerifyICRCv2 checks the ICRC trailer of a RoCEv2 datagram (see ICRCv2):
// ICRCOK or ICRCBad, or ICRCUnchecked when ip is not a whole RoCEv2 packet.
func VerifyICRCv2(ip []byte) ICRCStatus {
	want, short, _, err := icrcV2(ip)
	if short != "" || err != nil {
		return ICRCUnchecked
	}
	return verdict(want, ip)
}

// VerifyICRCv1 checks the ICRC trailer of a RoCEv1 packet (see ICRCv1).
func VerifyICRCv1(grhPacket []byte) ICRCStatus {
	if len(grhPacket) < GRHLen+BTHLen+ICRCLen {
		return ICRCUnchecked
	}
	return verdict(icrcV1(grhPacket), grhPacket)
}

// verdict compares want with the little-endian ICRC trailer of pkt.
func verdict(want uint32, pkt []byte) ICRCStatus {
	if binary.LittleEndian.Uint32(pkt[len(pkt)-ICRCLen:]) == want {
		return ICRCOK
	}
	return ICRCBad
}
