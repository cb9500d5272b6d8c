package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// pcpScenario has RoCE on four pcapng interfaces: "lossy" tags every frame
// with priority 0, "good" with priority 3 (the default RoCE priority),
// "plain" is untagged and "mirror" tags only the GRE tunnel (priority 1)
// around untagged frames. CNPs (cnp_pcp) are tagged with priority 5 where
// frames are tagged at all, and CM datagrams (QP1) run on "lossy".
//
// tshark -Y 'vlan.priority != 3 && infiniband && !gre && infiniband.bth.destqp != 1 && infiniband.bth.opcode != 129'
// lists frames 1 3 4 5 12 13 14 15 26 27 28 29 30 40 46 (15, all on
// priority 0, flows a and its ACKs); with 'vlan.priority != 6 && ... &&
// infiniband.bth.opcode == 129', frames 38 39 47, on priority 5.
const pcpScenario = `name: pcp
seed: 7
start: 2026-11-01T10:00:00Z
format: pcapng
cnp_pcp: 5
interfaces:
  - {name: lossy, encap: [{vlan: 100, pcp: 0}]}
  - {name: good, encap: [{vlan: 100, pcp: 3}]}
  - {name: plain}
  - {name: mirror, encap: [{vlan: 10, pcp: 1}, {gre_teb: {src: 192.0.2.1, dst: 192.0.2.9}}]}
flows:
  - {name: a, interface: lossy, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x101, dest_qpn: 0x201, mtu: 1024,
     ops: [{op: write, bytes: 4096, count: 3, gap_us: 2}], events: [{at_msg: 2, ce_mark: {packets: 2, cnp: true}}]}
  - {name: b, interface: good, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x102, dest_qpn: 0x202, mtu: 1024, start_us: 1,
     ops: [{op: write, bytes: 4096, count: 3, gap_us: 2}], events: [{at_msg: 3, ce_mark: {packets: 1, cnp: true}}]}
  - {name: c, interface: plain, src: 10.0.2.1, dst: 10.0.2.2, src_qpn: 0x103, dest_qpn: 0x203, mtu: 1024, start_us: 2,
     ops: [{op: write, bytes: 2048, count: 2}], events: [{at_msg: 1, ce_mark: {packets: 1, cnp: true}}]}
  - {name: d, interface: mirror, src: 10.0.3.1, dst: 10.0.3.2, src_qpn: 0x104, dest_qpn: 0x204, mtu: 1024, start_us: 3,
     ops: [{op: write, bytes: 2048, count: 2}], events: [{at_msg: 1, ce_mark: {packets: 1, cnp: true}}]}
cm:
  - {name: cm, interface: lossy, client: 10.0.0.1, server: 10.0.0.2, port: 4420, client_qpn: 0x101, server_qpn: 0x201, at_us: 0, disconnect: false}
`

// pcpFinding is what TestReportPCPMismatch reads of a pcp_mismatch finding.
type pcpFinding struct {
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Title    string `json:"title"`
	Detail   string `json:"detail"`
	Next     string `json:"next"`
	Flows    []int  `json:"flows"`
	Evidence struct {
		Counts      map[string]float64 `json:"counts"`
		First, Last struct {
			File  string `json:"file"`
			Frame int    `json:"frame"`
		}
		Details []string `json:"details"`
	} `json:"evidence"`
}

// pcpFindings runs report --format json with args and returns its
// pcp_mismatch findings.
func pcpFindings(t *testing.T, args ...string) []pcpFinding {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"report", "--format", "json", "--fail-on", "never"}, args...)...)
	if code != ExitOK {
		t.Fatalf("report %v: exit %d: %s", args, code, stderr)
	}
	var r struct {
		Findings []pcpFinding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var fs []pcpFinding
	for _, f := range r.Findings {
		if f.Kind == "pcp_mismatch" {
			fs = append(fs, f)
		}
	}
	return fs
}

// TestReportPCPMismatch: tagged RoCE data off priority 3 and tagged CNPs
// off priority 6 make one pcp_mismatch finding each, with the packets,
// values and first and last frames tshark shows (pcpScenario); untagged
// frames, a tunnel's own tag and QP1 are not judged.
func TestReportPCPMismatch(t *testing.T) {
	path := writeGenScenario(t, t.TempDir(), "pcp", pcpScenario)
	fs := pcpFindings(t, path)
	if len(fs) != 2 {
		t.Fatalf("%d pcp_mismatch findings, want 2 (data, CNPs): %+v", len(fs), fs)
	}
	type want struct {
		title       string
		counts      map[string]float64
		first, last int
		values      string
		next        string
	}
	for i, w := range []want{
		{"15 packets of RoCE data not on priority 3",
			map[string]float64{"wrong_packets": 15, "data_packets": 42, "expected_pcp": 3, "flows": 2}, 1, 46, "(15 on priority 0)", "mlnx_qos -i <if>"},
		{"3 CNPs not on priority 6",
			map[string]float64{"wrong_packets": 3, "cnp_packets": 5, "expected_pcp": 6, "flows": 2}, 38, 47, "(3 on priority 5)", "cnp_802p_prio"},
	} {
		f := fs[i]
		if f.Title != w.title || f.Severity != "warning" || !reflect.DeepEqual(f.Evidence.Counts, w.counts) {
			t.Errorf("finding %d: %s %q %v, want warning %q %v", i, f.Severity, f.Title, f.Evidence.Counts, w.title, w.counts)
		}
		if f.Evidence.First.Frame != w.first || f.Evidence.Last.Frame != w.last {
			t.Errorf("%s: frames %d..%d, want %d..%d", w.title, f.Evidence.First.Frame, f.Evidence.Last.Frame, w.first, w.last)
		}
		if !strings.Contains(f.Detail, w.values) || !strings.Contains(f.Next, w.next) {
			t.Errorf("%s: detail %q next %q; want %q and %q in them", w.title, f.Detail, f.Next, w.values, w.next)
		}
	}
	if d := fs[0].Evidence.Details; len(d) != 2 || !strings.Contains(d[0], "12 of 12 data packets tagged off priority 3 (12 on priority 0)") {
		t.Errorf("data details %q: want flow a's 12 packets first, then its ACKs", d)
	}

	// --data-pcp 0 --cnp-pcp 5: flow b's tagged data (on 3) is the wrong
	// one, every tagged CNP right.
	fs = pcpFindings(t, "--data-pcp", "0", "--cnp-pcp", "5", path)
	if len(fs) != 1 || fs[0].Title != "15 packets of RoCE data not on priority 0" || !strings.Contains(fs[0].Detail, "(15 on priority 3)") ||
		fs[0].Evidence.First.Frame != 6 {
		t.Errorf("--data-pcp 0 --cnp-pcp 5: %+v, want flow b's 15 data packets on priority 3 from frame 6", fs)
	}

	// The same traffic untagged: no finding.
	plain := strings.NewReplacer("encap: [{vlan: 100, pcp: 0}]", "encap: []", "encap: [{vlan: 100, pcp: 3}]", "encap: []").Replace(pcpScenario)
	if fs := pcpFindings(t, writeGenScenario(t, t.TempDir(), "plain", plain)); len(fs) != 0 {
		t.Errorf("untagged: %+v, want no pcp_mismatch", fs)
	}
}

// TestReportPCPWorkers: the wrong-priority packets of sharded Collectors
// merge into the report of one worker, byte for byte.
func TestReportPCPWorkers(t *testing.T) {
	path := writeGenScenario(t, t.TempDir(), "pcp", pcpScenario)
	for _, format := range []string{"json", "text"} {
		run := func(workers int) string {
			out, stderr, code := runCLI(t, "report", "--format", format, "--fail-on", "never", fmt.Sprintf("--workers=%d", workers), path)
			if code != ExitOK {
				t.Fatalf("--workers=%d: exit %d: %s", workers, code, stderr)
			}
			return out
		}
		want := run(1)
		if !strings.Contains(want, "pcp_mismatch") {
			t.Fatalf("no pcp_mismatch in the report:\n%s", want)
		}
		if got := run(4); got != want {
			t.Errorf("%s with 4 workers differs from 1: %s", format, firstDiff(want, got))
		}
	}
}

// TestMergePCPMismatch: the pcp_mismatch findings of two reports merge
// into those of one report over both captures: counts summed, totals
// from the flow records (also those of a report without the finding:
// untagged), the title made again, the earliest first and the latest last
// frame.
func TestMergePCPMismatch(t *testing.T) {
	dir := t.TempDir()
	a := writeGenScenario(t, dir, "a", pcpScenario)
	later := strings.NewReplacer("start: 2026-11-01T10:00:00Z", "start: 2026-11-01T10:00:01Z", "10.0.", "10.1.").Replace(pcpScenario)
	b := writeGenScenario(t, dir, "b", later)
	c := writeGenScenario(t, dir, "c", strings.NewReplacer("encap: [{vlan: 100, pcp: 0}]", "encap: []", "encap: [{vlan: 100, pcp: 3}]", "encap: []").Replace(later))
	jsons := map[string]string{}
	for _, p := range []string{a, b, c} {
		out := strings.TrimSuffix(p, filepath.Ext(p)) + ".json"
		if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", out, p); code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", p, code, stderr)
		}
		jsons[p] = out
	}
	for _, tc := range []struct {
		second string
		titles []string
	}{
		{b, []string{"30 packets of RoCE data not on priority 3", "6 CNPs not on priority 6"}},
		{c, []string{"15 packets of RoCE data not on priority 3", "3 CNPs not on priority 6"}},
	} {
		whole := pcpFindings(t, a, tc.second)
		out, stderr, code := runCLI(t, "merge", "--fail-on", "never", jsons[a], jsons[tc.second])
		if code != ExitOK {
			t.Fatalf("merge: exit %d: %s", code, stderr)
		}
		var r struct {
			Findings []pcpFinding `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		var merged []pcpFinding
		for _, f := range r.Findings {
			if f.Kind == "pcp_mismatch" {
				merged = append(merged, f)
			}
		}
		name := filepath.Base(tc.second)
		if len(merged) != 2 || len(whole) != 2 {
			t.Fatalf("a and %s: merged %d pcp_mismatch findings, one run %d: want 2 and 2", name, len(merged), len(whole))
		}
		for i, w := range whole {
			g := merged[i]
			if g.Title != w.Title || g.Title != tc.titles[i] || g.Severity != w.Severity || !reflect.DeepEqual(g.Evidence.Counts, w.Evidence.Counts) ||
				!reflect.DeepEqual(g.Flows, w.Flows) {
				t.Errorf("a and %s: merged %s %q %v flows %v; one run %s %q %v flows %v; want title %q", name, g.Severity, g.Title, g.Evidence.Counts, g.Flows,
					w.Severity, w.Title, w.Evidence.Counts, w.Flows, tc.titles[i])
			}
			if g.Evidence.First != w.Evidence.First || g.Evidence.Last != w.Evidence.Last {
				t.Errorf("a and %s, %s: merged frames %v..%v, one run %v..%v", name, w.Title, g.Evidence.First, g.Evidence.Last, w.Evidence.First, w.Evidence.Last)
			}
		}
	}
}
