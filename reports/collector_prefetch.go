package reports

import (
	"unsafe"

	"github.com/rocedump/rocedump/internal/prefetch"
)

// PrefetchSlot is flows.Table.PrefetchSlot of the Collector's table.
func (c *Collector) PrefetchSlot(src, dst, qp uint32) { c.Table.PrefetchSlot(src, dst, qp) }

// PrefetchFlow is flows.Table.PrefetchFlow of the Collector's table that
// also starts loading the Collector's own state of the flow (its flowObs).
// It changes nothing.
func (c *Collector) PrefetchFlow(src, dst, qp uint32) int {
	i := c.Table.PrefetchFlow(src, dst, qp)
	if s := &c.c; i >= 0 && i < len(s.perFlow) {
		// A flowObs may straddle two lines.
		prefetch.Lines(unsafe.Pointer(&s.perFlow[i]), 2)
	}
	return i
}
