package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
)

// RETH is the RDMA Extended Transport Header (IBTA vol 1 §9.3.3): the remote
// buffer of an RDMA WRITE or READ request (and of FLUSH and ATOMIC_WRITE).
type RETH struct {
	VA     uint64 // virtual address
	RKey   uint32 // remote key
	DMALen uint32 // length of the whole DMA transfer in bytes
}

func (r *RETH) decode(data []byte) error {
	if len(data) < RETHLen {
		return shortError("RETH", len(data), RETHLen)
	}
	r.VA = binary.BigEndian.Uint64(data[0:8])
	r.RKey = binary.BigEndian.Uint32(data[8:12])
	r.DMALen = binary.BigEndian.Uint32(data[12:16])
	return nil
}

func (r RETH) append(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint64(dst, r.VA)
	dst = binary.BigEndian.AppendUint32(dst, r.RKey)
	return binary.BigEndian.AppendUint32(dst, r.DMALen)
}

// LayerType returns LayerTypeRETH.
func (r RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// LayerContents returns the header re-encoded from its fields.
func (r RETH) LayerContents() []byte { return r.append(make([]byte, 0, RETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (r RETH) LayerPayload() []byte { return nil }
