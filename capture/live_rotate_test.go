package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time            { return c.t }
func (c *fakeClock) add(d time.Duration)       { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock                 { return &fakeClock{t: time.Unix(1800000000, 0)} }
func rotFrame(i, n int) []byte                 { return frame(i, n) }
func rotTime(i int) time.Time                  { return time.Unix(1800000000, int64(i)*1000).UTC() }
func rotPath(t *testing.T, name string) string { return filepath.Join(t.TempDir(), name) }

// readRotated reads every frame of a pcap file, failing on any error.
func readRotated(t *testing.T, path string) []Record {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	var out []Record
	for {
		var rec Record
		err := r.Next(&rec)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rec.Data = bytes.Clone(rec.Data)
		out = append(out, rec)
	}
}

// writeFrames writes frames 0..n-1 of size bytes each, calling step before
// each, and checks the (file, frame) WritePacket returns.
func writeFrames(t *testing.T, w *RotatingWriter, n, size int, step func(i int)) (where [][2]int) {
	t.Helper()
	for i := range n {
		if step != nil {
			step(i)
		}
		file, fr, err := w.WritePacket(rotTime(i), rotFrame(i, size), size)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		where = append(where, [2]int{file, fr})
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	return where
}

// checkFiles reads the writer's files back and checks that they hold the
// frames at the places WritePacket said, with the right bytes and times.
func checkFiles(t *testing.T, w *RotatingWriter, where [][2]int, size int) {
	t.Helper()
	files := w.Files()
	got := map[[2]int]Record{}
	for i, f := range files {
		for _, rec := range readRotated(t, f) {
			got[[2]int{i, rec.Number}] = rec
		}
	}
	for i, at := range where {
		rec, ok := got[at]
		if !ok {
			t.Errorf("frame %d: not in file %d (%s) as frame %d", i, at[0], files[at[0]], at[1])
			continue
		}
		if !bytes.Equal(rec.Data, rotFrame(i, size)) || !rec.Timestamp.Equal(rotTime(i)) || rec.OrigLen != size {
			t.Errorf("frame %d: read back %d bytes at %v (orig %d), want frame %d", i, rec.CapLen, rec.Timestamp, rec.OrigLen, i)
		}
	}
}

func TestRotatedName(t *testing.T) {
	tests := []struct {
		name       string
		seq, count int
		want       string
	}{
		{"first, no count", 0, 0, "x.pcap"},
		{"second, no count", 1, 0, "x.pcap1"},
		{"twelfth, no count", 11, 0, "x.pcap11"},
		{"count 1", 0, 1, "x.pcap0"},
		{"count 1, later", 5, 1, "x.pcap0"},
		{"count 3", 2, 3, "x.pcap2"},
		{"count 3 wraps", 3, 3, "x.pcap0"},
		{"count 10: one digit", 9, 10, "x.pcap9"},
		{"count 11: two digits", 3, 11, "x.pcap03"},
		{"count 100", 99, 100, "x.pcap99"},
		{"count 101", 7, 101, "x.pcap007"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RotatedName("x.pcap", tt.seq, tt.count); got != tt.want {
				t.Errorf("RotatedName(x.pcap, %d, %d) = %q, want %q", tt.seq, tt.count, got, tt.want)
			}
		})
	}
}

func TestRotatingWriterNoRotation(t *testing.T) {
	p := rotPath(t, "one.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	where := writeFrames(t, w, 50, 300, nil)
	if got := w.Files(); !slices.Equal(got, []string{p}) {
		t.Fatalf("files %q, want [%s]", got, p)
	}
	checkFiles(t, w, where, 300)
}

func TestRotatingWriterBySize(t *testing.T) {
	// Each frame takes 16+100 bytes. tcpdump's rule: before a frame, move
	// on if the file is already larger than the limit (250): after two
	// frames it holds 24+232 = 256 bytes, so files hold 2 frames.
	p := rotPath(t, "size.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, FileSize: 250})
	if err != nil {
		t.Fatal(err)
	}
	where := writeFrames(t, w, 7, 100, nil)
	want := []string{p, p + "1", p + "2", p + "3"}
	if got := w.Files(); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	for i, f := range want {
		n := len(readRotated(t, f))
		if wantN := min(2, 7-2*i); n != wantN {
			t.Errorf("%s: %d frames, want %d", f, n, wantN)
		}
		if st, _ := os.Stat(f); i < 3 && st.Size() != 256 {
			t.Errorf("%s: %d bytes, want 256", f, st.Size())
		}
	}
	checkFiles(t, w, where, 100)
}

func TestRotatingWriterBySizeLimitBelowOneFrame(t *testing.T) {
	// A limit smaller than one frame still puts one frame in each file.
	p := rotPath(t, "tiny.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, FileSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	where := writeFrames(t, w, 3, 64, nil)
	if got := len(w.Files()); got != 3 {
		t.Fatalf("%d files, want 3", got)
	}
	checkFiles(t, w, where, 64)
}

func TestRotatingWriterByTime(t *testing.T) {
	clk := newFakeClock()
	p := rotPath(t, "time.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, Interval: 10 * time.Second, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	// Frames every 4 s: the file opened at 0 takes frames at 0, 4, 8; at
	// 12 a new one starts (age 12 ≥ 10) and takes 12, 16, 20; and so on.
	where := writeFrames(t, w, 7, 80, func(i int) {
		if i > 0 {
			clk.add(4 * time.Second)
		}
	})
	want := []string{p, p + "1", p + "2"}
	if got := w.Files(); !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
	wantWhere := [][2]int{{0, 1}, {0, 2}, {0, 3}, {1, 1}, {1, 2}, {1, 3}, {2, 1}}
	if !slices.Equal(where, wantWhere) {
		t.Errorf("frames went to %v, want %v", where, wantWhere)
	}
	checkFiles(t, w, where, 80)
}

func TestRotatingWriterByTimeIdle(t *testing.T) {
	// No frame for three intervals: no empty files are left behind, and
	// the frame after the pause goes to the file that was waiting.
	clk := newFakeClock()
	p := rotPath(t, "idle.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, Interval: time.Second, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	clk.add(3500 * time.Millisecond)
	where := writeFrames(t, w, 3, 80, func(i int) {
		if i == 2 {
			clk.add(time.Second)
		}
	})
	if want := [][2]int{{0, 1}, {0, 2}, {1, 1}}; !slices.Equal(where, want) {
		t.Errorf("frames went to %v, want %v", where, want)
	}
	if n := len(w.Files()); n != 2 {
		t.Errorf("%d files, want 2", n)
	}
	checkFiles(t, w, where, 80)
}

func TestRotatingWriterRing(t *testing.T) {
	// -C with -W 3: seven files' worth of frames, one frame per file; the
	// names are reused, so only the last three files remain.
	p := rotPath(t, "ring.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, FileSize: 1, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	where := writeFrames(t, w, 7, 70, nil)
	wantSeq := []string{p + "0", p + "1", p + "2", p + "0", p + "1", p + "2", p + "0"}
	if got := w.Files(); !slices.Equal(got, wantSeq) {
		t.Fatalf("files %q, want %q", got, wantSeq)
	}
	if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s exists; with a count every name has a number", p)
	}
	// Frame i went to file i; the ring keeps files 4, 5, 6: frames 6, 4, 5 in
	// ring.pcap0, ring.pcap1, ring.pcap2.
	for slot, i := range []int{6, 4, 5} {
		recs := readRotated(t, RotatedName(p, slot, 3))
		if len(recs) != 1 || !bytes.Equal(recs[0].Data, rotFrame(i, 70)) {
			t.Errorf("%s: want only frame %d, got %d frames", RotatedName(p, slot, 3), i, len(recs))
		}
	}
	for i, at := range where {
		if at != [2]int{i, 1} {
			t.Errorf("frame %d went to %v, want file %d frame 1", i, at, i)
		}
	}
}

func TestRotatingWriterRingByTime(t *testing.T) {
	clk := newFakeClock()
	p := rotPath(t, "gring.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, Interval: time.Minute, Count: 2, Now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	writeFrames(t, w, 5, 60, func(i int) { clk.add(time.Minute) })
	if got := w.Files(); len(got) != 5 || got[4] != p+"0" {
		t.Fatalf("files %q, want 5 uses ending with %s0", got, p)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 2 {
		t.Errorf("%d files on disk, want 2", len(entries))
	}
}

func TestRotatingWriterSnapLen(t *testing.T) {
	p := rotPath(t, "snap.pcap")
	w, err := NewRotatingWriter(RotateConfig{Path: p, LinkType: LinkTypeEthernet, SnapLen: 128, FileSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, _, err := w.WritePacket(rotTime(i), rotFrame(i, 1000), 1000); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Sizes count the bytes written (144 per frame), not the frame: two
	// frames per file.
	if n := len(w.Files()); n != 2 {
		t.Errorf("%d files, want 2", n)
	}
	for _, f := range w.Files() {
		for _, rec := range readRotated(t, f) {
			if rec.CapLen != 128 || rec.OrigLen != 1000 {
				t.Errorf("%s frame %d: %d of %d bytes, want 128 of 1000", f, rec.Number, rec.CapLen, rec.OrigLen)
			}
		}
	}
}

func TestRotatingWriterErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  RotateConfig
	}{
		{"no path", RotateConfig{}},
		{"count alone", RotateConfig{Path: filepath.Join(dir, "a"), Count: 3}},
		{"negative size", RotateConfig{Path: filepath.Join(dir, "b"), FileSize: -1}},
		{"missing directory", RotateConfig{Path: filepath.Join(dir, "no", "such", "dir", "c")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w, err := NewRotatingWriter(tt.cfg); err == nil {
				w.Close()
				t.Fatalf("NewRotatingWriter(%+v): no error", tt.cfg)
			}
		})
	}
}

func TestRotatingWriterClosed(t *testing.T) {
	w, err := NewRotatingWriter(RotateConfig{Path: rotPath(t, "c.pcap"), LinkType: LinkTypeEthernet})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := w.WritePacket(rotTime(0), rotFrame(0, 60), 60); err == nil {
		t.Error("WritePacket after Close: no error")
	}
}

// TestRotatingWriterAllocs: writing a frame allocates nothing (the live
// capture writes every frame it takes).
func TestRotatingWriterAllocs(t *testing.T) {
	w, err := NewRotatingWriter(RotateConfig{Path: rotPath(t, "allocs.pcap"), LinkType: LinkTypeEthernet, SnapLen: 128, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	data, ts := rotFrame(1, 1000), rotTime(1)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, _, err := w.WritePacket(ts, data, len(data)); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("WritePacket: %v allocations per frame, want 0", allocs)
	}
}
