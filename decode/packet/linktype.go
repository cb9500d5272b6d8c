package packet

import (
	"encoding/binary"
	"errors"

	"github.com/rocedump/rocedump/capture"
)

// Link types that some systems use for raw IP instead of LINKTYPE_RAW (101):
// DLT_RAW is 12 on most BSDs and 14 on OpenBSD (pcap-linktype(7)).
const (
	linkTypeRawBSD     capture.LinkType = 12
	linkTypeRawOpenBSD capture.LinkType = 14
)

// Linux cooked header sizes (https://www.tcpdump.org/linktypes/LINKTYPE_LINUX_SLL.html
// and LINKTYPE_LINUX_SLL2.html).
const (
	sllLen  = 16 // protocol type at offset 14
	sll2Len = 20 // protocol type at offset 0
	nullLen = 4  // BSD loopback: address family in the capturing host's byte order
)

// BSD address families in a NULL/LOOP header (LINKTYPE_NULL): IPv6 differs
// between systems.
const (
	afInet         = 2
	afInet6BSD     = 24 // NetBSD, OpenBSD, BSD/OS
	afInet6FreeBSD = 28 // FreeBSD, DragonFly BSD
	afInet6Darwin  = 30 // macOS, iOS
	etherTypeIPv4  = 0x0800
	etherTypeIPv6  = 0x86DD
)

// ErrUnknownLinkType is wrapped by every *LinkTypeError.
var ErrUnknownLinkType = errors.New("packet: unknown link type")

// LinkTypeError reports a link type the decoder cannot read.
type LinkTypeError struct {
	LinkType capture.LinkType
}

// Error names the link type and says which ones are read.
func (e *LinkTypeError) Error() string {
	return "unsupported link type " + e.LinkType.String() + // "ERF (197)"
		": rocedump reads Ethernet, raw IP, Linux cooked (SLL, SLL2) and BSD loopback captures"
}

// Unwrap returns ErrUnknownLinkType.
func (e *LinkTypeError) Unwrap() error { return ErrUnknownLinkType }

// Supported reports whether Decode reads frames of link type lt.
func Supported(lt capture.LinkType) bool {
	switch lt {
	case capture.LinkTypeEthernet,
		capture.LinkTypeRaw, linkTypeRawBSD, linkTypeRawOpenBSD,
		capture.LinkTypeIPv4, capture.LinkTypeIPv6,
		capture.LinkTypeLinuxSLL, capture.LinkTypeLinuxSLL2,
		capture.LinkTypeNull, capture.LinkTypeLoop:
		return true
	}
	return false
}

// link decodes the link layer of a frame of a supported link type.
func (w *walker) link(lt capture.LinkType, b []byte) {
	p := w.p
	switch lt {
	case capture.LinkTypeEthernet:
		w.ethernet(b)
	case capture.LinkTypeRaw, linkTypeRawBSD, linkTypeRawOpenBSD:
		w.rawIP(b)
	case capture.LinkTypeIPv4:
		p.EtherType = etherTypeIPv4
		w.ipv4(b)
	case capture.LinkTypeIPv6:
		p.EtherType = etherTypeIPv6
		w.ipv6(b)
	case capture.LinkTypeLinuxSLL:
		p.pushEncap(EncapSLL, 0)
		if len(b) < sllLen {
			w.short(ReasonShortLink)
			return
		}
		w.cooked(binary.BigEndian.Uint16(b[14:]), b[sllLen:])
	case capture.LinkTypeLinuxSLL2:
		p.pushEncap(EncapSLL2, 0)
		if len(b) < sll2Len {
			w.short(ReasonShortLink)
			return
		}
		w.cooked(binary.BigEndian.Uint16(b), b[sll2Len:])
	case capture.LinkTypeNull, capture.LinkTypeLoop:
		p.pushEncap(EncapNull, 0)
		if len(b) < nullLen {
			w.short(ReasonShortLink)
			return
		}
		af := binary.LittleEndian.Uint32(b)
		if af > 0xffff { // written big-endian (always so for LOOP)
			af = binary.BigEndian.Uint32(b)
		}
		switch af {
		case afInet:
			p.EtherType = etherTypeIPv4
			w.ipv4(b[nullLen:])
		case afInet6BSD, afInet6FreeBSD, afInet6Darwin:
			p.EtherType = etherTypeIPv6
			w.ipv6(b[nullLen:])
		default:
			p.Note = ReasonUnknownFamily
		}
	}
}

// rawIP decodes an IP packet whose version nibble says IPv4 or IPv6.
func (w *walker) rawIP(b []byte) {
	if len(b) < 1 {
		w.short(ReasonBadIP)
		return
	}
	switch b[0] >> 4 {
	case 4:
		w.p.EtherType = etherTypeIPv4
		w.ipv4(b)
	case 6:
		w.p.EtherType = etherTypeIPv6
		w.ipv6(b)
	default:
		w.malformed(ReasonBadIP)
	}
}

// cooked decodes what follows a Linux cooked header whose protocol type is
// proto: an EtherType, or 0x6558 (transparent Ethernet bridging) for a
// whole Ethernet frame, as a GRE tunnel device (ARPHRD_IPGRE) hands up
// the frames a GRE/TEB mirror carries.
func (w *walker) cooked(proto uint16, b []byte) {
	if proto == etherTypeTEB {
		w.ethernet(b)
		return
	}
	w.etherType(proto, b)
}
