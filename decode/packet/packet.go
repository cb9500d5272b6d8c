package packet

import (
	"net/netip"

	"github.com/rocedump/rocedump/decode/bth"
)

// Packet is one decoded frame. A Decoder overwrites every field on each
// call, so one Packet can be reused for a whole capture as long as only
// Decode fills it (see Decode). Fields describe the innermost frame reached
// (see the package documentation); those that do not apply, or were not
// captured, are zero.
type Packet struct {
	Kind      Kind   // KindOther, KindRoCE or KindMalformed
	Malformed Reason // why the walk stopped at an invalid header; on a KindOther frame it names a bad outer header
	Note      Reason // why the walk stopped at a valid header it does not decode further (fragment, ERSPAN frame type, ...)

	CapLen, OrigLen int // captured and original length of the whole frame

	// Truncated says bytes are missing: the frame was cut by the snap length
	// (CapLen < OrigLen), an IP, UDP or GRH length points past the captured
	// bytes, or an ERSPAN header sets its T (truncated) bit.
	Truncated bool

	Encap  [MaxEncap]EncapLayer // stripped outer layers, outermost first; see EncapLayers
	NEncap int                  // number of valid entries in Encap

	// EtherType is the protocol of the innermost frame's network layer: the
	// Ethernet type after any VLAN tags, the SLL/SLL2 protocol, the GRE
	// protocol type, or 0x0800/0x86DD implied by a raw or loopback link
	// type. An 802.3 frame keeps its length field (< 0x600) here.
	EtherType uint16

	HasVLAN bool   // the innermost frame has an 802.1Q/802.1ad tag
	VLAN    uint16 // VLAN ID of its innermost tag
	PCP     uint8  // priority code point of its innermost tag (IEEE 802.1Q §6.9.3)

	RoCEVersion uint8 // 1 (EtherType 0x8915 + GRH) or 2 (UDP 4791); 0 if not RoCE

	IPVersion  uint8      // 4 or 6; 6 for RoCEv1, whose GRH carries GIDs
	Src, Dst   netip.Addr // IP addresses, or RoCEv1 SGID/DGID (unmapped if IPv4-mapped)
	DSCP, ECN  uint8      // from the IPv4 TOS, IPv6 traffic class or GRH TClass (RFC 2474, RFC 3168)
	TTL        uint8      // IPv4 TTL, IPv6 hop limit or GRH HopLmt: a mirror's ingress and egress copies of a packet differ in it
	FlowLabel  uint32     // IPv6 or GRH flow label (RFC 6437; IBTA vol 1 §8.3.1), 20 bits; 0 for IPv4
	IPTotalLen int        // IPv4 total length, or 40 + IPv6/GRH payload length, as the header says
	Fragment   bool       // the IP datagram is a fragment (MF set or offset nonzero)

	// WholeLen is, for the first fragment of a RoCEv2 datagram whose UDP
	// length was captured, the length of the whole datagram: its IP
	// header (without an IPv6 Fragment header) and the UDP length, what
	// IPTotalLen says of a datagram that was not fragmented. 0 otherwise;
	// see DatagramLen.
	WholeLen int

	// Proto is the L4 protocol: the IPv4 protocol, or the IPv6 next header
	// after hop-by-hop, routing, fragment, destination options and AH
	// extension headers; 0x1B (IBA BTH) for RoCEv1.
	Proto uint8

	SrcPort, DstPort uint16 // TCP or UDP ports
	UDPLen           int    // UDP length field
	TCPFlags         uint8  // TCP flags byte (CWR ECE URG ACK PSH RST SYN FIN)

	// IPID is the datagram's Identification: the IPv4 header's (16 bits,
	// RFC 791 §3.1) or, over IPv6, that of a Fragment header (32 bits,
	// RFC 8200 §4.5), 0 for IPv6 without one and for RoCEv1; L4Checksum
	// the TCP or UDP checksum field (RFC 9293 §3.1, RFC 768), 0 when not
	// captured. A switch does not change either when it forwards a
	// packet, so a mirror's second copy of a packet repeats them, where
	// the next packet of a conversation almost never does.
	IPID       uint32
	L4Checksum uint16
	// FragOffset is the fragment offset of an IPv4 header (RFC 791 §3.1)
	// or an IPv6 Fragment header (RFC 8200 §4.5), in 8-byte units: 0 but
	// for a fragment after the first. A datagram's fragments share its
	// IPID, and the middle ones their length.
	FragOffset uint16

	// HasBTH says the 12-byte BTH was decoded into BTH. It is false when the
	// frame was cut before the BTH ended. BTH.Ext lists the extended headers
	// that were decoded.
	HasBTH bool
	BTH    bth.BTH

	// HasMAD says CM holds the header of a MAD sent to QP 1 (a UD
	// SEND_ONLY with a DETH, IBTA vol 1 §13.5.1), at least its 24 bytes
	// captured. HasCM says the MAD is an RDMA CM MAD (bth.CMMAD.IsCMMessage:
	// class 0x07 with a method and attribute the CM sends), whose message
	// fields CM then holds as far as they were captured; any other MAD,
	// of class 0x07 or not, has HasMAD alone.
	HasMAD bool
	HasCM  bool
	CM     bth.CMMAD

	// ICRC is the invariant CRC check: ICRCOK or ICRCBad when the whole IP
	// datagram (RoCEv2) or GRH payload (RoCEv1) was captured, else
	// ICRCUnchecked.
	ICRC bth.ICRCStatus

	// PayloadLen is the RDMA payload in bytes, from the UDP length (RoCEv2)
	// or GRH PayLen (RoCEv1) less the IB headers, pad and ICRC; right on
	// truncated frames once the IB headers were captured.
	PayloadLen int

	HasPFC bool     // PFC holds a MAC Control PAUSE or PFC frame
	PFC    PFCFrame // IEEE 802.1Qbb / 802.3 Annex 31B
}

// DatagramLen is the length of the IP datagram that carried p, as sent:
// IPTotalLen, or WholeLen for the first fragment of a RoCEv2 datagram,
// whose IPTotalLen is the fragment's. It is what a RoCE packet counts in
// byte totals and rates, right on truncated frames and fragments alike.
func (p *Packet) DatagramLen() int {
	if p.WholeLen != 0 {
		return p.WholeLen
	}
	return p.IPTotalLen
}

// clearFrame zeroes the fields that describe one frame, before the walk
// enters an inner frame.
func (p *Packet) clearFrame() {
	p.EtherType = 0
	p.HasVLAN, p.VLAN, p.PCP = false, 0, 0
	p.clearIP()
}

// clearIP zeroes the fields that describe one IP datagram.
func (p *Packet) clearIP() {
	p.IPVersion = 0
	p.Src, p.Dst = netip.Addr{}, netip.Addr{}
	p.DSCP, p.ECN = 0, 0
	p.TTL, p.FlowLabel = 0, 0
	p.IPTotalLen = 0
	p.Fragment, p.WholeLen = false, 0
	p.Proto = 0
	p.SrcPort, p.DstPort = 0, 0
	p.UDPLen = 0
	p.TCPFlags = 0
	p.IPID, p.L4Checksum, p.FragOffset = 0, 0, 0
}
