package bth

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// RoCEv2UDPPort is the UDP destination port of RoCEv2 (IANA, Annex A17 §A17.2).
const RoCEv2UDPPort = 4791

// EtherTypeRoCEv1 is the EtherType of RoCEv1: a GRH follows the Ethernet
// header (Annex A16).
const EtherTypeRoCEv1 layers.EthernetType = 0x8915

// Layer types of this package, in gopacket's range for user layers
// (1000-1999). They are constants so that nothing can reassign them; init
// registers their names and decoders with gopacket.
const (
	LayerTypeBTH          = gopacket.LayerType(1791)
	LayerTypeRETH         = gopacket.LayerType(1792)
	LayerTypeAETH         = gopacket.LayerType(1793)
	LayerTypeDETH         = gopacket.LayerType(1794)
	LayerTypeImmDt        = gopacket.LayerType(1795)
	LayerTypeIETH         = gopacket.LayerType(1796)
	LayerTypeAtomicETH    = gopacket.LayerType(1797)
	LayerTypeAtomicAckETH = gopacket.LayerType(1798)
	LayerTypeRDETH        = gopacket.LayerType(1799)
	LayerTypeXRCETH       = gopacket.LayerType(1800)
	LayerTypeFETH         = gopacket.LayerType(1801)
	LayerTypeGRH          = gopacket.LayerType(1802)
	LayerTypeCMMAD        = gopacket.LayerType(1803)
	LayerTypeCNP          = gopacket.LayerType(1804)
)

// init is the one place this package registers anything with gopacket, as
// gopacket's design demands (its layer type, UDP port and EtherType tables
// are global): the layer types above with their names and decoders, UDP
// port 4791 as RoCEv2 and EtherType 0x8915 as RoCEv1. Importing the package
// is what makes gopacket.NewPacket decode RoCE.
func init() {
	register := func(t gopacket.LayerType, name string, dec gopacket.Decoder) {
		gopacket.RegisterLayerType(int(t), gopacket.LayerTypeMetadata{Name: name, Decoder: dec})
	}
	register(LayerTypeBTH, "BTH", gopacket.DecodeFunc(decodeBTH))
	register(LayerTypeRETH, "RETH", nil)
	register(LayerTypeAETH, "AETH", nil)
	register(LayerTypeDETH, "DETH", nil)
	register(LayerTypeImmDt, "ImmDt", nil)
	register(LayerTypeIETH, "IETH", nil)
	register(LayerTypeAtomicETH, "AtomicETH", nil)
	register(LayerTypeAtomicAckETH, "AtomicAckETH", nil)
	register(LayerTypeRDETH, "RDETH", nil)
	register(LayerTypeXRCETH, "XRCETH", nil)
	register(LayerTypeFETH, "FETH", nil)
	register(LayerTypeGRH, "GRH", gopacket.DecodeFunc(decodeGRH))
	register(LayerTypeCMMAD, "CMMAD", gopacket.DecodeFunc(decodeCMMAD))
	register(LayerTypeCNP, "CNP", gopacket.DecodeFunc(decodeCNP))

	layers.RegisterUDPPortLayerType(RoCEv2UDPPort, LayerTypeBTH)
	layers.EthernetTypeMetadata[EtherTypeRoCEv1] = layers.EnumMetadata{
		DecodeWith: LayerTypeGRH,
		Name:       "RoCEv1",
		LayerType:  LayerTypeGRH,
	}
}
