package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyCapture copies testdata/pcaps/gen/NAME to dir and returns its path.
func copyCapture(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(genCapture(name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirNames lists the names in dir, hidden ones included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestOutputIsInput: -o naming one of the inputs, by its name, through a
// symlink, or as a capture of an input directory, is refused (exit 2)
// before anything is written, and the input is left as it was. extract
// used to truncate it between its two passes; report replaced the
// capture with the report.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	in := copyCapture(t, dir, "congestion.pcap")
	link := filepath.Join(dir, "alias.pcap")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	rdir := t.TempDir()
	rin := copyCapture(t, rdir, "retransmissions.pcap")
	jsonA, jsonB := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, p := range []string{jsonA, jsonB} {
		if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", p, in); code != ExitOK {
			t.Fatalf("report: exit %d: %s", code, stderr)
		}
	}
	tests := []struct {
		name  string
		args  []string
		input string
	}{
		{"extract", []string{"extract", "-o", in, "--flow", "1", in}, in},
		{"extract through a symlink", []string{"extract", "-o", link, "--flow", "1", in}, in},
		{"extract into its directory", []string{"extract", "-o", rin, "--flow", "1", rdir}, rin},
		{"report", []string{"report", "-o", in, in}, in},
		{"report, input named by a symlink", []string{"report", "-o", in, link}, in},
		{"merge", []string{"merge", "-o", jsonA, jsonA, jsonB}, jsonA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, err := os.ReadFile(tt.input)
			if err != nil {
				t.Fatal(err)
			}
			_, stderr, code := runCLI(t, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, "is one of the inputs") {
				t.Errorf("want exit 2 and %q, got %d: %s", "is one of the inputs", code, stderr)
			}
			if after, _ := os.ReadFile(tt.input); !bytes.Equal(after, before) {
				t.Errorf("%s changed: %d bytes before, %d after", tt.input, len(before), len(after))
			}
		})
	}
}

// TestOutputInInputDirectory: a new output inside an input directory is
// not read as input (extract's second pass used to find it there, empty),
// and no temporary file is left next to it.
func TestOutputInInputDirectory(t *testing.T) {
	dir := t.TempDir()
	copyCapture(t, dir, "congestion.pcap")
	want := filepath.Join(t.TempDir(), "want.pcap")
	if _, stderr, code := runCLI(t, "extract", "-o", want, "--flow", "1", dir); code != ExitOK {
		t.Fatalf("extract elsewhere: exit %d: %s", code, stderr)
	}
	out := filepath.Join(dir, "out.pcap")
	if _, stderr, code := runCLI(t, "extract", "-o", out, "--flow", "1", dir); code != ExitOK {
		t.Fatalf("extract into the input directory: exit %d: %s", code, stderr)
	}
	wantB, _ := os.ReadFile(want)
	gotB, _ := os.ReadFile(out)
	if len(wantB) == 0 || !bytes.Equal(gotB, wantB) {
		t.Errorf("extract into the input directory wrote %d bytes, elsewhere %d", len(gotB), len(wantB))
	}
	if names := dirNames(t, dir); strings.Join(names, " ") != "congestion.pcap out.pcap" {
		t.Errorf("directory holds %v, want congestion.pcap and out.pcap", names)
	}
	if _, stderr, code := runCLI(t, "flows", dir); code != ExitOK {
		t.Errorf("flows on the directory afterwards: exit %d: %s", code, stderr)
	}
}

// TestOutputKeptOnFailure: a run that fails leaves neither an empty nor a
// partial output: a file that was there keeps its bytes, a new one is not
// created, and no temporary file is left.
func TestOutputKeptOnFailure(t *testing.T) {
	// Flows 1 and 2 of this capture are on interfaces of different link
	// types, which one pcap file cannot hold: extract fails while writing.
	mixed := genCapture("formats_pcapng_2if.pcapng")
	erf := writeERF(t)
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"extract, mixed link types", []string{"extract", "--flow", "1", "--flow", "2", mixed}},
		{"report, unreadable capture", []string{"report", erf}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			kept := filepath.Join(dir, "kept.out")
			os.WriteFile(kept, []byte("the ticket's file\n"), 0o644)
			for _, out := range []string{kept, filepath.Join(dir, "new.out")} {
				_, stderr, code := runCLI(t, append([]string{tt.args[0], "-o", out}, tt.args[1:]...)...)
				if code != ExitUsage {
					t.Fatalf("-o %s: want exit 2, got %d: %s", out, code, stderr)
				}
			}
			if b, _ := os.ReadFile(kept); string(b) != "the ticket's file\n" {
				t.Errorf("the existing output was changed to %q", b)
			}
			if names := dirNames(t, dir); strings.Join(names, " ") != "kept.out" {
				t.Errorf("directory holds %v, want kept.out only", names)
			}
		})
	}
}

// TestOutputReplacesFile: an existing output is replaced by the complete
// output and keeps its permissions; -o naming a directory is refused.
func TestOutputReplacesFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.txt")
	os.WriteFile(out, []byte("old report\n"), 0o600)
	if _, stderr, code := runCLI(t, "report", "--fail-on", "never", "-o", out, genCapture("congestion.pcap")); code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "congestion") || st.Mode().Perm() != 0o600 {
		t.Errorf("want the report with mode 0600, got mode %v:\n%s", st.Mode().Perm(), b)
	}
	if _, stderr, code := runCLI(t, "report", "-o", dir, genCapture("congestion.pcap")); code != ExitUsage || !strings.Contains(stderr, "is a directory") {
		t.Errorf("-o DIR: want exit 2 and %q, got %d: %s", "is a directory", code, stderr)
	}
}

// capturePipe returns the read end of a pipe that carries a generated
// capture, closed at the end of the test.
func capturePipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	src, err := os.ReadFile(genCapture("congestion.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(src); w.Close() }()
	return r
}

// TestExtractStandardInput: extract reads its input twice, which standard
// input cannot give: it is refused with a word on why, and no output is
// left (it used to fail on "stdin: empty file" and leave an empty one).
func TestExtractStandardInput(t *testing.T) {
	r := capturePipe(t)
	defer func(in *os.File) { os.Stdin = in }(os.Stdin)
	os.Stdin = r
	dir := t.TempDir()
	_, stderr, code := runCLI(t, "extract", "-o", filepath.Join(dir, "x.pcap"), "--flow", "1", "-")
	if code != ExitUsage || !strings.Contains(stderr, "extract reads its input twice: give a file, not standard input") {
		t.Errorf("want exit 2 and a word on reading twice, got %d: %s", code, stderr)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("extract left %v", names)
	}
}

// TestOutputCheckedFirst: an -o that cannot be written (a directory that
// does not exist, a directory, a path under a file) is a usage error before the work that would
// fill it: report read its whole input, and live captured for its whole
// --duration, before finding it out, and lost the report.
func TestOutputCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	// Not a capture: reading it first would be an error of its own.
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("rail 3 mirror, 256-byte snaps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Under a regular file, the error of the file system said "stat
	// DIR/notes.txt/r.txt: not a directory", not that -o was meant.
	for _, out := range []string{filepath.Join(dir, "no", "such", "dir", "r.txt"), dir, filepath.Join(notes, "r.txt")} {
		_, errOut, code := runCLI(t, "report", "-o", out, notes)
		if code != ExitUsage || !strings.Contains(errOut, "-o "+out) {
			t.Errorf("report -o %s: exit %d, stderr %q; want exit 2 and a word on -o before reading", out, code, errOut)
		}
		// "nosuch0" is not opened: the -o error comes first.
		_, errOut, code = runCLI(t, "live", "-i", "nosuch0", "--duration", "1s", "-o", out)
		if code != ExitUsage || !strings.Contains(errOut, "-o "+out) {
			t.Errorf("live -o %s: exit %d, stderr %q; want exit 2 and a word on -o before capturing", out, code, errOut)
		}
	}
}

// TestOutputIsTopology: -o naming the --topology file is refused (exit 2)
// before anything is read, by report, merge and live: the report replaced
// the topology.
func TestOutputIsTopology(t *testing.T) {
	dir := t.TempDir()
	topo := filepath.Join(dir, "pod.yaml")
	src, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "topology", "dgx-pod.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(topo, src, 0o644); err != nil {
		t.Fatal(err)
	}
	report, _, _ := runCLI(t, "report", "--format", "json", "--fail-on", "never", genCapture("congestion.pcap"))
	rep := filepath.Join(dir, "rail0.json")
	if err := os.WriteFile(rep, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", "--topology", topo, "-o", topo, genCapture("congestion.pcap")},
		{"merge", "--topology", topo, "-o", topo, rep},
		{"live", "-i", "nosuch0", "--topology", topo, "-o", topo},
	} {
		_, stderr, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "is one of the inputs") {
			t.Errorf("rocedump %s: exit %d, stderr %q; want exit 2, -o is an input", strings.Join(args, " "), code, stderr)
		}
	}
	if b, _ := os.ReadFile(topo); !bytes.Equal(b, src) {
		t.Errorf("the topology file was changed")
	}
}

// TestCommitAfterSignal: once a signal has removed the temporary files
// (removeTempsOnSignal: a second Ctrl-C of live while the report is
// written), committing the output waits for the signal to end the process.
// It used to fail first, "rename .FILE.*.tmp FILE: no such file or
// directory", and the run ended with exit 2 and that message instead of
// as the signal ends it.
func TestCommitAfterSignal(t *testing.T) {
	waited := false
	defer func(w func()) {
		waitForSignalEnd = w
		pendingTemps.mu.Lock()
		pendingTemps.end = false
		pendingTemps.mu.Unlock()
	}(waitForSignalEnd)
	waitForSignalEnd = func() { waited = true }
	path := filepath.Join(t.TempDir(), "report.html")
	o, err := createOutput(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(o, "<html>")
	pendingTemps.removeAll()
	o.commit()
	if !waited {
		t.Error("commit after the signal removed its temporary file did not wait for the signal to end the process")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want no file", path, err)
	}
}
