package render

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/reports"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// writers are the renderers under test, by golden-file suffix.
var writers = []struct {
	ext   string
	write func(io.Writer, *reports.Report) error
}{
	{"txt", WriteText},
	{"md", WriteMarkdown},
	{"json", WriteJSON},
	{"html", WriteHTML},
}

// TestGolden renders every fixture in every format and compares the bytes
// with testdata/NAME.EXT.golden (go test ./reports/render -update rewrites).
func TestGolden(t *testing.T) {
	for _, fx := range fixtures() {
		for _, wr := range writers {
			t.Run(fx.name+"."+wr.ext, func(t *testing.T) {
				var b bytes.Buffer
				if err := wr.write(&b, fx.r); err != nil {
					t.Fatal(err)
				}
				checkGolden(t, fx.name+"."+wr.ext, b.String())
			})
		}
	}
}

// TestDeterministic renders each report twice; map order must not leak.
func TestDeterministic(t *testing.T) {
	for _, fx := range fixtures() {
		for _, wr := range writers {
			var a, b bytes.Buffer
			if err := wr.write(&a, fx.r); err != nil {
				t.Fatal(err)
			}
			for range 5 {
				b.Reset()
				if err := wr.write(&b, fx.r); err != nil {
					t.Fatal(err)
				}
				if a.String() != b.String() {
					t.Fatalf("%s.%s: two renderings differ\n%s", fx.name, wr.ext, firstDiff(a.String(), b.String()))
				}
			}
		}
	}
}

// checkGolden compares got with testdata/NAME.golden, rewriting it with -update.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports/render -update to create it)", err)
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
