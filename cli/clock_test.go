package cli

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shiftPcap writes a copy of the little-endian microsecond pcap src in
// which every record from number from on (1-based) is shift seconds
// later (earlier when negative): a capture whose clock was set back.
func shiftPcap(t *testing.T, src, dst string, from int, shiftSec int32, shiftUsec int32) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if binary.LittleEndian.Uint32(b) != 0xa1b2c3d4 {
		t.Fatalf("%s: not a little-endian microsecond pcap", src)
	}
	for off, n := 24, 1; off+16 <= len(b); n++ {
		if n >= from {
			sec := int64(binary.LittleEndian.Uint32(b[off:])) + int64(shiftSec)
			usec := int64(binary.LittleEndian.Uint32(b[off+4:])) + int64(shiftUsec)
			for usec < 0 {
				sec, usec = sec-1, usec+1_000_000
			}
			binary.LittleEndian.PutUint32(b[off:], uint32(sec))
			binary.LittleEndian.PutUint32(b[off+4:], uint32(usec))
		}
		off += 16 + int(binary.LittleEndian.Uint32(b[off+8:]))
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestReportClockWentBack: a capture whose clock went back (here by an
// hour, halfway through) gets a capture problem that says so, in every
// worker count, without a "could not be read" finding; the report said
// nothing before, while a go-back-N's recovery, an ACK timeout's wait and
// flows spanning the step read 0 µs and the timeline folded the frames
// before its start into its first bin. Small reorderings (below 1 ms) of
// a capture taken on several queues get no note.
func TestReportClockWentBack(t *testing.T) {
	dir := t.TempDir()
	back := filepath.Join(dir, "back.pcap")
	shiftPcap(t, genCapture("retransmissions.pcap"), back, 51, -3600, 0)
	var first string
	for _, w := range []string{"1", "3"} {
		out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "--workers", w, back)
		if code != ExitOK {
			t.Fatalf("--workers %s: exit %d: %s", w, code, stderr)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("--workers %s: report differs from --workers 1", w)
		}
		var rep struct {
			Capture struct {
				Problems []string `json:"problems"`
			} `json:"capture"`
			Findings []struct {
				Title string `json:"title"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		want := "clock went back in " + back + ": 50 frames are earlier than a frame before them, by up to 1h0m0s;"
		if len(rep.Capture.Problems) != 1 || !strings.HasPrefix(rep.Capture.Problems[0], want) {
			t.Errorf("--workers %s: problems %q, want one starting %q", w, rep.Capture.Problems, want)
		}
		if !strings.Contains(stderr, "warning: "+want) {
			t.Errorf("--workers %s: stderr lacks the warning %q:\n%s", w, want, stderr)
		}
		for _, f := range rep.Findings {
			if strings.Contains(f.Title, "could not be read") || strings.Contains(f.Title, "cut off") {
				t.Errorf("--workers %s: finding %q: every frame was read", w, f.Title)
			}
		}
	}

	_, stderr, code := runCLI(t, "flows", back)
	if code != ExitOK || !strings.Contains(stderr, "warning: clock went back in "+back+": 50 frames") {
		t.Errorf("flows: exit %d, stderr lacks the clock note:\n%s", code, stderr)
	}

	small := filepath.Join(dir, "small.pcap")
	shiftPcap(t, genCapture("retransmissions.pcap"), small, 51, 0, -900)
	out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", small)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(out, "clock went back") || strings.Contains(stderr, "clock went back") {
		t.Errorf("a step back of 0.9 ms got a note:\n%s", stderr)
	}
}
