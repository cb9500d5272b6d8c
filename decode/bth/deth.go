package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// DETH is the Datagram Extended Transport Header (IBTA vol 1 §9.3.2), carried
// by UD packets and RD requests.
type DETH struct {
	QKey     uint32 // queue key
	Reserved uint8  // 8 reserved bits before SrcQP
	SrcQP    uint32 // 24-bit source QP number
}

func (d *DETH) decode(data []byte) error {
	if len(data) < DETHLen {
		return shortError("DETH", len(data), DETHLen)
	}
	d.QKey = binary.BigEndian.Uint32(data[0:4])
	d.Reserved = data[4]
	d.SrcQP = uint24(data[5:8])
	return nil
}

func (d DETH) append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, d.QKey)
	return append(dst, d.Reserved, byte(d.SrcQP>>16), byte(d.SrcQP>>8), byte(d.SrcQP))
}

// LayerType returns LayerTypeDETH.
func (d DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// LayerContents returns the header re-encoded from its fields.
func (d DETH) LayerContents() []byte { return d.append(make([]byte, 0, DETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (d DETH) LayerPayload() []byte { return nil }

// uint24 reads a big-endian 24-bit number from b[0:3].
func uint24(b []byte) uint32 {
	_ = b[2]
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}
