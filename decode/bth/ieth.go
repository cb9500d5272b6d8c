package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// IETH is the Invalidate Extended Transport Header (IBTA vol 1 §9.3.8) of a
// SEND with Invalidate.
type IETH struct {
	RKey uint32 // the R_Key to invalidate
}

func (i *IETH) decode(data []byte) error {
	if len(data) < IETHLen {
		return shortError("IETH", len(data), IETHLen)
	}
	i.RKey = binary.BigEndian.Uint32(data[0:4])
	return nil
}

func (i IETH) append(dst []byte) []byte { return binary.BigEndian.AppendUint32(dst, i.RKey) }

// LayerType returns LayerTypeIETH.
func (i IETH) LayerType() gopacket.LayerType { return LayerTypeIETH }

// LayerContents returns the header re-encoded from its fields.
func (i IETH) LayerContents() []byte { return i.append(make([]byte, 0, IETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (i IETH) LayerPayload() []byte { return nil }
