package packet

// MaxEncap is the number of encapsulation layers a Packet records.
const MaxEncap = 16

// EncapKind names one encapsulation layer stripped to reach the innermost
// frame (see the package documentation for which layers are listed).
type EncapKind uint8

// Encapsulation layer kinds.
const (
	EncapNone     EncapKind = iota
	EncapVLAN               // IEEE 802.1Q C-tag (TPID 0x8100); ID is the VLAN ID
	EncapQinQ               // IEEE 802.1ad S-tag (TPID 0x88a8, or the pre-standard 0x9100); ID is the VLAN ID
	EncapEthernet           // the Ethernet header of a frame that carries a tunnel
	EncapIPv4               // an IPv4 header that carries a tunnel
	EncapIPv6               // an IPv6 header that carries a tunnel
	EncapUDP                // a UDP header that carries a tunnel (VXLAN)
	EncapGRE                // GRE (RFC 2784); ID is the RFC 2890 key, 0 if none
	EncapERSPAN1            // ERSPAN type I: GRE 0x88BE without sequence number, no header
	EncapERSPAN2            // ERSPAN type II (8-byte header); ID is the session ID
	EncapERSPAN3            // ERSPAN type III (12-byte header); ID is the session ID
	EncapVXLAN              // VXLAN (RFC 7348) or VXLAN-GPE; ID is the VNI
	EncapSLL                // Linux cooked header v1 (LINKTYPE_LINUX_SLL)
	EncapSLL2               // Linux cooked header v2 (LINKTYPE_LINUX_SLL2)
	EncapNull               // BSD loopback address family (LINKTYPE_NULL, LINKTYPE_LOOP)
	numEncapKinds
)

var encapNames = [numEncapKinds]string{
	EncapNone:     "none",
	EncapVLAN:     "vlan",
	EncapQinQ:     "qinq",
	EncapEthernet: "eth",
	EncapIPv4:     "ipv4",
	EncapIPv6:     "ipv6",
	EncapUDP:      "udp",
	EncapGRE:      "gre",
	EncapERSPAN1:  "erspan1",
	EncapERSPAN2:  "erspan2",
	EncapERSPAN3:  "erspan3",
	EncapVXLAN:    "vxlan",
	EncapSLL:      "sll",
	EncapSLL2:     "sll2",
	EncapNull:     "null",
}

// String returns the kind's token, such as "erspan2".
func (k EncapKind) String() string {
	if k < numEncapKinds {
		return encapNames[k]
	}
	return "EncapKind(" + itoa(uint32(k)) + ")"
}

// hasID reports whether the kind's token always carries its ID.
func (k EncapKind) hasID() bool {
	switch k {
	case EncapVLAN, EncapQinQ, EncapERSPAN2, EncapERSPAN3, EncapVXLAN:
		return true
	}
	return false
}

// EncapLayer is one stripped encapsulation layer.
type EncapLayer struct {
	Kind EncapKind
	ID   uint32 // VLAN ID, ERSPAN session ID, GRE key or VXLAN VNI; 0 for the others
}

// String returns the layer's token: "vlan:100", "qinq:200", "eth", "ipv4",
// "ipv6", "udp", "gre" (or "gre:KEY" for a nonzero key), "erspan1",
// "erspan2:5", "erspan3:5", "vxlan:VNI", "sll", "sll2" or "null".
func (e EncapLayer) String() string {
	var b [24]byte
	return string(e.AppendString(b[:0]))
}

// AppendString appends the layer's token (see String) to dst, allocating
// nothing when dst has room.
func (e EncapLayer) AppendString(dst []byte) []byte {
	dst = append(dst, e.Kind.String()...)
	if e.Kind.hasID() || (e.Kind == EncapGRE && e.ID != 0) {
		dst = append(dst, ':')
		dst = appendUint(dst, e.ID)
	}
	return dst
}

// EncapLayers returns the recorded encapsulation layers, outermost first.
// The slice aliases p.
func (p *Packet) EncapLayers() []EncapLayer {
	return p.Encap[:p.NEncap]
}

// AppendEncap appends the encapsulation tokens joined by commas, such as
// "eth,ipv4,gre,erspan2:5", to dst.
func (p *Packet) AppendEncap(dst []byte) []byte {
	for i, e := range p.EncapLayers() {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = e.AppendString(dst)
	}
	return dst
}

// pushEncap appends a layer, dropping it when MaxEncap layers are recorded.
func (p *Packet) pushEncap(k EncapKind, id uint32) {
	if p.NEncap < MaxEncap {
		p.Encap[p.NEncap] = EncapLayer{Kind: k, ID: id}
		p.NEncap++
	}
}

// insertEncap inserts a layer at index i, shifting the later ones; the last
// one falls off when MaxEncap layers are recorded.
func (p *Packet) insertEncap(i int, k EncapKind, id uint32) {
	if i >= MaxEncap {
		return
	}
	if p.NEncap < MaxEncap {
		p.NEncap++
	}
	copy(p.Encap[i+1:p.NEncap], p.Encap[i:p.NEncap-1])
	p.Encap[i] = EncapLayer{Kind: k, ID: id}
}
