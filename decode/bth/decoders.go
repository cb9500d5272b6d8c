package bth

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// The decoders gopacket.NewPacket calls; init registers them. Unlike
// DecodeFromBytes on a reused layer, they allocate a layer per header.

// decodeBTH adds the BTH layer, then a copy of each extended header decoded
// as a layer of its own in wire order, then hands what follows to the CM
// MAD, CNP or payload decoder.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	if fromRoCEPortOnly(data, p) {
		return p.NextDecoder(gopacket.LayerTypePayload)
	}
	b := &BTH{}
	err := b.DecodeFromBytes(data, p)
	if len(b.Contents) > 0 {
		p.AddLayer(b)
	}
	if err != nil {
		return err
	}
	for _, l := range b.extLayers() {
		if l != nil {
			p.AddLayer(l)
		}
	}
	if len(b.Payload) == 0 {
		return nil
	}
	// Not p.NextDecoder: that decodes the LayerPayload of the last layer
	// added, an extended header, which has none.
	return b.NextLayerType().Decode(b.Payload, p)
}

// extLayers returns copies of the decoded extended headers as layers, in
// wire order; headers not in Ext are nil.
func (b *BTH) extLayers() [len(extSizes)]gopacket.Layer {
	var ls [len(extSizes)]gopacket.Layer
	for i := range extSizes {
		h := ExtHeaders(1) << i
		if b.Ext&h == 0 {
			continue
		}
		switch h {
		case HasRDETH:
			c := b.RDETH
			ls[i] = &c
		case HasDETH:
			c := b.DETH
			ls[i] = &c
		case HasXRCETH:
			c := b.XRCETH
			ls[i] = &c
		case HasFETH:
			c := b.FETH
			ls[i] = &c
		case HasRETH:
			c := b.RETH
			ls[i] = &c
		case HasAtomicETH:
			c := b.AtomicETH
			ls[i] = &c
		case HasAETH:
			c := b.AETH
			ls[i] = &c
		case HasAtomicAckETH:
			c := b.AtomicAckETH
			ls[i] = &c
		case HasImmDt:
			c := b.ImmDt
			ls[i] = &c
		case HasIETH:
			c := b.IETH
			ls[i] = &c
		}
	}
	return ls
}

// decodeGRH decodes a RoCEv1 GRH and what follows it.
func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	g := &GRH{}
	if err := g.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(g)
	if len(g.Payload) == 0 {
		return nil
	}
	return p.NextDecoder(g.NextLayerType())
}

// decodeCMMAD decodes a MAD on QP1. The ICRC stays in its LayerPayload.
func decodeCMMAD(data []byte, p gopacket.PacketBuilder) error {
	m := &CMMAD{}
	if err := m.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(m)
	return nil
}

// decodeCNP decodes the reserved bytes of a CNP. The ICRC stays in its
// LayerPayload.
func decodeCNP(data []byte, p gopacket.PacketBuilder) error {
	c := &CNP{}
	if err := c.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(c)
	return nil
}

// fromRoCEPortOnly reports whether data is the payload of a UDP datagram
// sent from port 4791 to another port. gopacket's UDP layer picks the next
// decoder by destination port and then by source port, but RoCEv2 is keyed
// on the destination port alone (IBTA vol 1 Annex A17 §A17.4.1.1: the
// source port only carries flow entropy), so such a datagram is not RoCE.
// Only the datagram that directly carries data is judged: under a UDP
// tunnel gopacket's transport layer is the outer one, which says nothing.
func fromRoCEPortOnly(data []byte, p gopacket.PacketBuilder) bool {
	pk, ok := p.(gopacket.Packet)
	if !ok || len(data) == 0 {
		return false
	}
	udp, ok := pk.TransportLayer().(*layers.UDP)
	if !ok || len(udp.Payload) == 0 || &udp.Payload[0] != &data[0] {
		return false
	}
	return udp.DstPort != RoCEv2UDPPort
}
