package reports

import (
	"cmp"
	"slices"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// One analysis pass split across workers.
//
// Every worker gives its own Collector the frames of its share (cli's
// relay and frameAnalyzer decide): the RoCE frames of the flows a
// flows.Split (or flows.ShardOf) gives it, which puts both directions of
// every host pair in one shard, and with them everything the
// per-direction state needs (ECN marks and the CNPs answering them, CM
// exchanges, pairing).
// Frames that are no flow's go to shard 0, except those the worker routes
// by their IPv4 addresses before decoding them (UDP port 4791) that then
// decode as malformed or cut short: those may go to any shard, and only
// their counts and spans are kept, which add up. The Collector is told
// the time of the capture's first frame and the latest time of the other
// frames (Skip), so that every shard starts its time bins at the
// capture's first frame and ends its pending windows at its last.
// MergeShards then puts the shards together into the Collector a single
// pass would have built: the same flows with the same IDs, counts and
// series, frame for frame.

// MergeShards finishes the Collectors of the shards of one pass (shard i
// at cs[i]) and returns one finished Collector
// over all of them, whose Table is flows.MergeShards of theirs: equal to
// the Collector of a single pass over the same input. A single Collector
// is finished and returned as it is.
func MergeShards(cs []*Collector) *Collector {
	if len(cs) == 1 {
		cs[0].Finish()
		return cs[0]
	}
	// Each shard's flows in its own ID order, before the merge renumbers
	// them.
	local := make([][]*flows.Flow, len(cs))
	tables := make([]*flows.Table, len(cs))
	for i, c := range cs {
		c.Finish()
		local[i] = slices.Clone(c.Table.Flows())
		tables[i] = c.Table
	}
	t := flows.MergeShards(tables)

	// Each shard widened its bins for its own frames only: bring them all
	// to the widest, as the single pass would have had them (bins merge
	// in pairs, so the counts add up the same in any order).
	shift := uint(0)
	for _, c := range cs {
		shift = max(shift, c.c.tl.shift)
	}
	for _, c := range cs {
		for c.c.started && c.c.tl.shift < shift {
			c.c.tl.widen(&c.c)
		}
	}

	out := &Collector{Table: t, cfg: cs[0].cfg}
	s := &out.c
	s.finished = true
	s0 := &cs[0].c
	s.conv, s.pfc = s0.conv, s0.pfc // shard 0 keeps every frame that is no flow's
	s.tl = s0.tl
	for _, a := range s.tl.all() {
		clear(a[:])
	}
	clear(s.tl.roce[:])
	s.cm.init()
	s.ecn = ecnState{window: s0.ecn.window, quantum: s0.ecn.quantum, byDir: map[dirKey]*ecnDir{}}

	for i := range cs {
		c := &cs[i].c
		if c.started && (!s.started || c.first.Before(s.first)) {
			s.first = c.first
		}
		if c.started && (!s.started || c.last.After(s.last)) {
			s.last = c.last
		}
		s.started = s.started || c.started

		// A flow among the first maxFlowSeries of the whole pass is
		// among the first maxFlowSeries of its shard, and CloseSeries
		// closes a shard's series only after it: its series is there.
		for j, f := range local[i] {
			// A flow's rare observations (wrong DSCP and priority,
			// not-ECT data, CNPs) are all in its shard's.
			if r := c.rareOf(j + 1); r != nil {
				if s.rare == nil {
					s.rare = make([]*rareObs, t.Len())
				}
				s.rare[f.ID-1] = r
			}
			if f.ID <= maxFlowSeries {
				if row, off := c.series.at(j); off >= 0 {
					s.series.put(f.ID-1, row, off)
				}
			}
		}
		outAll, inAll := s.tl.all(), c.tl.all()
		for k := range outAll {
			for b := range outAll[k] {
				outAll[k][b] += inAll[k][b]
			}
		}
		for b := range s.tl.roce {
			s.tl.roce[b] += c.tl.roce[b]
		}
		s.tl.n = max(s.tl.n, c.tl.n)

		s.health.merge(&c.health)
		s.taggedData += c.taggedData
		s.cnpSpan.merge(&c.cnpSpan)
		s.ceSpan.merge(&c.ceSpan)

		// CM exchanges and ECN directions are per host pair: no two
		// shards hold the same one.
		s.cm.list = append(s.cm.list, c.cm.list...)
		for k, v := range c.cm.seen {
			s.cm.seen[k] = v
		}
		s.ecn.list = append(s.ecn.list, c.ecn.list...)
		for k, v := range c.ecn.byDir {
			s.ecn.byDir[k] = v
		}
	}
	slices.SortFunc(s.cm.list, func(a, b CMConnect) int { return cmp.Compare(a.Frame.Seq, b.Frame.Seq) })
	return out
}

// merge adds o's bad frames to h.
func (h *healthObs) merge(o *healthObs) {
	h.icrcBad.merge(&o.icrcBad)
	h.malformed.merge(&o.malformed)
	for r, n := range o.reasons {
		if h.reasons == nil {
			h.reasons = map[packet.Reason]uint64{}
		}
		h.reasons[r] += n
	}
	h.mgmtCut += o.mgmtCut
	h.bthCut += o.bthCut
	h.headersCut += o.headersCut
	h.copies.merge(&o.copies)
}

// merge widens s to include o.
func (s *frameSpan) merge(o *frameSpan) {
	if o.ok {
		s.add(o.first)
		s.add(o.last)
	}
}
