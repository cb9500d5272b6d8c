package flows

import (
	"testing"
	"unsafe"
)

// TestFlowLayout checks what the per-packet path relies on (see Flow): a
// Flow is a whole number of cache lines, so that flows in a slab chunk
// start on a line, and the state every packet or every request touches
// lies in the first four.
func TestFlowLayout(t *testing.T) {
	var f Flow
	if n := unsafe.Sizeof(f); n%64 != 0 {
		t.Errorf("Flow is %d bytes, not a multiple of 64", n)
	}
	// Large objects take whole 8 KiB pages.
	if n := unsafe.Sizeof([chunkFlows]Flow{}); n%8192 != 0 {
		t.Errorf("a slab chunk is %d bytes, not a whole number of 8 KiB pages", n)
	}
	const hot = 4 * 64
	for name, end := range map[string]uintptr{
		"Packets .. Truncated":       unsafe.Offsetof(f.Truncated) + 8,
		"opInline .. lastOp":         unsafe.Offsetof(f.lastOp) + 1,
		"retx, respLink, reqW":       unsafe.Offsetof(f.reqW) + unsafe.Sizeof(f.reqW),
		"Requests: Packets .. expHi": unsafe.Offsetof(f.Requests) + unsafe.Offsetof(f.Requests.seq) + unsafe.Sizeof(f.Requests.seq),
	} {
		if end > hot {
			t.Errorf("%s ends at byte %d of the flow, after its first %d", name, end, hot)
		}
	}
	// A response reads and writes resp (its position, slot and marks, and
	// for an ACK its AETH, for the next one's copy) and pairOne, in lines
	// 4 and 5.
	if start, end := unsafe.Offsetof(f.resp), unsafe.Offsetof(f.pairOne)+8; start < hot || end > hot+2*64 {
		t.Errorf("resp .. pairOne is at bytes %d..%d of the flow, not in lines 4 and 5", start, end)
	}
	// What every packet or every response reads besides: the ID (the
	// Collector's per-flow state is keyed on it), whether a CM exchange
	// names the requester and whether NAKs are held on other flows
	// (Table.noteResponse). Past the lines the look-ahead loads, each was
	// a cache miss per packet or per ACK on 63,488 flows (cachegrind).
	for name, end := range map[string]uintptr{
		"ID":       unsafe.Offsetof(f.ID) + unsafe.Sizeof(f.ID),
		"hasCM":    unsafe.Offsetof(f.hasCM) + 1,
		"naksHeld": unsafe.Offsetof(f.naksHeld) + 1,
	} {
		if end > hotFlowLines*64 {
			t.Errorf("%s ends at byte %d of the flow, past the %d lines the look-ahead loads", name, end, hotFlowLines)
		}
	}
}
