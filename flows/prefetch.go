package flows

import (
	"sync/atomic"
	"unsafe"

	"github.com/rocedump/rocedump/internal/prefetch"
)

// hotFlowLines is the part of a Flow that packets touch (see Flow and
// TestFlowLayout): lines 0-2 every packet, 3 a request (and 4, with the
// retransmission counts AddFlowDelta reads), 4-5 a response, and the ID in
// line 5 every packet (the caller's per-flow state). Lines next to
// each other cost little more than one: measured, prefetching only the
// lines of a packet's class was no faster.
const hotFlowLines = 6

// PrefetchFlow hints the hot lines by prefetch.Six, which counts six.
var _ [hotFlowLines - 6]struct{} = [6 - hotFlowLines]struct{}{}

// packIPv4 is packKey for the addresses a packet.PeekRoCEv2IPv4 read
// (big-endian, as on the wire) and a QPN of at most 24 bits.
func packIPv4(src, dst, qp uint32) packedKey {
	// packKey loads As4's bytes big-endian: the values as they are.
	return packedKey{
		hosts: uint64(src)<<32 | uint64(dst),
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
	prefetch.Line(unsafe.Pointer(s))
}

// A Hint is the flow a look-ahead found for a frame's key a few frames
// before the frame's turn (PrefetchFlow): its index in the table, and the
// table's generation then. A table changes its generation whenever a key
// that it holds starts a new flow (an epoch, see startsEpoch), the only
// change that makes a flow found earlier no longer the key's current one;
// a key that was not found gives no hint. Generations are unique across
// tables, so a hint of one table is never taken by another. Handed back
// with the frame (FrameAt.SetHint), the hint spares the table a second
// lookup of the key: packing it, hashing it and reading its index slot,
// ~120 instructions of the ~1,400 a packet costs.
type Hint struct {
	id  int32  // the flow's ID (index + 1), 0 for none: the zero Hint names no flow
	gen uint32 // the table's generation when it was found
}

// Index is the flow's index (its ID - 1), or -1 when the key had no flow.
func (h Hint) Index() int { return int(h.id) - 1 }

// tableGens issues the tables' generations (Table.gen): 0 is never one,
// so the zero Hint holds for no table.
var tableGens atomic.Uint32

// nextGen returns a generation no table has had (until 2^32 have been
// issued).
func nextGen() uint32 {
	for {
		if g := tableGens.Add(1); g != 0 {
			return g
		}
	}
}

// hinted returns the flow at.hint names when it holds for this frame and
// this table's current generation, else nil.
func (t *Table) hinted(at *FrameAt) *Flow {
	if h := at.hint; h.gen == t.gen && at.hintSeq == at.Seq && h.id > 0 {
		return t.flowAt(h.id - 1)
	}
	return nil
}

// PrefetchFlow hints, after PrefetchSlot, at the flow itself: it looks the
// key up and starts loading the lines of the flow its packets touch. It
// returns what it found (Hint): the flow's index (ID - 1) for the caller's
// own per-flow state, -1 for a key the table does not hold yet, and the
// hint to hand back with the frame (FrameAt.SetHint).
func (t *Table) PrefetchFlow(src, dst, qp uint32) Hint {
	if t.merged || t.index.slots == nil {
		return Hint{}
	}
	i := t.index.find(packIPv4(src, dst, qp))
	if i < 0 {
		return Hint{}
	}
	prefetch.Six(unsafe.Pointer(t.flowAt(i))) // hotFlowLines
	return Hint{id: i + 1, gen: t.gen}
}

// lookAheadFlows is the size from which a table's per-packet state (the
// index slots and the hot lines of each flow: ~400 bytes a flow) stops
// fitting in a last-level cache of 16 MB, the benchmark machine's, and
// prefetching pays for itself. Measured there with `rocedump report` on
// captures of 48 to 63,488 flows interleaved packet by packet, looking
// ahead at every frame against frame by frame, in CPU time: 22% more with
// 48 flows, 4-17% more from 1,920 to 15,360, the same at 24,320, 6% less
// at 35,328 and 26% less at 63,488 (BENCHMARKS.md).
const lookAheadFlows = 24 << 10

// LookAheadPays says whether the pass holds so many flows that hints
// (PrefetchSlot, PrefetchFlow) a few packets ahead save more than they
// cost: below that, the state of every flow stays in the cache anyway.
// share is the part of the pass's flows the table holds: 1 for a table fed
// every packet, a shard's part of the host pairs (Split.Share) for one of
// several tables of a pass, which share the cache.
func (t *Table) LookAheadPays(share float64) bool {
	return float64(len(t.flows)) >= share*lookAheadFlows
}
