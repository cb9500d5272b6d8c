package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestWorkersGiveOneWorkersOutput runs `rocedump report` and `rocedump
// flows` on every generated and real capture (and on all the generated
// ones at once, merged in time order) with 1, 2 and 3 workers and
// requires byte-identical output: a sharded pass must not change a
// report.
func TestWorkersGiveOneWorkersOutput(t *testing.T) {
	topo := topologyFile("report_pod.yaml")
	all := captures(t, "gen", "*.pcap*")
	var plain []string // gzip-compressed input is read by one worker
	for _, f := range all {
		if !strings.HasSuffix(f, ".gz") {
			plain = append(plain, f)
		}
	}
	inputs := [][]string{all, plain}
	for _, dir := range []string{"gen", "real"} {
		for _, f := range captures(t, dir, "*.pcap*") {
			inputs = append(inputs, []string{f})
		}
	}
	commands := [][]string{
		{"report", "--format", "json", "--topology", topo, "--fail-on", "never"},
		{"report", "--format", "text", "--topology", topo, "--fail-on", "never"},
		{"flows", "--format", "json"},
	}
	for _, in := range inputs {
		name := filepath.Base(in[0])
		if len(in) > 1 {
			name = fmt.Sprintf("%d-generated-merged", len(in))
		}
		t.Run(name, func(t *testing.T) {
			for _, cmd := range commands {
				run := func(workers int) (string, string, int) {
					args := append(append([]string{}, cmd...), fmt.Sprintf("--workers=%d", workers))
					return runCLI(t, append(args, in...)...)
				}
				wantOut, wantErr, wantCode := run(1)
				for _, n := range []int{2, 3} {
					out, errOut, code := run(n)
					if code != wantCode || errOut != wantErr {
						t.Errorf("%s with %d workers: exit %d, stderr %q; with 1: exit %d, stderr %q", cmd[0], n, code, errOut, wantCode, wantErr)
					}
					if out != wantOut {
						t.Errorf("%s %s with %d workers differs from 1 worker: %s", cmd[0], cmd[2], n, firstDiff(wantOut, out))
					}
				}
			}
		})
	}
}

// TestWorkersFlag: a negative --workers is a usage error (exit 2).
func TestWorkersFlag(t *testing.T) {
	capture := captures(t, "gen", "clean_allreduce.pcap")[0]
	for _, cmd := range []string{"report", "flows"} {
		_, errOut, code := runCLI(t, cmd, "--workers=-1", capture)
		if code != 2 || !strings.Contains(errOut, "--workers") {
			t.Errorf("%s --workers=-1: exit %d, stderr %q; want 2 and a word on --workers", cmd, code, errOut)
		}
	}
}
