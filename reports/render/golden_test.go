package render

import (
	"bytes"
	"io"
	"testing"

	"github.com/rocedump/rocedump/internal/golden"

	"github.com/rocedump/rocedump/reports"
)

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

// checkGolden compares got with testdata/NAME.golden (see internal/golden).
func checkGolden(t *testing.T, name, got string) { t.Helper(); golden.Check(t, name, got) }

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got string) string { return golden.FirstDiff(want, got) }
