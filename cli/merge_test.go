package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/gen"
)

// railScenario is rail r of a two-rail fabric: two nodes talking over the
// rail, with something for most report modules to find. Rail 0 has CE
// marks answered by CNPs, a go-back-N, bad-ICRC frames and SSH between
// compute addresses; rail 1 has data on the wrong DSCP, CE marks nobody
// answers, a go-back-N and PFC pauses. Each rail's flows are its own, as
// a mirror per rail sees them; the go-back-N findings of both combine.
func railScenario(r int) string {
	a, b := fmt.Sprintf("10.0.%d.1", r), fmt.Sprintf("10.0.%d.2", r)
	s := fmt.Sprintf(`name: rail%d
seed: %d
start: 2026-11-01T10:00:00Z
snaplen: 128
flows:
  - {src: %s, dst: %s, src_qpn: 0x1%d0, dest_qpn: 0x2%d0, start_psn: 100, ops: [{op: write, bytes: 16384, count: 20, gap_us: 2}]%s}
  - {src: %s, dst: %s, src_qpn: 0x1%d1, dest_qpn: 0x2%d1, start_psn: 900, start_us: 1, ops: [{op: write, bytes: 8192, count: 10, gap_us: 3}, {op: read, bytes: 8192, count: 2}]%s}
`, r, r+1, a, b, r, r, map[int]string{
		0: ", events: [{at_msg: 3, ce_mark: {packets: 3, cnp: true}}, {at_msg: 7, fabric_drop: {psn_offset: 2}}]",
		1: ", events: [{at_msg: 2, dscp: 0}, {at_msg: 4, fabric_drop: {psn_offset: 1}}]",
	}[r], b, a, r, r, map[int]string{
		0: "",
		1: ", events: [{at_msg: 5, ce_mark: {packets: 2}}]",
	}[r])
	switch r {
	case 0:
		s += fmt.Sprintf("malformed:\n  - {kind: bad_icrc, count: 2, at_us: 4, interval_us: 5, src: %s, dst: %s, bytes: 64}\n", a, b)
		s += fmt.Sprintf("tcp:\n  - {client: %s, server: %s, port: 22, bytes: 3000, resp_bytes: 3000, at_us: 20}\n", a, b)
		// Other TCP on both rails: the merged title names the services
		// of both, as one run does.
		s += fmt.Sprintf("  - {client: %s, server: %s, port: 873, bytes: 5000, resp_bytes: 100, at_us: 25}\n", a, b)
	case 1:
		s += "pfc:\n  - {src_mac: \"02:00:00:00:0f:01\", priorities: [3], quanta: 65535, count: 3, at_us: 10, interval_us: 5}\n"
		s += fmt.Sprintf("tcp:\n  - {client: %s, server: %s, port: 443, bytes: 9000, resp_bytes: 100, at_us: 25}\n", a, b)
		s += fmt.Sprintf("  - {client: %s, server: %s, port: 873, bytes: 1000, resp_bytes: 100, at_us: 30}\n", b, a)
	}
	return s
}

// TestMergeMatchesOneRun: the JSON reports of two mirrors, one per rail,
// merged, give the findings of one report over both captures: same kinds,
// severities, counts (but for the one merge cannot know) and flows.
func TestMergeMatchesOneRun(t *testing.T) {
	dir := t.TempDir()
	var caps, jsons []string
	for r := 0; r < 2; r++ {
		s, err := gen.ParseScenario([]byte(railScenario(r)), fmt.Sprintf("rail%d.yaml", r))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("rail%d.pcap", r))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gen.Generate(f, s); err != nil {
			t.Fatal(err)
		}
		f.Close()
		caps = append(caps, path)
		out := filepath.Join(dir, fmt.Sprintf("rail%d.json", r))
		if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "--rail-subnet", "10.0.0.0/24=0", "--rail-subnet", "10.0.1.0/24=1", "-o", out, path); code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", path, code, stderr)
		}
		jsons = append(jsons, out)
	}
	rails := []string{"--rail-subnet", "10.0.0.0/24=0", "--rail-subnet", "10.0.1.0/24=1"}
	whole, stderr, code := runCLI(t, append(append([]string{"report", "--format", "json", "--fail-on", "never"}, rails...), caps...)...)
	if code != ExitOK {
		t.Fatalf("report over both: exit %d: %s", code, stderr)
	}
	merged, stderr, code := runCLI(t, append(append([]string{"merge", "--fail-on", "never"}, rails...), jsons...)...)
	if code != ExitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	want, got := decodeReport(t, whole), decodeReport(t, merged)

	// One go-back-N on each rail: combined, with the title of both.
	gbn := 0
	for _, f := range got.Findings {
		if f.Kind == "retransmission" && f.Evidence.Counts["gbn_episodes"] > 0 {
			gbn++
			if f.Evidence.Counts["gbn_episodes"] != 2 || !strings.Contains(f.Title, "in 2 episodes") {
				t.Errorf("go-back-N: %q %v, want both rails' episodes", f.Title, f.Evidence.Counts)
			}
		}
	}
	if gbn != 1 {
		t.Errorf("%d go-back-N findings, want one", gbn)
	}
	if !reflect.DeepEqual(got.Flows, want.Flows) {
		t.Errorf("flow records differ:\n got %s\nwant %s", got.Flows, want.Flows)
	}
	if !reflect.DeepEqual(got.Summary, want.Summary) {
		t.Errorf("summary: got %+v, want %+v", got.Summary, want.Summary)
	}
	for _, k := range []string{"packets", "roce_packets", "malformed", "truncated", "icrc_bad", "first", "last", "files"} {
		if !reflect.DeepEqual(got.Capture[k], want.Capture[k]) {
			t.Errorf("capture.%s: got %v, want %v", k, got.Capture[k], want.Capture[k])
		}
	}
	// Findings ranked alike, with the same kind, severity, counts, flows
	// and nodes. What merge cannot know (reports.Merge): per-report time
	// bins do not add up, so the CNP peak is the busiest report's; a PFC
	// pause runs at most to the end of its own capture, which ends before
	// the other rail's.
	inexact := map[string]bool{"congestion.peak_cnps_per_ms": true, "pfc.priority_3_paused_us": true}
	if len(got.Findings) != len(want.Findings) {
		t.Fatalf("got %d findings, want %d:\n got %s\nwant %s", len(got.Findings), len(want.Findings), kinds(got), kinds(want))
	}
	seen := map[string]bool{}
	for i, w := range want.Findings {
		g := got.Findings[i]
		seen[w.Kind] = true
		if g.Kind != w.Kind || g.Severity != w.Severity {
			t.Errorf("finding %d: got %s %s, want %s %s", i, g.Severity, g.Kind, w.Severity, w.Kind)
			continue
		}
		if g.Title != w.Title {
			t.Errorf("%s: title %q, want %q", w.Kind, g.Title, w.Title)
		}
		for k, v := range w.Evidence.Counts {
			if gv, ok := g.Evidence.Counts[k]; !inexact[w.Kind+"."+k] && (!ok || gv != v) {
				t.Errorf("%s %q: count %s = %v, want %v", w.Kind, w.Title, k, gv, v)
			}
		}
		if !reflect.DeepEqual(g.Flows, w.Flows) || !reflect.DeepEqual(g.Nodes, w.Nodes) {
			t.Errorf("%s %q: flows %v nodes %v, want %v %v", w.Kind, w.Title, g.Flows, g.Nodes, w.Flows, w.Nodes)
		}
		if !reflect.DeepEqual(g.Evidence.First, w.Evidence.First) || !reflect.DeepEqual(g.Evidence.Last, w.Evidence.Last) {
			t.Errorf("%s %q: first/last %v %v, want %v %v", w.Kind, w.Title, g.Evidence.First, g.Evidence.Last, w.Evidence.First, w.Evidence.Last)
		}
	}
	// The scenario must exercise what it is for.
	for _, k := range []string{"capture_health", "congestion", "ecn_not_acted", "dscp_mismatch", "pfc", "non_rdma_on_compute", "fan_out"} {
		if !seen[k] {
			t.Errorf("no %s finding in the one-run report: the test scenario no longer covers it (%s)", k, kinds(want))
		}
	}
}

// TestMergeTiesAsOneRun: frames of two mirrors at the same time are put
// in order as one run over both files does. Mirror b's capture begins
// first (a flow at 0 µs) but is given second; both have a flow that
// begins at 5 µs with data on the wrong DSCP at the same times. One run
// numbers b's flow first (a tie in time goes to the file that began
// first: capture.Merger) and cites a's first and b's last wrong packet
// (of frames at one time, the file given first comes first). The merge
// numbered a's first and cited a's frame as the last.
func TestMergeTiesAsOneRun(t *testing.T) {
	dir := t.TempDir()
	flow := func(n int, start string, extra string) string {
		return fmt.Sprintf("  - {src: 10.0.%d.1, dst: 10.0.%d.2, src_qpn: 0x10%d, dest_qpn: 0x20%d, start_psn: 100%s, ops: [{op: write, bytes: 4096, count: 4, gap_us: 2}]%s}\n",
			n, n, n, n, start, extra)
	}
	const wrong = ", events: [{at_msg: 2, dscp: 0}]"
	scenarios := map[string]string{
		"a": flow(0, ", start_us: 5", wrong),
		"b": flow(1, ", start_us: 5", wrong) + flow(2, "", ""),
	}
	var caps, jsons []string
	for i, name := range []string{"a", "b"} {
		path := writeGenScenario(t, dir, name, fmt.Sprintf("name: %s\nseed: %d\nstart: 2026-11-01T10:00:00Z\nflows:\n%s", name, i+1, scenarios[name]))
		caps = append(caps, path)
		out := filepath.Join(dir, name+".json")
		if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", out, path); code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", path, code, stderr)
		}
		jsons = append(jsons, out)
	}
	whole, stderr, code := runCLI(t, append([]string{"report", "--format", "json", "--fail-on", "never"}, caps...)...)
	if code != ExitOK {
		t.Fatalf("report over both: exit %d: %s", code, stderr)
	}
	merged, stderr, code := runCLI(t, append([]string{"merge", "--fail-on", "never"}, jsons...)...)
	if code != ExitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	want, got := decodeReport(t, whole), decodeReport(t, merged)
	if !reflect.DeepEqual(got.Flows, want.Flows) {
		t.Errorf("flow records differ:\n got %v\nwant %v", got.Flows, want.Flows)
	}
	dscp := 0
	for i, w := range want.Findings {
		if w.Kind != "dscp_mismatch" {
			continue
		}
		dscp++
		g := got.Findings[i]
		if g.Kind != w.Kind || !reflect.DeepEqual(g.Evidence.First, w.Evidence.First) || !reflect.DeepEqual(g.Evidence.Last, w.Evidence.Last) {
			t.Errorf("%s: first/last %v %v, want %s %v %v", g.Kind, g.Evidence.First, g.Evidence.Last, w.Kind, w.Evidence.First, w.Evidence.Last)
		}
		if w.Evidence.First["file"] == w.Evidence.Last["file"] || w.Evidence.First["time"] != w.Evidence.Last["time"] {
			t.Errorf("one run's dscp_mismatch cites %v and %v: want two files' frames at one time (the scenario no longer ties)", w.Evidence.First, w.Evidence.Last)
		}
	}
	if dscp != 1 {
		t.Errorf("%d dscp_mismatch findings in one run, want 1 (%s)", dscp, kinds(want))
	}
}

// TestMergeSharedFlows: a report merged with itself is two mirrors that saw
// the same flows; the merge keeps both copies and says it cannot add them.
func TestMergeSharedFlows(t *testing.T) {
	out, merged, stderr := mergedWithItself(t, "clean_allreduce.pcap")
	one, two := decodeReport(t, mustRead(t, out)), decodeReport(t, merged)
	if len(two.Flows) != 2*len(one.Flows) {
		t.Errorf("got %d flows, want both copies of %d", len(two.Flows), len(one.Flows))
	}
	probs := strings.Join(two.Problems(), "\n")
	for _, w := range []string{"merge: 18 flows are in more than one report", "is in " + out + " and " + out} {
		if !strings.Contains(probs, w) {
			t.Errorf("capture problems %q: want %q", probs, w)
		}
	}
	if !strings.Contains(stderr, "warning: merge:") {
		t.Errorf("stderr %q: want the merge warnings", stderr)
	}
}

// TestMergeBadInput: a file that is not a report is a usage error naming it.
func TestMergeBadInput(t *testing.T) {
	path := filepath.Join(repoRoot, "testdata", "pcaps", "gen", "clean_allreduce.truth.json")
	_, stderr, code := runCLI(t, "merge", path)
	if code != ExitUsage || !strings.Contains(stderr, "clean_allreduce.truth.json") {
		t.Errorf("exit %d, stderr %q: want exit %d naming the file", code, stderr, ExitUsage)
	}
	// Standard input twice: the second read found it empty ("-: not a
	// rocedump report: EOF"); it is said as the capture commands say it.
	rep, _, _ := runCLI(t, "report", "--format", "json", "--fail-on", "never", genCapture("congestion.pcap"))
	var out, errOut bytes.Buffer
	code = Execute([]string{"merge", "-", "-"}, strings.NewReader(rep), &out, &errOut)
	if code != ExitUsage || !strings.Contains(errOut.String(), `standard input ("-") is given twice`) {
		t.Errorf("merge - -: exit %d, stderr %q: want exit %d and a word on standard input", code, errOut.String(), ExitUsage)
	}
}

// jsonReport is the part of a report JSON the merge tests compare.
type jsonReport struct {
	Capture  map[string]any   `json:"capture"`
	Summary  map[string]any   `json:"summary"`
	Flows    []map[string]any `json:"flows"`
	Findings []struct {
		Kind     string   `json:"kind"`
		Severity string   `json:"severity"`
		Title    string   `json:"title"`
		Detail   string   `json:"detail"`
		Flows    []int    `json:"flows"`
		Nodes    []string `json:"nodes"`
		Evidence struct {
			Counts map[string]float64 `json:"counts"`
			First  map[string]any     `json:"first"`
			Last   map[string]any     `json:"last"`
		} `json:"evidence"`
	} `json:"findings"`
}

func (r *jsonReport) Problems() []string {
	var out []string
	ps, _ := r.Capture["problems"].([]any)
	for _, p := range ps {
		out = append(out, fmt.Sprint(p))
	}
	return out
}

func decodeReport(t *testing.T, s string) *jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not a report: %v", err)
	}
	return &r
}

func kinds(r *jsonReport) string {
	var ks []string
	for _, f := range r.Findings {
		ks = append(ks, f.Severity+" "+f.Kind)
	}
	return strings.Join(ks, ", ")
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMergeNotReportSaysWhat: what people give merge by mistake - the
// captures themselves, a gzip-compressed report, the text report, the
// output of flows, a directory of reports - is a usage error that says
// what the file is and what merge wants, not a JSON decoder's "invalid
// character 'Ô' looking for beginning of value".
func TestMergeNotReportSaysWhat(t *testing.T) {
	dir := t.TempDir()
	capFile := genCapture("congestion.pcap")
	rep, _, _ := runCLI(t, "report", "--format", "json", "--fail-on", "never", capFile)
	text, _, _ := runCLI(t, "report", "--fail-on", "never", capFile)
	flowsJSON, _, _ := runCLI(t, "flows", "--format", "json", capFile)
	flowsJSONL, _, _ := runCLI(t, "flows", "--format", "jsonl", capFile)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(rep))
	zw.Close()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		path, want string
	}{
		{capFile, "is a capture, not a JSON report"},
		{filepath.Join(repoRoot, "testdata", "pcaps", "gen", "mirror_erspan3_ipv6.pcapng"), "is a capture, not a JSON report"},
		{write("report.json.gz", gz.String()), "is gzip-compressed"},
		{write("report.txt", text), "not JSON"},
		{write("flows.json", flowsJSON), "a JSON array"},
		{write("flows.jsonl", flowsJSONL), "JSON lines of flow records"},
		// Reports concatenated: the second would be lost without a word.
		{write("both.json", rep+rep), "more data after the report"},
		{dir, "is a directory"},
	}
	for _, tt := range tests {
		_, stderr, code := runCLI(t, "merge", tt.path)
		if code != ExitUsage || !strings.Contains(stderr, tt.path+": ") || !strings.Contains(stderr, tt.want) ||
			strings.Count(stderr, tt.path) != 1 || !strings.Contains(stderr, "rocedump report --format json") {
			t.Errorf("merge %s: exit %d, stderr %q: want exit %d naming the file once, saying %q and what merge reads", tt.path, code, stderr, ExitUsage, tt.want)
		}
	}
}

// TestMergeEscapesNamesFromJSON: a report read from JSON may hold node
// names, file names and text with control and bidirectional-text
// characters that the topology loader refuses (an escape sequence that
// recolours the terminal, a right-to-left override that turns the rest of
// the line around). The text, Markdown and HTML of the merge and its
// warnings on standard error print them escaped; its JSON keeps them.
func TestMergeEscapesNamesFromJSON(t *testing.T) {
	const bad = "\x1b[31mEVIL\u202eRTL\u2066"
	out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", genCapture("report_ssh_bootstrap.pcap"))
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	capture := rep["capture"].(map[string]any)
	capture["files"] = []any{bad + ".pcap"}
	findings := rep["findings"].([]any)
	if len(findings) == 0 {
		t.Fatal("no findings")
	}
	for _, f := range findings {
		f := f.(map[string]any)
		f["nodes"] = append(f["nodes"].([]any), "node"+bad)
		f["title"] = f["title"].(string) + bad
		ev := f["evidence"].(map[string]any)
		details, _ := ev["details"].([]any)
		ev["details"] = append(details, "x: "+bad)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown", "html", "json"} {
		// The same report twice: its file is then named in a warning.
		out, stderr, code := runCLI(t, "merge", "--fail-on", "never", "--format", format, path, path)
		if code != ExitOK {
			t.Fatalf("merge --format %s: exit %d: %s", format, code, stderr)
		}
		if strings.ContainsAny(stderr, "\x1b\u202e\u2066") || !strings.Contains(stderr, `\x1b[31mEVIL\u202eRTL\u2066.pcap`) {
			t.Errorf("merge --format %s: stderr %q, want the file name escaped", format, stderr)
		}
		if format == "json" {
			if !strings.Contains(out, `\u001b[31mEVIL`+"\u202e") {
				t.Errorf("merge --format json lost the names as they were")
			}
			continue
		}
		if i := strings.IndexAny(out, "\x1b\u202e\u2066"); i >= 0 {
			t.Errorf("merge --format %s: raw control character at %q", format, out[max(0, i-40):min(len(out), i+20)])
		}
		if format == "markdown" { // which escapes the backslashes and brackets
			out = strings.NewReplacer(`\\`, `\`, `\[`, `[`).Replace(out)
		}
		if !strings.Contains(out, `node\x1b[31mEVIL\u202eRTL\u2066`) {
			t.Errorf("merge --format %s: no escaped node name", format)
		}
	}
}

// TestMergeSharedFlowsSaysFindingsCountTwice: two mirrors that saw the same
// flows (here one report given twice: retransmissions.pcap's go-back-N and
// timeouts) make findings that count those flows' packets once per report:
// the go-back-N title says twice the episodes one run finds. The note on
// the shared flows named them "not added up", which a reader takes for
// "counted once"; it must say which findings count them once per report.
func TestMergeSharedFlowsSaysFindingsCountTwice(t *testing.T) {
	_, merged, stderr := mergedWithItself(t, "retransmissions.pcap")
	var note string
	for _, p := range decodeReport(t, merged).Problems() {
		if strings.Contains(p, "in more than one report (") {
			note = p
		}
	}
	if note == "" {
		t.Fatalf("no note on the shared flows: %s", stderr)
	}
	if strings.Contains(note, "not added up") {
		t.Errorf("note %q: the findings do add the shared flows up, once per report", note)
	}
	for _, w := range []string{"the findings that cite them (", "retransmission", ") count them once per report"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q: want %q", note, w)
		}
	}
}

// mergedWithItself writes the JSON report of the generated capture name
// and merges it with itself: two mirrors that saw the same flows. It
// returns the report's path, the merged report and merge's standard error.
func mergedWithItself(t *testing.T, name string) (out, merged, stderr string) {
	t.Helper()
	out = filepath.Join(t.TempDir(), "r.json")
	if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", out, filepath.Join(repoRoot, "testdata", "pcaps", "gen", name)); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	merged, stderr, code := runCLI(t, "merge", "--fail-on", "never", out, out)
	if code != ExitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	return out, merged, stderr
}
