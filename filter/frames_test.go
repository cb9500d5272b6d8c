package filter

import (
	"encoding/binary"
	"net/netip"
)

// Builders of hand-made frames for the tests.

var (
	macA     = []byte{0x02, 0, 0, 0, 0, 0x01}
	macB     = []byte{0x02, 0, 0, 0, 0, 0x02}
	macBcast = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	macMcast = []byte{0x01, 0x00, 0x5e, 0, 0, 0x05}
	mac6Mc   = []byte{0x33, 0x33, 0, 0, 0, 0x01}
)

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func be16(v uint16) []byte  { return binary.BigEndian.AppendUint16(nil, v) }
func be32b(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func ip4addr(s string) []byte { a := netip.MustParseAddr(s).As4(); return a[:] }
func ip6addr(s string) []byte { a := netip.MustParseAddr(s).As16(); return a[:] }

// ip4opts are the variable fields of an IPv4 header.
type ip4opts struct {
	tos     byte
	frag    uint16 // flags and fragment offset
	options []byte // multiple of 4 bytes
}

func ip4(proto byte, src, dst string, payload []byte, o ip4opts) []byte {
	ihl := 5 + len(o.options)/4
	h := []byte{byte(0x40 | ihl), o.tos}
	h = append(h, be16(uint16(ihl*4+len(payload)))...)
	h = append(h, 0x12, 0x34)
	h = append(h, be16(o.frag)...)
	h = append(h, 64, proto, 0, 0)
	h = append(h, ip4addr(src)...)
	h = append(h, ip4addr(dst)...)
	h = append(h, o.options...)
	return append(h, payload...)
}

func ip6(nh byte, src, dst string, payload []byte) []byte {
	h := []byte{0x60, 0, 0, 0}
	h = append(h, be16(uint16(len(payload)))...)
	h = append(h, nh, 64)
	h = append(h, ip6addr(src)...)
	h = append(h, ip6addr(dst)...)
	return append(h, payload...)
}

func udpHdr(sp, dp uint16, payload []byte) []byte {
	return cat(be16(sp), be16(dp), be16(uint16(8+len(payload))), be16(0), payload)
}

func tcpHdr(sp, dp uint16, flags byte) []byte {
	return cat(be16(sp), be16(dp), be32b(1000), be32b(0), []byte{0x50, flags}, be16(512), be16(0), be16(0))
}

// bth is an InfiniBand base transport header followed by pad bytes.
func bth(opcode byte, destQP uint32, pad int) []byte {
	b := []byte{opcode, 0, 0xff, 0xff}
	b = append(b, be32b(destQP&0xffffff)...)
	b = append(b, be32b(7)...)
	return append(b, make([]byte, pad)...)
}

func arpPkt(op uint16, sha []byte, spa string, tpa string) []byte {
	return cat(be16(1), be16(0x0800), []byte{6, 4}, be16(op), sha, ip4addr(spa), make([]byte, 6), ip4addr(tpa))
}

// l3 is a network-layer packet for any link type.
type l3 struct {
	name      string
	ethertype uint16
	data      []byte
	cut       int // keep only this many bytes of data when > 0
}

func l3Packets() []l3 {
	cnp := udpHdr(49152, 4791, bth(0x81, 0x11, 20))
	send := udpHdr(50000, 4791, bth(0x04, 0x11, 40))
	fragPayload := cat(be16(4791), be16(4791), make([]byte, 40))
	frag6 := cat([]byte{17, 0, 0, 0}, be32b(99), udpHdr(4000, 4791, bth(0x0a, 5, 8)))
	return []l3{
		{"ipv4-roce-cnp-ce", 0x0800, ip4(17, "10.0.0.1", "10.0.0.2", cnp, ip4opts{tos: 0x03}), 0},
		{"ipv4-roce-send", 0x0800, ip4(17, "10.0.0.2", "10.0.0.1", send, ip4opts{tos: 0x02}), 0},
		{"ipv4-tcp-syn", 0x0800, ip4(6, "10.0.0.1", "10.0.0.2", tcpHdr(12345, 80, 0x02), ip4opts{}), 0},
		{"ipv4-tcp-options", 0x0800, ip4(6, "10.0.0.2", "10.0.0.1", tcpHdr(80, 12345, 0x18), ip4opts{options: []byte{1, 1, 1, 0}}), 0},
		{"ipv4-udp-dns-mf", 0x0800, ip4(17, "10.0.0.1", "10.0.0.3", udpHdr(5353, 53, make([]byte, 30)), ip4opts{frag: 0x2000}), 0},
		{"ipv4-udp-later-frag", 0x0800, ip4(17, "10.0.0.1", "10.0.0.2", fragPayload, ip4opts{frag: 185}), 0},
		{"ipv4-icmp-echo", 0x0800, ip4(1, "10.0.0.1", "10.0.0.2", []byte{8, 0, 0, 0, 0, 1, 0, 1}, ip4opts{}), 0},
		{"ipv4-gre-erspan", 0x0800, ip4(47, "192.168.1.1", "192.168.1.2", cat(be16(0), be16(0x88be), make([]byte, 30)), ip4opts{}), 0},
		{"ipv4-ospf-mcast", 0x0800, ip4(89, "10.0.0.1", "224.0.0.5", make([]byte, 40), ip4opts{}), 0},
		{"ipv4-dhcp-bcast", 0x0800, ip4(17, "0.0.0.0", "255.255.255.255", udpHdr(68, 67, make([]byte, 60)), ip4opts{}), 0},
		{"ipv4-igmp", 0x0800, ip4(2, "10.0.0.1", "224.0.0.1", make([]byte, 8), ip4opts{}), 0},
		{"ipv4-sctp-53", 0x0800, ip4(132, "10.0.0.4", "10.0.0.5", cat(be16(53), be16(53), make([]byte, 8)), ip4opts{}), 0},
		{"ipv4-esp", 0x0800, ip4(50, "10.0.0.4", "10.0.0.5", make([]byte, 16), ip4opts{}), 0},
		{"ipv4-vrrp", 0x0800, ip4(112, "10.0.0.4", "224.0.0.18", make([]byte, 16), ip4opts{}), 0},
		{"ipv4-udp-cut-in-udp", 0x0800, ip4(17, "10.0.0.1", "10.0.0.2", cnp, ip4opts{}), 24},
		{"ipv4-cut-in-ip", 0x0800, ip4(17, "10.0.0.1", "10.0.0.2", cnp, ip4opts{}), 10},
		{"ipv4-roce-short", 0x0800, ip4(17, "10.0.0.1", "10.0.0.2", udpHdr(1, 4791, []byte{0x81, 0, 0, 0}), ip4opts{}), 0},
		{"ipv6-roce", 0x86dd, ip6(17, "2001:db8::1", "2001:db8::2", udpHdr(49152, 4791, bth(0x81, 0x11, 20))), 0},
		{"ipv6-tcp", 0x86dd, ip6(6, "2001:db8::2", "2001:db8::1", tcpHdr(12345, 80, 0x02)), 0},
		{"ipv6-frag-udp", 0x86dd, ip6(44, "2001:db8::1", "2001:db8::3", frag6), 0},
		{"ipv6-icmp6-echo-mcast", 0x86dd, ip6(58, "fe80::1", "ff02::1", []byte{128, 0, 0, 0, 0, 1, 0, 1}), 0},
		{"ipv6-pim", 0x86dd, ip6(103, "fe80::1", "ff02::d", make([]byte, 8)), 0},
		{"ipv6-cut", 0x86dd, ip6(17, "2001:db8::1", "2001:db8::2", udpHdr(1, 2, nil)), 30},
	}
}

func (p l3) bytes() []byte {
	if p.cut > 0 && p.cut < len(p.data) {
		return p.data[:p.cut]
	}
	return p.data
}

func eth(dst, src []byte, etype uint16, payload []byte) []byte {
	return cat(dst, src, be16(etype), payload)
}

func tag(tpid uint16, vid uint16) []byte { return cat(be16(tpid), be16(vid)) }

// frame is one record of a synthetic capture.
type frame struct {
	name    string
	data    []byte
	origLen int
}

func etherFrames() []frame {
	var fs []frame
	for _, p := range l3Packets() {
		dst := macB
		switch p.name {
		case "ipv4-ospf-mcast", "ipv4-igmp", "ipv4-vrrp":
			dst = macMcast
		case "ipv4-dhcp-bcast":
			dst = macBcast
		case "ipv6-icmp6-echo-mcast", "ipv6-pim":
			dst = mac6Mc
		}
		full := eth(dst, macA, p.ethertype, p.data)
		fs = append(fs, frame{p.name, full[:14+len(p.bytes())], len(full)})
	}
	cnp := ip4(17, "10.0.0.1", "10.0.0.2", udpHdr(49152, 4791, bth(0x81, 0x11, 20)), ip4opts{})
	icmp := ip4(1, "10.0.0.1", "10.0.0.2", []byte{8, 0, 0, 0, 0, 1, 0, 1}, ip4opts{})
	udp6 := ip6(17, "2001:db8::1", "2001:db8::2", udpHdr(49152, 4791, bth(0x81, 0x11, 20)))
	llc := func(b ...byte) []byte { return cat(b, make([]byte, 40)) }
	lenField := func(payload []byte) uint16 { return uint16(len(payload)) }
	add := func(name string, b []byte) { fs = append(fs, frame{name, b, len(b)}) }
	arpReq := arpPkt(1, macA, "10.0.0.1", "10.0.0.2")
	add("arp-request", eth(macBcast, macA, 0x0806, arpReq))
	add("rarp", eth(macBcast, macA, 0x8035, arpPkt(3, macA, "10.0.0.2", "10.0.0.1")))
	add("lldp", eth([]byte{0x01, 0x80, 0xc2, 0, 0, 0x0e}, macA, 0x88cc, make([]byte, 40)))
	for _, l := range []struct {
		name string
		body []byte
	}{
		{"llc-stp", llc(0x42, 0x42, 0x03)},
		{"llc-iso", llc(0xfe, 0xfe, 0x03)},
		{"llc-netbeui", llc(0xf0, 0xf0, 0x03)},
		{"llc-ip-sap", llc(0x06, 0x06, 0x03)},
		{"llc-ipx", llc(0xe0, 0xe0, 0x03)},
		{"raw-8023-ipx", llc(0xff, 0xff)},
		{"snap-atalk", llc(0xaa, 0xaa, 0x03, 0x08, 0x00, 0x07, 0x80, 0x9b)},
		{"snap-aarp", llc(0xaa, 0xaa, 0x03, 0, 0, 0, 0x80, 0xf3)},
		{"snap-ipx", llc(0xaa, 0xaa, 0x03, 0, 0, 0, 0x81, 0x37)},
	} {
		add(l.name, eth(macB, macA, lenField(l.body), l.body))
	}
	add("llc-cut", eth(macB, macA, 100, []byte{0xaa, 0xaa, 0x03}))
	add("ethernet-ipx", eth(macB, macA, 0x8137, make([]byte, 30)))
	add("decnet", eth(macB, macA, 0x6003, make([]byte, 30)))
	add("lat", eth(macB, macA, 0x6004, make([]byte, 30)))
	add("loopback", eth(macB, macA, 0x9000, make([]byte, 30)))
	add("roce-v1", eth(macB, macA, 0x8915, make([]byte, 60)))
	add("vlan100-roce-cnp", cat(macB, macA, tag(0x8100, 100), be16(0x0800), cnp))
	add("vlan200-prio-icmp", cat(macB, macA, tag(0x8100, 0x6000|200), be16(0x0800), icmp))
	add("qinq-88a8-100-200-roce", cat(macB, macA, tag(0x88a8, 100), tag(0x8100, 200), be16(0x0800), cnp))
	add("qinq-9100-100-ipv6", cat(macB, macA, tag(0x9100, 100), be16(0x86dd), udp6))
	add("vlan100-arp", cat(macBcast, macA, tag(0x8100, 100), be16(0x0806), arpReq))
	add("vlan100-200-ip", cat(macB, macA, tag(0x8100, 100), tag(0x8100, 200), be16(0x0800), icmp))
	add("vlan-cut", cat(macB, macA, tag(0x8100, 100))[:16])
	add("empty", []byte{})
	add("5-bytes", macB[:5])
	add("13-bytes", cat(macB, macA, []byte{0x08}))
	fs = append(fs, frame{"roce-cut-by-snaplen", eth(macB, macA, 0x0800, cnp)[:40], 14 + len(cnp)})
	return fs
}

// sllFrames wraps the packets in LINUX_SLL (113) or LINUX_SLL2 (276)
// headers.
func sllFrames(v2 bool) []frame {
	hdr := func(i int, proto uint16) []byte {
		pkttype := uint16(0)
		if i%2 == 1 {
			pkttype = 4 // outgoing
		}
		addr := cat(macA, []byte{0, 0})
		if v2 {
			ifindex := uint32(1 + i%3)
			return cat(be16(proto), be16(0), be32b(ifindex), be16(1), []byte{byte(pkttype), 6}, addr)
		}
		return cat(be16(pkttype), be16(1), be16(6), addr, be16(proto))
	}
	var fs []frame
	add := func(name string, proto uint16, body []byte, cut int) {
		b := cat(hdr(len(fs), proto), body)
		orig := len(b)
		if cut > 0 {
			b = b[:len(b)-len(body)+cut]
		}
		fs = append(fs, frame{name, b, orig})
	}
	for _, p := range l3Packets() {
		add(p.name, p.ethertype, p.data, p.cut)
	}
	add("arp", 0x0806, arpPkt(1, macA, "10.0.0.1", "10.0.0.2"), 0)
	add("llc-stp", 4, cat([]byte{0x42, 0x42, 0x03}, make([]byte, 30)), 0)
	add("llc-iso", 4, cat([]byte{0xfe, 0xfe, 0x03}, make([]byte, 30)), 0)
	add("llc-ipx", 4, cat([]byte{0xe0, 0xe0, 0x03}, make([]byte, 30)), 0)
	add("snap-atalk", 4, cat([]byte{0xaa, 0xaa, 0x03, 0x08, 0x00, 0x07, 0x80, 0x9b}, make([]byte, 30)), 0)
	add("raw-8023", 1, cat([]byte{0xff, 0xff}, make([]byte, 30)), 0)
	add("ipx", 0x8137, make([]byte, 30), 0)
	add("header-only", 0x0800, nil, 0)
	fs = append(fs, frame{"cut-in-header", hdr(len(fs), 0x0800)[:7], 40})
	return fs
}

// afFrames wraps the packets in NULL (host byte order, little-endian
// here) or LOOP (network byte order) headers.
func afFrames(loop bool) []frame {
	var fs []frame
	v6 := []uint32{afINET6BSD, afINET6FreeBSD, afINET6Darwin}
	for i, p := range l3Packets() {
		af := uint32(afINET)
		if p.ethertype == 0x86dd {
			af = v6[i%3]
		}
		h := binary.LittleEndian.AppendUint32(nil, af)
		if loop {
			h = be32b(af)
		}
		full := cat(h, p.data)
		fs = append(fs, frame{p.name, full[:4+len(p.bytes())], len(full)})
	}
	fs = append(fs, frame{"af-7", cat([]byte{7, 0, 0, 0}, make([]byte, 30)), 34})
	fs = append(fs, frame{"3-bytes", []byte{2, 0, 0}, 3})
	return fs
}

// rawFrames are bare IP packets; only v4 or v6 ones for 228 and 229.
func rawFrames(lt uint32) []frame {
	var fs []frame
	for _, p := range l3Packets() {
		if lt == linkTypeIPv4 && p.ethertype != 0x0800 || lt == linkTypeIPv6 && p.ethertype != 0x86dd {
			continue
		}
		fs = append(fs, frame{p.name, p.bytes(), len(p.data)})
	}
	if lt == linkTypeRaw {
		fs = append(fs, frame{"empty", nil, 0}, frame{"version-5", []byte{0x55, 0, 0, 20}, 20})
	}
	return fs
}

var synthLinkTypes = []uint32{linkTypeEthernet, linkTypeLinuxSLL, linkTypeSLL2, linkTypeNull, linkTypeLoop, linkTypeRaw, linkTypeIPv4, linkTypeIPv6}

// synthFrames returns the hand-built frames for a link type.
func synthFrames(lt uint32) []frame {
	switch lt {
	case linkTypeEthernet:
		return etherFrames()
	case linkTypeLinuxSLL:
		return sllFrames(false)
	case linkTypeSLL2:
		return sllFrames(true)
	case linkTypeNull:
		return afFrames(false)
	case linkTypeLoop:
		return afFrames(true)
	}
	return rawFrames(lt)
}

// synthCapture puts the frames of a link type into a pcap file and
// returns it with a label for each record.
func synthCapture(lt uint32) (*pcapFile, []string) {
	f := &pcapFile{linkType: lt}
	var labels []string
	for i, fr := range synthFrames(lt) {
		f.records = append(f.records, pcapRecord{sec: 1700000000, frac: uint32(i), origLen: fr.origLen, data: fr.data})
		labels = append(labels, fr.name)
	}
	return f, labels
}
