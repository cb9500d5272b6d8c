package packet

import "encoding/binary"

const (
	vxlanHeaderLen = 8
	vxlanFlagI     = 0x08 // I: the VNI is valid (RFC 7348 §5)
	vxlanFlagP     = 0x04 // P: VXLAN-GPE next protocol present (draft-ietf-nvo3-vxlan-gpe-12 §3.2)
)

// VXLAN-GPE next protocols (draft-ietf-nvo3-vxlan-gpe-12 §11.2).
const (
	gpeIPv4     = 1
	gpeIPv6     = 2
	gpeEthernet = 3
)

// vxlan decodes a VXLAN header (RFC 7348 §5): Flags(8) Reserved(24) VNI(24)
// Reserved(8); then the inner Ethernet frame.
func (w *walker) vxlan(b []byte) {
	if len(b) < vxlanHeaderLen {
		w.short(ReasonBadVXLAN)
		return
	}
	if b[0]&vxlanFlagI == 0 {
		w.malformed(ReasonBadVXLAN)
		return
	}
	w.p.pushEncap(EncapVXLAN, binary.BigEndian.Uint32(b[4:])>>8)
	w.innerFrame()
	w.ethernet(b[vxlanHeaderLen:])
}

// vxlanGPE decodes a VXLAN-GPE header (draft-ietf-nvo3-vxlan-gpe-12 §3.2):
// Flags(8) Reserved(16) Next Protocol(8) VNI(24) Reserved(8); then the
// inner Ethernet frame or IP datagram. Without the P flag the inner frame is
// Ethernet, as in VXLAN. It is recorded as a "vxlan" layer.
func (w *walker) vxlanGPE(b []byte) {
	if len(b) < vxlanHeaderLen {
		w.short(ReasonBadVXLAN)
		return
	}
	if b[0]&vxlanFlagI == 0 {
		w.malformed(ReasonBadVXLAN)
		return
	}
	next := byte(gpeEthernet)
	if b[0]&vxlanFlagP != 0 {
		next = b[3]
	}
	if next != gpeEthernet && next != gpeIPv4 && next != gpeIPv6 {
		w.p.Note = ReasonVXLANProtocol
		return
	}
	w.p.pushEncap(EncapVXLAN, binary.BigEndian.Uint32(b[4:])>>8)
	w.innerFrame()
	b = b[vxlanHeaderLen:]
	switch next {
	case gpeEthernet:
		w.ethernet(b)
	case gpeIPv4:
		w.p.EtherType = etherTypeIPv4
		w.ipv4(b)
	case gpeIPv6:
		w.p.EtherType = etherTypeIPv6
		w.ipv6(b)
	}
}
