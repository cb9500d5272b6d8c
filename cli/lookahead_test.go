package cli

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestLookAheadChangesNothing runs `rocedump report` and `rocedump flows`
// on every generated and real capture, with one worker and with two,
// reading in batches and looking ahead at every frame, and reading frame
// by frame, and requires byte-identical output: the prefetch hints must
// not change a result.
func TestLookAheadChangesNothing(t *testing.T) {
	topo := topologyFile("report_pod.yaml")
	var inputs []string
	for _, dir := range []string{"gen", "real"} {
		inputs = append(inputs, captures(t, dir, "*.pcap*")...)
	}
	commands := [][]string{
		{"report", "--format", "json", "--topology", topo, "--fail-on", "never"},
		{"flows", "--format", "json"},
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			for _, cmd := range commands {
				for _, workers := range []int{1, 2} {
					args := append(append([]string{}, cmd...), fmt.Sprintf("--workers=%d", workers), in)
					lookAhead = lookAheadNever
					wantOut, wantErr, wantCode := runCLI(t, args...)
					lookAhead = lookAheadAlways
					out, errOut, code := runCLI(t, args...)
					lookAhead = lookAheadAuto
					if code != wantCode || errOut != wantErr {
						t.Errorf("%s, %d workers, looking ahead: exit %d, stderr %q; frame by frame: exit %d, stderr %q", cmd[0], workers, code, errOut, wantCode, wantErr)
					}
					if out != wantOut {
						t.Errorf("%s, %d workers, looking ahead differs from frame by frame: %s", cmd[0], workers, firstDiff(wantOut, out))
					}
				}
			}
		})
	}
}
