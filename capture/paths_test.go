package capture

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestExpandPaths(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{0})
	writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0})
	os.WriteFile(filepath.Join(dir, ".hidden"), nil, 0o644)
	got, skipped, err := ExpandPaths([]string{dir, a, "-"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap"), a, "-"}
	if !slices.Equal(got, want) {
		t.Fatalf("want %v, got %v", want, got)
	}
	if len(skipped) != 0 {
		t.Errorf("want nothing skipped, got %v", skipped)
	}
	if _, _, err := ExpandPaths([]string{t.TempDir()}); err == nil {
		t.Error("empty directory: want an error")
	}
	if _, _, err := ExpandPaths([]string{filepath.Join(dir, "nope")}); err == nil {
		t.Error("missing path: want an error")
	}
}

// TestExpandPathsSkipsNonCaptures: in a directory, only files whose magic
// bytes say capture (plain or gzip-compressed) are taken, symlinks count
// as what they point to, and what is left out is returned, in name order,
// with a word on what it is when that helps. Hidden files, subdirectories
// and symlinks to directories are passed over silently, as before.
func TestExpandPathsSkipsNonCaptures(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pcap := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0})
	raw, err := os.ReadFile(pcap)
	if err != nil {
		t.Fatal(err)
	}
	write("b.pcap.gz", gz(raw))
	write("c.pcapng", append([]byte{0x0a, 0x0d, 0x0d, 0x0a}, 0, 0, 0, 0))
	write("MANIFEST.md", []byte("# Sources\n"))
	write("a.truth.json", []byte(`{"frames": 1}`))
	write("empty.pcap", nil)
	write("notes.gz", gz([]byte("hello")))
	write("broken.gz", []byte{0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	write("rotated.pcap.zst", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0})
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	writeTaggedPcap(t, filepath.Join(dir, "sub"), "deep.pcap", 'd', []int{0})
	writeTaggedPcap(t, other, "rail1.pcap", 'r', []int{0})
	for link, target := range map[string]string{
		"rail1.pcap": filepath.Join(other, "rail1.pcap"),
		"gone.pcap":  filepath.Join(other, "gone.pcap"),
		"otherdir":   other,
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}

	got, skipped, err := ExpandPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, n := range []string{"a.pcap", "b.pcap.gz", "c.pcapng", "rail1.pcap"} {
		want = append(want, filepath.Join(dir, n))
	}
	if !slices.Equal(got, want) {
		t.Errorf("paths:\nwant %v\ngot  %v", want, got)
	}
	wantSkipped := []Skipped{
		{dir, "MANIFEST.md", ""},
		{dir, "a.truth.json", ""},
		{dir, "broken.gz", "gzip-compressed, but damaged"},
		{dir, "empty.pcap", "empty"},
		{dir, "gone.pcap", "dangling symlink"},
		{dir, "notes.gz", ""},
		{dir, "rotated.pcap.zst", "zstd-compressed; decompress it first"},
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped:\nwant %v\ngot  %v", wantSkipped, skipped)
	}
	// The same files named one by one are not judged: opening them says
	// what they are.
	named := filepath.Join(dir, "MANIFEST.md")
	if got, skipped, err := ExpandPaths([]string{named}); err != nil || !slices.Equal(got, []string{named}) || len(skipped) != 0 {
		t.Errorf("a file named on the command line: want it kept, got %v, %v, %v", got, skipped, err)
	}
}

// TestExpandPathsNoCapture: a directory with files but no capture among
// them is still an error.
func TestExpandPathsNoCapture(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "readme.txt"), []byte("rail 3\n"), 0o644)
	_, _, err := ExpandPaths([]string{dir})
	if err == nil || !strings.Contains(err.Error(), "directory holds no capture files") {
		t.Errorf("want %q, got %v", "directory holds no capture files", err)
	}
}

// TestExpandPathsStdinTwice: standard input can be read only once, so
// naming it twice is an error, not an empty second file.
func TestExpandPathsStdinTwice(t *testing.T) {
	_, _, err := ExpandPaths([]string{"-", "-"})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("want an error saying standard input is given twice, got %v", err)
	}
}
