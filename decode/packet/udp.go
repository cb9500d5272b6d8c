package packet

import "encoding/binary"

// UDP destination ports the walk dispatches on (IANA).
const (
	PortRoCEv2   = 4791 // IBTA vol 1 Annex A17 §A17.2.3
	PortVXLAN    = 4789 // RFC 7348 §5
	PortVXLANGPE = 4790 // draft-ietf-nvo3-vxlan-gpe-12 §3.1
)

const udpHeaderLen = 8

// udp decodes a UDP header (RFC 768) and, by destination port only (NICs
// pick any source port), RoCEv2, VXLAN or VXLAN-GPE. ipPayloadLen is the datagram's
// payload length as the IP header says.
func (w *walker) udp(b []byte, ipPayloadLen int) {
	p := w.p
	if len(b) < 4 {
		w.short(ReasonShortUDP)
		return
	}
	p.SrcPort = binary.BigEndian.Uint16(b)
	p.DstPort = binary.BigEndian.Uint16(b[2:])
	if p.DstPort == PortRoCEv2 {
		p.Kind, p.RoCEVersion = KindRoCE, 2
	}
	if len(b) < udpHeaderLen {
		w.short(ReasonShortUDP)
		return
	}
	p.UDPLen = int(binary.BigEndian.Uint16(b[4:]))
	p.L4Checksum = binary.BigEndian.Uint16(b[6:])
	if p.UDPLen < udpHeaderLen || p.UDPLen > ipPayloadLen {
		w.malformed(ReasonBadUDPLength)
		return
	}
	payload := w.trim(b[udpHeaderLen:], p.UDPLen-udpHeaderLen)
	switch p.DstPort {
	case PortRoCEv2:
		if extra := ipPayloadLen - p.UDPLen; w.ipWhole && extra > 0 {
			// The ICRC ends the UDP payload (Annex A17 §A17.8), which
			// the IP datagram outlasts here: check it there.
			w.ip = w.ip[:len(w.ip)-extra]
		}
		w.transport(payload, p.UDPLen-udpHeaderLen)
	case PortVXLAN:
		if w.enterTunnel(w.ipEncapKind()) {
			p.pushEncap(EncapUDP, 0)
			w.vxlan(payload)
		}
	case PortVXLANGPE:
		if w.enterTunnel(w.ipEncapKind()) {
			p.pushEncap(EncapUDP, 0)
			w.vxlanGPE(payload)
		}
	default:
		w.payload = payload
	}
}
