package reports

import (
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// collectorState is the Collector's implementation state (not yet written).
type collectorState struct{}

// NewCollector returns a Collector that feeds t and observes the rest.
func NewCollector(t *flows.Table, cfg Config) *Collector {
	return &Collector{Table: t, cfg: cfg.WithDefaults()}
}

// Add accounts one decoded frame: RoCE frames go to the flow table, and
// everything is observed for the other reports.
func (c *Collector) Add(p *packet.Packet, at flows.FrameRef) { c.Table.Add(p, at) }

// Finish closes the pass: the flow table pairs flows, pending windows expire.
func (c *Collector) Finish() { c.Table.Finish() }

// Conversations returns the non-RoCE conversations, biggest first.
func (c *Collector) Conversations() []*Conversation { return nil }

// PFC returns what was seen per priority, and the number of 802.3x PAUSE
// frames (not priority-based).
func (c *Collector) PFC() (prio [8]PFCPriority, pause uint64) { return prio, 0 }

// CMConnects returns the RDMA CM connection requests, in capture order.
func (c *Collector) CMConnects() []CMConnect { return nil }

// ECN returns the ECN reaction per host direction.
func (c *Collector) ECN() []ECNReaction { return nil }

// DSCP returns the DSCP conformance of every flow.
func (c *Collector) DSCP() []DSCPCheck { return nil }

// Timeline returns the time series for the charts.
func (c *Collector) Timeline() *Timeline { return &Timeline{} }
