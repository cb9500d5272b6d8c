package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// realDir holds real captures from public sources.
const realDir = "../testdata/pcaps/real"

// frameLine formats a record as tshark prints frame.number,
// frame.time_epoch, frame.cap_len and frame.len (no time for a Simple
// Packet Block).
func frameLine(rec *Record) string {
	ts := rec.Timestamp
	if ts.IsZero() {
		return fmt.Sprintf("%d||%d|%d", rec.Number, rec.CapLen, rec.OrigLen)
	}
	return fmt.Sprintf("%d|%d.%09d|%d|%d", rec.Number, ts.Unix(), ts.Nanosecond(), rec.CapLen, rec.OrigLen)
}

// ourFrames reads a capture with this package.
func ourFrames(t *testing.T, name string, src []byte) []string {
	t.Helper()
	r, err := NewReader(bytes.NewReader(src), name)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var rec Record
	for {
		err := r.Next(&rec)
		if err == io.EOF {
			return lines
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", len(lines), err)
		}
		lines = append(lines, frameLine(&rec))
	}
}

// tool runs an external program, skipping the test if it is missing.
func tool(t *testing.T, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not on PATH", name)
	}
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}

// tsharkFrames reads a capture with tshark. Records without an interface
// (tshark shows pcapng custom blocks as frames) are left out, but they
// take a frame number, and so they do in this package.
func tsharkFrames(t *testing.T, path string) []string {
	out := tool(t, "tshark", "-r", path, "-T", "fields", "-E", "separator=|",
		"-e", "frame.number", "-e", "frame.time_epoch", "-e", "frame.cap_len", "-e", "frame.len", "-e", "frame.interface_id")
	var frames []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 5 || (f[4] == "" && strings.HasSuffix(path, ".pcapng")) {
			continue
		}
		frames = append(frames, strings.Join(f[:4], "|"))
	}
	return frames
}

// compareFrames reports the first difference between two frame lists.
func compareFrames(t *testing.T, what string, got, want []string) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s: frame %d: got %q, tshark says %q", what, i+1, got[i], want[i])
			return
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d frames, tshark says %d", what, len(got), len(want))
	}
}

// TestRealFilesAgainstTshark reads every real capture, as it is and
// converted by editcap to pcapng and nanosecond pcap, plain and gzipped, and
// compares every frame's timestamp (to the ns) and lengths with tshark's
// reading of the original; frame count and first/last time with capinfos.
func TestRealFilesAgainstTshark(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(realDir, "*.pcap"))
	if len(paths) == 0 {
		t.Skip("no real captures")
	}
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not on PATH")
	}
	if testing.Short() {
		paths = paths[:3]
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			t.Parallel()
			want := tsharkFrames(t, path)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			variants := map[string][]byte{"pcap": orig, "pcap.gz": gz(orig)}
			if _, err := exec.LookPath("editcap"); err == nil {
				dir := t.TempDir()
				for _, ft := range []string{"pcapng", "nsecpcap"} {
					out := filepath.Join(dir, ft)
					tool(t, "editcap", "-F", ft, path, out)
					b, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					variants[ft] = b
					variants[ft+".gz"] = gzMulti(b)
				}
			}
			var ours []string
			for name, b := range variants {
				ours = ourFrames(t, name, b)
				compareFrames(t, name, ours, want)
			}
			if _, err := exec.LookPath("capinfos"); err == nil && len(ours) > 0 {
				// path, count, first and last time (seconds since the epoch).
				fields := strings.Fields(tool(t, "capinfos", "-T", "-r", "-c", "-S", "-a", "-e", path))
				if len(fields) != 4 {
					t.Fatalf("capinfos said %q", fields)
				}
				if fields[1] != fmt.Sprint(len(ours)) {
					t.Errorf("%d frames, capinfos says %s", len(ours), fields[1])
				}
				first := strings.Split(ours[0], "|")[1]
				last := strings.Split(ours[len(ours)-1], "|")[1]
				if !strings.HasPrefix(first, fields[2]) || !strings.HasPrefix(last, fields[3]) {
					t.Errorf("first/last %s/%s, capinfos says %s/%s", first, last, fields[2], fields[3])
				}
			}
		})
	}
}

// TestGeneratedAgainstTshark has tshark read the generated pcapng files
// (several interfaces and resolutions, skipped blocks, both byte orders) and
// the multi-section one, and compares with this package's reading.
func TestGeneratedAgainstTshark(t *testing.T) {
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark not on PATH")
	}
	dir := t.TempDir()
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		f, _ := sampleNG(o)
		path := filepath.Join(dir, fmt.Sprint(o)+".pcapng")
		if err := os.WriteFile(path, f.b, 0o644); err != nil {
			t.Fatal(err)
		}
		compareFrames(t, path, ourFrames(t, path, f.b), tsharkFrames(t, path))
	}
}
