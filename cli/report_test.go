package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func topologyFile(name string) string {
	return filepath.Join(repoRoot, "testdata", "topology", name)
}

// TestReportGolden pins the report in each format on the README's demo
// capture and on the loss scenario (go test ./cli -update rewrites them).
func TestReportGolden(t *testing.T) {
	pod := topologyFile("report_pod.yaml")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"incident_text", []string{"report", "--topology", pod, genCapture("incident_demo.pcap")}, ExitOK},
		{"incident_markdown", []string{"report", "--format", "markdown", "--topology", pod, genCapture("incident_demo.pcap")}, ExitOK},
		{"retransmissions_json", []string{"report", "--format", "json", genCapture("retransmissions.pcap")}, ExitFindings},
		{"storage_text", []string{"report", "--topology", pod, genCapture("report_storage.pcap")}, ExitFindings},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Fatalf("want exit %d, got %d: %s", tt.code, code, stderr)
			}
			clean := func(s string) string {
				s = strings.ReplaceAll(s, filepath.Join(repoRoot, "testdata")+string(filepath.Separator), "testdata/")
				return strings.ReplaceAll(s, filepath.Join(repoRoot, "testdata"), "testdata")
			}
			args := clean(strings.Join(tt.args, " "))
			checkGolden(t, "report/"+tt.name, fmt.Sprintf("$ rocedump %s\n%s--- stderr\n%s", args, clean(out), clean(stderr)))
		})
	}
}

// TestReportExitCodes: 0 below --fail-on, 1 at or above it, 2 for usage
// and input errors.
func TestReportExitCodes(t *testing.T) {
	pod := topologyFile("report_pod.yaml")
	demo := genCapture("incident_demo.pcap")   // warnings, no critical
	loss := genCapture("retransmissions.pcap") // critical (fatal NAKs)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("nodes:\n  - name: a\n    interfaces:\n      - {name: x, ip: 10.0.0.300, role: compute, rail: 0}\n"), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"warnings below default critical", []string{"report", "--topology", pod, demo}, ExitOK, ""},
		{"fail on warning", []string{"report", "--fail-on", "warning", "--topology", pod, demo}, ExitFindings, "findings at or above warning"},
		{"critical", []string{"report", loss}, ExitFindings, "at or above critical"},
		{"never", []string{"report", "--fail-on", "never", loss}, ExitOK, ""},
		{"bad fail-on", []string{"report", "--fail-on", "info", loss}, ExitUsage, "--fail-on"},
		{"bad format", []string{"report", "--format", "pdf", loss}, ExitUsage, "--format"},
		{"bad topology", []string{"report", "--topology", bad, loss}, ExitUsage, "bad.yaml:4"},
		{"missing topology", []string{"report", "--topology", filepath.Join(t.TempDir(), "nope.yaml"), loss}, ExitUsage, "nope.yaml"},
		{"bad rail subnet", []string{"report", "--rail-subnet", "10.0.0.0/33=1", loss}, ExitUsage, "--rail-subnet"},
		// An unset shell variable (--rail-subnet "$RAILS") is no rail subnet:
		// refused, not a report run without the topology asked for.
		{"empty rail subnet", []string{"report", "--rail-subnet", "", loss}, ExitUsage, `--rail-subnet: rail subnet "": want CIDR=RAIL`},
		{"empty rail subnet in a list", []string{"report", "--rail-subnet", "10.0.0.0/24=0,", loss}, ExitUsage, `rail subnet "": want CIDR=RAIL`},
		{"quoted rail subnet", []string{"report", "--rail-subnet", `"10.0.0.0/24=0`, loss}, ExitUsage, `rail subnet "\"10.0.0.0/24=0": cidr`},
		{"rail subnets comma-separated", []string{"report", "--fail-on", "never", "--rail-subnet", "10.0.0.0/24=0,10.0.1.0/24=1", loss}, ExitOK, ""},
		{"merge: empty rail subnet", []string{"merge", "--rail-subnet", "", loss}, ExitUsage, `rail subnet "": want CIDR=RAIL`},
		{"missing capture", []string{"report", filepath.Join(t.TempDir(), "x.pcap")}, ExitUsage, "no such file"},
		{"negative ECN window", []string{"report", "--ecn-window=-1ms", loss}, ExitUsage, "--ecn-window -1ms: want a duration above 0"},
		{"zero ECN window", []string{"report", "--ecn-window", "0", loss}, ExitUsage, "--ecn-window 0s: want a duration above 0"},
		{"DSCP past 63", []string{"report", "--data-dscp", "64", loss}, ExitUsage, "--data-dscp 64: want a DSCP, 0 to 63"},
		{"CNP DSCP past 63", []string{"report", "--cnp-dscp", "255", loss}, ExitUsage, "--cnp-dscp 255"},
		{"PCP past 7", []string{"report", "--data-pcp", "8", loss}, ExitUsage, "--data-pcp 8: want an 802.1Q priority, 0 to 7"},
		{"CNP PCP past 7", []string{"report", "--cnp-pcp", "255", loss}, ExitUsage, "--cnp-pcp 255: want an 802.1Q priority, 0 to 7"},
		{"negative PCP", []string{"report", "--data-pcp", "-1", loss}, ExitUsage, `--data-pcp "-1"`},
		{"negative workers", []string{"report", "--workers", "-2", loss}, ExitUsage, "--workers -2: want 0 (one per CPU) or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("want exit %d, got %d: %s", tt.code, code, stderr)
			}
			if !strings.Contains(stderr, tt.msg) {
				t.Errorf("stderr lacks %q: %s", tt.msg, stderr)
			}
		})
	}
}

// TestReportFiles: -o writes the report to a file; HTML is self-contained
// and JSON carries the schema's top-level fields.
func TestReportFiles(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "r.html")
	if _, stderr, code := runCLI(t, "report", "--format", "html", "-o", html, "--fail-on", "never", genCapture("report_ecn.pcap")); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<!DOCTYPE html>", "<svg", "pfc"} {
		if !strings.Contains(strings.ToLower(page), strings.ToLower(want)) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	for _, bad := range []string{"<script src", "<link ", "@import", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML is not self-contained: contains %q", bad)
		}
	}
	js := filepath.Join(dir, "r.json")
	if _, stderr, code := runCLI(t, "report", "--format", "json", "-o", js, "--fail-on", "never", genCapture("report_ecn.pcap"), genCapture("report_cross_rail.pcap")); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]json.RawMessage
	b, _ = os.ReadFile(js)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"schema_version", "capture", "summary", "flows", "findings"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("report JSON lacks %q", k)
		}
	}
}

// TestReportDSCPZero: --data-dscp 0 and --cnp-dscp 0 expect DSCP 0 (best
// effort), not the defaults 26 and 48 that a zero Config field stands for.
func TestReportDSCPZero(t *testing.T) {
	out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "--data-dscp", "0", "--cnp-dscp", "0", genCapture("report_ecn.pcap"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Findings []struct {
			Kind     string `json:"kind"`
			Title    string `json:"title"`
			Evidence struct {
				Counts map[string]float64 `json:"counts"`
			} `json:"evidence"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		if f.Kind == "dscp_mismatch" {
			got = append(got, f.Title)
			if d, ok := f.Evidence.Counts["expected_dscp"]; !ok || d != 0 {
				t.Errorf("%q: expected_dscp %v, want 0", f.Title, d)
			}
		}
	}
	if len(got) != 2 {
		t.Errorf("dscp_mismatch findings %q: want the data and the CNPs off DSCP 0", got)
	}
}

// TestFlowsFlags: bad number flags of flows are usage errors.
func TestFlowsFlags(t *testing.T) {
	c := genCapture("clean_allreduce.pcap")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"flows", "--top", "-1", c}, "--top -1: want 0 (all) or more"},
		{[]string{"flows", "--workers", "-1", c}, "--workers -1"},
		{[]string{"read", "-c", "-3", c}, "--count -3"},
	} {
		_, stderr, code := runCLI(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("rocedump %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
		}
	}
}

// TestReportFindingsPlurals: the summary lines say one finding, one flow.
func TestReportFindingsPlurals(t *testing.T) {
	_, stderr, code := runCLI(t, "report", "--topology", topologyFile("report_pod.yaml"), genCapture("report_nvme_discovery.pcap"))
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"rocedump: 2 flows, 3 findings (1 critical, 1 warning, 1 info)\n", "rocedump: 1 finding at or above critical (--fail-on)\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
}

// TestReportMarkdownTakesAppendedTable follows `rocedump flows --help`:
// the flows table appended to a report's Markdown (`>> ticket.md`) must
// be a table of its own, not rows added to the report's last table (the
// report of a capture of 20 flows or fewer ends with its flows table).
func TestReportMarkdownTakesAppendedTable(t *testing.T) {
	cp := genCapture("incident_demo.pcap")
	report, stderr, code := runCLI(t, "report", "--format", "markdown", cp)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	flows, stderr, code := runCLI(t, "flows", "--format", "markdown", cp)
	if code != ExitOK {
		t.Fatalf("flows: exit %d: %s", code, stderr)
	}
	lines := strings.Split(report+flows, "\n")
	delim := regexp.MustCompile(`^\|[-:| ]+\|$`)
	tables := 0
	for i, l := range lines {
		if !delim.MatchString(l) {
			continue
		}
		tables++
		if i >= 2 && strings.HasPrefix(lines[i-2], "|") {
			t.Errorf("line %d: the table headed %.40q runs on from the table above:\n%s\n%s", i, lines[i-1], lines[i-2], lines[i-1])
		}
	}
	if tables < 2 {
		t.Fatalf("found %d tables", tables)
	}
}
