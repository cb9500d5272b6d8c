package packet

import "encoding/binary"

// EtherTypes the walk dispatches on (IEEE Registration Authority).
const (
	etherTypeVLAN       = 0x8100 // IEEE 802.1Q C-tag
	etherTypeQinQ       = 0x88a8 // IEEE 802.1ad S-tag
	etherTypeQinQOld    = 0x9100 // pre-802.1ad vendor S-tag
	etherTypeRoCEv1     = 0x8915 // IBTA vol 1 Annex A16
	etherTypeMACControl = 0x8808 // IEEE 802.3 Annex 31A
	etherTypeTEB        = 0x6558 // transparent Ethernet bridging (GRE, RFC 1701)
	etherTypeERSPAN12   = 0x88be // ERSPAN type I and II (GRE protocol)
	etherTypeERSPAN3    = 0x22eb // ERSPAN type III (GRE protocol)
	minEtherType        = 0x0600 // smaller values are IEEE 802.3 length fields
)

const (
	etherHeaderLen = 14 // destination MAC, source MAC, EtherType
	vlanTagLen     = 4  // TCI and the next EtherType (IEEE 802.1Q §9.6)
)

// ethernet decodes an Ethernet II header (IEEE 802.3 §3.1.1) and what it
// carries. The frame check sequence is never present in captures this reads.
func (w *walker) ethernet(b []byte) {
	w.ethPos = w.p.NEncap
	if len(b) < etherHeaderLen {
		w.short(ReasonShortEthernet)
		return
	}
	w.ethSrc = b[6:12]
	w.etherType(binary.BigEndian.Uint16(b[12:]), b[etherHeaderLen:])
}

// etherType decodes what follows an EtherType (or SLL protocol, or GRE
// protocol type) field of value et: VLAN tags, then the network layer.
func (w *walker) etherType(et uint16, b []byte) {
	p := w.p
	for tags := 0; et == etherTypeVLAN || et == etherTypeQinQ || et == etherTypeQinQOld; tags++ {
		if tags == maxVLANTags {
			w.malformed(ReasonTooDeep)
			return
		}
		if len(b) < vlanTagLen {
			w.short(ReasonShortVLAN)
			return
		}
		tci := binary.BigEndian.Uint16(b)
		kind := EncapVLAN
		if et != etherTypeVLAN {
			kind = EncapQinQ
		}
		p.HasVLAN, p.VLAN, p.PCP = true, tci&0x0fff, uint8(tci>>13)
		p.pushEncap(kind, uint32(p.VLAN))
		et = binary.BigEndian.Uint16(b[2:])
		b = b[vlanTagLen:]
	}
	p.EtherType = et
	switch et {
	case etherTypeIPv4:
		w.ipv4(b)
	case etherTypeIPv6:
		w.ipv6(b)
	case etherTypeRoCEv1:
		w.roceV1(b)
	case etherTypeMACControl:
		w.macControl(b)
	}
}
