package cli

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestHoldPassMemoryRoom: the limit holdPassMemory sets after a pass
// leaves the output room above the heap in use: an eighth and 8 MB. A pass collects rarely, so
// the heap it leaves is mostly live and much larger than at its last
// collection; a limit at the memory held then (and the live heap of that
// last collection) left none, and the collector ran back to back during
// the output (7 times on the benchmark's 63,488 flows, each a mark of the
// whole flow table, for 2 MB of garbage).
func TestHoldPassMemoryRoom(t *testing.T) {
	if prev := debug.SetMemoryLimit(-1); prev != math.MaxInt64 {
		t.Skip("a memory limit is set (GOMEMLIMIT)")
	}
	runtime.GC()
	// What a pass leaves: 64 MB allocated since the last collection
	// (which a high GOGC, as the pass's, did not start), all of it live.
	defer debug.SetGCPercent(debug.SetGCPercent(100000))
	keep := make([][]byte, 0, 4096)
	for range cap(keep) {
		keep = append(keep, make([]byte, 16<<10))
	}
	lift := holdPassMemory()
	limit := debug.SetMemoryLimit(-1)
	lift()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if want := ms.HeapAlloc + ms.HeapAlloc/8 + 8<<20; uint64(limit) < want {
		t.Errorf("limit %d MB for a heap of %d MB in use: want at least %d MB", limit>>20, ms.HeapAlloc>>20, want>>20)
	}
	if limit == math.MaxInt64 {
		t.Error("no limit set")
	}
	runtime.KeepAlive(keep)
}
