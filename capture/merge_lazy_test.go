package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// withKeepOpen runs f with keepOpen set to n.
func withKeepOpen(n int, f func()) {
	prev := keepOpen
	keepOpen = n
	defer func() { keepOpen = prev }()
	f()
}

// mergeLines merges paths through Next (batch 0) or NextBatch and returns
// one line a record (file, frame number, time, lengths, a checksum of the
// data) and one a problem: what every output of a merge is made of.
// check, if set, is called after every record.
func mergeLines(t *testing.T, paths []string, batch int, check func()) []string {
	t.Helper()
	m, err := OpenMerged(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var out []string
	add := func(file int, rec *Record) {
		out = append(out, fmt.Sprintf("%d #%d %d %v %d/%d %d:%d %08x", file, rec.Number, rec.TimeNanos, rec.Timestamp,
			rec.CapLen, rec.OrigLen, rec.LinkType, rec.Interface, crc32.ChecksumIEEE(rec.Data)))
		if check != nil {
			check()
		}
	}
	recs := make([]Record, max(batch, 1))
	for {
		var n, file int
		var err error
		if batch == 0 {
			file, err = m.Next(&recs[0])
			n = 1
		} else {
			n, file, err = m.NextBatch(recs)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			add(file, &recs[i])
		}
	}
	for _, p := range m.Problems() {
		out = append(out, "problem: "+p.Error())
	}
	return out
}

// span returns n offsets (µs) from from on, step apart.
func span(from, n, step int) []int {
	offs := make([]int, n)
	for i := range offs {
		offs[i] = from + i*step
	}
	return offs
}

// rotatedFiles writes files of mirror tag, one after the other in time
// (each file's first record ties the last of the one before when tie is
// set), named so that mirrors interleave in name order when several are
// written to one directory.
func rotatedFiles(t *testing.T, dir string, tag byte, files, perFile, start int, tie bool) []string {
	var paths []string
	at := start
	for f := range files {
		offs := span(at, perFile, 3)
		paths = append(paths, writeTaggedPcap(t, dir, fmt.Sprintf("%03d-%c.pcap", f, tag), tag, offs))
		at = offs[len(offs)-1]
		if !tie {
			at++
		}
	}
	return paths
}

// TestMergerLazySameAsEager: a merge of more than keepOpen files, which
// parks them, delivers exactly what one that keeps every file open does
// (records, their order, files, frame numbers, problems), through Next and
// NextBatch: the rotated files of one mirror (with ties between files),
// of several interleaved, of overlapping files, gzip-compressed, pcapng,
// and with cut, bad and empty files among them.
func TestMergerLazySameAsEager(t *testing.T) {
	dir := t.TempDir()
	oneMirror := rotatedFiles(t, filepath.Join(mkdir(t, dir, "one")), 'a', 40, 20, 0, true)
	var mirrors []string
	for k, tag := range []byte("xyz") {
		mirrors = append(mirrors, rotatedFiles(t, mkdir(t, dir, "m"+string(tag)), tag, 15, 30, k, false)...)
	}
	overlap := mkdir(t, dir, "overlap")
	var overlapping []string
	for f := range 30 {
		overlapping = append(overlapping, writeTaggedPcap(t, overlap, fmt.Sprintf("%02d.pcap", f), byte('A'+f), span(f*7, 25, 11)))
	}
	odd := mkdir(t, dir, "odd")
	mixed := rotatedFiles(t, odd, 'r', 24, 10, 0, false)
	ng, _ := sampleNG(binary.LittleEndian)
	ngPath := filepath.Join(odd, "ng.pcapng")
	writeFile(t, ngPath, ng.b)
	raw, _ := os.ReadFile(mixed[3])
	writeFile(t, mixed[3], gz(raw))
	raw, _ = os.ReadFile(mixed[5])
	writeFile(t, mixed[5], raw[:len(raw)-20]) // cut in its last record
	raw, _ = os.ReadFile(mixed[7])
	writeFile(t, mixed[7], raw[:pcapFileHeaderLen]) // no record
	raw, _ = os.ReadFile(mixed[9])
	writeFile(t, mixed[9], raw[:pcapFileHeaderLen+5]) // cut in its first record
	raw, _ = os.ReadFile(mixed[11])
	writeFile(t, mixed[11], append(raw[:pcapFileHeaderLen+16+60+8], 0xff, 0xff, 0xff, 0xff)) // a bad second record
	mixed = append(mixed, ngPath, mixed[1])                                                  // the same file twice

	for name, paths := range map[string][]string{
		"one mirror rotated": oneMirror, "three mirrors rotated": mirrors,
		"overlapping": overlapping, "cut, bad, empty, gzip, pcapng": mixed,
	} {
		if len(paths) <= keepOpen {
			t.Fatalf("%s: %d files, not more than keepOpen", name, len(paths))
		}
		for _, batch := range []int{0, 1, 7, 64} {
			var want []string
			withKeepOpen(len(paths), func() { want = mergeLines(t, paths, batch, nil) })
			got := mergeLines(t, paths, batch, nil)
			if d := diffLines(want, got); d != "" {
				t.Errorf("%s, batch %d: parked files give another merge: %s", name, batch, d)
			}
		}
	}
}

// TestMergerLazyOpenFiles: a merge of 200 rotated files holds one or two
// of them open at a time, and one of three mirrors' rotated files three
// or four, where it held every file open.
func TestMergerLazyOpenFiles(t *testing.T) {
	if _, err := os.ReadDir("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count open files with")
	}
	dir := t.TempDir()
	rotated := rotatedFiles(t, mkdir(t, dir, "one"), 'a', 200, 5, 0, true)
	var mirrors []string
	for k, tag := range []byte("xyz") {
		mirrors = append(mirrors, rotatedFiles(t, mkdir(t, dir, string(tag)), tag, 70, 5, k, false)...)
	}
	for _, tc := range []struct {
		name  string
		paths []string
		most  int
	}{{"200 rotated files", rotated, 2}, {"3 mirrors of 70 rotated files", mirrors, 4}} {
		base := openFiles(t)
		most := 0
		lines := mergeLines(t, tc.paths, 0, func() { most = max(most, openFiles(t)-base) })
		if len(lines) != 5*len(tc.paths) {
			t.Fatalf("%s: %d records, want %d", tc.name, len(lines), 5*len(tc.paths))
		}
		if most > tc.most {
			t.Errorf("%s: up to %d files open at once, want at most %d", tc.name, most, tc.most)
		}
		if n := openFiles(t) - base; n != 0 {
			t.Errorf("%s: %d files left open after Close", tc.name, n)
		}
	}
}

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds) - 1 // the directory read
}

// TestMergerLazyLowFileLimit: 1,000 rotated files merge under a limit of
// 64 open files, which every file open at once exceeded ("too many open
// files"). The limit is set in a child process running this test alone.
func TestMergerLazyLowFileLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_NOFILE set the Linux way")
	}
	const helper = "ROCEDUMP_TEST_LOW_NOFILE"
	if dir := os.Getenv(helper); dir != "" {
		lim := syscall.Rlimit{Cur: 64, Max: 64}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
		paths, _, err := ExpandPaths([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		if lines := mergeLines(t, paths, 64, nil); len(lines) != 3*len(paths) {
			t.Fatalf("%d records, want %d", len(lines), 3*len(paths))
		}
		return
	}
	dir := t.TempDir()
	rotatedFiles(t, dir, 'a', 1000, 3, 0, false)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMergerLazyLowFileLimit$", "-test.count=1")
	cmd.Env = append(os.Environ(), helper+"="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("merging 1,000 files under a limit of 64 open files: %v\n%s", err, out)
	}
}

// TestMergerLazyFileChanged: a parked file that is deleted, emptied,
// truncated before its first record or replaced by another capture before
// its turn is not read, and a problem names it; one cut or grown is read
// to where it ends then; the other files are read whole, in order.
func TestMergerLazyFileChanged(t *testing.T) {
	dir := t.TempDir()
	paths := rotatedFiles(t, dir, 'a', 20, 10, 0, false) // file f from 28f µs on
	m, err := OpenMerged(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	raw, _ := os.ReadFile(paths[2])
	os.Remove(paths[2])
	writeFile(t, paths[4], nil)
	writeFile(t, paths[6], raw[:pcapFileHeaderLen+10])
	other := writeTaggedPcap(t, t.TempDir(), "x.pcap", 'x', span(8*28, 10, 3)) // paths[8]'s times, other data
	os.Rename(other, paths[8])
	raw, _ = os.ReadFile(paths[10])
	writeFile(t, paths[10], raw[:len(raw)-30])                                                    // cut in its last record
	grown := writeTaggedPcap(t, t.TempDir(), "g.pcap", 'a', append(span(12*28, 10, 3), 12*28+27)) // paths[12] and a frame more
	os.Rename(grown, paths[12])

	var got []string
	var rec Record
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d #%d %c%d", file, rec.Number, rec.Data[0], rec.Data[1]))
	}
	var wantRecs []string
	for f := range 20 {
		n, changed := map[int]int{2: 0, 4: 0, 6: 0, 8: 0, 10: 9, 12: 11}[f]
		if !changed {
			n = 10
		}
		for i := range n {
			wantRecs = append(wantRecs, fmt.Sprintf("%d #%d a%d", f, i+1, i))
		}
	}
	if d := diffLines(wantRecs, got); d != "" {
		t.Errorf("records: %s", d)
	}
	probs := m.Problems()
	if len(probs) != 5 {
		t.Fatalf("want 5 problems, got %v", probs)
	}
	for k, f := range []int{2, 4, 6, 8} {
		if !errors.Is(probs[k], ErrChanged) || !strings.HasPrefix(probs[k].Error(), paths[f]+": changed since it was opened (") {
			t.Errorf("problem %d: %v, want ErrChanged naming %s", k, probs[k], paths[f])
		}
	}
	t.Log(probs)
	if !errors.Is(probs[4], ErrCutOff) {
		t.Errorf("problem 4: %v, want the cut", probs[4])
	}
}

// TestMergerLazyStdin: standard input, which cannot be read twice, stays
// open in a merge that parks the other files.
func TestMergerLazyStdin(t *testing.T) {
	dir := t.TempDir()
	paths := rotatedFiles(t, dir, 'a', 20, 5, 0, false)
	pipeIn := writeTaggedPcap(t, t.TempDir(), "in.pcap", 'p', span(50, 5, 7))
	want := mergeLines(t, append(paths, pipeIn), 0, nil)
	raw, _ := os.ReadFile(pipeIn)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { pw.Write(raw); pw.Close() }()
	stdin := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = stdin; pr.Close() }()
	if d := diffLines(want, mergeLines(t, append(paths, "-"), 0, nil)); d != "" {
		t.Error(d)
	}
}

// TestMergerLazyOpenError: with parked files too, an error opening any
// file is returned and no file is left open.
func TestMergerLazyOpenError(t *testing.T) {
	dir := t.TempDir()
	paths := rotatedFiles(t, dir, 'a', 30, 2, 0, false)
	missing := filepath.Join(dir, "missing.pcap")
	for _, ps := range [][]string{append(paths, missing), append([]string{paths[0], missing}, paths...)} {
		before := countOpen()
		if _, err := OpenMerged(ps); err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("want an error naming %s, got %v", missing, err)
		}
		if n := countOpen(); before >= 0 && n != before {
			t.Errorf("%d files left open", n-before)
		}
	}
}

// countOpen is openFiles where /proc/self/fd exists, else -1.
func countOpen() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds) - 1
}

func mkdir(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// diffLines says where got first differs from want, or "".
func diffLines(want, got []string) string {
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			return fmt.Sprintf("line %d: %q, want %q", i, got[i], want[i])
		}
	}
	if len(want) != len(got) {
		return fmt.Sprintf("%d lines, want %d", len(got), len(want))
	}
	return ""
}

// TestMergerDoneFilesKeepNoBuffer: a file the merge has read to its end
// keeps nothing of its read buffer. Its head's data aliased the buffer,
// so that a directory of 3,000 rotated files held every finished file's
// buffer (128 KB, and a gzip-compressed file's too) to the end of the
// merge: 311 MB where 118 MB were needed for 2,000 files of 600 frames.
// Whatever the merge holds of a file's buffer, it holds for a file open.
func TestMergerDoneFilesKeepNoBuffer(t *testing.T) {
	dir := t.TempDir()
	paths := rotatedFiles(t, dir, 'a', 3*keepOpen, 5, 0, true)
	raw, _ := os.ReadFile(paths[4])
	writeFile(t, paths[4], gz(raw))
	few := paths[:keepOpen/2] // every file kept open
	for _, tc := range []struct {
		name  string
		paths []string
		batch int
	}{{"parked, Next", paths, 0}, {"parked, NextBatch", paths, 3}, {"open, Next", few, 0}, {"open, NextBatch", few, 64}} {
		m, err := OpenMerged(tc.paths)
		if err != nil {
			t.Fatal(err)
		}
		recs := make([]Record, max(tc.batch, 1))
		check := func(when string) {
			for i, h := range m.heads {
				if h.Data != nil && m.readers[i] == nil {
					t.Fatalf("%s: %s: file %d, done, keeps its head's data (%d bytes of its buffer)", tc.name, when, i, len(h.Data))
				}
			}
		}
		for {
			var err error
			if tc.batch == 0 {
				_, err = m.Next(&recs[0])
			} else {
				_, _, err = m.NextBatch(recs)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			check("while merging")
		}
		check("at the end")
		m.Close()
	}
}
