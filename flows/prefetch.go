package flows

import (
	"math/bits"
	"unsafe"

	"github.com/rocedump/rocedump/internal/prefetch"
)

// hotFlowLines is the part of a Flow that packets touch (see Flow and
// TestFlowLayout): lines 0-2 every packet, 3 a request, 4-5 a response.
const hotFlowLines = 6

// packIPv4 is packKey for the addresses a packet.PeekRoCEv2IPv4 read
// (big-endian, as on the wire) and a QPN of at most 24 bits.
func packIPv4(src, dst, qp uint32) packedKey {
	// packKey loads As4's bytes little-endian: the byte swap of the
	// big-endian value.
	return packedKey{
		hosts: uint64(bits.ReverseBytes32(src))<<32 | uint64(bits.ReverseBytes32(dst)),
		qp:    slotUsed | qp&psnMask,
		ok:    true,
	}
}

// PrefetchSlot hints that a packet from src to dst for destination QP qp
// (IPv4 addresses as packet.PeekRoCEv2IPv4 reads them) is coming: it
// starts loading the index slot its lookup will read. Like PrefetchFlow it
// changes nothing in the table: a caller looking a few packets ahead calls
// PrefetchSlot for a packet, PrefetchFlow a little later (when the slot
// has arrived), and Add when the packet's turn comes; the lookups then
// find their cache lines loaded instead of waiting for each in turn.
func (t *Table) PrefetchSlot(src, dst, qp uint32) {
	if t.index.slots == nil {
		return
	}
	s := &t.index.slots[t.index.slot(packIPv4(src, dst, qp))]
	prefetch.Lines(unsafe.Pointer(s), 1)
}

// PrefetchFlow hints, after PrefetchSlot, at the flow itself: it looks the
// key up and starts loading the lines of the flow its packets touch. It
// returns the flow's index (ID - 1) for the caller's own per-flow state, or
// -1 for a key the table does not hold yet.
func (t *Table) PrefetchFlow(src, dst, qp uint32) int {
	if t.merged {
		return -1
	}
	i := t.index.get(packIPv4(src, dst, qp), nil)
	if i < 0 {
		return -1
	}
	prefetch.Lines(unsafe.Pointer(t.flowAt(i)), hotFlowLines)
	return int(i)
}
