package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
		{"missing capture", []string{"report", filepath.Join(t.TempDir(), "x.pcap")}, ExitUsage, "no such file"},
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
