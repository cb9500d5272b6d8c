package packet

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// sum is the part of a Packet the table tests compare.
type sum struct {
	Kind        Kind
	Malformed   Reason
	Note        Reason
	Truncated   bool
	Encap       string
	EtherType   uint16
	HasVLAN     bool
	VLAN        uint16
	PCP         uint8
	RoCEVersion uint8
	IPVersion   uint8
	Src, Dst    netip.Addr
	DSCP, ECN   uint8
	Proto       uint8
	Fragment    bool
	FragOffset  uint16
	SrcPort     uint16
	DstPort     uint16
	TCPFlags    uint8
	HasBTH      bool
	Opcode      bth.Opcode
	DestQP      uint32
	PSN         uint32
	ICRC        bth.ICRCStatus
	PayloadLen  int
	HasCM       bool
	CMAttr      bth.CMAttribute
	HasPFC      bool
	PFC         PFCFrame
}

func summarize(p *Packet) sum {
	return sum{
		Kind: p.Kind, Malformed: p.Malformed, Note: p.Note, Truncated: p.Truncated,
		Encap:     string(p.AppendEncap(nil)),
		EtherType: p.EtherType, HasVLAN: p.HasVLAN, VLAN: p.VLAN, PCP: p.PCP,
		RoCEVersion: p.RoCEVersion, IPVersion: p.IPVersion, Src: p.Src, Dst: p.Dst,
		DSCP: p.DSCP, ECN: p.ECN, Proto: p.Proto, Fragment: p.Fragment, FragOffset: p.FragOffset,
		SrcPort: p.SrcPort, DstPort: p.DstPort, TCPFlags: p.TCPFlags,
		HasBTH: p.HasBTH, Opcode: p.BTH.Opcode, DestQP: p.BTH.DestQP, PSN: p.BTH.PSN,
		ICRC: p.ICRC, PayloadLen: p.PayloadLen,
		HasCM: p.HasCM, CMAttr: p.CM.AttributeID,
		HasPFC: p.HasPFC, PFC: p.PFC,
	}
}

var (
	a1  = netip.MustParseAddr("10.0.0.1")
	a2  = netip.MustParseAddr("10.0.0.2")
	o1  = netip.MustParseAddr("192.168.0.1")
	o2  = netip.MustParseAddr("192.168.0.2")
	a61 = netip.MustParseAddr("fd00::1")
	a62 = netip.MustParseAddr("fd00::2")
)

// Inner datagrams shared by the cases.
var (
	rcWrite4 = roce4("10.0.0.1", "10.0.0.2", rcWrite, payload64)
	rcWrite6 = roce6("fd00::1", "fd00::2", rcWrite, payload64)
)

// roceSum is what rcWrite4 decodes to, inside the given encapsulation.
func roceSum(encap string) sum {
	return sum{
		Kind: KindRoCE, Encap: encap, EtherType: 0x0800,
		RoCEVersion: 2, IPVersion: 4, Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17,
		SrcPort: 49152, DstPort: 4791,
		HasBTH: true, Opcode: bth.OpcodeRCWriteOnly, DestQP: 0xd2, PSN: 0x1234,
		ICRC: bth.ICRCOK, PayloadLen: 64,
	}
}

// with returns s changed by f.
func with(s sum, f func(*sum)) sum {
	f(&s)
	return s
}

func vlan100(s *sum) { s.HasVLAN, s.VLAN, s.PCP = true, 100, 3 }

// outerSum is a KindOther frame whose walk stopped in a GRE tunnel of the
// IPv4 datagram 192.168.0.1 -> 192.168.0.2.
func outerSum(encap string) sum {
	return sum{Encap: encap, EtherType: 0x0800, IPVersion: 4, Src: o1, Dst: o2, DSCP: 26, ECN: 2, Proto: 47}
}

type decodeCase struct {
	name string
	lt   capture.LinkType
	data []byte
	want sum
}

// mirror wraps an inner Ethernet frame in Ethernet/IPv4/GRE with the given
// GRE flags and protocol and the ERSPAN header hdr builds.
func mirror(flags, proto uint16, hdr func([]byte) []byte, inner []byte) []byte {
	return eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(flags, proto, 0, hdr(inner))))
}

func noHeader(b []byte) []byte { return b }

func decodeCases() []decodeCase {
	v100 := vtag{0x8100, 3, 100}
	plain := eth(0x0800, rcWrite4)
	tagged := eth(0x0800, rcWrite4, v100)
	e2 := func(b []byte) []byte { return erspan2(5, false, b) }
	e3 := func(b []byte) []byte { return erspan3(7, 0, false, b) }
	e3o := func(b []byte) []byte { return erspan3(7, 0, true, b) }
	e3ip := func(b []byte) []byte { return erspan3(7, 2, false, b) }
	e3ipo := func(b []byte) []byte { return erspan3(7, 2, true, b) }
	e3ft5 := func(b []byte) []byte { return erspan3(7, 5, false, b) }

	// Nine nested GRE/IP tunnels: one more than MaxTunnels.
	deep := rcWrite4
	for range MaxTunnels + 1 {
		deep = ip4("192.168.0.1", "192.168.0.2", 47, gre(0, 0x0800, 0, deep))
	}
	tenTags := make([]vtag, maxVLANTags+1)
	for i := range tenTags {
		tenTags[i] = vtag{0x8100, 0, uint16(i)}
	}

	cmFrame := eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(cmREQ, madREQ)))))
	cnpFrame := eth(0x0800, roce4("10.0.0.2", "10.0.0.1", cnp, make([]byte, 16)))
	ackFrame := eth(0x0800, roce4("10.0.0.2", "10.0.0.1", rcAck, nil))
	badICRC := cat(plain)
	badICRC[len(badICRC)-1] ^= 0xff

	// ERSPAN II mirror whose inner RoCE frame the switch cut to 80 bytes.
	cutInner := eth(0x0800, rcWrite4, v100)[:80]

	v1 := grh("::ffff:10.0.0.1", "::ffff:10.0.0.2", rcWrite, payload64)
	v1v6 := grh("fe80::1", "fe80::2", rcWrite, payload64)
	v1Sum := func(s *sum) {
		s.EtherType, s.RoCEVersion, s.IPVersion, s.Proto = 0x8915, 1, 6, 0x1b
		s.SrcPort, s.DstPort = 0, 0
	}

	return []decodeCase{
		{"plain", capture.LinkTypeEthernet, plain, roceSum("")},
		{"padded", capture.LinkTypeEthernet, cat(plain, make([]byte, 10)), roceSum("")},
		{"source port 69", capture.LinkTypeEthernet,
			eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(69, 4791, ibPayload(rcWrite, payload64))))),
			with(roceSum(""), func(s *sum) { s.SrcPort = 69 })},
		{"vlan", capture.LinkTypeEthernet, tagged, with(roceSum("vlan:100"), vlan100)},
		{"qinq", capture.LinkTypeEthernet, eth(0x0800, rcWrite4, vtag{0x88a8, 0, 200}, v100),
			with(roceSum("qinq:200,vlan:100"), vlan100)},
		{"qinq 9100", capture.LinkTypeEthernet, eth(0x0800, rcWrite4, vtag{0x9100, 1, 300}),
			with(roceSum("qinq:300"), func(s *sum) { s.HasVLAN, s.VLAN, s.PCP = true, 300, 1 })},
		{"ipv6", capture.LinkTypeEthernet, eth(0x86dd, rcWrite6),
			with(roceSum(""), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"ipv6 dest opts", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::1", "fd00::2", 60, ip6ext(17, udp(49152, 4791, ibPayload(rcWrite, payload64))))),
			with(roceSum(""), func(s *sum) {
				s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62
				s.ICRC = bth.ICRCUnchecked // bth.ICRCv2 takes no extension headers
			})},
		{"ipv6 atomic fragment", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 0, false, udp(49152, 4791, ibPayload(rcWrite, payload64))))),
			with(roceSum(""), func(s *sum) {
				s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62
				s.ICRC = bth.ICRCUnchecked
			})},
		{"cm req", capture.LinkTypeEthernet, cmFrame, with(roceSum(""), func(s *sum) {
			s.Opcode, s.DestQP, s.PSN, s.PayloadLen = bth.OpcodeUDSendOnly, 1, 5, 256
			s.HasCM, s.CMAttr = true, bth.CMAttrREQ
		})},
		{"cnp", capture.LinkTypeEthernet, cnpFrame, with(roceSum(""), func(s *sum) {
			s.Src, s.Dst, s.Opcode, s.PSN, s.PayloadLen = a2, a1, bth.OpcodeCNP, 0, 0
		})},
		{"ack", capture.LinkTypeEthernet, ackFrame, with(roceSum(""), func(s *sum) {
			s.Src, s.Dst, s.Opcode, s.DestQP, s.PayloadLen = a2, a1, bth.OpcodeRCAcknowledge, 0xd3, 0
		})},
		{"icrc bad", capture.LinkTypeEthernet, badICRC, with(roceSum(""), func(s *sum) { s.ICRC = bth.ICRCBad })},

		// Tunnels and mirrors.
		{"gre teb", capture.LinkTypeEthernet, mirror(0, 0x6558, noHeader, plain), roceSum("eth,ipv4,gre")},
		{"gre key", capture.LinkTypeEthernet, mirror(fK, 0x6558, noHeader, plain), roceSum("eth,ipv4,gre")},
		{"gre csum key seq", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(fC|fK|fS, 0x6558, 42, plain))),
			roceSum("eth,ipv4,gre:42")},
		{"gre ip", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(0, 0x0800, 0, rcWrite4))), roceSum("eth,ipv4,gre")},
		{"gre ipv6 outer", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::a", "fd00::b", 47, gre(fS, 0x88be, 0, erspan2(5, false, plain)))),
			roceSum("eth,ipv6,gre,erspan2:5")},
		{"erspan1", capture.LinkTypeEthernet, mirror(0, 0x88be, noHeader, tagged),
			with(roceSum("eth,ipv4,gre,erspan1,vlan:100"), vlan100)},
		{"erspan2", capture.LinkTypeEthernet, mirror(fS, 0x88be, e2, plain), roceSum("eth,ipv4,gre,erspan2:5")},
		{"erspan2 vlans", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(fS, 0x88be, 0, erspan2(5, false, tagged))), vtag{0x8100, 0, 10}),
			with(roceSum("eth,vlan:10,ipv4,gre,erspan2:5,vlan:100"), vlan100)},
		{"erspan2 cut by switch", capture.LinkTypeEthernet, mirror(fS, 0x88be, func(b []byte) []byte { return erspan2(5, true, b) }, cutInner),
			with(roceSum("eth,ipv4,gre,erspan2:5,vlan:100"), func(s *sum) {
				vlan100(s)
				s.Truncated, s.ICRC = true, bth.ICRCUnchecked
			})},
		{"erspan3", capture.LinkTypeEthernet, mirror(fS, 0x22eb, e3, plain), roceSum("eth,ipv4,gre,erspan3:7")},
		{"erspan3 O bit", capture.LinkTypeEthernet, mirror(fS, 0x22eb, e3o, tagged),
			with(roceSum("eth,ipv4,gre,erspan3:7,vlan:100"), vlan100)},
		// Frame type 2 (draft-foschiano-erspan-03 §4.3): the mirrored
		// IP packet without its Ethernet header. It was left undecoded.
		{"erspan3 frame type IP", capture.LinkTypeEthernet, mirror(fS, 0x22eb, e3ip, rcWrite4), roceSum("eth,ipv4,gre,erspan3:7")},
		{"erspan3 frame type IPv6 O bit", capture.LinkTypeEthernet, mirror(fS, 0x22eb, e3ipo, rcWrite6),
			with(roceSum("eth,ipv4,gre,erspan3:7"), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"erspan3 frame type reserved", capture.LinkTypeEthernet, mirror(fS, 0x22eb, e3ft5, rcWrite4),
			with(outerSum(""), func(s *sum) { s.Note = ReasonERSPANFrameType })},
		{"nested", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(0, 0x6558, 0,
				eth(0x0800, ip4("192.168.1.1", "192.168.1.2", 47, gre(fS, 0x88be, 0, erspan2(5, false, tagged)))))),
				vtag{0x8100, 0, 10}),
			with(roceSum("eth,vlan:10,ipv4,gre,eth,ipv4,gre,erspan2:5,vlan:100"), vlan100)},
		{"vxlan", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 17, udp(12345, 4789, vxlan(5000, plain)))),
			roceSum("eth,ipv4,udp,vxlan:5000")},
		{"erspan vxlan", capture.LinkTypeEthernet,
			mirror(fS, 0x88be, e2, eth(0x0800, ip4("192.168.1.1", "192.168.1.2", 17, udp(12345, 4789, vxlan(77, tagged))))),
			with(roceSum("eth,ipv4,gre,erspan2:5,eth,ipv4,udp,vxlan:77,vlan:100"), vlan100)},
		{"vxlan-gpe ethernet", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 17, udp(4789, 4790, cat([]byte{0x0c, 0, 0, 3}, be32(9<<8), plain)))),
			roceSum("eth,ipv4,udp,vxlan:9")},
		{"vxlan-gpe ipv4", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 17, udp(4789, 4790, cat([]byte{0x0c, 0, 0, 1}, be32(9<<8), rcWrite4)))),
			roceSum("eth,ipv4,udp,vxlan:9")},
		{"vxlan-gpe nsh", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 17, udp(4789, 4790, cat([]byte{0x0c, 0, 0, 4}, be32(9<<8), plain)))),
			with(outerSum(""), func(s *sum) { s.Note, s.Proto, s.SrcPort, s.DstPort = ReasonVXLANProtocol, 17, 4789, 4790 })},
		{"gre teb ipv6 outer erspan3", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::a", "fd00::b", 60, ip6ext(47, gre(fS, 0x22eb, 0, erspan3(1, 0, true, eth(0x86dd, rcWrite6)))))),
			with(roceSum("eth,ipv6,gre,erspan3:1"), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"ipv4 options", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := ip4("10.0.0.1", "10.0.0.2", 17, cat([]byte{1, 1, 1, 0}, udp(49152, 4791, ibPayload(rcWrite, payload64))))
			b[0] = 0x46 // IHL 6: a 4-byte option of NOPs and EOL
			return withICRC(b)
		}()), roceSum("")},
		{"ip in ip", capture.LinkTypeEthernet, eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 4, rcWrite4)), roceSum("eth,ipv4")},
		{"ip6 in ip", capture.LinkTypeEthernet, eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 41, rcWrite6)),
			with(roceSum("eth,ipv4"), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},

		// Link types.
		{"raw", capture.LinkTypeRaw, rcWrite4, roceSum("")},
		{"raw ipv6", capture.LinkTypeRaw, rcWrite6,
			with(roceSum(""), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"raw 12", 12, rcWrite4, roceSum("")},
		{"raw 14", 14, rcWrite4, roceSum("")},
		{"ipv4", capture.LinkTypeIPv4, rcWrite4, roceSum("")},
		{"ipv6 link", capture.LinkTypeIPv6, rcWrite6,
			with(roceSum(""), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"sll", capture.LinkTypeLinuxSLL, sll(0x0800, rcWrite4), roceSum("sll")},
		{"sll vlan", capture.LinkTypeLinuxSLL, sll(0x8100, cat(be16(3<<13|100), be16(0x0800), rcWrite4)),
			with(roceSum("sll,vlan:100"), vlan100)},
		{"sll2", capture.LinkTypeLinuxSLL2, sll2(0x0800, rcWrite4), roceSum("sll2")},
		{"sll teb", capture.LinkTypeLinuxSLL, sll(0x6558, eth(0x0800, rcWrite4)), roceSum("sll")},
		{"sll2 teb vlan", capture.LinkTypeLinuxSLL2, sll2(0x6558, eth(0x8100, cat(be16(3<<13|100), be16(0x0800), rcWrite4))),
			with(roceSum("sll2,vlan:100"), vlan100)},
		{"sll2 erspan", capture.LinkTypeLinuxSLL2,
			sll2(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(fS, 0x88be, 0, erspan2(9, false, plain)))),
			roceSum("sll2,ipv4,gre,erspan2:9")},
		{"null little-endian", capture.LinkTypeNull, null(binary.LittleEndian, 2, rcWrite4), roceSum("null")},
		{"null big-endian ipv6", capture.LinkTypeNull, null(binary.BigEndian, 30, rcWrite6),
			with(roceSum("null"), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"loop", capture.LinkTypeLoop, null(binary.BigEndian, 24, rcWrite6),
			with(roceSum("null"), func(s *sum) { s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62 })},
		{"null unknown family", capture.LinkTypeNull, null(binary.LittleEndian, 7, rcWrite4),
			sum{Encap: "null", Note: ReasonUnknownFamily}},

		// RoCEv1.
		{"rocev1", capture.LinkTypeEthernet, eth(0x8915, v1), with(roceSum(""), v1Sum)},
		{"rocev1 vlan gids", capture.LinkTypeEthernet, eth(0x8915, v1v6, v100), with(roceSum("vlan:100"), func(s *sum) {
			v1Sum(s)
			vlan100(s)
			s.Src, s.Dst = netip.MustParseAddr("fe80::1"), netip.MustParseAddr("fe80::2")
		})},

		// Not RoCE.
		{"pfc", capture.LinkTypeEthernet, eth(0x8808, macControl(0x0101, 0x0008, 0, 0, 0, 0xffff, 0, 0, 0, 0)),
			sum{EtherType: 0x8808, HasPFC: true, PFC: PFCFrame{Opcode: 0x0101, ClassEnable: 8, Quanta: [8]uint16{3: 0xffff}, Src: [6]byte{2, 0, 0, 0, 0, 1}}}},
		{"pause", capture.LinkTypeEthernet, eth(0x8808, macControl(0x0001, 0x1000)),
			sum{EtherType: 0x8808, HasPFC: true, PFC: PFCFrame{Opcode: 0x0001, Quanta: [8]uint16{0x1000}, Src: [6]byte{2, 0, 0, 0, 0, 1}}}},
		{"arp", capture.LinkTypeEthernet, eth(0x0806, make([]byte, 28)), sum{EtherType: 0x0806}},
		{"802.3 llc", capture.LinkTypeEthernet, eth(38, make([]byte, 38)), sum{EtherType: 38}},
		{"nvme/tcp syn", capture.LinkTypeEthernet, eth(0x0800, ip4("10.0.0.1", "10.0.0.2", 6, tcpSeg(40000, 4420, 0x02))),
			sum{EtherType: 0x0800, IPVersion: 4, Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 6, SrcPort: 40000, DstPort: 4420, TCPFlags: 0x02}},
		{"dns", capture.LinkTypeEthernet, eth(0x0800, ip4("10.0.0.1", "10.0.0.2", 17, udp(5353, 53, make([]byte, 20)))),
			sum{EtherType: 0x0800, IPVersion: 4, Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17, SrcPort: 5353, DstPort: 53}},
		{"ipv4 later fragment", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := ip4("10.0.0.1", "10.0.0.2", 17, make([]byte, 40))
			binary.BigEndian.PutUint16(b[6:], 185) // offset 1480
			return b
		}()), sum{EtherType: 0x0800, IPVersion: 4, Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17, Fragment: true, FragOffset: 185, Note: ReasonFragment}},
		{"ipv4 first fragment", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(rcWrite, payload64))[:48])
			binary.BigEndian.PutUint16(b[6:], 0x2000) // MF
			return b
		}()), with(roceSum(""), func(s *sum) {
			// Decoded as far as the fragment goes; the payload length
			// comes from the UDP length, the ICRC is not there.
			s.Fragment, s.Truncated, s.ICRC = true, true, bth.ICRCUnchecked
		})},
		{"ipv4 first fragment not roce", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 2049, make([]byte, 100))[:48])
			binary.BigEndian.PutUint16(b[6:], 0x2000) // MF
			return b
		}()), sum{EtherType: 0x0800, IPVersion: 4, Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17, Fragment: true,
			Note: ReasonFragment, SrcPort: 49152, DstPort: 2049}},
		{"erspan2 in first fragment", capture.LinkTypeEthernet, func() []byte {
			// A mirror sent without DF over a smaller MTU: the first
			// fragment of the GRE datagram holds the mirrored headers.
			m := mirror(fS, 0x88be, e2, tagged)[:etherHeaderLen+20+8+8+60]
			binary.BigEndian.PutUint16(m[etherHeaderLen+2:], uint16(len(m)-etherHeaderLen))
			binary.BigEndian.PutUint16(m[etherHeaderLen+6:], 0x2000) // MF
			return m
		}(), with(roceSum("eth,ipv4,gre,erspan2:5,vlan:100"), func(s *sum) {
			vlan100(s)
			s.Truncated, s.ICRC = true, bth.ICRCUnchecked
		})},
		{"erspan2 in later fragment", capture.LinkTypeEthernet, func() []byte {
			m := mirror(fS, 0x88be, e2, tagged)
			binary.BigEndian.PutUint16(m[etherHeaderLen+6:], 185) // offset 1480
			return m
		}(), with(outerSum(""), func(s *sum) { s.Fragment, s.FragOffset, s.Note = true, 185, ReasonFragment })},
		{"ipv6 first fragment roce", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 0, true, udp(49152, 4791, ibPayload(rcWrite, payload64))[:40]))),
			with(roceSum(""), func(s *sum) {
				s.EtherType, s.IPVersion, s.Src, s.Dst = 0x86dd, 6, a61, a62
				s.Fragment, s.Truncated, s.ICRC = true, true, bth.ICRCUnchecked
			})},
		{"ipv6 first fragment", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 0, true, udp(1, 2, make([]byte, 8))))),
			sum{EtherType: 0x86dd, IPVersion: 6, Src: a61, Dst: a62, DSCP: 26, ECN: 2, Proto: 17, Fragment: true,
				Note: ReasonFragment, SrcPort: 1, DstPort: 2}},
		{"ipv6 later fragment", capture.LinkTypeEthernet,
			eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 100, false, make([]byte, 16)))),
			sum{EtherType: 0x86dd, IPVersion: 6, Src: a61, Dst: a62, DSCP: 26, ECN: 2, Proto: 17, Fragment: true, FragOffset: 100, Note: ReasonFragment}},
		{"erspan2 arp", capture.LinkTypeEthernet, mirror(fS, 0x88be, e2, eth(0x0806, make([]byte, 28), v100)),
			with(sum{Encap: "eth,ipv4,gre,erspan2:5,vlan:100", EtherType: 0x0806}, vlan100)},
		{"gre version 1", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(1, 0x880b, 0, make([]byte, 20)))),
			with(outerSum(""), func(s *sum) { s.Note = ReasonGREVersion })},

		// Malformed.
		{"reserved opcode", capture.LinkTypeEthernet,
			eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(bth.BTH{Opcode: 0x1f, DestQP: 3}, payload64))))),
			with(roceSum(""), func(s *sum) {
				s.Kind, s.Malformed, s.Opcode, s.DestQP, s.PSN, s.PayloadLen = KindMalformed, ReasonReservedOpcode, 0x1f, 3, 0, 0
			})},
		{"tver 1", capture.LinkTypeEthernet,
			eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(bth.BTH{Opcode: 0x0a, TransportVersion: 1}, nil))))),
			with(roceSum(""), func(s *sum) {
				s.Kind, s.Malformed, s.DestQP, s.PSN, s.PayloadLen = KindMalformed, ReasonBadVersion, 0, 0, 0
			})},
		{"garbage", capture.LinkTypeEthernet, eth(0x0800, ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")))),
			with(roceSum(""), func(s *sum) {
				s.Kind, s.Malformed, s.Opcode, s.DestQP, s.PSN, s.PayloadLen = KindMalformed, ReasonBadVersion, 'G', 0x204854, 0x502f31, 0
				s.ICRC = bth.ICRCBad
			})},
		{"short bth", capture.LinkTypeEthernet, eth(0x0800, ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, []byte{0x0a, 0, 0xff, 0xff, 0}))),
			with(roceSum(""), func(s *sum) {
				s.Kind, s.Malformed, s.HasBTH, s.Opcode, s.DestQP, s.PSN, s.PayloadLen = KindMalformed, ReasonShortBTH, false, 0, 0, 0, 0
				s.ICRC = bth.ICRCUnchecked
			})},
		{"bad length", capture.LinkTypeEthernet, eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(rcWrite, nil)[:28])))),
			with(roceSum(""), func(s *sum) { s.Kind, s.Malformed, s.PayloadLen = KindMalformed, ReasonBadLength, 0 })},
		{"cnp size", capture.LinkTypeEthernet, eth(0x0800, roce4("10.0.0.2", "10.0.0.1", cnp, make([]byte, 20))),
			with(roceSum(""), func(s *sum) {
				s.Kind, s.Malformed, s.Src, s.Dst, s.Opcode, s.PSN, s.PayloadLen = KindMalformed, ReasonBadLength, a2, a1, bth.OpcodeCNP, 0, 0
			})},
		{"udp length short", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(rcWrite, payload64)))
			binary.BigEndian.PutUint16(b[24:], 7)
			return b
		}()), sum{Kind: KindMalformed, Malformed: ReasonBadUDPLength, EtherType: 0x0800, RoCEVersion: 2, IPVersion: 4,
			Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17, SrcPort: 49152, DstPort: 4791}},
		{"udp length long", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(rcWrite, payload64)))
			binary.BigEndian.PutUint16(b[24:], 200)
			return b
		}()), sum{Kind: KindMalformed, Malformed: ReasonBadUDPLength, EtherType: 0x0800, RoCEVersion: 2, IPVersion: 4,
			Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17, SrcPort: 49152, DstPort: 4791}},
		{"udp header past ip", capture.LinkTypeEthernet, eth(0x0800, ip4("10.0.0.1", "10.0.0.2", 17, []byte{0xc0, 0, 0x12, 0xb7, 0})),
			sum{Kind: KindMalformed, Malformed: ReasonShortUDP, EtherType: 0x0800, RoCEVersion: 2, IPVersion: 4,
				Src: a1, Dst: a2, DSCP: 26, ECN: 2, Proto: 17, SrcPort: 49152, DstPort: 4791}},
		{"rocev1 bad nxthdr", capture.LinkTypeEthernet, eth(0x8915, func() []byte {
			b := cat(v1)
			b[6] = 17
			return b
		}()), sum{Kind: KindMalformed, Malformed: ReasonBadGRH, EtherType: 0x8915, RoCEVersion: 1}},
		{"ipv4 ihl 4", capture.LinkTypeEthernet, eth(0x0800, func() []byte {
			b := cat(rcWrite4)
			b[0] = 0x44
			return b
		}()), sum{Malformed: ReasonBadIP, EtherType: 0x0800}},
		{"raw version 5", capture.LinkTypeRaw, cat([]byte{0x50}, rcWrite4[1:]), sum{Malformed: ReasonBadIP}},
		{"short ethernet", capture.LinkTypeEthernet, plain[:13], sum{Malformed: ReasonShortEthernet}},
		{"gre routing", capture.LinkTypeEthernet, mirror(0x4000, 0x6558, noHeader, plain),
			with(outerSum(""), func(s *sum) { s.Malformed = ReasonBadGRE })},
		{"erspan2 version 3", capture.LinkTypeEthernet, mirror(fS, 0x88be, func(b []byte) []byte {
			h := erspan2(5, false, b)
			h[0] = 0x30
			return h
		}, plain), with(outerSum(""), func(s *sum) { s.Malformed = ReasonBadERSPAN })},
		{"vxlan no I flag", capture.LinkTypeEthernet,
			eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 17, udp(12345, 4789, cat([]byte{0, 0, 0, 0, 0, 0, 0, 0}, plain)))),
			with(outerSum(""), func(s *sum) {
				s.Malformed, s.Proto, s.SrcPort, s.DstPort = ReasonBadVXLAN, 17, 12345, 4789
			})},
		{"too many tunnels", capture.LinkTypeEthernet, eth(0x0800, deep),
			with(outerSum("eth,ipv4,gre,ipv4,gre,ipv4,gre,ipv4,gre,ipv4,gre,ipv4,gre,ipv4,gre,ipv4"), func(s *sum) {
				s.Malformed = ReasonTooDeep
			})},
		{"too many ipv6 extension headers", capture.LinkTypeEthernet, eth(0x86dd, func() []byte {
			b := ip6ext(17, udp(1, 2, nil))
			for range maxIPv6Ext {
				b = ip6ext(60, b)
			}
			return ip6("fd00::1", "fd00::2", 60, b)
		}()), sum{Malformed: ReasonTooDeep, EtherType: 0x86dd, IPVersion: 6, Src: a61, Dst: a62, DSCP: 26, ECN: 2, Proto: 60}},
		{"too many tags", capture.LinkTypeEthernet, eth(0x0800, rcWrite4, tenTags...),
			sum{Malformed: ReasonTooDeep, HasVLAN: true, VLAN: 7,
				Encap: "vlan:0,vlan:1,vlan:2,vlan:3,vlan:4,vlan:5,vlan:6,vlan:7"}},
	}
}

func TestDecode(t *testing.T) {
	var d Decoder
	var p Packet
	for _, c := range decodeCases() {
		t.Run(c.name, func(t *testing.T) {
			if err := d.Decode(c.lt, c.data, len(c.data), &p); err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got := summarize(&p); got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
			if p.CapLen != len(c.data) || p.OrigLen != len(c.data) {
				t.Errorf("CapLen, OrigLen = %d, %d; want %d, %d", p.CapLen, p.OrigLen, len(c.data), len(c.data))
			}
		})
	}
}
