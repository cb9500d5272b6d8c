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
