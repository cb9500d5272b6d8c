package reports

import (
	"unsafe"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/internal/prefetch"
)

// PrefetchSlot is flows.Table.PrefetchSlot of the Collector's table.
func (c *Collector) PrefetchSlot(src, dst, qp uint32) { c.Table.PrefetchSlot(src, dst, qp) }

// PrefetchFlow is flows.Table.PrefetchFlow of the Collector's table, and
// for one of the first maxFlowSeries flows it also starts loading the line
// of the flow's series row the flow's next packet will most likely add to:
// the latest bin in use, as frames come in time order (a flow's first bin
// is never past it, see seriesChunk). Past its series, and the rare
// packets' notes (see collectorState), the Collector keeps no per-flow
// state that a packet of a flow touches. It changes nothing.
func (c *Collector) PrefetchFlow(src, dst, qp uint32) flows.Hint {
	h := c.Table.PrefetchFlow(src, dst, qp)
	if i := h.Index(); i >= 0 && c.c.keepsSeries(i+1) {
		if ch := c.c.series.chunks[i/seriesChunkFlows]; ch != nil {
			prefetch.Line(unsafe.Pointer(&ch.rows[i%seriesChunkFlows][max(c.c.tl.n-1, 0)]))
		}
	}
	return h
}

// LookAheadPays is flows.Table.LookAheadPays of the Collector's table.
func (c *Collector) LookAheadPays(share float64) bool { return c.Table.LookAheadPays(share) }
