package reports

import (
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/reports/flowtable"
	"github.com/rocedump/rocedump/topology"
)

func TestMergeRejects(t *testing.T) {
	tests := []struct {
		name string
		srcs []MergeSource
		want string
	}{
		{"none", nil, "no reports"},
		{"nil report", []MergeSource{{Name: "a.json"}}, "a.json: no report"},
		{"other schema", []MergeSource{{Name: "b.json", Report: &Report{SchemaVersion: 2}}}, "b.json: schema_version 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Merge(tt.srcs, MergeOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestMergeRenumbers: flows are numbered by first appearance across the
// reports, partners and finding flow ids follow.
func TestMergeRenumbers(t *testing.T) {
	rec := func(id int, src, first string, partner int) flowtable.Record {
		r := flowtable.Record{ID: id, Src: src, Dst: "10.0.9.9", DestQPN: uint32(0x100 + id), First: first, Last: first}
		if partner > 0 {
			r.PartnerID = &partner
		}
		return r
	}
	a := &Report{SchemaVersion: SchemaVersion, Capture: CaptureInfo{Files: []string{"a.pcap"}, Packets: 10}, Flows: []flowtable.Record{
		rec(1, "10.0.0.1", "2026-01-01T00:00:00.000000001Z", 2), rec(2, "10.0.0.2", "2026-01-01T00:00:00.000000005Z", 1),
	}, Findings: []Finding{{Kind: KindPFC, Severity: Warning, Flows: []int{2}, Detail: "see flow 2", Evidence: Evidence{Counts: map[string]float64{"pfc_frames": 1}}}}}
	b := &Report{SchemaVersion: SchemaVersion, Capture: CaptureInfo{Files: []string{"b.pcap"}, Packets: 5}, Flows: []flowtable.Record{
		rec(1, "10.0.1.1", "2026-01-01T00:00:00.000000003Z", 0),
	}, Findings: []Finding{{Kind: KindPFC, Severity: Critical, Flows: []int{1}, Detail: "see flow 1", Evidence: Evidence{Counts: map[string]float64{"pfc_frames": 2}}}}}
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Flows {
		p := 0
		if f.PartnerID != nil {
			p = *f.PartnerID
		}
		got = append(got, f.Src+"#"+strconv.Itoa(f.ID)+">"+strconv.Itoa(p))
	}
	want := []string{"10.0.0.1#1>3", "10.0.1.1#2>0", "10.0.0.2#3>1"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("flows %v, want %v", got, want)
	}
	if r.Capture.Packets != 15 || !reflect.DeepEqual(r.Capture.Files, []string{"a.pcap", "b.pcap"}) {
		t.Errorf("capture %+v", r.Capture)
	}
	var pfc *Finding
	for i := range r.Findings {
		if r.Findings[i].Kind == KindPFC {
			pfc = &r.Findings[i]
		}
	}
	if pfc == nil || pfc.Severity != Critical || !reflect.DeepEqual(pfc.Flows, []int{2, 3}) || pfc.Evidence.Counts["pfc_frames"] != 3 ||
		!strings.Contains(pfc.Detail, "Merged from 2 reports") || !strings.Contains(pfc.Detail, "see flow 2") {
		t.Errorf("combined pfc finding: %+v", pfc)
	}
}

func TestSumNamedLines(t *testing.T) {
	got, ok := sumNamedLines([]string{"bad_icrc: 2", "short_bth: 1", "bad_icrc: 3"})
	if want := []string{"bad_icrc: 5", "short_bth: 1"}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("got %v %v, want %v", got, ok, want)
	}
	if _, ok := sumNamedLines([]string{"bad_icrc: 2", "flow 3 10.0.0.1 > 10.0.0.2: 1 bad ICRC"}); ok {
		t.Error("summed lines that are not all name: count")
	}
}

func TestCountKeys(t *testing.T) {
	a := Finding{Evidence: Evidence{Counts: map[string]float64{"priority_3_frames": 1, "pfc_frames": 1}}}
	b := Finding{Evidence: Evidence{Counts: map[string]float64{"priority_4_frames": 1, "priority_5_frames": 1, "pfc_frames": 1}}}
	if countKeys(&a) != countKeys(&b) {
		t.Errorf("%q and %q: want one variant", countKeys(&a), countKeys(&b))
	}
	if n, ok := andMore("and 12 more"); !ok || n != 12 {
		t.Errorf("andMore = %d %v", n, ok)
	}
	if _, ok := andMore("and 12 more HCAs"); ok {
		t.Error(`"and 12 more HCAs" is a detail line, not capped's`)
	}
}

// TestModuleOf: every kind has the module that makes it.
func TestModuleOf(t *testing.T) {
	for _, k := range []Kind{KindRetransmission, KindMirrorLoss, KindCongestion, KindECNNotActed, KindDSCPMismatch, KindPFC,
		KindCrossRail, KindRDMAOnManagement, KindStorageOnCompute, KindNonRDMAOnCompute, KindFanOut, KindCaptureHealth} {
		if moduleOf(k) < 0 {
			t.Errorf("%s: no module", k)
		}
	}
	if i := moduleOf(KindRDMAOnManagement); i < 0 || Modules[i].Name != "rdma_on_management" {
		t.Errorf("rdma_on_management: module %d", i)
	}
	if moduleOf("from_a_newer_rocedump") != -1 {
		t.Error("an unknown kind has a module")
	}
}

// TestMergeRecomputesManagement: rdma_on_management reads only flow records
// and the topology, so merge computes it again, with the same counts.
func TestMergeRecomputesManagement(t *testing.T) {
	topo, err := topology.Load(filepath.Join(topoDir, pod))
	if err != nil {
		t.Fatal(err)
	}
	r := Run(loadGen(t, "report_rdma_management", pod), "t")
	m, err := Merge([]MergeSource{{"a.json", r}}, MergeOptions{Tool: "t", Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	find := func(r *Report) *Finding {
		for i := range r.Findings {
			if r.Findings[i].Kind == KindRDMAOnManagement {
				return &r.Findings[i]
			}
		}
		return nil
	}
	a, b := find(r), find(m)
	if a == nil || b == nil || !reflect.DeepEqual(a.Evidence.Counts, b.Evidence.Counts) || a.Title != b.Title || !reflect.DeepEqual(a.Flows, b.Flows) {
		t.Errorf("report %+v\nmerged %+v", a, b)
	}
}
