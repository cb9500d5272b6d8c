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
// ErrNotRoCEv2 when it is not IPv4 or IPv6 carrying UDP, and for IPv6 with
// extension headers: Annex A17 masks the fields of the IPv6 header as those
// of a GRH (§7.8.1) and does not define how extension headers, some of
// whose option data routers may change (RFC 8200 §4.2), enter the ICRC. It
// does not allocate (unless it returns a *HeaderError).
func ICRCv2(ip []byte) (uint32, error) {
	crc, short, need, err := icrcV2(ip)
	if short != "" {
		return 0, shortError(short, len(ip), need)
	}
	return crc, err
}

// icrcV2 does ICRCv2's work without allocating on any path: when ip is too
// short it names the header that did not fit and the bytes needed.
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
	if len(ip) < ipLen+udpHeaderLen+BTHLen+ICRCLen {
		return 0, "RoCEv2 packet", ipLen + udpHeaderLen + BTHLen + ICRCLen, nil
	}
	return icrcV2Sum(ip, ipLen), "", 0, nil
}

// icrcV2Sum is the ICRC of a RoCEv2 datagram (Annex A17 §A17.8.1) whose IP
// header, of ipLen bytes, is IPv4 or IPv6 and is followed by at least UDP,
// BTH and the ICRC trailer. With a 20-byte IPv4 header or an IPv6 one, the
// headers go through the CRC eight bytes at a time with their variant bits
// ORed in from a constant mask (icrcMaskIPv4, icrcMaskIPv6), so nothing is
// copied; IPv4 options move the UDP and BTH, and such headers are masked in
// a copy.
func icrcV2Sum(ip []byte, ipLen int) uint32 {
	switch {
	case ipLen == ipv4MinHeaderLen:
		return icrcIPv4(ip)
	case ip[0]>>4 == 6:
		return icrcMasked(ip, icrcMaskIPv6[:])
	}
	// IPv4 with options: TOS, TTL and header checksum (RFC 791 §3.1) masked
	// in a copy, options kept as they are; the UDP checksum and BTH byte 4.
	end := len(ip) - ICRCLen
	var buf [icrcBufLen]byte
	n := copy(buf[:], ip[:end])
	buf[1] = 0xff
	buf[8] = 0xff
	buf[10], buf[11] = 0xff, 0xff
	buf[ipLen+6], buf[ipLen+7] = 0xff, 0xff
	buf[ipLen+udpHeaderLen+bthVariantOff] = 0xff
	return crcRest(crcSlicing8(maskedLRHCRC, buf[:n]), ip[n:end])
}

// icrcBufLen is the size of the buffer an IPv4 datagram with options is
// masked in: the longest IPv4 header (60 bytes), UDP and BTH are 80 bytes.
const icrcBufLen = 80

const ipv4MinHeaderLen = 20

// The variant bits of the headers of a RoCE packet (Annex A17 §A17.8.1,
// Annex A16, IBTA vol 1 §7.8.1), as little-endian 64-bit words: word i ORed
// onto bytes 8i to 8i+7 sets the variant fields to ones.
var (
	// IPv4 without options, UDP, BTH (40 bytes): TOS (byte 1), TTL (8),
	// header checksum (10, 11), UDP checksum (26, 27), BTH byte 4 (32).
	icrcMaskIPv4 = [...]uint64{0xff00, 0xffff00ff, 0, 0xffff0000, 0xff}
	// IPv6, UDP, the BTH's first 8 bytes (56 bytes): traffic class and flow
	// label (low nibble of byte 0, bytes 1-3), hop limit (7), UDP checksum
	// (46, 47), BTH byte 4 (52).
	icrcMaskIPv6 = [...]uint64{0xff000000ffffff0f, 0, 0, 0, 0, 0xffff000000000000, 0xff00000000}
	// GRH and the BTH's first 8 bytes (48 bytes): TClass and FlowLabel
	// (low nibble of byte 0, bytes 1-3), HopLmt (7), BTH byte 4 (44).
	icrcMaskGRH = [...]uint64{0xff000000ffffff0f, 0, 0, 0, 0, 0xff00000000}
)

// icrcMasked is the ICRC of pkt, the packet after the LRH with its 4-byte
// trailer, whose first 8*len(mask) bytes, all before the trailer, have their
// variant bits in mask. The masked words go through the CRC one at a time,
// then the rest through crcRest.
func icrcMasked(pkt []byte, mask []uint64) uint32 {
	end := len(pkt) - ICRCLen
	hdr := pkt[:len(mask)*8]
	t := crcTab
	c := ^maskedLRHCRC
	for i, m := range mask {
		w := binary.LittleEndian.Uint64(hdr[8*i:]) | m
		lo, hi := c^uint32(w), uint32(w>>32)
		c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
			t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
	}
	return crcRest(^c, pkt[len(hdr):end])
}

// crcTab points to crcTables. Reading the tables through a pointer held in
// a register lets each lookup be one instruction; the compiler addresses a
// global array relative to the instruction pointer, which takes an extra
// instruction per lookup to add the index.
var crcTab = &crcTables

// icrcIPv4 is icrcMasked(ip, icrcMaskIPv4[:]) for a RoCEv2 datagram with a
// 20-byte IPv4 header, at least 44 bytes long: the most common one, worth
// its five words unrolled from a fixed-size array (no bounds checks, no
// loop, no OR of the zero mask) and a tail without calls.
func icrcIPv4(ip []byte) uint32 {
	h := (*[40]byte)(ip)
	t := crcTab
	c := ^maskedLRHCRC
	var w uint64
	var lo, hi uint32
	w = binary.LittleEndian.Uint64(h[0:]) | icrcMaskIPv4[0]
	lo, hi = c^uint32(w), uint32(w>>32)
	c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
		t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
	w = binary.LittleEndian.Uint64(h[8:]) | icrcMaskIPv4[1]
	lo, hi = c^uint32(w), uint32(w>>32)
	c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
		t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
	w = binary.LittleEndian.Uint64(h[16:]) // icrcMaskIPv4[2] is 0
	lo, hi = c^uint32(w), uint32(w>>32)
	c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
		t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
	w = binary.LittleEndian.Uint64(h[24:]) | icrcMaskIPv4[3]
	lo, hi = c^uint32(w), uint32(w>>32)
	c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
		t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
	w = binary.LittleEndian.Uint64(h[32:]) | icrcMaskIPv4[4]
	lo, hi = c^uint32(w), uint32(w>>32)
	c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
		t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
	rest := ip[len(h) : len(ip)-ICRCLen]
	if len(rest) >= 8 {
		return crcRest(^c, rest)
	}
	// Less than a word, such as the AETH of an ACK: the tail of
	// crcSlicing8, without the call.
	if len(rest) >= 4 {
		c ^= binary.LittleEndian.Uint32(rest)
		c = t[0][c>>24] ^ t[1][byte(c>>16)] ^ t[2][byte(c>>8)] ^ t[3][byte(c)]
		rest = rest[4:]
	}
	for _, b := range rest {
		c = t[0][byte(c)^b] ^ c>>8
	}
	return ^c
}

// maskedLRHCRC is the CRC-32 of the 8 bytes of ones that stand for the LRH,
// the start of every ICRC.
var maskedLRHCRC = crc32.Update(0, crc32.IEEETable, maskedLRH[:])

// crcRest adds the unmasked rest of a packet to crc: short rests through
// crcSlicing8, long ones through crc32.Update, which uses CLMUL where the
// CPU has it.
func crcRest(crc uint32, p []byte) uint32 {
	if len(p) < 64 {
		return crcSlicing8(crc, p)
	}
	return crc32.Update(crc, crc32.IEEETable, p)
}

// crcTables holds the slicing-by-8 tables of CRC-32 (IEEE): crcTables[0] is
// crc32.IEEETable and crcTables[k][b] the CRC of byte b followed by k zero
// bytes; the first 4 are the slicing-by-4 tables. (Slicing by 16 takes
// fewer steps, but its 16 KB of tables cost more in cache misses than they
// save when the decoder runs between the reader and the flow table.)
var crcTables = func() (t [8][256]uint32) {
	t[0] = *crc32.IEEETable
	for i := range 256 {
		c := t[0][i]
		for k := 1; k < len(t); k++ {
			c = t[0][c&0xff] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}()

// crcSlicing8 adds p to a CRC-32 (IEEE) as crc32.Update does, eight bytes at
// a time (the slicing-by-8 method), then four, then one. Unlike
// crc32.Update, which calls through a function variable, it lets a buffer
// on the caller's stack stay there.
func crcSlicing8(crc uint32, p []byte) uint32 {
	t := crcTab
	c := ^crc
	for len(p) >= 8 {
		w := binary.LittleEndian.Uint64(p)
		lo, hi := c^uint32(w), uint32(w>>32)
		c = t[0][hi>>24] ^ t[1][byte(hi>>16)] ^ t[2][byte(hi>>8)] ^ t[3][byte(hi)] ^
			t[4][lo>>24] ^ t[5][byte(lo>>16)] ^ t[6][byte(lo>>8)] ^ t[7][byte(lo)]
		p = p[8:]
	}
	if len(p) >= 4 {
		c ^= binary.LittleEndian.Uint32(p)
		c = t[0][byte(c>>24)] ^ t[1][byte(c>>16)] ^ t[2][byte(c>>8)] ^ t[3][byte(c)]
		p = p[4:]
	}
	for _, b := range p {
		c = t[0][byte(c)^b] ^ c>>8
	}
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
	return icrcMasked(g, icrcMaskGRH[:])
}

// VerifyICRCv2 checks the ICRC trailer of a RoCEv2 datagram (see ICRCv2):
// ICRCOK or ICRCBad, or ICRCUnchecked when ip is not a whole RoCEv2 packet.
func VerifyICRCv2(ip []byte) ICRCStatus {
	if len(ip) >= ipv4MinHeaderLen+udpHeaderLen+BTHLen+ICRCLen && ip[0] == 0x45 && ip[9] == protoUDP {
		return verdict(icrcIPv4(ip), ip) // what icrcV2 would do, without its checks
	}
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
