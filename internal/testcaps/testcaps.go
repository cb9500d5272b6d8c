// Package testcaps lists the captures that tests run over: the generated
// ones (testdata/pcaps/gen, each with its truth file) and the real ones
// (testdata/pcaps/real, see its MANIFEST.md).
package testcaps

import (
	"path/filepath"
	"testing"
)

// All returns the paths of every generated and real capture under pcaps,
// the testdata/pcaps directory as seen from the test's package directory
// ("../testdata/pcaps" from a top-level package). It fails the test when
// it finds fewer than 20: a wrong path would otherwise test nothing.
func All(t testing.TB, pcaps string) []string {
	t.Helper()
	var paths []string
	for _, dir := range []string{"gen", "real"} {
		m, err := filepath.Glob(filepath.Join(pcaps, dir, "*.pcap*"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) < 20 {
		t.Fatalf("found only %d captures under %s", len(paths), pcaps)
	}
	return paths
}
