package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadWorkersSameOutput: `rocedump read` prints the same lines, the
// same summary and warnings and exits alike whatever the number of
// goroutines formatting the packets, on every generated and real capture
// and on several at once (the lines then carry their file, and a cut-off
// file sits between whole ones), in every format, with filters and
// selections; and again with chunks of a few frames, so that they end
// everywhere in the captures.
func TestReadWorkersSameOutput(t *testing.T) {
	dir := t.TempDir()
	whole := captures(t, "gen", "congestion.pcap")[0]
	data, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := [][]string{{whole, cut, captures(t, "gen", "formats_pcapng_gz.pcapng.gz")[0], captures(t, "real", "linlinw5_rdma_cm.pcap")[0]}}
	for _, d := range []string{"gen", "real"} {
		for _, f := range captures(t, d, "*.pcap*") {
			inputs = append(inputs, []string{f})
		}
	}
	styles := [][]string{
		{"--format", "json"},
		{},
		{"-v"},
		{"--time", "date", "--opcode", "write,ack"},
		{"--time", "epoch", "--qpn", "0x11,0x12,0xd2"},
		{"--qpn", "0x11,0x12,0xd2", "--format", "json"},
		{"--filter", "udp port 4791 or ip proto 47"},
	}
	for _, small := range []bool{false, true} {
		if small {
			defer func(f, b int) { readChunkFrames, readChunkBytes = f, b }(readChunkFrames, readChunkBytes)
			readChunkFrames, readChunkBytes = 3, 200
		}
		for _, in := range inputs {
			name := filepath.Base(in[0])
			if len(in) > 1 {
				name = fmt.Sprintf("%d-files", len(in))
			}
			if small {
				name += "/small-chunks"
			}
			t.Run(name, func(t *testing.T) {
				for _, style := range styles {
					run := func(workers int) (string, string, int) {
						args := append(append([]string{"read"}, style...), fmt.Sprintf("--workers=%d", workers))
						return runCLI(t, append(args, in...)...)
					}
					wantOut, wantErr, wantCode := run(1)
					for _, n := range []int{2, 5} {
						out, errOut, code := run(n)
						if code != wantCode || errOut != wantErr {
							t.Errorf("read %s with %d workers: exit %d, stderr %q; with 1: exit %d, stderr %q", strings.Join(style, " "), n, code, errOut, wantCode, wantErr)
						}
						if out != wantOut {
							t.Errorf("read %s with %d workers differs from 1: %s", strings.Join(style, " "), n, firstDiff(wantOut, out))
						}
					}
				}
			})
		}
	}
}

// TestReadWorkersOneWithCount: --count and --time rel, which need the
// packets printed in turn, print as one goroutine does with any
// --workers.
func TestReadWorkersOneWithCount(t *testing.T) {
	path := captures(t, "gen", "congestion.pcap")[0]
	for _, tt := range []struct {
		opts ReadOptions
		want int
	}{
		{ReadOptions{Workers: 4, TimeFormat: "time"}, 4},
		{ReadOptions{Workers: 4, TimeFormat: "time", Count: 7}, 1},
		{ReadOptions{Workers: 4, TimeFormat: "rel"}, 1},
		{ReadOptions{Workers: 1000, TimeFormat: "date"}, maxWorkers},
	} {
		if n := readWorkers(&tt.opts); n != tt.want {
			t.Errorf("--workers %d, --count %d, --time %s: %d goroutines, want %d", tt.opts.Workers, tt.opts.Count, tt.opts.TimeFormat, n, tt.want)
		}
	}
	for _, style := range [][]string{{"-c", "7"}, {"--time", "rel"}, {"-c", "3", "--format", "json"}} {
		want, wantErr, _ := runCLI(t, append(append([]string{"read", "--workers=1"}, style...), path)...)
		got, gotErr, _ := runCLI(t, append(append([]string{"read", "--workers=4"}, style...), path)...)
		if got != want || gotErr != wantErr {
			t.Errorf("%v: differs with 4 workers: %s", style, firstDiff(want, got))
		}
	}
	if _, errOut, code := runCLI(t, "read", "--workers=-1", path); code != ExitUsage || !strings.Contains(errOut, "--workers") {
		t.Errorf("--workers=-1: exit %d, %q", code, errOut)
	}
}
