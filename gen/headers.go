package gen

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// EtherTypes, IP protocols and ports written by the generator.
const (
	etherIPv4   = 0x0800
	etherIPv6   = 0x86dd
	etherVLAN   = 0x8100
	etherQinQ   = 0x88a8
	etherRoCEv1 = 0x8915
	etherMACCtl = 0x8808
	etherTEB    = 0x6558 // transparent Ethernet bridging (GRE)
	etherERSPAN = 0x88be // ERSPAN type I and II (GRE)
	etherERSPN3 = 0x22eb // ERSPAN type III (GRE)

	protoTCP = 6
	protoUDP = 17
	protoGRE = 47

	portRoCEv2 = 4791
	portVXLAN  = 4789
)

// frameBuf builds a frame from the inside out: the payload is appended after
// a headroom, then each header is prepended in front of it.
type frameBuf struct {
	b     []byte
	start int
	end   int
}

const frameHeadroom = 1024

func newFrameBuf() *frameBuf {
	return &frameBuf{b: make([]byte, frameHeadroom+16384)}
}

func (f *frameBuf) reset() { f.start, f.end = frameHeadroom, frameHeadroom }

// append grows the frame at its end by n zeroed bytes.
func (f *frameBuf) append(n int) []byte {
	if f.end+n > len(f.b) {
		nb := make([]byte, 2*(f.end+n))
		copy(nb, f.b[:f.end])
		f.b = nb
	}
	s := f.b[f.end : f.end+n]
	clear(s)
	f.end += n
	return s
}

// prepend grows the frame at its front by n zeroed bytes.
func (f *frameBuf) prepend(n int) []byte {
	if f.start < n {
		panic("gen: frame headroom exhausted")
	}
	f.start -= n
	s := f.b[f.start : f.start+n]
	clear(s)
	return s
}

func (f *frameBuf) bytes() []byte { return f.b[f.start:f.end] }
func (f *frameBuf) len() int      { return f.end - f.start }

// csumAdd adds data to a ones' complement sum (RFC 1071).
func csumAdd(sum uint32, data []byte) uint32 {
	for len(data) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(data))
		data = data[2:]
	}
	if len(data) == 1 {
		sum += uint32(data[0]) << 8
	}
	return sum
}

func csumFold(sum uint32) uint16 {
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

// pseudoSum is the transport checksum pseudo header sum (RFC 793, RFC 8200 §8.1).
func pseudoSum(src, dst netip.Addr, proto uint8, length int) uint32 {
	var sum uint32
	if src.Is4() {
		s, d := src.As4(), dst.As4()
		sum = csumAdd(sum, s[:])
		sum = csumAdd(sum, d[:])
	} else {
		s, d := src.As16(), dst.As16()
		sum = csumAdd(sum, s[:])
		sum = csumAdd(sum, d[:])
	}
	sum += uint32(proto) + uint32(length)
	return sum
}

// putIP prepends an IPv4 (RFC 791) or IPv6 (RFC 8200) header for the current
// contents and returns its length.
func putIP(f *frameBuf, src, dst netip.Addr, proto uint8, tos uint8, ttl uint8) int {
	return putIPID(f, src, dst, proto, tos, ttl, 0)
}

// putIPID is putIP with IPv4 Identification id (IPv6 has none).
func putIPID(f *frameBuf, src, dst netip.Addr, proto uint8, tos uint8, ttl uint8, id uint16) int {
	n := f.len()
	if src.Is4() {
		h := f.prepend(20)
		h[0] = 0x45
		h[1] = tos
		binary.BigEndian.PutUint16(h[2:], uint16(20+n))
		binary.BigEndian.PutUint16(h[4:], id)
		binary.BigEndian.PutUint16(h[6:], 0x4000) // DF
		h[8] = ttl
		h[9] = proto
		s, d := src.As4(), dst.As4()
		copy(h[12:], s[:])
		copy(h[16:], d[:])
		binary.BigEndian.PutUint16(h[10:], csumFold(csumAdd(0, h)))
		return 20
	}
	h := f.prepend(40)
	binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(tos)<<20)
	binary.BigEndian.PutUint16(h[4:], uint16(n))
	h[6] = proto
	h[7] = ttl
	s, d := src.As16(), dst.As16()
	copy(h[8:], s[:])
	copy(h[24:], d[:])
	return 40
}

func ipEtherType(a netip.Addr) uint16 {
	if a.Is4() {
		return etherIPv4
	}
	return etherIPv6
}

// putUDP prepends a UDP header (RFC 768) with checksum 0, as RoCEv2 NICs send.
func putUDP(f *frameBuf, sport, dport int) {
	n := f.len()
	h := f.prepend(8)
	binary.BigEndian.PutUint16(h[0:], uint16(sport))
	binary.BigEndian.PutUint16(h[2:], uint16(dport))
	binary.BigEndian.PutUint16(h[4:], uint16(8+n))
}

// putTCP prepends a TCP header (RFC 9293) with a valid checksum; syn adds an
// MSS option.
func putTCP(f *frameBuf, src, dst netip.Addr, sport, dport int, seq, ack uint32, flags uint8, mss int) {
	hl := 20
	if flags&tcpSYN != 0 {
		hl = 24
	}
	n := f.len()
	h := f.prepend(hl)
	binary.BigEndian.PutUint16(h[0:], uint16(sport))
	binary.BigEndian.PutUint16(h[2:], uint16(dport))
	binary.BigEndian.PutUint32(h[4:], seq)
	binary.BigEndian.PutUint32(h[8:], ack)
	h[12] = uint8(hl/4) << 4
	h[13] = flags
	binary.BigEndian.PutUint16(h[14:], 65535)
	if hl == 24 {
		h[20], h[21] = 2, 4
		binary.BigEndian.PutUint16(h[22:], uint16(mss))
	}
	sum := pseudoSum(src, dst, protoTCP, hl+n)
	binary.BigEndian.PutUint16(h[16:], csumFold(csumAdd(sum, f.bytes())))
}

// TCP flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpPSH = 0x08
	tcpACK = 0x10
)

// vlanTag is one 802.1Q or 802.1ad tag.
type vlanTag struct {
	tpid uint16
	tci  uint16
}

// putEthernet prepends an Ethernet II header with tags (outermost first).
func putEthernet(f *frameBuf, dst, src [6]byte, tags []vlanTag, etherType uint16) {
	h := f.prepend(14 + 4*len(tags))
	copy(h[0:], dst[:])
	copy(h[6:], src[:])
	o := 12
	for _, t := range tags {
		binary.BigEndian.PutUint16(h[o:], t.tpid)
		binary.BigEndian.PutUint16(h[o+2:], t.tci)
		o += 4
	}
	binary.BigEndian.PutUint16(h[o:], etherType)
}

// putSLL prepends a Linux cooked header v1 (LINKTYPE_LINUX_SLL).
func putSLL(f *frameBuf, src [6]byte, etherType uint16, outgoing bool) {
	h := f.prepend(16)
	if outgoing {
		binary.BigEndian.PutUint16(h[0:], 4)
	}
	binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:], 6)
	copy(h[6:], src[:])
	binary.BigEndian.PutUint16(h[14:], etherType)
}

// putSLL2 prepends a Linux cooked header v2 (LINKTYPE_LINUX_SLL2).
func putSLL2(f *frameBuf, src [6]byte, etherType uint16, ifIndex uint32, outgoing bool) {
	h := f.prepend(20)
	binary.BigEndian.PutUint16(h[0:], etherType)
	binary.BigEndian.PutUint32(h[4:], ifIndex)
	binary.BigEndian.PutUint16(h[8:], 1) // ARPHRD_ETHER
	if outgoing {
		h[10] = 4
	}
	h[11] = 6
	copy(h[12:], src[:])
}

// macFor derives a locally administered unicast MAC from an IP address.
func macFor(a netip.Addr) [6]byte {
	var m [6]byte
	m[0] = 0x02
	b := a.As16()
	copy(m[2:], b[12:])
	if !a.Is4() {
		m[1] = 0x06
	}
	return m
}

func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	n, err := fmt.Sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5])
	if err != nil || n != 6 {
		return m, fmt.Errorf("bad MAC address %q (want aa:bb:cc:dd:ee:ff)", s)
	}
	return m, nil
}

// putGRE prepends a GRE header (RFC 2784, RFC 2890 sequence number).
func putGRE(f *frameBuf, proto uint16, seq *uint32) {
	if seq == nil {
		h := f.prepend(4)
		binary.BigEndian.PutUint16(h[2:], proto)
		return
	}
	h := f.prepend(8)
	binary.BigEndian.PutUint16(h[0:], 0x1000) // S: sequence number present
	binary.BigEndian.PutUint16(h[2:], proto)
	binary.BigEndian.PutUint32(h[4:], *seq)
}

// putERSPAN2 prepends an ERSPAN type II header (draft-foschiano-erspan §4.1).
func putERSPAN2(f *frameBuf, vlan uint16, cos uint8, tagged bool, session, index uint32) {
	h := f.prepend(8)
	binary.BigEndian.PutUint16(h[0:], 1<<12|vlan&0xfff)
	en := uint16(0)
	if tagged {
		en = 3 // VLAN tag preserved in the original frame
	}
	binary.BigEndian.PutUint16(h[2:], uint16(cos&7)<<13|en<<11|uint16(session&0x3ff))
	binary.BigEndian.PutUint32(h[4:], index&0xfffff)
}

// putERSPAN3 prepends an ERSPAN type III header (draft-foschiano-erspan §4.2),
// with the optional 8-byte platform-specific subheader when sub is set.
func putERSPAN3(f *frameBuf, vlan uint16, cos uint8, tagged bool, session uint32, ts uint32, hwID uint8, sub bool, portID uint16, tsHigh uint32) {
	if sub {
		// Platform ID 3: port ID and the upper timestamp bits.
		s := f.prepend(8)
		binary.BigEndian.PutUint32(s[0:], 3<<26|uint32(portID))
		binary.BigEndian.PutUint32(s[4:], tsHigh)
	}
	h := f.prepend(12)
	binary.BigEndian.PutUint16(h[0:], 2<<12|vlan&0xfff)
	bso := uint16(0)
	t := uint16(0)
	_ = tagged
	binary.BigEndian.PutUint16(h[2:], uint16(cos&7)<<13|bso<<11|t<<10|uint16(session&0x3ff))
	binary.BigEndian.PutUint32(h[4:], ts)
	// SGT 0, P 0, FT 0 (Ethernet), HW ID, D 0, Gra 01 (100 ns), O.
	w := uint16(hwID&0x3f)<<4 | 1<<1
	if sub {
		w |= 1
	}
	binary.BigEndian.PutUint16(h[10:], w)
}

// putVXLAN prepends a VXLAN header (RFC 7348).
func putVXLAN(f *frameBuf, vni uint32) {
	h := f.prepend(8)
	h[0] = 0x08
	binary.BigEndian.PutUint32(h[4:], vni<<8)
}

// putGRH prepends an InfiniBand Global Route Header (IBTA vol 1 §8.3) for a
// RoCEv1 packet; the current contents are its payload.
func putGRH(f *frameBuf, src, dst netip.Addr, tclass uint8, flowLabel uint32, hopLimit uint8) {
	n := f.len()
	h := f.prepend(40)
	binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(tclass)<<20|flowLabel&0xfffff)
	binary.BigEndian.PutUint16(h[4:], uint16(n))
	h[6] = 0x1b // next header: IBA BTH
	h[7] = hopLimit
	s, d := gid(src), gid(dst)
	copy(h[8:], s[:])
	copy(h[24:], d[:])
}

// gid is the RoCE GID of an address: IPv4-mapped for IPv4 (Annex A17 §A17.3).
func gid(a netip.Addr) [16]byte {
	return a.As16() // As16 of an IPv4 address is ::ffff:a.b.c.d
}
