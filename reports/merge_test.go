package reports

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

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
	for _, k := range []Kind{KindRetransmission, KindMirrorLoss, KindCongestion, KindECNNotActed, KindDSCPMismatch, KindPCPMismatch, KindPFC,
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

// mergeFixture is a report of one flow of n packets (cnps of them CNPs to
// it) from src, first seen at second sec, with the findings given.
func mergeFixture(file, src string, sec, n, cnps int, fs ...Finding) *Report {
	at := "2026-01-01T00:00:0" + strconv.Itoa(sec) + "Z"
	return &Report{SchemaVersion: SchemaVersion, Capture: CaptureInfo{Files: []string{file}, Packets: uint64(n), RoCE: uint64(n)},
		Flows:    []flowtable.Record{{ID: 1, Src: src, Dst: "10.0.9.9", DestQPN: 0x100, Packets: uint64(n), CNPs: uint64(cnps), First: at, Last: at}},
		Findings: fs}
}

func counted(kind Kind, sev Severity, title string, counts map[string]float64) Finding {
	return Finding{Kind: kind, Severity: sev, Title: title, Evidence: Evidence{Counts: counts}}
}

// congestionCounts are the counts of a congestion finding over cnps CNPs
// among n packets, with the peak rate its report saw.
func congestionCounts(n, cnps, peak float64) map[string]float64 {
	return map[string]float64{"cnps": cnps, "ce_marked": 0, "fecn": 0, "becn": cnps, "data_packets": n - cnps,
		"notified_qps": 1, "cnp_sources": 1, "peak_cnps_per_ms": peak}
}

// TestMergeCombined: findings of one kind and variant combine into one,
// whose counts combine by their names (sums, maxima, minima), whose
// derived counts, severity and title are made again from them by the
// module's own rules; different variants of a kind stay apart, and one
// kind's variants with different count names (NFS here, iSCSI there)
// come together.
func TestMergeCombined(t *testing.T) {
	gbn := func(resent, mean float64) Finding {
		return counted(KindRetransmission, Warning, goBackNTitle(uint64(resent), 1, 1, 1), map[string]float64{
			"gbn_episodes": 1, "retransmitted_packets": resent, "psn_seq_err_naks": 1, "fabric_lost_psns": 0, "fabric_gaps": 0, "qps": 1,
			"recovery_ms_max": mean, "recovery_ms_mean": mean, "catch_up_ms_max": 0.051})
	}
	timeouts := func(lo, hi, n float64) Finding {
		return counted(KindRetransmission, Warning, timeoutTitle(4, 1, 1), map[string]float64{
			"timeouts": 1, "retransmitted_packets": 4, "qps": 1, "timeout_ms_min": lo, "timeout_ms_max": hi, "local_ack_timeout": n, "fabric_lost_psns": 0})
	}
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 10000, 4,
		gbn(13, 0.01), timeouts(0.3, 0.3, 6),
		counted(KindCongestion, Info, "4 CNPs", congestionCounts(10000, 4, 4)),
		counted(KindNonRDMAOnCompute, Warning, nonRDMATitle(nonRDMASSH, 1), map[string]float64{"conversations": 1, "packets": 10, "bytes": 1608}),
		counted(KindStorageOnCompute, Critical, storageIPTitle([]string{svcNFS}, true), map[string]float64{
			"conversations": 1, "bytes": 100, "nfs_conversations": 1, "nfs_bytes": 100}))
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 10000, 5,
		gbn(15, 0.02), timeouts(20, 70, 14),
		counted(KindCongestion, Info, "5 CNPs", congestionCounts(10000, 5, 5)),
		counted(KindNonRDMAOnCompute, Critical, nonRDMATitle(nonRDMABootstrap, 2), map[string]float64{"conversations": 2, "packets": 1e5, "bytes": 2e8}),
		counted(KindStorageOnCompute, Critical, storageIPTitle([]string{svcISCSI}, true), map[string]float64{
			"conversations": 1, "bytes": 50, "iscsi_conversations": 1, "iscsi_bytes": 50}))
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]*Finding{}
	for i := range r.Findings {
		byTitle[r.Findings[i].Title] = &r.Findings[i]
	}
	want := []struct {
		title  string
		sev    Severity
		counts map[string]float64
	}{
		{"Go-back-N: 28 packets resent in 2 episodes after packet loss on 2 QPs", Warning, map[string]float64{
			"retransmitted_packets": 28, "gbn_episodes": 2, "qps": 2, "catch_up_ms_max": 0.051, "recovery_ms_max": 0.02, "recovery_ms_mean": 0.02}},
		{"ACK timeouts: 8 packets resent after 2 timeouts on 2 QPs", Warning, map[string]float64{
			"timeout_ms_min": 0.3, "timeout_ms_max": 70, "local_ack_timeout": 14}},
		{"SSH on compute links: 1 conversation", Warning, map[string]float64{"conversations": 1}},
		{"NCCL bootstrap TCP on compute links: 2 conversations", Critical, map[string]float64{"conversations": 2}},
		{"NFS, iSCSI on compute HCA addresses", Critical, map[string]float64{"conversations": 2, "nfs_bytes": 100, "iscsi_bytes": 50, "bytes": 150}},
	}
	for _, w := range want {
		f := byTitle[w.title]
		if f == nil {
			t.Errorf("no finding %q in%s", w.title, summary(r.Findings))
			continue
		}
		if f.Severity != w.sev {
			t.Errorf("%q: %v, want %v", w.title, f.Severity, w.sev)
		}
		wantCounts(t, *f, w.counts)
	}
	n := 0
	for _, f := range r.Findings {
		if f.Kind == KindRetransmission || f.Kind == KindNonRDMAOnCompute || f.Kind == KindStorageOnCompute {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("want %d combined findings, got %s", len(want), summary(r.Findings))
	}
	probs := strings.Join(r.Capture.Problems, "\n")
	for _, w := range []string{
		"merge: congestion: peak_cnps_per_ms 5 is the highest of the reports' own peaks (a.json: 4, b.json: 5)", "up to their sum (9)",
		"merge: retransmission: go-back-N recovery_ms_mean is the highest of the 2 reports' means",
	} {
		if !strings.Contains(probs, w) {
			t.Errorf("capture problems lack %q:\n%s", w, probs)
		}
	}
	for _, absent := range []string{"ecn_not_acted", "pfc", "storage_on_compute", "non_rdma_on_compute"} {
		if strings.Contains(probs, "merge: "+absent) {
			t.Errorf("a note on %s, which is exact or absent here:\n%s", absent, probs)
		}
	}
}

// TestMergeNotesOnlyWhenApproximate: each approximation is said when its
// finding is in the merged report, and only then.
func TestMergeNotesOnlyWhenApproximate(t *testing.T) {
	pfc := counted(KindPFC, Warning, pfcTitle(nil, 5, 0), map[string]float64{"pfc_frames": 5, "xoff_frames": 5, "storms": 0,
		"pause_frames_802_3x": 0, "priority_3_frames": 5, "priority_3_paused_us": 300, "priority_3_storms": 0})
	ecn := counted(KindECNNotActed, Warning, ecnNotActedTitle(3), map[string]float64{"ce_marked": 7, "not_acted": 3, "undecided": 0, "directions": 1})
	role := func(n float64) Finding {
		return counted(KindStorageOnCompute, Critical, storageRoleTitle(uint64(n), uint64(n), true), map[string]float64{
			"storage_endpoints": n, "roce_flows": 2, "conversations": 0, "bytes": 10})
	}
	other := func(port string) Finding {
		return counted(KindNonRDMAOnCompute, Info, nonRDMAOther+": tcp/"+port+" (1)", map[string]float64{"conversations": 1, "packets": 2, "bytes": 3})
	}
	otherWhole := func(port string) Finding {
		f := other(port)
		f.Evidence.Details = []string{"tcp/" + port + ": 10.0.0.1 > 10.0.0.2, 2 packets, 3 B"}
		return f
	}
	tests := []struct {
		name string
		a, b []Finding
		want []string
	}{
		{"nothing approximate", []Finding{role(1)}, nil, nil},
		{"pfc in one report", []Finding{pfc}, nil, []string{"merge: pfc:", "judged on the capture of a.json"}},
		{"pfc in both", []Finding{pfc}, []Finding{pfc}, []string{"each report's own capture (the worst of them)"}},
		{"ecn in one of two", []Finding{ecn}, nil, []string{"merge: ecn_not_acted: undecided", "only the 1 of 2 reports"}},
		{"ecn in both", []Finding{ecn}, []Finding{ecn}, nil},
		{"storage addresses of two", []Finding{role(1)}, []Finding{role(2)}, []string{"merge: storage_on_compute: storage_endpoints adds up"}},
		{"other TCP of two", []Finding{other("873")}, []Finding{other("8080")}, []string{"merge: non_rdma_on_compute: the title of other TCP/UDP names the services of"}},
		{"other TCP of two, each listed whole", []Finding{otherWhole("873")}, []Finding{otherWhole("8080")}, nil},
		{"a kind from a newer rocedump", []Finding{counted("quantum_flux", Info, "x", map[string]float64{"n": 1})},
			[]Finding{counted("quantum_flux", Info, "y", map[string]float64{"n": 2})}, []string{"merge: quantum_flux (a kind this rocedump does not make)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Merge([]MergeSource{{"a.json", mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0, tt.a...)},
				{"b.json", mergeFixture("b.pcap", "10.0.1.1", 2, 100, 0, tt.b...)}}, MergeOptions{Tool: "t"})
			if err != nil {
				t.Fatal(err)
			}
			probs := strings.Join(r.Capture.Problems, "\n")
			for _, w := range tt.want {
				if !strings.Contains(probs, w) {
					t.Errorf("capture problems lack %q:\n%s", w, probs)
				}
			}
			if tt.want == nil && probs != "" {
				t.Errorf("want no notes, got:\n%s", probs)
			}
		})
	}
}

// TestMergeSeverityOfMergedCapture: a severity that is a share of the
// capture is judged on the merged capture, even for a finding of one
// report, whose text then says so.
func TestMergeSeverityOfMergedCapture(t *testing.T) {
	gbn := counted(KindRetransmission, Critical, goBackNTitle(150, 3, 1, 3), map[string]float64{
		"gbn_episodes": 3, "retransmitted_packets": 150, "psn_seq_err_naks": 3, "fabric_lost_psns": 0, "fabric_gaps": 0, "qps": 1,
		"recovery_ms_max": 0, "recovery_ms_mean": 0, "catch_up_ms_max": 0})
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 10000, 0, gbn) // 1.5% of its capture: critical
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 10000, 0)      // 0.75% of both
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.Kind == KindRetransmission {
			if f.Severity != Warning || f.Title != gbn.Title || !strings.HasPrefix(f.Detail, "From a.json: the severity is that of the merged capture") {
				t.Errorf("got %v %q %q", f.Severity, f.Title, f.Detail)
			}
			return
		}
	}
	t.Errorf("no retransmission finding:%s", summary(r.Findings))
}

// TestTitlesFromCounts: what merge makes again from a finding's counts
// (titleFromCounts, severityFromCounts, derivedCounts) is what the module
// made, on every finding of the generated captures, and no two findings
// of one kind in a report share a variant (merge would fold them into one).
func TestTitlesFromCounts(t *testing.T) {
	for _, name := range []string{"retransmissions", "retx_mixed", "retx_mirror_widespread", "snaplen64", "congestion", "report_ecn",
		"report_storage", "report_storage_once", "report_nvme_discovery", "report_ssh_bootstrap", "storage", "incident_demo", "report_rdma_management"} {
		t.Run(name, func(t *testing.T) {
			in := loadGen(t, name, pod)
			roce := newFlowScan(in.Flows).packets
			r := Run(in, "t")
			seen := map[string]bool{}
			for _, f := range r.Findings {
				v := string(f.Kind) + "/" + variantOf(&f)
				if seen[v] {
					t.Errorf("two findings of variant %s", v)
				}
				seen[v] = true
				if title, ok := titleFromCounts(&f); ok && title != f.Title {
					t.Errorf("%s: title from counts %q, the module's %q", v, title, f.Title)
				}
				if sev, ok := severityFromCounts(&f, roce); ok && sev != f.Severity {
					t.Errorf("%s %q: severity from counts %v, the module's %v", v, f.Title, sev, f.Severity)
				}
				g := f
				g.Evidence.Counts = cloneCounts(f.Evidence.Counts)
				derivedCounts(&g)
				if !reflect.DeepEqual(g.Evidence.Counts, f.Evidence.Counts) {
					t.Errorf("%s: derived counts %v, the module's %v", v, g.Evidence.Counts, f.Evidence.Counts)
				}
			}
		})
	}
}

// TestMergeUnnamedFrames: frame evidence made from the flow records of a
// report over several files cannot name its file, and the merge says so.
func TestMergeUnnamedFrames(t *testing.T) {
	topo := topology.New()
	for _, s := range []string{"10.0.0.0/24=0", "10.0.3.0/24=3"} {
		if err := topo.AddRailSubnet(s); err != nil {
			t.Fatal(err)
		}
	}
	rec := flowtable.Record{ID: 1, Src: "10.0.0.1", Dst: "10.0.3.2", DestQPN: 0x100, Packets: 10, Bytes: 1000,
		First: "2026-01-01T00:00:01Z", Last: "2026-01-01T00:00:01Z"}
	for _, tt := range []struct {
		files []string
		named string // the record's first_file and last_file
		note  bool
		file  string // the cross_rail evidence's
	}{
		{[]string{"a1.pcap", "a2.pcap"}, "", true, ""},
		{[]string{"a1.pcap", "a2.pcap"}, "a2.pcap", false, "a2.pcap"},
		{[]string{"a.pcap"}, "", false, "a.pcap"},
	} {
		rec := rec
		rec.FirstFile, rec.LastFile = tt.named, tt.named
		a := &Report{SchemaVersion: SchemaVersion, Capture: CaptureInfo{Files: tt.files, Packets: 10, RoCE: 10}, Flows: []flowtable.Record{rec}}
		b := mergeFixture("b.pcap", "10.0.0.5", 2, 10, 0)
		r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t", Topology: topo})
		if err != nil {
			t.Fatal(err)
		}
		probs := strings.Join(r.Capture.Problems, "\n")
		if got := strings.Contains(probs, "merge: the first and last frames of cross_rail name no file"); got != tt.note {
			t.Errorf("files %v: note %v, want %v:\n%s", tt.files, got, tt.note, probs)
		}
		for _, f := range r.Findings {
			if f.Kind == KindCrossRail && strings.Contains(f.Title, "crosses rails") && (f.Evidence.First == nil || f.Evidence.First.File != tt.file) {
				t.Errorf("files %v, record naming %q: cross_rail first frame %+v, want in %q", tt.files, tt.named, f.Evidence.First, tt.file)
			}
		}
		// The merged record names its files too, those of an earlier
		// rocedump's report of one file included.
		for _, fr := range r.Flows {
			if fr.Src == rec.Src && (fr.FirstFile != tt.file || fr.LastFile != tt.file) {
				t.Errorf("files %v, record naming %q: merged record names %q, %q, want %q", tt.files, tt.named, fr.FirstFile, fr.LastFile, tt.file)
			}
		}
	}
}

// TestMergeKeepsModuleOrder: variants of one kind are listed in the order
// their module makes them (data before CNPs, SSH before bootstrap, fatal
// NAKs by code), as one run over the captures lists them, not in the
// order the reports happened to have them first.
func TestMergeKeepsModuleOrder(t *testing.T) {
	dscp := func(class string) Finding {
		return counted(KindDSCPMismatch, Warning, class, map[string]float64{class + "_packets": 100, "wrong_packets": 1, "expected_dscp": 26, "flows": 1})
	}
	pcp := func(class string) Finding {
		return counted(KindPCPMismatch, Warning, class, map[string]float64{class + "_packets": 100, "wrong_packets": 1, "expected_pcp": 3, "flows": 1})
	}
	conv := func(title string) Finding {
		return counted(KindNonRDMAOnCompute, Warning, nonRDMATitle(title, 1), map[string]float64{"conversations": 1, "packets": 10, "bytes": 100})
	}
	fatal := func(code string) Finding {
		return counted(KindRetransmission, Critical, code, map[string]float64{"fatal_naks": 1, "naks_" + code: 1, "qps": 1})
	}
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0, fatal("remote_op_err"), pcp("cnp"), dscp("cnp"), conv(nonRDMABootstrap))
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 100, 0, fatal("remote_access_err"), pcp("data"), dscp("data"), conv(nonRDMASSH))
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		if f.Kind == KindRetransmission || f.Kind == KindDSCPMismatch || f.Kind == KindPCPMismatch || f.Kind == KindNonRDMAOnCompute {
			got = append(got, string(f.Kind)+" "+variantOf(&f))
		}
	}
	want := []string{"retransmission fatal naks_remote_access_err", "retransmission fatal naks_remote_op_err",
		"dscp_mismatch data", "dscp_mismatch cnp", "pcp_mismatch data", "pcp_mismatch cnp", "non_rdma_on_compute " + nonRDMASSH, "non_rdma_on_compute " + nonRDMABootstrap}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("order\n got %q\nwant %q", got, want)
	}
}

// TestMergeFabricLossOfAllReports: mirror_loss's fabric_lost_psns is the
// fabric loss of the whole capture, so a merge counts it from the reports
// without mirror loss too (their go-back-N and ACK-timeout findings).
func TestMergeFabricLossOfAllReports(t *testing.T) {
	mirror := counted(KindMirrorLoss, Warning, mirrorLossTitle(2, 1, 1, false), map[string]float64{
		"mirror_lost_psns": 2, "mirror_gaps": 1, "qps": 1, "fabric_lost_psns": 1})
	gbn := counted(KindRetransmission, Warning, goBackNTitle(13, 1, 1, 1), map[string]float64{
		"gbn_episodes": 1, "retransmitted_packets": 13, "psn_seq_err_naks": 1, "fabric_lost_psns": 3, "fabric_gaps": 1, "qps": 1,
		"recovery_ms_max": 0.01, "recovery_ms_mean": 0.01, "catch_up_ms_max": 0.01})
	timeouts := counted(KindRetransmission, Warning, timeoutTitle(4, 1, 1), map[string]float64{
		"timeouts": 1, "retransmitted_packets": 4, "qps": 1, "timeout_ms_min": 1, "timeout_ms_max": 1, "local_ack_timeout": 14, "fabric_lost_psns": 4})
	// a: mirror loss, and the fabric loss of a go-back-N that its
	// mirror_loss finding already counts; b: fabric loss only.
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 1000, 0, mirror, counted(KindRetransmission, Warning, goBackNTitle(2, 1, 1, 1), map[string]float64{
		"gbn_episodes": 1, "retransmitted_packets": 2, "psn_seq_err_naks": 1, "fabric_lost_psns": 1, "fabric_gaps": 1, "qps": 1,
		"recovery_ms_max": 0.01, "recovery_ms_mean": 0.01, "catch_up_ms_max": 0.01}))
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 1000, 0, gbn, timeouts)
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ml := ofKind(r.Findings, KindMirrorLoss)
	if len(ml) != 1 {
		t.Fatalf("mirror_loss findings:%s", summary(r.Findings))
	}
	wantCounts(t, ml[0], map[string]float64{"mirror_lost_psns": 2, "fabric_lost_psns": 1 + 3 + 4})
}

// TestMergeBTHCut: a report whose truncation finding counts frames cut
// inside their BTH keeps saying so once merged: the recomputed finding
// (which has no per-packet state) gets the count, the warning and the
// text back, and with no flow the verdict names the snap length.
func TestMergeBTHCut(t *testing.T) {
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 10, 0)
	a.Flows, a.Capture.Truncated = nil, 10
	f := truncatedFinding(&Input{Capture: a.Capture})
	f.Evidence.Counts["bth_cut"] = 10
	bthCutNote(&f, 10)
	a.Findings = []Finding{f}
	r, err := Merge([]MergeSource{{"a.json", a}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	h := ofKind(r.Findings, KindCaptureHealth)
	if len(h) != 1 || h[0].Severity != Warning || h[0].Evidence.Counts["bth_cut"] != 10 || !strings.Contains(h[0].Title, "transport header") {
		t.Fatalf("capture_health:%s %v", summary(h), h)
	}
	if !strings.Contains(r.Summary.Verdict, "snap length") {
		t.Errorf("verdict %q: want the snap length named", r.Summary.Verdict)
	}
}

// TestMergeHeadersCut: a truncation finding that counts frames cut before
// their UDP or TCP header keeps its count, warning and text once merged,
// and with no flow the verdict names the snap length.
func TestMergeHeadersCut(t *testing.T) {
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 10, 0)
	a.Flows, a.Capture.Truncated = nil, 10
	f := truncatedFinding(&Input{Capture: a.Capture})
	f.Evidence.Counts["headers_cut"] = 10
	headersCutNote(&f, 10)
	a.Findings = []Finding{f}
	r, err := Merge([]MergeSource{{"a.json", a}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	h := ofKind(r.Findings, KindCaptureHealth)
	if len(h) != 1 || h[0].Severity != Warning || h[0].Evidence.Counts["headers_cut"] != 10 || !strings.Contains(h[0].Title, "UDP or TCP header") {
		t.Fatalf("capture_health:%s %v", summary(h), h)
	}
	if !strings.Contains(r.Summary.Verdict, "snap length") {
		t.Errorf("verdict %q: want the snap length named", r.Summary.Verdict)
	}
}

// TestMergeECNCEMarked: ecn_not_acted's ce_marked after merge counts what
// the module counts, CE-marked packets other than CNPs: a report's own
// count where it made the finding, else its flow records' CE marks but
// those of flows of CNPs only. A flow with both CNPs and other packets
// cannot say which were marked: its marks count as on the other packets,
// and a merge note says how many could be CNPs.
func TestMergeECNCEMarked(t *testing.T) {
	ecn := counted(KindECNNotActed, Warning, ecnNotActedTitle(3), map[string]float64{"ce_marked": 7, "not_acted": 3, "undecided": 0, "directions": 1})
	rec := func(id int, src string, packets, cnps, ce uint64) flowtable.Record {
		at := "2026-01-01T00:00:02Z"
		return flowtable.Record{ID: id, Src: src, Dst: "10.0.9.9", DestQPN: uint32(0x100 + id), Packets: packets, CNPs: cnps, ECNCE: ce, First: at, Last: at}
	}
	for _, tt := range []struct {
		name string
		b    []flowtable.Record
		want float64
		note string
	}{
		// 2 CE-marked CNPs on a flow of CNPs only: not counted.
		{"CNPs apart", []flowtable.Record{old(t, rec(1, "10.0.1.2", 5, 5, 2)), old(t, rec(2, "10.0.1.1", 100, 0, 4))}, 7 + 4, ""},
		// 3 CE marks on a flow of 15 ACKs and 5 CNPs: counted, noted.
		{"CNPs with ACKs", []flowtable.Record{old(t, rec(1, "10.0.1.2", 20, 5, 3)), old(t, rec(2, "10.0.1.1", 100, 0, 4))}, 7 + 3 + 4,
			"merge: ecn_not_acted: ce_marked counts, for b.json (which made no such finding), the CE marks of flows that carry CNPs and other packets as on the other packets"},
		// The record says 1 of the 3 was on a CNP (cnps_ce): exact, no note.
		{"CNPs with ACKs, cnps_ce", []flowtable.Record{ceCNPs(rec(1, "10.0.1.2", 20, 5, 3), 1), rec(2, "10.0.1.1", 100, 0, 4)}, 7 + 2 + 4, ""},
		// More marks than CNPs: at least 1 is on an ACK.
		{"more marks than CNPs", []flowtable.Record{old(t, rec(1, "10.0.1.2", 20, 2, 3))}, 7 + 3, "up to 2 of them may be CNPs"},
		// A record of this rocedump with cnps_ce 0: exact, no note.
		{"CNPs with ACKs, cnps_ce 0", []flowtable.Record{rec(1, "10.0.1.2", 20, 5, 3), rec(2, "10.0.1.1", 100, 0, 4)}, 7 + 3 + 4, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mergeCEMarked(t, KindECNNotActed, []Finding{ecn}, tt.b, tt.want, "ce_marked", tt.note)
		})
	}
}

// old is r as read from the JSON of a report of a rocedump before
// cnps_ce: which of its CE marks were on CNPs is not known.
func old(t *testing.T, r flowtable.Record) flowtable.Record {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "cnps_ce")
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	var o flowtable.Record
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	if o.CNPsCEKnown() {
		t.Fatal("a record without cnps_ce reads as knowing it")
	}
	return o
}

// ceCNPs is r with n of its CE marks on CNPs.
func ceCNPs(r flowtable.Record, n uint64) flowtable.Record {
	r.CNPsCE = n
	return r
}

// TestMergeCopiesEvidence: the mirror-copies finding recomputed from the
// merged flows counts the CNPs of copied flows when one report's copied
// flows carried some; the first and last copied frame are still those of
// every report's finding, not only of the reports whose finding had CNPs.
func TestMergeCopiesEvidence(t *testing.T) {
	ref := func(file string, frame int, at string) *Frame {
		tm, _ := time.Parse(time.RFC3339Nano, at)
		return &Frame{File: file, Frame: frame, Time: tm}
	}
	copies := func(n, cnps float64, first, last *Frame) Finding {
		f := counted(KindCaptureHealth, Warning, "copies", map[string]float64{"mirror_duplicates": n, "flows": 1, "roce_packets": 100})
		if cnps > 0 {
			f.Evidence.Counts["cnps_on_copied_flows"] = cnps
		}
		f.Evidence.First, f.Evidence.Last = first, last
		return f
	}
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0, copies(10, 0, ref("a.pcap", 2, "2026-01-01T00:00:01Z"), ref("a.pcap", 90, "2026-01-01T00:00:03Z")))
	a.Flows[0].MirrorDuplicates = 10
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 100, 4, copies(5, 4, ref("b.pcap", 7, "2026-01-01T00:00:02Z"), ref("b.pcap", 9, "2026-01-01T00:00:02.5Z")))
	b.Flows[0].MirrorDuplicates = 5
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var got *Finding
	for i, f := range r.Findings {
		if f.Kind == KindCaptureHealth && hasCount(&f, "mirror_duplicates") {
			got = &r.Findings[i]
		}
	}
	if got == nil {
		t.Fatalf("no mirror copies finding:%s", summary(r.Findings))
	}
	wantCounts(t, *got, map[string]float64{"mirror_duplicates": 15, "cnps_on_copied_flows": 4})
	e := got.Evidence
	if e.First == nil || e.First.File != "a.pcap" || e.First.Frame != 2 || e.Last == nil || e.Last.File != "a.pcap" || e.Last.Frame != 90 {
		t.Errorf("first %+v last %+v: want a.pcap frames 2 and 90, the earliest and latest copies of both reports", e.First, e.Last)
	}
}

// TestMergeNamesNodesOfReportsWithoutTopology: merged with a topology, a
// report made without one has its findings' nodes, addresses, named as a
// run with the topology names them, and a merge note says which reports
// judged their findings without it.
func TestMergeNamesNodesOfReportsWithoutTopology(t *testing.T) {
	topo, err := topology.Load(filepath.Join(topoDir, pod))
	if err != nil {
		t.Fatal(err)
	}
	ssh := counted(KindNonRDMAOnCompute, Warning, nonRDMATitle(nonRDMASSH, 1), map[string]float64{"conversations": 1, "packets": 10, "bytes": 1000})
	ssh.Nodes = []string{"10.0.0.1", "10.0.0.2", "192.0.2.77"}
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0, ssh)
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 100, 0)
	b.Summary.Topology = true
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t", Topology: topo})
	if err != nil {
		t.Fatal(err)
	}
	got := ofKind(r.Findings, KindNonRDMAOnCompute)
	if want := []string{"192.0.2.77", "dgx-01", "dgx-02"}; len(got) != 1 || !reflect.DeepEqual(got[0].Nodes, want) {
		t.Fatalf("non_rdma_on_compute:%s %v: want nodes %v", summary(got), got, want)
	}
	if probs := strings.Join(r.Capture.Problems, "\n"); !strings.Contains(probs, "merge: a.json was made without a topology") ||
		strings.Contains(probs, "b.json was made") {
		t.Errorf("capture problems %q: want a note naming a.json only", probs)
	}
}

// TestMergeNotesDirectionsApart: the RC flows from A to B in one report and
// those from B to A only in another (a capture split by direction) get a
// merge note naming the host pair, as their requests and responses are not
// paired across reports; when one report holds both directions, or the
// reverse flows are not RC or XRC, nothing is said.
func TestMergeNotesDirectionsApart(t *testing.T) {
	flow := func(file, src, dst, transport string) *Report {
		r := mergeFixture(file, src, 1, 100, 0)
		r.Flows[0].Dst, r.Flows[0].Transport = dst, transport
		return r
	}
	const note = "1 host pair has the two directions of their connections in different reports (10.0.0.1 > 10.0.9.9 in a.json, 10.0.9.9 > 10.0.0.1 in b.json)"
	for _, tt := range []struct {
		name string
		srcs []MergeSource
		want bool
	}{
		{"apart", []MergeSource{{"a.json", flow("a.pcap", "10.0.0.1", "10.0.9.9", "RC")}, {"b.json", flow("b.pcap", "10.0.9.9", "10.0.0.1", "RC")}}, true},
		{"apart, reverse order", []MergeSource{{"b.json", flow("b.pcap", "10.0.9.9", "10.0.0.1", "RC")}, {"a.json", flow("a.pcap", "10.0.0.1", "10.0.9.9", "RC")}}, true},
		{"one report holds both", []MergeSource{
			{"a.json", flow("a.pcap", "10.0.0.1", "10.0.9.9", "RC")},
			{"b.json", flow("b.pcap", "10.0.9.9", "10.0.0.1", "RC")},
			{"c.json", func() *Report {
				r := flow("c.pcap", "10.0.0.1", "10.0.9.9", "RC")
				back := r.Flows[0]
				back.ID, back.Src, back.Dst = 2, "10.0.9.9", "10.0.0.1"
				r.Flows = append(r.Flows, back)
				return r
			}()}}, false},
		{"UD", []MergeSource{{"a.json", flow("a.pcap", "10.0.0.1", "10.0.9.9", "UD")}, {"b.json", flow("b.pcap", "10.0.9.9", "10.0.0.1", "UD")}}, false},
	} {
		r, err := Merge(tt.srcs, MergeOptions{Tool: "t"})
		if err != nil {
			t.Fatal(err)
		}
		probs := strings.Join(r.Capture.Problems, "\n")
		if got := strings.Contains(probs, note); got != tt.want {
			t.Errorf("%s: problems %q; want the note %v", tt.name, probs, tt.want)
		}
		if !tt.want && strings.Contains(probs, "different reports") {
			t.Errorf("%s: problems %q; want no note of directions apart", tt.name, probs)
		}
	}
}

// TestMergeStorageSMB: SMB findings merge like the other storage ones. SMB
// over TCP from one report and NFS from another make one finding naming
// both; SMB Direct over RDMA CM from one and NVMe-oF from another make one
// whose title names each service by its port.
func TestMergeStorageSMB(t *testing.T) {
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0,
		counted(KindStorageOnCompute, Critical, storageCMTitle([]uint16{portSMBDirect}, true), map[string]float64{
			"cm_requests": 1, "cm_requests_5445": 1, "flows": 2, "flows_5445": 2, "bytes": 9000}),
		counted(KindStorageOnCompute, Critical, storageIPTitle([]string{svcSMB}, true), map[string]float64{
			"conversations": 1, "bytes": 3500, "smb_conversations": 1, "smb_bytes": 3500}))
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 100, 0,
		counted(KindStorageOnCompute, Warning, storageCMTitle([]uint16{portNVMeOF}, false), map[string]float64{
			"cm_requests": 1, "cm_requests_4420": 1, "flows": 2, "flows_4420": 2, "bytes": 1000}),
		counted(KindStorageOnCompute, Critical, storageIPTitle([]string{svcNFS}, true), map[string]float64{
			"conversations": 1, "bytes": 100, "nfs_conversations": 1, "nfs_bytes": 100}))
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	st := ofKind(r.Findings, KindStorageOnCompute)
	if len(st) != 2 {
		t.Fatalf("want one RDMA CM and one TCP storage finding, got %s", summary(st))
	}
	cm, ip := st[0], st[1]
	if want := "Storage over RDMA on compute HCA addresses: NVMe-oF/RDMA (4420), SMB Direct (5445)"; cm.Title != want || cm.Severity != Critical {
		t.Errorf("RDMA CM finding %v %q, want critical %q", cm.Severity, cm.Title, want)
	}
	wantCounts(t, cm, map[string]float64{"cm_requests": 2, "cm_requests_5445": 1, "flows_5445": 2, "flows": 4, "bytes": 10000})
	if want := "NFS, SMB on compute HCA addresses"; ip.Title != want || ip.Severity != Critical {
		t.Errorf("TCP finding %v %q, want critical %q", ip.Severity, ip.Title, want)
	}
	wantCounts(t, ip, map[string]float64{"conversations": 2, "smb_conversations": 1, "smb_bytes": 3500, "bytes": 3600})
}

// TestMergeShareOfMergedCapture: a retransmission or mirror_loss finding
// that only one report made keeps that report's text, whose share of the
// RoCE packets must be over the merged capture, as one run says it (6 of
// 3000 + 2000 packets is 0.12%, not the 0.2% of its own 3000).
func TestMergeShareOfMergedCapture(t *testing.T) {
	gbn := counted(KindRetransmission, Warning, goBackNTitle(6, 1, 1, 1), map[string]float64{
		"gbn_episodes": 1, "retransmitted_packets": 6, "psn_seq_err_naks": 1, "fabric_lost_psns": 0, "fabric_gaps": 0, "qps": 1})
	gbn.Detail = "The responder found a PSN missing. 1 go-back-N episode on 1 QP resent 6 packets (" + retxShare(6, 3000) + " of the RoCE packets in the capture); more."
	lost := counted(KindMirrorLoss, Warning, mirrorLossTitle(3, 1, 1, false), map[string]float64{
		"mirror_lost_psns": 3, "mirror_gaps": 1, "qps": 1, "fabric_lost_psns": 0})
	lost.Detail = "The capture lacks 3 request packets (" + retxShare(3, 3000) + " of the RoCE packets) that the responder acknowledged past."
	a := mergeFixture("a.pcap", "10.0.0.1", 1, 3000, 0, gbn, lost)
	b := mergeFixture("b.pcap", "10.0.1.1", 2, 2000, 0)
	r, err := Merge([]MergeSource{{"a.json", a}, {"b.json", b}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[Kind]string{
		KindRetransmission: "resent 6 packets (0.12% of the RoCE packets in the capture); more.",
		KindMirrorLoss:     "lacks 3 request packets (0.06% of the RoCE packets) that",
	}
	for _, f := range r.Findings {
		if w, ok := want[f.Kind]; ok {
			delete(want, f.Kind)
			if !strings.Contains(f.Detail, w) {
				t.Errorf("%s detail %q, want %q", f.Kind, f.Detail, w)
			}
		}
	}
	if len(want) > 0 {
		t.Errorf("findings missing: %v in%s", want, summary(r.Findings))
	}
}

// TestMergeCongestionCEOfOldRecords: the recomputed congestion finding's
// ce_marked leaves CNPs out, as one run does, for flow records of an
// earlier rocedump (without cnps_ce) too: all the marks of a flow of CNPs
// only are on CNPs; those of a flow with CNPs and other packets count as on
// the other packets, and a merge note says how many may be on CNPs.
func TestMergeCongestionCEOfOldRecords(t *testing.T) {
	rec := func(id int, src string, packets, cnps, ce uint64) flowtable.Record {
		at := "2026-01-01T00:00:02Z"
		return old(t, flowtable.Record{ID: id, Src: src, Dst: "10.0.9.9", DestQPN: uint32(0x100 + id), Packets: packets, CNPs: cnps, ECNCE: ce, First: at, Last: at})
	}
	for _, tt := range []struct {
		name string
		b    []flowtable.Record
		want float64
		note string
	}{
		{"CNPs apart", []flowtable.Record{rec(1, "10.0.1.2", 5, 5, 2), rec(2, "10.0.1.1", 100, 0, 4)}, 7 + 4, ""},
		{"CNPs with ACKs", []flowtable.Record{rec(1, "10.0.1.2", 20, 5, 3), rec(2, "10.0.1.1", 100, 0, 4)}, 7 + 3 + 4,
			"merge: congestion: ce_marked counts, for b.json (a report of an earlier rocedump, its flow records without cnps_ce), the CE marks of flows that carry CNPs and other packets as on the other packets: up to 3 of them"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mergeCEMarked(t, KindCongestion, nil, tt.b, tt.want, "congestion: ce_marked", tt.note)
		})
	}
}

// mergeCEMarked merges a report of a flow with 7 CE marks (and findings
// fs) with one of flow records b, and checks the ce_marked of the merged
// finding of kind k, and that the merged capture's problems hold note, or
// with note "" nothing about noteAbout.
func mergeCEMarked(t *testing.T, k Kind, fs []Finding, b []flowtable.Record, want float64, noteAbout, note string) {
	t.Helper()
	ra := mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0, fs...)
	ra.Flows[0].ECNCE = 7
	rb := mergeFixture("b.pcap", "10.0.1.1", 2, 120, 0)
	rb.Flows = b
	r, err := Merge([]MergeSource{{"a.json", ra}, {"b.json", rb}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var got *Finding
	for i := range r.Findings {
		if r.Findings[i].Kind == k {
			got = &r.Findings[i]
		}
	}
	if got == nil || got.Evidence.Counts["ce_marked"] != want {
		t.Fatalf("%s %+v: want ce_marked %v", k, got, want)
	}
	probs := strings.Join(r.Capture.Problems, "\n")
	if note == "" && strings.Contains(probs, noteAbout) || note != "" && !strings.Contains(probs, note) {
		t.Errorf("capture problems %q: want a note %q", probs, note)
	}
}

// TestMergeStorageRoleShare: merged storage-role findings keep saying how
// many of their storage addresses talk to compute HCA addresses; a
// report from before on_compute_endpoints counts all of its own.
func TestMergeStorageRoleShare(t *testing.T) {
	role := func(n, onCompute float64, withShare bool) Finding {
		c := map[string]float64{"storage_endpoints": n, "roce_flows": 2, "conversations": 0, "bytes": 10}
		if withShare {
			c["on_compute_endpoints"] = onCompute
		}
		return counted(KindStorageOnCompute, Critical, storageRoleTitle(uint64(n), uint64(onCompute), true), c)
	}
	for _, tc := range []struct {
		name string
		a, b Finding
		want string
	}{
		{"both say", role(2, 1, true), role(3, 1, true), "2 of 5 storage addresses talk to compute HCA addresses"},
		{"all of both", role(2, 2, true), role(3, 3, true), "5 storage addresses talk to compute HCA addresses"},
		{"one from before", role(2, 1, true), role(3, 3, false), "4 of 5 storage addresses talk to compute HCA addresses"},
	} {
		r, err := Merge([]MergeSource{{"a.json", mergeFixture("a.pcap", "10.0.0.1", 1, 100, 0, tc.a)},
			{"b.json", mergeFixture("b.pcap", "10.0.1.1", 2, 100, 0, tc.b)}}, MergeOptions{Tool: "t"})
		if err != nil {
			t.Fatal(err)
		}
		got := ofKind(r.Findings, KindStorageOnCompute)
		if len(got) != 1 || got[0].Title != tc.want {
			t.Errorf("%s: got %s, want %q", tc.name, summary(got), tc.want)
		}
	}
}

// TestMergeSharedConversations: reports of captures that hold the same
// traffic (one per host: they share flows, and list the same TCP
// conversation) have their conversations added up, each once per report:
// the merge says so. Two node captures of one NCCL run merged counted
// 23 bootstrap conversations and 803 packets without a word, where one
// run over both files counts 17 and 622. Reports of disjoint traffic get
// no such note.
func TestMergeSharedConversations(t *testing.T) {
	boot := func(line string) Finding {
		f := counted(KindNonRDMAOnCompute, Warning, nonRDMABootstrap+": 1 conversation", map[string]float64{"conversations": 1, "packets": 10, "bytes": 1000})
		f.Evidence.Details = []string{line}
		return f
	}
	shared := "tcp/29500: 10.0.0.1 > 10.0.0.2, 10 packets, 1000 B"
	for _, tc := range []struct {
		name         string
		srcA, srcB   string
		lineA, lineB string
		want         []string
	}{
		{"same flows and conversation", "10.0.0.1", "10.0.0.1", shared, shared,
			[]string{"merge: non_rdma_on_compute, storage_on_compute: conversations, packets and bytes add up", "1 flow", "1 conversation"}},
		{"same conversation only", "10.0.0.1", "10.0.1.1", shared, shared, []string{"1 conversation listed by more than one report"}},
		{"disjoint", "10.0.0.1", "10.0.1.1", shared, "tcp/29500: 10.0.1.1 > 10.0.1.2, 10 packets, 1000 B", nil},
	} {
		r, err := Merge([]MergeSource{{"a.json", mergeFixture("a.pcap", tc.srcA, 1, 100, 0, boot(tc.lineA))},
			{"b.json", mergeFixture("b.pcap", tc.srcB, 2, 100, 0, boot(tc.lineB))}}, MergeOptions{Tool: "t"})
		if err != nil {
			t.Fatal(err)
		}
		probs := strings.Join(r.Capture.Problems, "\n")
		for _, w := range tc.want {
			if !strings.Contains(probs, w) {
				t.Errorf("%s: capture problems lack %q:\n%s", tc.name, w, probs)
			}
		}
		if tc.want == nil && strings.Contains(probs, "conversations, packets and bytes add up") {
			t.Errorf("%s: a note on conversations of disjoint reports:\n%s", tc.name, probs)
		}
	}
}
