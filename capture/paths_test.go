package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
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
	want := []string{filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap"), "-"}
	if !slices.Equal(got, want) {
		t.Fatalf("want %v, got %v", want, got)
	}
	// b.pcap named again after its directory is read once.
	if wantSkipped := []Skipped{{Name: a, SameAs: filepath.Join(dir, "b.pcap")}}; !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped: want %v, got %v", wantSkipped, skipped)
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
	write("c.pcapng", pcapngSHBOnly())
	// Captures that end inside their file header: no frame, like an
	// empty file. Read, they stopped the run on the whole directory.
	write("cut.pcap", raw[:10])
	write("cut.pcapng", pcapngSHBOnly()[:20])
	write("cut.pcap.gz", gz(raw[:20]))
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
		{Dir: dir, Name: "MANIFEST.md", Why: ""},
		{Dir: dir, Name: "a.truth.json", Why: ""},
		{Dir: dir, Name: "broken.gz", Why: "gzip-compressed, but damaged"},
		{Dir: dir, Name: "cut.pcap", Why: "cut off in its file header"},
		{Dir: dir, Name: "cut.pcap.gz", Why: "gzip-compressed, cut off in its file header"},
		{Dir: dir, Name: "cut.pcapng", Why: "cut off in its file header"},
		{Dir: dir, Name: "empty.pcap", Why: "empty"},
		{Dir: dir, Name: "gone.pcap", Why: "dangling symlink"},
		{Dir: dir, Name: "notes.gz", Why: ""},
		{Dir: dir, Name: "rotated.pcap.zst", Why: "zstd-compressed; decompress it first"},
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

// TestExpandPathsSameFile: a capture reached twice (named twice, named
// and within a directory given too, or through a symlink in a directory)
// is taken once, and the repeat is said; a directory whose captures were
// all taken before is not "without captures".
func TestExpandPathsSameFile(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0})
	writeTaggedPcap(t, dir, "b.pcap", 'b', []int{0})
	if err := os.Symlink(filepath.Join(dir, "a.pcap"), filepath.Join(other, "link.pcap")); err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(dir, "a.pcap"), filepath.Join(dir, "b.pcap")
	got, skipped, err := ExpandPaths([]string{a, dir, a, other})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{a, b}; !slices.Equal(got, want) {
		t.Errorf("paths:\nwant %v\ngot  %v", want, got)
	}
	wantSkipped := []Skipped{
		{Dir: dir, Name: "a.pcap", SameAs: a},
		{Name: a, SameAs: a},
		{Dir: other, Name: "link.pcap", SameAs: a},
	}
	if !slices.Equal(skipped, wantSkipped) {
		t.Errorf("skipped:\nwant %v\ngot  %v", wantSkipped, skipped)
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

// TestExpandPathsNoCaptureSaysWhy: a directory whose only captures are
// empty or cut off in their file header is an error that names them; it
// said "holds no capture files" beside a.pcap.
func TestExpandPathsNoCaptureSaysWhy(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.pcap"), []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0}, 0o644)
	os.WriteFile(filepath.Join(dir, "b.pcap"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("rail 3\n"), 0o644)
	_, _, err := ExpandPaths([]string{dir})
	want := dir + ": directory holds no capture files; left out: a.pcap (cut off in its file header), b.pcap (empty), notes.txt"
	if err == nil || err.Error() != want {
		t.Errorf("want %q, got %v", want, err)
	}
}

// TestExpandPathsSubdirectories: a directory whose captures are in
// subdirectories (one per rail, say), which are not read, is an error
// that names them.
func TestExpandPathsSubdirectories(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"rail0", "rail1", ".snapshot"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("rails 0 and 1\n"), 0o644)
	_, _, err := ExpandPaths([]string{dir})
	want := dir + ": directory holds no capture files; its subdirectories are not read: give them (" +
		filepath.Join(dir, "rail0") + " " + filepath.Join(dir, "rail1") + ")"
	if err == nil || err.Error() != want {
		t.Errorf("want %q, got %v", want, err)
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

// TestExpandPathsGzipCopy: NAME.gz beside NAME in a directory, holding the
// same bytes (as `gzip -k` leaves them), is read once, as NAME; a NAME.gz
// that holds another capture is read too, and so is a copy named as a file.
func TestExpandPathsGzipCopy(t *testing.T) {
	dir := t.TempDir()
	gzipTo := func(src, dst string) {
		t.Helper()
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		if err := os.WriteFile(dst, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0, 10})
	gzipTo(a, a+".gz")
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{0, 10})
	other := writeTaggedPcap(t, t.TempDir(), "b.pcap", 'c', []int{0, 10}) // same size, other bytes
	gzipTo(other, b+".gz")
	got, skipped, err := ExpandPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{a, b, b + ".gz"}; !slices.Equal(got, want) {
		t.Errorf("paths: want %v, got %v", want, got)
	}
	if want := []Skipped{{Dir: dir, Name: "a.pcap.gz", CopyOf: a}}; !slices.Equal(skipped, want) {
		t.Errorf("skipped: want %v, got %v", want, skipped)
	}
	if got, _, _ := ExpandPaths([]string{a, a + ".gz"}); len(got) != 2 {
		t.Errorf("both named as files: want both read, got %v", got)
	}
}

// pcapngSHBOnly is a little-endian pcapng of a Section Header Block alone.
func pcapngSHBOnly() []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(le.AppendUint32(nil, 0x0a0d0d0a), 28)
	b = le.AppendUint16(le.AppendUint16(le.AppendUint32(b, 0x1a2b3c4d), 1), 0)
	b = le.AppendUint64(b, ^uint64(0))
	return le.AppendUint32(b, 28)
}
