package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// XRCETH is the XRC Extended Transport Header (IBTA vol 1 Annex A14
// §A14.4.2), first after the BTH on XRC requests.
type XRCETH struct {
	Reserved uint8  // 8 reserved bits
	XRCSRQ   uint32 // 24-bit XRC shared receive queue number
}

func (x *XRCETH) decode(data []byte) error {
	if len(data) < XRCETHLen {
		return shortError("XRCETH", len(data), XRCETHLen)
	}
	x.Reserved = data[0]
	x.XRCSRQ = uint24(data[1:4])
	return nil
}

func (x XRCETH) append(dst []byte) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(x.Reserved)<<24|x.XRCSRQ&0xffffff)
}

// LayerType returns LayerTypeXRCETH.
func (x XRCETH) LayerType() gopacket.LayerType { return LayerTypeXRCETH }

// LayerContents returns the header re-encoded from its fields.
func (x XRCETH) LayerContents() []byte { return x.append(make([]byte, 0, XRCETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (x XRCETH) LayerPayload() []byte { return nil }
