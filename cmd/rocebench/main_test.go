package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rocedump/rocedump/bench"
)

// TestMain lets the test binary act as the benchmark's measuring helper,
// as the rocebench binary does (bench.HelperSelf runs this executable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == bench.ChildFlag {
		os.Exit(bench.RunChild(os.Args[2:], os.Stdout))
	}
	os.Exit(m.Run())
}

// TestBenchmarkEndToEnd runs what `make bench` runs, on captures small
// enough for the test suite: it builds rocedump, generates the captures,
// measures every command (and tshark, when it is installed, as the
// repository's setup script makes it), and writes the results into a
// Markdown file between its markers. The figures themselves are not
// checked (they are the machine's); that every measurement is there, and
// the rest of the file kept, is.
func TestBenchmarkEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocedump and runs it ~30 times")
	}
	dir := t.TempDir()
	md := filepath.Join(dir, "BENCHMARKS.md")
	before, after := "# Benchmarks\n\nkept above\n\n", "\n## Kept below\n"
	old := before + bench.BeginMarker + "\nstale results\n" + bench.EndMarker + after
	if err := os.WriteFile(md, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..") // the repository root, where rocebench builds ./cmd/rocedump
	var stdout, stderr bytes.Buffer
	args := []string{"-packets", "30000", "-small-packets", "6000", "-tshark-packets", "3000", "-flows-qps", "1",
		"-dir", filepath.Join(dir, "captures"), "-o", md}
	if err := os.Mkdir(filepath.Join(dir, "captures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("rocebench %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"## Results",
		"Reproduce with `go run ./cmd/rocebench " + strings.Join(args, " ") + "`",
		"### Throughput on one core", "### Allocations", "### Memory", "### Against the targets of issue 6",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the results lack %q", want)
		}
	}
	// Every command on both captures, with a rate.
	for _, c := range []string{"mirror.pcap", "erspan.pcap"} {
		for _, cmd := range bench.Commands() {
			re := regexp.MustCompile(`\| ` + regexp.QuoteMeta(c) + ` \| ` + "`" + regexp.QuoteMeta(cmd.Name) + "`" + ` \| 30,000 \| [0-9.]+ s \| [0-9.]+ s \| [0-9]+\.[0-9]{2} \| [0-9.]+ MB \|`)
			if !re.MatchString(out) {
				t.Errorf("no throughput row for %s on %s", cmd.Name, c)
			}
		}
	}
	if runtime.NumCPU() >= 2 {
		if !regexp.MustCompile(`ran [0-9.]+× as fast as on one core: the median wall-time ratio of [0-9]+ pairs`).MatchString(out) {
			t.Error("no two-core figure")
		}
		if !regexp.MustCompile(`\| ≥ 1\.8× on two cores \| [0-9.]+× \(median of [0-9]+ pairs\) \|`).MatchString(out) {
			t.Error("the targets table has no two-core row")
		}
	} else if !strings.Contains(out, "| ≥ 1.8× on two cores | not measured: 1 logical CPU |") {
		t.Error("one CPU, and the targets table does not say the two-core target was not measured")
	}
	if !regexp.MustCompile("\\| `rocedump report --format json` \\| [0-9.]+ \\| [0-9.]+ \\| -?[0-9]+\\.[0-9]{4} \\|").MatchString(out) {
		t.Error("no allocation row for report")
	}
	if _, err := exec.LookPath("tshark"); err == nil {
		if !strings.Contains(out, "### Against tshark") || !regexp.MustCompile(`\| ≥ 300× tshark \| [0-9]+×`).MatchString(out) {
			t.Error("tshark is installed but the results have no comparison with it")
		}
	}

	// The file: the results between the markers, the rest as it was.
	got, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(got)
	if !strings.HasPrefix(doc, before+bench.BeginMarker) || !strings.HasSuffix(doc, bench.EndMarker+after) {
		t.Errorf("the text around the markers changed:\n%.300s\n...\n%s", doc, doc[max(0, len(doc)-300):])
	}
	if strings.Contains(doc, "stale results") || !strings.Contains(doc, "## Results") {
		t.Error("the old results were not replaced")
	}
}

// TestCheckSpace: a directory without room for the captures is an error
// that says how much they need and what to do, before anything is
// written; one with room is not.
func TestCheckSpace(t *testing.T) {
	dir := t.TempDir()
	free, ok := freeBytes(dir)
	if !ok {
		t.Skip("no free-space figure on this system")
	}
	if err := checkSpace(dir, free/2); err != nil {
		t.Errorf("half the free space: %v", err)
	}
	err := checkSpace(dir, free+1<<40)
	if err == nil {
		t.Fatal("a TB more than the free space: no error")
	}
	for _, want := range []string{dir, "GB free", "-dir"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
}

// TestInterruptRemovesCaptures: a benchmark stopped with Ctrl-C (or
// SIGTERM) leaves no captures behind in the temporary directory and exits
// as a shell expects of a signal.
func TestInterruptRemovesCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("builds rocebench")
	}
	exe := filepath.Join(t.TempDir(), "rocebench")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		sig  os.Signal
		code int
	}{{os.Interrupt, 130}, {syscall.SIGTERM, 143}} {
		tmp := t.TempDir()
		cmd := exec.Command(exe, "-packets", "5000000", "-no-tshark")
		cmd.Dir = "../.." // where it builds ./cmd/rocedump
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait until its temporary directory holds something: it first
		// builds rocedump, which on a loaded machine takes minutes, so the
		// bound is only there to end a run that would never get there.
		deadline := time.Now().Add(5 * time.Minute)
		for {
			ents, _ := filepath.Glob(filepath.Join(tmp, "rocebench-*", "*"))
			if len(ents) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no captures in %s after 5 min: %s", tmp, stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		cmd.Process.Signal(tc.sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
			t.Errorf("%v: %v, want exit code %d\n%s", tc.sig, err, tc.code, stderr.String())
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("%v: %s still holds %v", tc.sig, tmp, left)
		}
	}
}
