package cli

import (
	"github.com/spf13/pflag"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
)

// Sharded passes: analyzeOptions.Shard makes one sink per worker, and
// after the pass the shards are merged into what one worker would have
// built (flows.MergeShards, reports.MergeShards).

// tableShards is a flow-table pass split by flows.ShardOf.
type tableShards struct {
	tables []*flows.Table
}

// shard is the analyzeOptions.Shard of the pass: the worker hands the
// table only the frames of its share.
func (s *tableShards) shard(i, n int) packetSink {
	t := flows.NewTable(flows.Config{})
	s.tables = append(s.tables, t)
	return t
}

// merged finishes the shards' tables and returns the pass's one table.
func (s *tableShards) merged() *flows.Table {
	for _, t := range s.tables {
		t.Finish()
	}
	if len(s.tables) == 1 {
		return s.tables[0]
	}
	return flows.MergeShards(s.tables)
}

// collectorShards is a report pass split by flows.ShardOf: one
// reports.Collector (and its flow table) per shard.
type collectorShards struct {
	cfg        reports.Config
	collectors []*reports.Collector
}

// shard is the analyzeOptions.Shard of the pass.
func (s *collectorShards) shard(i, n int) packetSink {
	c := reports.NewCollector(flows.NewTable(flows.Config{}), s.cfg)
	s.collectors = append(s.collectors, c)
	return c
}

// merged finishes the shards and returns the pass's one Collector.
func (s *collectorShards) merged() *reports.Collector {
	return reports.MergeShards(s.collectors)
}

// addWorkersFlag adds --workers to a command whose pass can be sharded.
func addWorkersFlag(f *pflag.FlagSet, n *int) {
	f.IntVar(n, "workers", 0, "analyse on `N` goroutines, each keeping a share of the host pairs, with the input read once for all "+
		"(0: one per CPU; at most 256; the output is the same for any N)")
}
