package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// AtomicETH is the Atomic Extended Transport Header (IBTA vol 1 §9.3.4) of a
// CompareSwap or FetchAdd request.
type AtomicETH struct {
	VA          uint64
	RKey        uint32
	SwapData    uint64 // swap value, or the addend of a FetchAdd
	CompareData uint64
}

func (a *AtomicETH) decode(data []byte) error {
	if len(data) < AtomicETHLen {
		return shortError("AtomicETH", len(data), AtomicETHLen)
	}
	a.VA = binary.BigEndian.Uint64(data[0:8])
	a.RKey = binary.BigEndian.Uint32(data[8:12])
	a.SwapData = binary.BigEndian.Uint64(data[12:20])
	a.CompareData = binary.BigEndian.Uint64(data[20:28])
	return nil
}

func (a AtomicETH) append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, a.VA)
	dst = binary.BigEndian.AppendUint32(dst, a.RKey)
	dst = binary.BigEndian.AppendUint64(dst, a.SwapData)
	return binary.BigEndian.AppendUint64(dst, a.CompareData)
}

// LayerType returns LayerTypeAtomicETH.
func (a AtomicETH) LayerType() gopacket.LayerType { return LayerTypeAtomicETH }

// LayerContents returns the header re-encoded from its fields.
func (a AtomicETH) LayerContents() []byte { return a.append(make([]byte, 0, AtomicETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (a AtomicETH) LayerPayload() []byte { return nil }
