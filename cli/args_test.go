package cli

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrorsTeach: a missing input, an unknown flag, a flag value
// that does not parse, a missing flag value and an argument to live are
// usage errors (exit 2) whose message says what the command takes, not
// cobra's or strconv's words.
func TestUsageErrorsTeach(t *testing.T) {
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	tests := []struct {
		name   string
		args   []string
		want   []string
		unwant string
	}{
		{"read without capture", []string{"read"},
			[]string{"no capture given: rocedump read [flags] CAPTURE...", "or - for standard input"}, "requires at least"},
		{"flows without capture", []string{"flows", "--top", "3"},
			[]string{"no capture given: rocedump flows [flags] CAPTURE...", "a directory of them"}, "requires at least"},
		{"report without capture", []string{"report"}, []string{"no capture given: rocedump report CAPTURE..."}, "requires at least"},
		{"extract without capture", []string{"extract", "--flow", "1"}, []string{"no capture given", "not standard input"}, "requires at least"},
		{"merge without report", []string{"merge"}, []string{"no report given: rocedump merge REPORT.json...", "rocedump report --format json"}, "requires at least"},
		{"capture taken by a flag", []string{"read", "--format", cm},
			[]string{"no capture given", `--format took "` + cm + `" as its value: is it the capture?`}, ""},
		{"live with an argument", []string{"live", "eth0"},
			[]string{`rocedump live takes no arguments, got "eth0": the interface goes in -i`}, "unknown command"},
		{"unknown flag", []string{"read", "--frobnicate", cm},
			[]string{"unknown flag: --frobnicate; rocedump read takes -c/--count, -f/--filter, --format, --opcode, --qpn, --time, -v/--verbose, --workers"}, ""},
		{"unknown shorthand", []string{"flows", "-x", cm},
			[]string{"unknown shorthand flag: 'x' in -x; rocedump flows takes --format, -o/--output, --sort, --top, --workers"}, ""},
		{"not a number", []string{"read", "--workers", "abc", cm}, []string{`--workers "abc": want a whole number`}, "strconv"},
		{"negative DSCP", []string{"report", "--data-dscp", "-1", cm}, []string{`--data-dscp "-1": want a DSCP, 0 to 63`}, "strconv"},
		{"DSCP above a byte", []string{"report", "--cnp-dscp", "300", cm}, []string{`--cnp-dscp "300": want a DSCP, 0 to 63`}, "strconv"},
		{"DSCP above 63", []string{"report", "--cnp-dscp", "64", cm}, []string{`--cnp-dscp 64: want a DSCP, 0 to 63`}, ""},
		{"live DSCP above a byte", []string{"live", "--data-dscp", "256"}, []string{`--data-dscp "256": want a DSCP, 0 to 63`}, "strconv"},
		{"negative PCP", []string{"report", "--data-pcp", "-1", cm}, []string{`--data-pcp "-1": want an 802.1Q priority, 0 to 7`}, "strconv"},
		{"PCP above a byte", []string{"report", "--cnp-pcp", "300", cm}, []string{`--cnp-pcp "300": want an 802.1Q priority, 0 to 7`}, "strconv"},
		{"duration without unit", []string{"report", "--ecn-window", "5", cm}, []string{`--ecn-window "5": want a duration with its unit`}, "missing unit"},
		{"missing value", []string{"report", cm, "-o"}, []string{"flag needs an argument: 'o' in -o: write the report to FILE instead"}, "`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (usage)", code, ExitUsage)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tt.unwant != "" && strings.Contains(stderr, tt.unwant) {
				t.Errorf("stderr has %q:\n%s", tt.unwant, stderr)
			}
		})
	}
}

// TestReadJSONRejectsTextFlags: -v and --time shape the text lines only;
// with --format json they were ignored without a word (a script asking
// for --time epoch got RFC 3339 strings). Now they are usage errors.
func TestReadJSONRejectsTextFlags(t *testing.T) {
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"read", "-v", "--format", "json", cm}, "-v is for --format text"},
		{[]string{"read", "--format", "json", "--time", "epoch", cm}, "--time epoch is for --format text"},
		{[]string{"read", "--format=json", "--time=time", cm}, "--time time is for --format text"},
	} {
		out, stderr, code := runCLI(t, tt.args...)
		if code != ExitUsage || out != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %d bytes out, stderr %q; want exit 2, nothing, %q", tt.args[1:], code, len(out), stderr, tt.want)
		}
	}
	// The text format takes both, and JSON alone still works.
	for _, args := range [][]string{{"read", "-v", "--time", "epoch", cm}, {"read", "--format", "json", cm}} {
		if _, stderr, code := runCLI(t, args...); code != ExitOK {
			t.Errorf("%v: exit %d: %s", args[1:], code, stderr)
		}
	}
}

// TestExtractToStandardOutput: -o - writes the capture to standard output,
// and the summary says so ("to -" read like a word left out).
func TestExtractToStandardOutput(t *testing.T) {
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	out, stderr, code := runCLI(t, "extract", "--flow", "1", "-o", "-", cm)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(out) < 24 || out[:4] != "\x4d\x3c\xb2\xa1" && out[:4] != "\xd4\xc3\xb2\xa1" {
		t.Errorf("stdout is not a pcap: % x", out[:min(len(out), 8)])
	}
	if !strings.Contains(stderr, "to standard output\n") {
		t.Errorf("stderr %q does not say the capture went to standard output", stderr)
	}
}
