package cli

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// repoRoot is where testdata/pcaps lives, relative to this package.
const repoRoot = ".."

// runCLI runs rocedump with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Execute(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// needTool returns the path of an external oracle such as tshark. Outside CI
// a missing tool skips the test; in CI (CI=true) it fails it, because
// scripts/setup installs every tool the tests use.
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not on PATH; scripts/setup installs it", name)
		}
		t.Skipf("%s not on PATH (run scripts/setup)", name)
	}
	return p
}

// captures lists the capture files under testdata/pcaps/DIR matching glob.
func captures(t *testing.T, dir, glob string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "pcaps", dir, glob))
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// checkGolden compares got with testdata/NAME.golden, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cli -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (rerun with -update and review the diff)\n%s", path, firstDiff(string(want), got))
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\nwant: " + w + "\ngot:  " + g
		}
	}
	return ""
}
