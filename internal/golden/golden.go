// Package golden compares test output with golden files under testdata/,
// as Go's go/printer tests do: `go test ./PKG -update` rewrites the files,
// and the diff is reviewed like code.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update is the -update flag of every test binary that imports golden.
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// Updating reports whether -update was given.
func Updating() bool { return *update }

// Check compares got with testdata/NAME.golden, or rewrites that file when
// -update is given.
func Check(t testing.TB, name, got string) {
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
		t.Fatalf("%v (run go test with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (rerun with -update and review the diff)\n%s", path, FirstDiff(string(want), got))
	}
}

// FirstDiff shows the first line where two texts differ.
func FirstDiff(want, got string) string {
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
