//go:build unix

package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// TestInterruptRemovesTempOutput: a run told to end (Ctrl-C, kill, the
// terminal closing) while it writes -o removes the output's hidden
// temporary file before it ends, and ends as the signal ends a process.
// The run is this test binary again (signalHelperEnv), which starts an
// output as report, merge and extract do and waits for the signal.
func TestInterruptRemovesTempOutput(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestSignalHelper$")
			cmd.Env = append(os.Environ(), signalHelperEnv+"="+filepath.Join(dir, "report.html"))
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil || line != "writing\n" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("helper said %q, %v", line, err)
			}
			if names := dirNames(t, dir); len(names) != 1 || !strings.HasPrefix(names[0], ".report.html.") {
				t.Fatalf("while writing, the directory holds %q: want the temporary file only", names)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("the helper ended with %v: want it killed by %v", err, sig)
			}
			if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != sig {
				t.Fatalf("the helper ended with %v: want it killed by %v", err, sig)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Fatalf("after %v the directory holds %q: want nothing", sig, names)
			}
		})
	}
}

// signalHelperEnv names the -o file TestSignalHelper writes.
const signalHelperEnv = "ROCEDUMP_TEST_SIGNAL_HELPER"

// TestSignalHelper is TestInterruptRemovesTempOutput's run: it does
// nothing unless signalHelperEnv is set.
func TestSignalHelper(t *testing.T) {
	path := os.Getenv(signalHelperEnv)
	if path == "" {
		t.Skip("run by TestInterruptRemovesTempOutput")
	}
	defer removeTempsOnSignal()()
	o, err := createOutput(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer o.discard()
	fmt.Fprintf(o, "<html>")
	fmt.Println("writing")
	time.Sleep(20 * time.Second)
	t.Fatal("not ended by the signal")
}
