package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/internal/golden"
)

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

// checkGolden compares got with testdata/NAME.golden (see internal/golden).
func checkGolden(t *testing.T, name, got string) { t.Helper(); golden.Check(t, name, got) }

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string { return golden.FirstDiff(want, got) }

// goldenCase is one CLI run pinned by testdata/DIR/NAME.golden. The last
// argument names a capture relative to testdata/pcaps, so the golden file
// reads the same on every machine.
type goldenCase struct {
	name string
	args []string
}

// runGoldenCases runs each case, which must succeed, and checks its stdout
// and stderr against the golden file (go test ./cli -update rewrites them).
func runGoldenCases(t *testing.T, dir string, tests []goldenCase) {
	t.Helper()
	pcaps := filepath.Join(repoRoot, "testdata", "pcaps")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string(nil), tt.args...)
			last := len(args) - 1
			args[last] = filepath.Join(pcaps, args[last])
			out, stderr, code := runCLI(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			// Paths differ between machines; the summary does not.
			stderr = strings.ReplaceAll(stderr, pcaps+string(filepath.Separator), "")
			checkGolden(t, dir+"/"+tt.name, fmt.Sprintf("$ rocedump %s\n%s--- stderr\n%s", strings.Join(tt.args, " "), out, stderr))
		})
	}
}
