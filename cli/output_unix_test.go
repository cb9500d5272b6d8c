//go:build unix

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOutputToPipe: an output that exists and is not a regular file (a
// named pipe here, /dev/null in use) is written in place: renaming a
// temporary file over it would replace it.
func TestOutputToPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "report.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	if _, stderr, code := runCLI(t, "report", "--fail-on", "never", "-o", fifo, genCapture("congestion.pcap")); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a named pipe: %v", fifo, err)
	}
	if report := <-got; !strings.Contains(report, "congestion") {
		t.Errorf("the pipe's reader got %q, want the report", report)
	}
}

// TestExtractPipe: extract refuses a capture that is a pipe (the /dev/fd/N
// of a shell's <(zcat mirror.pcap.gz)), which it cannot read twice: the
// second pass found it empty once the first had read it.
func TestExtractPipe(t *testing.T) {
	r := capturePipe(t)
	in := fmt.Sprintf("/dev/fd/%d", r.Fd())
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "extract", "-o", filepath.Join(dir, "x.pcap"), "--flow", "1", in)
	if code != ExitUsage || !strings.Contains(stderr, in+" is not a regular file") {
		t.Errorf("want exit 2 and a word on the pipe, got %d: %s", code, stderr)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("extract left %v", names)
	}
}
