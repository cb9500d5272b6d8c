package cli

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputExtensionPicksFormat: without --format, -o FILE's extension
// picks the format of report and merge (.html, .htm, .md, .markdown,
// .json, .txt, in any case); --format wins; another extension keeps the
// command's default.
func TestOutputExtensionPicksFormat(t *testing.T) {
	dir := t.TempDir()
	capFile := genCapture("report_ecn.pcap")
	js := filepath.Join(dir, "in.json")
	if _, stderr, code := runCLI(t, "report", "--format", "json", "-o", js, "--fail-on", "never", capFile); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	isHTML := func(s string) bool { return strings.HasPrefix(s, "<!DOCTYPE html>") }
	isMD := func(s string) bool { return strings.HasPrefix(s, "## rocedump report") }
	isJSON := func(s string) bool { return strings.HasPrefix(s, "{") }
	isText := func(s string) bool { return strings.HasPrefix(s, "rocedump report") }
	tests := []struct {
		cmd    string
		format []string // --format flag, if any
		out    string
		want   func(string) bool
	}{
		{"report", nil, "a.html", isHTML},
		{"report", nil, "a.HTM", isHTML},
		{"report", nil, "ticket.md", isMD},
		{"report", nil, "ticket.markdown", isMD},
		{"report", nil, "r.json", isJSON},
		{"report", nil, "r.txt", isText},
		{"report", nil, "r.out", isText},
		{"report", []string{"--format", "json"}, "x.html", isJSON},
		{"report", []string{"--format", "text"}, "x.md", isText},
		{"merge", nil, "m.html", isHTML},
		{"merge", nil, "m.md", isMD},
		{"merge", nil, "m.txt", isText},
		{"merge", nil, "m.out", isJSON},
		{"merge", []string{"--format", "markdown"}, "m2.json", isMD},
	}
	for _, tc := range tests {
		t.Run(tc.cmd+" "+strings.Join(tc.format, " ")+" -o "+tc.out, func(t *testing.T) {
			out := filepath.Join(dir, tc.out)
			in := capFile
			if tc.cmd == "merge" {
				in = js
			}
			args := append(append([]string{tc.cmd}, tc.format...), "-o", out, "--fail-on", "never", in)
			if _, stderr, code := runCLI(t, args...); code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(string(b)) {
				t.Errorf("rocedump %s wrote the wrong format:\n%.200s", strings.Join(args, " "), b)
			}
		})
	}
}

// TestLiveOutputExtension: live's report takes its format from -o as
// report does, unless --format is given.
func TestLiveOutputExtension(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "x.html"}, "html"},
		{[]string{"-o", "x.MD"}, "markdown"},
		{[]string{"-o", "x.html", "--format", "json"}, "json"},
		{[]string{"-o", "x.pcap"}, "text"},
		{nil, "text"},
	} {
		var got *LiveOptions
		cmd := NewCmdLive(IOStreams{Out: io.Discard, ErrOut: io.Discard}, func(o *LiveOptions) error { got = o; return nil })
		cmd.SetArgs(append([]string{"-i", "eth1"}, tc.args...))
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		pickFormat(&got.Report)
		if got.Report.Format != tc.want {
			t.Errorf("live %s: format %q, want %q", strings.Join(tc.args, " "), got.Report.Format, tc.want)
		}
	}
}

// TestFlowsOutputFile: flows -o FILE writes to FILE exactly what it writes
// to standard output, in the format the extension names unless --format is
// given (.txt table, .md, .markdown, .csv, .json, .jsonl, .ndjson; another
// extension keeps the table); -o - is standard output, and an -o that is
// one of the captures is refused with the capture left as it was.
func TestFlowsOutputFile(t *testing.T) {
	dir := t.TempDir()
	capFile := genCapture("congestion.pcap")
	stdout := func(format string) string {
		out, stderr, code := runCLI(t, "flows", "--format", format, "--sort", "retx", "--top", "5", capFile)
		if code != ExitOK {
			t.Fatalf("flows --format %s: exit %d: %s", format, code, stderr)
		}
		return out
	}
	tests := []struct {
		format []string // --format flag, if any
		out    string
		want   string // the format whose standard output the file holds
	}{
		{nil, "f.txt", "table"},
		{nil, "f.out", "table"},
		{nil, "ticket.md", "markdown"},
		{nil, "ticket.MARKDOWN", "markdown"},
		{nil, "f.csv", "csv"},
		{nil, "f.json", "json"},
		{nil, "f.jsonl", "jsonl"},
		{nil, "f.ndjson", "jsonl"},
		{[]string{"--format", "json"}, "x.csv", "json"},
		{[]string{"--format", "table"}, "x.md", "table"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.format, " ")+" -o "+tc.out, func(t *testing.T) {
			out := filepath.Join(dir, tc.out)
			args := append(append([]string{"flows"}, tc.format...), "-o", out, "--sort", "retx", "--top", "5", capFile)
			got, stderr, code := runCLI(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if got != "" {
				t.Errorf("rocedump %s wrote %d bytes to standard output, want none", strings.Join(args, " "), len(got))
			}
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if want := stdout(tc.want); string(b) != want {
				t.Errorf("rocedump %s wrote:\n%.300s\nwant what --format %s writes:\n%.300s", strings.Join(args, " "), b, tc.want, want)
			}
		})
	}
	t.Run("-o -", func(t *testing.T) {
		got, stderr, code := runCLI(t, "flows", "-o", "-", "--sort", "retx", "--top", "5", capFile)
		if code != ExitOK || got != stdout("table") {
			t.Errorf("flows -o -: exit %d (%s), output:\n%.300s\nwant the table on standard output", code, stderr, got)
		}
	})
	t.Run("-o capture", func(t *testing.T) {
		in := filepath.Join(dir, "in.pcap")
		want, err := os.ReadFile(capFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(in, want, 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLI(t, "flows", "-o", in, in)
		if code != ExitUsage || !strings.Contains(stderr, "is one of the inputs") {
			t.Errorf("flows -o CAPTURE CAPTURE: exit %d, stderr %q; want %d and the output refused", code, stderr, ExitUsage)
		}
		if got, _ := os.ReadFile(in); string(got) != string(want) {
			t.Errorf("the capture changed: %d bytes, want %d", len(got), len(want))
		}
	})
}
