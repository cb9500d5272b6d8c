package reports

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// collectorState is the Collector's implementation state. Each concern has
// its own file: collector_flow.go (per-flow DSCP, 802.1Q priority and
// ECN-capability counts), collector_conv.go (non-RoCE conversations), collector_pfc.go
// (PFC and pause storms), collector_cm.go (RDMA CM requests),
// collector_ecn.go (ECN-to-CNP reaction), collector_timeline.go (the
// adaptive time bins), collector_health.go (where the bad frames are) and
// collector_shard.go (one pass split across workers).
//
// Memory: a rareObs per flow with wrong-DSCP, wrong-priority (tagged) or
// not-ECT packets or CNPs (and, once there is one, a pointer per flow to
// find them by), a time series for the
// first maxFlowSeries flows (a row of timelineMaxBins × 8 bytes each), per
// conversation, per host direction with CE marks or CNPs and per CM
// request one entry; nothing grows with the number of packets. The per-flow DSCP and
// ECN-capability counts are derived from the flows' own (see countsOf):
// a packet of a flow beyond the first maxFlowSeries touches no per-flow
// state of the Collector unless it is rare.
type collectorState struct {
	started     bool
	first, last time.Time // capture times of the first and last frame
	lastNs      int64     // last as flows.TimeNanos

	rare   []*rareObs // by flow ID - 1, up to the last flow with rare packets; nil for a flow without
	series flowRows   // by flow ID - 1, for the first maxFlowSeries flows
	conv   convTable
	pfc    pfcState
	// taggedData is the RoCE data packets tagged with the data priority
	// (Config.DataPCP); those tagged with another are the flows' rareObs.
	taggedData uint64
	cm         cmState
	ecn        ecnState
	tl         timeline
	health     healthObs
	cnpSpan    frameSpan // first and last CNP
	ceSpan     frameSpan // first and last CE-marked RoCE packet
	finished   bool

	// seriesEnd, once seriesClosed, is the last flow ID that may get a
	// series (see CloseSeries).
	seriesEnd    int
	seriesClosed bool
}

// NewCollector returns a Collector that feeds t and observes the rest. t
// must be new and fed by the Collector alone: the Collector derives its
// per-flow counts from t's flows.
func NewCollector(t *flows.Table, cfg Config) *Collector {
	c := &Collector{Table: t, cfg: cfg.WithDefaults()}
	c.c.conv.init()
	c.c.ecn.init(c.cfg.ECNWindow)
	c.c.cm.init()
	return c
}

// Add accounts one decoded frame: RoCE frames go to the flow table, and
// everything is observed for the other reports. Frames must come in capture
// time order (as capture.Merger delivers them); small reorderings are
// tolerated. In steady state (no new flow, conversation or time bin) Add
// allocates nothing.
func (c *Collector) Add(p *packet.Packet, at flows.FrameRef) {
	a := flows.At(at)
	c.AddFrame(p, &a)
}

// AddFrame is Add for a caller that keeps the frame's FrameAt in memory
// (an analysis pass): the Collector reads *at during the call only (see
// flows.Table.AddFrame).
//
// A RoCE frame feeds the flow table, and AddFrame notes what the flow
// counters cannot tell: when retransmissions and gaps happened, packets on
// a wrong DSCP or 802.1Q priority or not ECN-capable, ECN reaction, CM
// requests and the time series. A mirror's copy of a packet
// (flows.Flow.MirrorDuplicates) is noted only where it is: its flow
// counted the packet once, and so does every observation here. That is
// AddFrame's own code, not a call of its own (BENCHMARKS.md, session 22);
// other frames go to addNotRoCE.
func (c *Collector) AddFrame(p *packet.Packet, fa *flows.FrameAt) {
	s := &c.c
	if !s.advance(&fa.Time, fa.Nanos) { // SkipAt, inline
		c.skipRare(fa.Time, fa.Nanos)
	}
	at := &fa.FrameRef
	if p.Kind != packet.KindRoCE {
		c.addNotRoCE(p, at)
		return
	}
	if s.health.notes(p) {
		s.health.add(p, at)
	}
	bin := s.tl.binAt(fa.Nanos, s)
	if !p.HasBTH {
		s.health.bthCut++
		s.tl.roce[bin] += uint64(p.DatagramLen()) * 8
		c.Table.AddFrame(p, fa) // the table decides what it keeps
		return
	}
	f, retx, gaps, copied := c.Table.AddFlowDelta(p, fa)
	if f == nil {
		return
	}
	if copied {
		if c.Table.CopyAcrossFiles() {
			return // a parallel file's capture of a packet counted already
		}
		s.health.copies.add(*at)
		if p.ECN&3 == 3 && c.Table.CopyMarkedCE() {
			s.copyCE(p, at, bin)
		}
		return
	}
	s.tl.roce[bin] += uint64(p.DatagramLen()) * 8
	if retx|gaps != 0 {
		s.tl.retx[bin] += float64(retx)
		if int64(gaps) > 0 { // a parallel file's packet may take back a gap (flows: "Copies across files")
			s.tl.gaps[bin] += float64(gaps)
		}
	}

	// The common packet, ECN-capable but not CE-marked, of the data DSCP,
	// untagged, not a CNP and no CM REQ, needs none of addRare: one test
	// here instead of its three (CNP or CE, CM, mayBeRare).
	if p.ECN&3-1 > 1 || p.BTH.Opcode.IsCNP() || p.HasCM || p.DSCP != c.cfg.DataDSCP || p.HasVLAN {
		c.addRare(p, f, at, bin)
	}
	if s.keepsSeries(f.ID) {
		s.series.add(f.ID-1, bin, uint64(p.DatagramLen())*8)
	}
}

// addNotRoCE is AddFrame for a frame that is not RoCE: a malformed one
// (the capture's health), a PFC or PAUSE frame, or a frame of a non-RoCE
// conversation.
func (c *Collector) addNotRoCE(p *packet.Packet, ref *flows.FrameRef) {
	s := &c.c
	if p.Kind != packet.KindOther {
		if s.health.notes(p) {
			s.health.add(p, ref)
		}
		return
	}
	cut := p.Truncated && cutBeforeTransport(p)
	if cut {
		s.health.headersCut++
	}
	switch {
	case p.HasPFC:
		s.pfc.add(&p.PFC, ref)
	case p.IPVersion != 0 && p.Src.IsValid() && p.Dst.IsValid() && !cut:
		// A frame cut before its ports (or inside a mirror's GRE or
		// VXLAN header) is in no conversation: its service is not
		// known, and a UDP one may be RoCE (headers_cut counts it).
		s.conv.add(p, ref)
	}
}

// Skip notes the capture time of a frame of the pass that the Collector
// is not given: one that another Collector of a sharded pass keeps (see
// MergeShards). The capture's first and last time, where the time bins
// start and where pending windows end, are over every frame.
func (c *Collector) Skip(t time.Time) { c.SkipAt(t, flows.TimeNanos(t, t.UnixNano())) }

// SkipAt is Skip for a caller that has the frame's time in nanoseconds
// too, as flows.TimeNanos gives it (capture.Record.TimeNanos for the times
// it holds).
func (c *Collector) SkipAt(t time.Time, nanos int64) {
	if !c.c.advance(&t, nanos) {
		c.skipRare(t, nanos)
	}
}

// advance is SkipAt but for the first frame and a frame whose time is
// outside the years flows.TimeNanos holds, for which it returns false
// (skipRare's frames): small enough to inline.
//
// It takes the frame's time by pointer, read only when it is the latest:
// by value, AddFrame loaded its three words on every frame
// (BENCHMARKS.md, session 23).
func (s *collectorState) advance(t *time.Time, nanos int64) bool {
	// flows.Later, inlined: the integers decide but where TimeNanos
	// saturated. A frame at the latest frame's nanosecond is the common
	// case, not a rare one, on a busy mirror of microsecond timestamps.
	if !s.started || nanos == math.MinInt64 || nanos == math.MaxInt64 {
		return false
	}
	if nanos > s.lastNs {
		s.last, s.lastNs = *t, nanos
	}
	return true
}

// skipRare is SkipAt for the first frame and for a frame whose time is
// outside the years flows.TimeNanos holds.
func (c *Collector) skipRare(t time.Time, nanos int64) {
	s := &c.c
	if !s.started {
		s.started, s.first, s.last, s.lastNs = true, t, t, nanos
		s.tl.init(t, nanos)
	}
	if flows.Later(nanos, t, s.lastNs, s.last) {
		s.last, s.lastNs = t, nanos
	}
}

// addRare is the part of AddFrame for a packet that is not the common one:
// a CNP, a CE mark, a CM REQ, or one that may be rare (mayBeRare), of flow
// f at frame at in timeline bin bin.
func (c *Collector) addRare(p *packet.Packet, f *flows.Flow, at *flows.FrameRef, bin int) {
	s := &c.c
	op := p.BTH.Opcode
	ce := p.ECN&3 == 3
	switch {
	case op.IsCNP():
		s.tl.cnps[bin]++
		s.cnpSpan.add(*at)
		// A CNP from B to A answers the CE marks on A's packets to B.
		s.ecn.cnp(p.Dst, p.Src, at)
	case ce:
		s.ecn.mark(p.Src, p.Dst, at, f.EarlyResponses().Lead)
	}
	if ce {
		s.tl.ce[bin]++
		s.ceSpan.add(*at)
	}
	if p.HasCM && p.CM.AttributeID == bth.CMAttrREQ {
		s.cm.add(p, at)
	}
	if mayBeRare(p, &c.cfg) {
		s.observe(f.ID, p, at, &c.cfg)
	}
}

// copyCE notes the CE mark a mirror's copy p, at frame at in timeline bin
// bin, brought to a packet whose first copy carried none (the egress
// copy of a switch that marked it: flows.Table.CopyMarkedCE): as the
// mark of a first copy (the ECN reaction, but for a CNP's, the timeline's
// CE series, the span of CE marks), at the copy's frame, the one that
// shows the mark; nothing else of the copy counts.
func (s *collectorState) copyCE(p *packet.Packet, at *flows.FrameRef, bin int) {
	if !p.BTH.Opcode.IsCNP() {
		s.ecn.mark(p.Src, p.Dst, at, 0)
	}
	s.tl.ce[bin]++
	s.ceSpan.add(*at)
}

// Finish closes the pass: the flow table pairs flows, pending windows
// expire (CE marks, PFC pauses). It may be called more than once.
func (c *Collector) Finish() {
	c.Table.Finish()
	s := &c.c
	if s.finished {
		return
	}
	s.finished = true
	s.pfc.finish(s.last)
	s.ecn.finish(s.last, c.Table.Flows())
}

// Conversations returns the non-RoCE conversations, biggest first (by
// bytes, then packets; ties by addresses, protocol and port).
func (c *Collector) Conversations() []*Conversation {
	out := slices.Clone(c.c.conv.list)
	slices.SortFunc(out, func(a, b *Conversation) int {
		if r := cmp.Compare(b.Bytes, a.Bytes); r != 0 {
			return r
		}
		if r := cmp.Compare(b.Packets, a.Packets); r != 0 {
			return r
		}
		if r := a.Src.Compare(b.Src); r != 0 {
			return r
		}
		if r := a.Dst.Compare(b.Dst); r != 0 {
			return r
		}
		if r := cmp.Compare(a.Proto, b.Proto); r != 0 {
			return r
		}
		return cmp.Compare(a.ServicePort, b.ServicePort)
	})
	return out
}

// PFC returns what was seen per priority, and the number of 802.3x PAUSE
// frames (not priority-based). Storms are counted by Finish.
func (c *Collector) PFC() (prio [8]PFCPriority, pause uint64) {
	for i := range prio {
		prio[i] = c.c.pfc.prio[i].out
		prio[i].Priority = i
	}
	return prio, c.c.pfc.pause
}

// CMConnects returns the RDMA CM connection requests, in capture order. A
// REQ resent by the CM (same sender and communication ID) is listed once.
func (c *Collector) CMConnects() []CMConnect { return slices.Clone(c.c.cm.list) }

// ECN returns the ECN reaction per host direction that had CE-marked
// packets, ordered by source then destination. Call Finish first: marks
// still inside their window when the capture ended are decided there.
func (c *Collector) ECN() []ECNReaction { return c.c.ecn.reactions() }

// DSCP returns the DSCP conformance of every flow, in flow ID order.
func (c *Collector) DSCP() []DSCPCheck {
	fs := c.Table.Flows()
	out := make([]DSCPCheck, 0, len(fs))
	for i, f := range fs {
		out = append(out, c.c.check(i+1, f))
	}
	return out
}

// Timeline returns the time series for the charts: every series on the
// same bins (see timeline for the bin rule).
func (c *Collector) Timeline() *Timeline { return c.c.tl.export(&c.c.series) }
