package reports

// PrefetchSlot is flows.Table.PrefetchSlot of the Collector's table.
func (c *Collector) PrefetchSlot(src, dst, qp uint32) { c.Table.PrefetchSlot(src, dst, qp) }

// PrefetchFlow is flows.Table.PrefetchFlow of the Collector's table. The
// Collector keeps no per-flow state that a packet of a flow touches, past
// the first maxFlowSeries flows' series and the rare packets' notes (see
// collectorState), so there is nothing of its own to load. It changes
// nothing.
func (c *Collector) PrefetchFlow(src, dst, qp uint32) int { return c.Table.PrefetchFlow(src, dst, qp) }
