package reports

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/internal/testcaps"
	"github.com/rocedump/rocedump/topology"
)

// TestMergeShardsEqualsOnePass splits every generated and real capture's
// pass into 2 and 3 shards and requires the merged Collector to give the
// same report (flows, findings, evidence, time series) as one Collector
// fed every frame: with the default DSCPs and priorities, and with DSCPs
// and priorities no packet carries (every flow has wrong-DSCP packets, and
// every tagged one wrong-priority packets, to merge).
func TestMergeShardsEqualsOnePass(t *testing.T) {
	paths := testcaps.All(t, "../testdata/pcaps")
	topo, err := topology.Load(filepath.Join(topoDir, "report_pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			pkts, refs := decodeAll(t, path)
			for i := range refs {
				refs[i].Seq = uint64(i)
			}
			for _, cfg := range []Config{{}, {DataDSCP: 7, CNPDSCP: 7, DataPCP: 5, CNPPCP: 5}} {
				mergeShardsEqualsOnePass(t, pkts, refs, cfg, topo)
			}
		})
	}
}

// mergeShardsEqualsOnePass is TestMergeShardsEqualsOnePass for one capture
// and Config.
func mergeShardsEqualsOnePass(t *testing.T, pkts []packet.Packet, refs []flows.FrameRef, cfg Config, topo *topology.Topology) {
	t.Helper()
	one := NewCollector(flows.NewTable(flows.Config{}), cfg)
	for i := range pkts {
		one.Add(&pkts[i], refs[i])
	}
	one.Finish()
	want := shardReport(t, one, topo)
	for _, n := range []int{2, 3} {
		cs := make([]*Collector, n)
		for i := range cs {
			cs[i] = NewCollector(flows.NewTable(flows.Config{}), cfg)
		}
		for i := range pkts {
			owner := testShardOf(&pkts[i], i, n)
			for j, c := range cs {
				if j == owner {
					c.Add(&pkts[i], refs[i])
				} else {
					c.Skip(refs[i].Time)
				}
			}
		}
		got := shardReport(t, MergeShards(cs), topo)
		if got.json != want.json {
			t.Errorf("%+v, %d shards: report differs from one pass:\n got %.2000s\nwant %.2000s", cfg, n, got.json, want.json)
		}
		if !reflect.DeepEqual(got.timeline, want.timeline) {
			t.Errorf("%+v, %d shards: timeline differs from one pass", cfg, n)
		}
		if !reflect.DeepEqual(got.dscp, want.dscp) || !reflect.DeepEqual(got.ecn, want.ecn) || !reflect.DeepEqual(got.cm, want.cm) {
			t.Errorf("%+v, %d shards: DSCP, ECN or CM observations differ from one pass", cfg, n)
		}
	}
}

// testShardOf splits frames as cli's workers do where it matters: a flow's
// packets by flows.ShardOf, other frames that are not RoCE on shard 0; the
// rest (malformed frames, RoCE frames cut before the BTH), which cli sends
// to the shard of their addresses when it can read them, are spread over
// the shards by frame number.
func testShardOf(p *packet.Packet, frame, n int) int {
	switch {
	case p.Kind == packet.KindRoCE && p.HasBTH:
		return flows.ShardOf(p, n)
	case p.Kind == packet.KindOther:
		return 0
	}
	return frame % n
}

// shardView is what TestMergeShardsEqualsOnePass compares.
type shardView struct {
	json     string
	timeline *Timeline
	dscp     []DSCPCheck
	ecn      []ECNReaction
	cm       []CMConnect
}

func shardReport(t *testing.T, c *Collector, topo *topology.Topology) shardView {
	t.Helper()
	rep := Run(&Input{Flows: c.Table.Flows(), Collect: c, Topology: topo, Config: c.cfg}, "test")
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	return shardView{json: string(b), timeline: c.Timeline(), dscp: c.DSCP(), ecn: c.ECN(), cm: c.CMConnects()}
}
