package packet

import (
	"encoding/binary"
	"net/netip"
)

// IPv6 extension headers skipped to reach the L4 protocol (RFC 8200 §4,
// RFC 4302 for AH).
const (
	ipv6HopByHop = 0
	ipv6Routing  = 43
	ipv6Fragment = 44
	ipv6AH       = 51
	ipv6DestOpts = 60
)

const (
	ipv6HeaderLen   = 40
	ipv6FragmentLen = 8
)

// ipv6 decodes an IPv6 header (RFC 8200 §3), skips up to maxIPv6Ext
// extension headers, and decodes what follows. Of a fragmented datagram
// only the first fragment continues.
func (w *walker) ipv6(b []byte) {
	p := w.p
	p.clearIP()
	if len(b) < ipv6HeaderLen {
		w.short(ReasonBadIP)
		return
	}
	if b[0]>>4 != 6 {
		w.malformed(ReasonBadIP)
		return
	}
	p.IPVersion = 6
	tc := b[0]<<4 | b[1]>>4
	p.DSCP, p.ECN = tc>>2, tc&0x03
	p.TTL, p.FlowLabel = b[7], flowLabel(b)
	plen := int(binary.BigEndian.Uint16(b[4:]))
	p.IPTotalLen = ipv6HeaderLen + plen
	p.Proto = b[6]
	p.Src = netip.AddrFrom16([16]byte(b[8:24]))
	p.Dst = netip.AddrFrom16([16]byte(b[24:40]))

	if plen == 0 && p.Proto == ipv6HopByHop {
		// A jumbogram (RFC 2675) gives its length in a hop-by-hop option;
		// take what was captured.
		plen = len(b) - ipv6HeaderLen
	} else {
		b = w.trim(b, p.IPTotalLen)
	}
	w.ip, w.ipWhole = b, !w.cut
	b = b[ipv6HeaderLen:]
	left := plen // payload bytes after the headers skipped so far, as declared
	for n := 0; ; n++ {
		var hl int
		switch p.Proto {
		case ipv6HopByHop, ipv6Routing, ipv6DestOpts:
			if len(b) < 2 {
				w.short(ReasonBadIP)
				return
			}
			hl = (int(b[1]) + 1) * 8
		case ipv6AH:
			if len(b) < 2 {
				w.short(ReasonBadIP)
				return
			}
			hl = (int(b[1]) + 2) * 4
		case ipv6Fragment:
			if len(b) < ipv6FragmentLen {
				w.short(ReasonBadIP)
				return
			}
			hl = ipv6FragmentLen
			// Offset 0 with M clear is an atomic fragment, a whole
			// datagram to be processed as such (RFC 8200 §4.5, RFC 6946
			// §4), as Wireshark does: not a fragment. The Identification
			// and offset tell a mirror's copy of a later fragment, which
			// has no TCP or UDP checksum, from the next (IPv4's do).
			const offsetMask, moreFragments = 0xfff8, 0x0001
			offM := binary.BigEndian.Uint16(b[2:])
			p.Fragment = p.Fragment || offM&(offsetMask|moreFragments) != 0
			p.IPID, p.FragOffset = binary.BigEndian.Uint32(b[4:]), offM>>3
			if offM&offsetMask != 0 {
				p.Proto = b[0]
				p.Note = ReasonFragment
				return
			}
		default:
			w.l4(b, left)
			return
		}
		if n == maxIPv6Ext {
			w.malformed(ReasonTooDeep)
			return
		}
		if len(b) < hl {
			w.short(ReasonBadIP)
			return
		}
		p.Proto = b[0]
		b = b[hl:]
		left -= hl
	}
}

// flowLabel reads the 20-bit flow label of an IPv6 header or a GRH (RFC
// 8200 §3, IBTA vol 1 §8.3.1: the same layout) at the start of b, which
// holds at least 4 bytes.
func flowLabel(b []byte) uint32 { return binary.BigEndian.Uint32(b) & 0x000fffff }
