package packet

// Reason says why a walk stopped early. Packet.Malformed holds one for a
// header that is invalid, Packet.Note one for a header that is valid but is
// not decoded further. It is a byte so that recording it allocates nothing.
type Reason uint8

// Reasons for Packet.Malformed.
const (
	ReasonNone            Reason = iota
	ReasonShortLink              // link-layer pseudo-header (SLL, SLL2, NULL) shorter than its size
	ReasonShortEthernet          // fewer than 14 bytes of Ethernet header
	ReasonShortVLAN              // an 802.1Q/802.1ad tag cut short
	ReasonBadIP                  // IPv4/IPv6 version, IHL or length invalid, or header cut short
	ReasonShortUDP               // fewer than 8 bytes of UDP header
	ReasonBadUDPLength           // UDP length < 8 or beyond the IP payload
	ReasonBadTCP                 // TCP header cut short or data offset < 5
	ReasonBadGRE                 // GRE header cut short or routing present (RFC 1701)
	ReasonBadERSPAN              // ERSPAN header cut short or wrong version
	ReasonBadVXLAN               // VXLAN header cut short or I flag clear (RFC 7348)
	ReasonBadGRH                 // RoCEv1 GRH cut short, IPVer not 6 or NxtHdr not 0x1B
	ReasonShortBTH               // IB transport headers cut short in a whole frame
	ReasonBadVersion             // BTH TVer not 0
	ReasonReservedOpcode         // reserved BTH opcode
	ReasonBadLength              // UDP/GRH length disagrees with the IB headers and pad
	ReasonBadTransport           // any other IB transport decoding error
	ReasonBadMACControl          // MAC Control frame cut short
	ReasonTooDeep                // more than MaxTunnels tunnels, 8 VLAN tags or 8 IPv6 extension headers
	ReasonFragment               // Note: an IP fragment other than the first, not decoded above IP, or a first one that carries neither RoCEv2 nor a tunnel
	ReasonERSPANFrameType        // Note: ERSPAN III frame type is reserved (neither Ethernet nor IP)
	ReasonGREVersion             // Note: GRE version not 0 (e.g. PPTP), not decoded further
	ReasonUnknownFamily          // Note: NULL/LOOP address family is neither IPv4 nor IPv6
	ReasonVXLANProtocol          // Note: VXLAN-GPE next protocol is not Ethernet, IPv4 or IPv6
	numReasons
)

var reasonNames = [numReasons]string{
	ReasonNone:            "",
	ReasonShortLink:       "short link-layer header",
	ReasonShortEthernet:   "short Ethernet header",
	ReasonShortVLAN:       "short VLAN tag",
	ReasonBadIP:           "bad IP header",
	ReasonShortUDP:        "short UDP header",
	ReasonBadUDPLength:    "bad UDP length",
	ReasonBadTCP:          "bad TCP header",
	ReasonBadGRE:          "bad GRE",
	ReasonBadERSPAN:       "bad ERSPAN",
	ReasonBadVXLAN:        "bad VXLAN",
	ReasonBadGRH:          "bad GRH",
	ReasonShortBTH:        "short BTH",
	ReasonBadVersion:      "bad transport version",
	ReasonReservedOpcode:  "reserved opcode",
	ReasonBadLength:       "bad length",
	ReasonBadTransport:    "bad transport header",
	ReasonBadMACControl:   "bad MAC control",
	ReasonTooDeep:         "too deep",
	ReasonFragment:        "IP fragment",
	ReasonERSPANFrameType: "ERSPAN frame type reserved",
	ReasonGREVersion:      "GRE version not 0",
	ReasonUnknownFamily:   "unknown address family",
	ReasonVXLANProtocol:   "VXLAN-GPE protocol not Ethernet or IP",
}

// String returns the reason as a short phrase such as "short BTH", or "" for
// ReasonNone.
func (r Reason) String() string {
	if r < numReasons {
		return reasonNames[r]
	}
	return "Reason(" + itoa(uint32(r)) + ")"
}
