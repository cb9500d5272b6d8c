package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header (IBTA vol 1
// §9.3.6): the remote data before the atomic operation.
type AtomicAckETH struct {
	OrigRemoteData uint64
}

func (a *AtomicAckETH) decode(data []byte) error {
	if len(data) < AtomicAckETHLen {
		return shortError("AtomicAckETH", len(data), AtomicAckETHLen)
	}
	a.OrigRemoteData = binary.BigEndian.Uint64(data[0:8])
	return nil
}

func (a AtomicAckETH) append(dst []byte) []byte {
	return binary.BigEndian.AppendUint64(dst, a.OrigRemoteData)
}

// LayerType returns LayerTypeAtomicAckETH.
func (a AtomicAckETH) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }

// LayerContents returns the header re-encoded from its fields.
func (a AtomicAckETH) LayerContents() []byte {
	return a.append(make([]byte, 0, AtomicAckETHLen))
}

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (a AtomicAckETH) LayerPayload() []byte { return nil }
