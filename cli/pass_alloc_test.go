package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/bench"
	"github.com/rocedump/rocedump/internal/allocs"
)

// passPkgs are the packages of the per-packet path of a report or flows
// pass: reading, decoding, the flow table, the collector, and this
// package's glue between them (look-ahead, workers, relay).
var passPkgs = []string{
	"github.com/rocedump/rocedump/cli",
	"github.com/rocedump/rocedump/capture",
	"github.com/rocedump/rocedump/decode/packet",
	"github.com/rocedump/rocedump/decode/bth",
	"github.com/rocedump/rocedump/flows",
	"github.com/rocedump/rocedump/reports",
}

// TestPassExtraPacketsAllocateNothing: the passes of report (a collector
// and its flow table per shard) and of flows (a flow table per shard), on
// a capture of the benchmark's kind of traffic and on its first half (the
// same 48 flows), allocate the same: the second half's packets allocate
// nothing, on one worker and on two (issue 6: zero allocations per packet
// in steady state). The flow table and the collector have tests of their
// own; this one also covers what runs between them for every packet (the
// look-ahead, the relay, the workers).
func TestPassExtraPacketsAllocateNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 40,000 packets")
	}
	f := bench.DefaultFabric()
	f.Rails, f.Nodes, f.QPsPerPeer = 1, 4, 2
	dir := t.TempDir()
	const n = 20_000
	whole, half := filepath.Join(dir, "whole.pcap"), filepath.Join(dir, "half.pcap")
	if _, err := bench.Generate(f, 2*n, whole, bench.Prefix{Path: half, Packets: n}); err != nil {
		t.Fatal(err)
	}
	passes := []struct {
		name  string
		shard func() (func(i, n int) packetSink, func() int)
	}{
		{"report", func() (func(i, n int) packetSink, func() int) {
			s := &collectorShards{}
			return s.shard, func() int { return s.merged().Table.Len() }
		}},
		{"flows", func() (func(i, n int) packetSink, func() int) {
			s := &tableShards{}
			return s.shard, func() int { return s.merged().Len() }
		}},
	}
	defer func(l int) { lookAhead = l }(lookAhead)
	for _, pass := range passes {
		for _, c := range []struct {
			workers, lookAhead int
		}{{1, lookAheadNever}, {1, lookAheadAlways}, {2, lookAheadNever}, {2, lookAheadAlways}} {
			workers := c.workers
			// 48 flows are too few for the look-ahead to pay
			// (LookAheadPays): it is forced on, then off.
			lookAhead = c.lookAhead
			name := fmt.Sprintf("%s pass on %d workers, look-ahead %v", pass.name, workers, c.lookAhead == lookAheadAlways)
			count := func(file string) []string {
				shard, flows := pass.shard()
				var err error
				_, sites := allocs.Count(func() {
					_, err = analyze(analyzeOptions{Files: []string{file}, Shard: shard, Workers: workers})
				}, passPkgs...)
				if err != nil {
					t.Fatalf("%s on %s: %v", name, file, err)
				}
				if got := flows(); got != f.Flows() {
					t.Fatalf("%s on %s: %d flows, want %d", name, file, got, f.Flows())
				}
				return sites
			}
			// Once per file or per block (a closed file's error, a pool
			// the collector emptied) is not once per packet: 0.001 a
			// packet at most, as rocebench judges the target.
			if more, total := grewAt(count(half), count(whole)); total > n/1000 {
				t.Errorf("%s: %d more packets of the same flows made %d allocations, want none: %q", name, n, total, more)
			}
		}
	}
}

// grewAt lists the allocation sites (allocs.Count's "N at SITE") where b
// counts more than a, and how many more in all.
func grewAt(a, b []string) (more []string, total int) {
	counts := func(l []string) map[string]int {
		m := map[string]int{}
		for _, s := range l {
			var n int
			var site string
			if i := strings.Index(s, " at "); i > 0 {
				fmt.Sscan(s[:i], &n)
				site = s[i+4:]
			}
			m[site] += n
		}
		return m
	}
	ca, cb := counts(a), counts(b)
	for site, n := range cb {
		if n > ca[site] {
			more = append(more, fmt.Sprintf("+%d at %s", n-ca[site], site))
			total += n - ca[site]
		}
	}
	return more, total
}
