package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// RDETH is the Reliable Datagram Extended Transport Header (IBTA vol 1
// §9.3.1), first after the BTH on every RD packet.
type RDETH struct {
	Reserved uint8  // 8 reserved bits
	EECnxt   uint32 // 24-bit end-to-end context
}

func (r *RDETH) decode(data []byte) error {
	if len(data) < RDETHLen {
		return shortError("RDETH", len(data), RDETHLen)
	}
	r.Reserved = data[0]
	r.EECnxt = uint24(data[1:4])
	return nil
}

func (r RDETH) append(dst []byte) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(r.Reserved)<<24|r.EECnxt&0xffffff)
}

// LayerType returns LayerTypeRDETH.
func (r RDETH) LayerType() gopacket.LayerType { return LayerTypeRDETH }

// LayerContents returns the header re-encoded from its fields.
func (r RDETH) LayerContents() []byte { return r.append(make([]byte, 0, RDETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (r RDETH) LayerPayload() []byte { return nil }
