package packet

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocedump/rocedump/decode/bth"
)

// This file builds frames by hand for the tests: each function returns one
// header followed by its payload, so frames are written inside out.

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// vtag is an 802.1Q/802.1ad tag.
type vtag struct {
	tpid uint16
	pcp  uint8
	vid  uint16
}

// eth returns an Ethernet II frame with the given tags, EtherType and payload.
func eth(et uint16, payload []byte, tags ...vtag) []byte {
	b := []byte{0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01}
	for _, t := range tags {
		b = append(b, be16(t.tpid)...)
		b = append(b, be16(uint16(t.pcp)<<13|t.vid)...)
	}
	return cat(b, be16(et), payload)
}

const testTOS = 26<<2 | 2 // DSCP 26 (AF31), ECN ECT(0)

// ip4 returns an IPv4 datagram with TOS testTOS, DF set and TTL 64.
func ip4(src, dst string, proto uint8, payload []byte) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	h[1] = testTOS
	binary.BigEndian.PutUint16(h[2:], uint16(20+len(payload)))
	binary.BigEndian.PutUint16(h[6:], 0x4000)
	h[8] = 64
	h[9] = proto
	s, d := netip.MustParseAddr(src).As4(), netip.MustParseAddr(dst).As4()
	copy(h[12:], s[:])
	copy(h[16:], d[:])
	return cat(h, payload)
}

// ip6 returns an IPv6 datagram with traffic class testTOS.
func ip6(src, dst string, nh uint8, payload []byte) []byte {
	h := make([]byte, 40)
	binary.BigEndian.PutUint32(h, 6<<28|uint32(testTOS)<<20|0x12345)
	binary.BigEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6] = nh
	h[7] = 64
	s, d := netip.MustParseAddr(src).As16(), netip.MustParseAddr(dst).As16()
	copy(h[8:], s[:])
	copy(h[24:], d[:])
	return cat(h, payload)
}

// ip6ext returns an IPv6 hop-by-hop, routing or destination options header
// of 8 bytes.
func ip6ext(nh uint8, payload []byte) []byte {
	return cat([]byte{nh, 0, 1, 4, 0, 0, 0, 0}, payload)
}

// ip6frag returns an IPv6 fragment header.
func ip6frag(nh uint8, offset uint16, more bool, payload []byte) []byte {
	v := offset << 3
	if more {
		v |= 1
	}
	return cat([]byte{nh, 0}, be16(v), be32(0xabcd), payload)
}

func udp(sport, dport uint16, payload []byte) []byte {
	return cat(be16(sport), be16(dport), be16(uint16(8+len(payload))), be16(0), payload)
}

// tcpSeg returns a 20-byte TCP header with the given flags.
func tcpSeg(sport, dport uint16, flags uint8) []byte {
	h := make([]byte, 20)
	binary.BigEndian.PutUint16(h, sport)
	binary.BigEndian.PutUint16(h[2:], dport)
	h[12] = 5 << 4
	h[13] = flags
	return h
}

// ibPayload returns the IB transport part of a RoCE packet: headers, payload,
// pad and a zero ICRC to be filled by withICRC or withICRCv1.
func ibPayload(h bth.BTH, payload []byte) []byte {
	pad := (4 - len(payload)%4) % 4
	h.PadCount = uint8(pad)
	return cat(h.AppendHeaders(nil), payload, make([]byte, pad+bth.ICRCLen))
}

// withICRC writes the ICRC trailer of a RoCEv2 IP datagram.
func withICRC(ip []byte) []byte {
	crc, err := bth.ICRCv2(ip)
	if err != nil {
		panic(err)
	}
	binary.LittleEndian.PutUint32(ip[len(ip)-4:], crc)
	return ip
}

// withICRCv1 writes the ICRC trailer of a RoCEv1 packet (GRH first).
func withICRCv1(grh []byte) []byte {
	crc, err := bth.ICRCv1(grh)
	if err != nil {
		panic(err)
	}
	binary.LittleEndian.PutUint32(grh[len(grh)-4:], crc)
	return grh
}

// roce4 returns a whole RoCEv2 IPv4 datagram with a good ICRC.
func roce4(src, dst string, h bth.BTH, payload []byte) []byte {
	return withICRC(ip4(src, dst, 17, udp(49152, 4791, ibPayload(h, payload))))
}

// roce6 returns a whole RoCEv2 IPv6 datagram with a good ICRC.
func roce6(src, dst string, h bth.BTH, payload []byte) []byte {
	return withICRC(ip6(src, dst, 17, udp(49152, 4791, ibPayload(h, payload))))
}

// grh returns a RoCEv1 packet: GRH, IB transport and a good ICRC.
func grh(sgid, dgid string, h bth.BTH, payload []byte) []byte {
	ib := ibPayload(h, payload)
	g := make([]byte, 40)
	binary.BigEndian.PutUint32(g, 6<<28|uint32(testTOS)<<20)
	binary.BigEndian.PutUint16(g[4:], uint16(len(ib)))
	g[6] = 0x1b
	g[7] = 64
	s, d := netip.MustParseAddr(sgid).As16(), netip.MustParseAddr(dgid).As16()
	copy(g[8:], s[:])
	copy(g[24:], d[:])
	return withICRCv1(cat(g, ib))
}

// GRE flag bits for gre.
const (
	fC = greChecksum
	fK = greKey
	fS = greSequence
)

// gre returns a GRE header with the optional fields its flags ask for.
func gre(flags, proto uint16, key uint32, payload []byte) []byte {
	b := cat(be16(flags), be16(proto))
	if flags&fC != 0 {
		b = append(b, 0, 0, 0, 0)
	}
	if flags&fK != 0 {
		b = append(b, be32(key)...)
	}
	if flags&fS != 0 {
		b = append(b, be32(7)...)
	}
	return cat(b, payload)
}

// erspan2 returns an ERSPAN type II header.
func erspan2(session uint16, trunc bool, payload []byte) []byte {
	w1 := uint16(0x1<<12 | 10) // Ver 1, VLAN 10
	w2 := uint16(3<<13|3<<11) | session&0x3ff
	if trunc {
		w2 |= 0x400
	}
	return cat(be16(w1), be16(w2), be32(0x00012345), payload)
}

// erspan3 returns an ERSPAN type III header, with the 8-byte platform
// subheader if o.
func erspan3(session uint16, ft uint8, o bool, payload []byte) []byte {
	w1 := uint16(0x2<<12 | 10)
	w2 := uint16(5<<13) | session&0x3ff
	b := cat(be16(w1), be16(w2), be32(0xdeadbeef), be16(0x1234))
	b10 := ft & 0x1f << 2
	b11 := byte(0x02 << 1) // Gra
	if o {
		b11 |= 1
	}
	b = append(b, b10, b11)
	if o {
		b = append(b, 1, 2, 3, 4, 5, 6, 7, 8)
	}
	return cat(b, payload)
}

// vxlan returns a VXLAN header with the I flag.
func vxlan(vni uint32, payload []byte) []byte {
	return cat([]byte{0x08, 0, 0, 0}, be32(vni<<8), payload)
}

// sll returns a Linux cooked v1 header with the given protocol.
func sll(proto uint16, payload []byte) []byte {
	return cat([]byte{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}, be16(proto), payload)
}

// sll2 returns a Linux cooked v2 header with the given protocol.
func sll2(proto uint16, payload []byte) []byte {
	return cat(be16(proto), []byte{0, 0, 0, 0, 0, 3, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}, payload)
}

// null returns a BSD loopback header with address family af in byte order o.
func null(o binary.AppendByteOrder, af uint32, payload []byte) []byte {
	return cat(o.AppendUint32(nil, af), payload)
}

// macControl returns a MAC Control frame body padded to 46 bytes.
func macControl(op uint16, fields ...uint16) []byte {
	b := be16(op)
	for _, f := range fields {
		b = append(b, be16(f)...)
	}
	return cat(b, make([]byte, 46-len(b)))
}

// Transport headers used by the tests.
var (
	rcWrite = bth.BTH{Opcode: bth.OpcodeRCWriteOnly, PKey: 0xffff, DestQP: 0x0000d2, PSN: 0x1234, AckReq: true,
		RETH: bth.RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALen: 64}}
	rcAck = bth.BTH{Opcode: bth.OpcodeRCAcknowledge, PKey: 0xffff, DestQP: 0x0000d3, PSN: 0x1234}
	cnp   = bth.BTH{Opcode: bth.OpcodeCNP, PKey: 0xffff, DestQP: 0x0000d2, BECN: true}
	cmREQ = bth.BTH{Opcode: bth.OpcodeUDSendOnly, PKey: 0xffff, DestQP: 1, PSN: 5,
		DETH: bth.DETH{QKey: 0x80010000, SrcQP: 1}}
)

// payload64 is an RDMA payload of 64 bytes.
var payload64 = func() []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

// madREQ is a 256-byte CM REQ MAD.
var madREQ = func() []byte {
	m := make([]byte, bth.MADLen)
	m[0], m[1], m[2], m[3] = 1, bth.MgmtClassCM, 2, bth.MethodSend
	binary.BigEndian.PutUint64(m[8:], 0x1122334455667788)
	binary.BigEndian.PutUint16(m[16:], uint16(bth.CMAttrREQ))
	binary.BigEndian.PutUint32(m[24:], 0xcafe0001) // LocalCommID
	return m
}()
