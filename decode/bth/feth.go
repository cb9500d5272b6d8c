package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// FETH is the Flush Extended Transport Header of an RDMA FLUSH (IBTA vol 1
// release 1.5, "Memory Placement Extensions"); it precedes the RETH.
type FETH struct {
	Raw uint32 // placement type and selectivity level bits; the rest reserved
}

// PlacementType returns bits 3-0: which placement (global visibility,
// persistence) the FLUSH asks for, as Linux rxe's FETH_PLT_MASK.
func (f FETH) PlacementType() uint8 { return uint8(f.Raw & 0x0f) }

// SelectivityLevel returns bits 5-4: 0 flushes the memory range, 1 the whole
// memory region, as Linux rxe's FETH_SEL_MASK.
func (f FETH) SelectivityLevel() uint8 { return uint8(f.Raw>>4) & 0x3 }

func (f *FETH) decode(data []byte) error {
	if len(data) < FETHLen {
		return shortError("FETH", len(data), FETHLen)
	}
	f.Raw = binary.BigEndian.Uint32(data[0:4])
	return nil
}

func (f FETH) append(dst []byte) []byte { return binary.BigEndian.AppendUint32(dst, f.Raw) }

// LayerType returns LayerTypeFETH.
func (f FETH) LayerType() gopacket.LayerType { return LayerTypeFETH }

// LayerContents returns the header re-encoded from its fields.
func (f FETH) LayerContents() []byte { return f.append(make([]byte, 0, FETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (f FETH) LayerPayload() []byte { return nil }
