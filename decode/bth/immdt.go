package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// ImmDt is the Immediate Data Extended Transport Header (IBTA vol 1 §9.3.7)
// of SEND and RDMA WRITE with immediate. Data is the four bytes read
// big-endian.
type ImmDt struct {
	Data uint32
}

func (i *ImmDt) decode(data []byte) error {
	if len(data) < ImmDtLen {
		return shortError("ImmDt", len(data), ImmDtLen)
	}
	i.Data = binary.BigEndian.Uint32(data[0:4])
	return nil
}

func (i ImmDt) append(dst []byte) []byte { return binary.BigEndian.AppendUint32(dst, i.Data) }

// LayerType returns LayerTypeImmDt.
func (i ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// LayerContents returns the header re-encoded from its fields.
func (i ImmDt) LayerContents() []byte { return i.append(make([]byte, 0, ImmDtLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (i ImmDt) LayerPayload() []byte { return nil }
