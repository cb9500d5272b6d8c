package bth

import (
	"encoding/binary"
	"net/netip"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// NextHeaderIBA is the GRH next-header value for an IBA transport header:
// a BTH follows (IBTA vol 1 §8.3.1).
const NextHeaderIBA = 0x1b

// GRH is the InfiniBand Global Route Header (IBTA vol 1 §8.3, Figure 95), 40
// bytes laid out like an IPv6 header. RoCEv1 (EtherType 0x8915, Annex A16)
// carries it between the Ethernet header and the BTH.
type GRH struct {
	layers.BaseLayer

	IPVersion     uint8  // IPVer, 4 bits: 6
	TrafficClass  uint8  // TClass
	FlowLabel     uint32 // 20 bits
	PayloadLength uint16 // PayLen: bytes after the GRH, ICRC included
	NextHeader    uint8  // NxtHdr: NextHeaderIBA for IBA transport
	HopLimit      uint8  // HopLmt
	SGID          [16]byte
	DGID          [16]byte
}

// LayerType returns LayerTypeGRH.
func (g *GRH) LayerType() gopacket.LayerType { return LayerTypeGRH }

// CanDecode returns LayerTypeGRH.
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType returns LayerTypeBTH when NextHeader is NextHeaderIBA and
// gopacket.LayerTypePayload otherwise.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.NextHeader == NextHeaderIBA {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// SrcAddr returns SGID as an address, unmapped when it is an IPv4-mapped GID.
func (g *GRH) SrcAddr() netip.Addr { return netip.AddrFrom16(g.SGID).Unmap() }

// DstAddr returns DGID as an address, unmapped when it is an IPv4-mapped GID.
func (g *GRH) DstAddr() netip.Addr { return netip.AddrFrom16(g.DGID).Unmap() }

// DecodeFromBytes decodes the 40-byte GRH. Fewer bytes is a *HeaderError.
// All fields are reset first; it does not allocate.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*g = GRH{}
	if len(data) < GRHLen {
		return shortError("GRH", len(data), GRHLen)
	}
	w := binary.BigEndian.Uint32(data[0:4])
	g.IPVersion = uint8(w >> 28)
	g.TrafficClass = uint8(w >> 20)
	g.FlowLabel = w & 0xfffff
	g.PayloadLength = binary.BigEndian.Uint16(data[4:6])
	g.NextHeader = data[6]
	g.HopLimit = data[7]
	copy(g.SGID[:], data[8:24])
	copy(g.DGID[:], data[24:40])
	g.Contents, g.Payload = data[:GRHLen], data[GRHLen:]
	return nil
}

// AppendTo appends the 40 GRH bytes encoded from the fields to dst.
func (g *GRH) AppendTo(dst []byte) []byte {
	w := uint32(g.IPVersion&0xf)<<28 | uint32(g.TrafficClass)<<20 | g.FlowLabel&0xfffff
	dst = binary.BigEndian.AppendUint32(dst, w)
	dst = binary.BigEndian.AppendUint16(dst, g.PayloadLength)
	dst = append(dst, g.NextHeader, g.HopLimit)
	dst = append(dst, g.SGID[:]...)
	return append(dst, g.DGID[:]...)
}

// SerializeTo prepends the GRH. With opts.FixLengths, PayloadLength is set
// to the length of what follows in buf.
func (g *GRH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if opts.FixLengths {
		g.PayloadLength = uint16(len(buf.Bytes()))
	}
	bytes, err := buf.PrependBytes(GRHLen)
	if err != nil {
		return err
	}
	g.AppendTo(bytes[:0:GRHLen])
	return nil
}
