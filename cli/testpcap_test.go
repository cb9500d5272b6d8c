package cli

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// capturedFrame is a frame a test writes to a capture: its bytes on the
// wire, and the snap length that cut it (0: captured whole).
type capturedFrame struct {
	data []byte
	snap int
}

// wholeFrames is frames, each captured whole.
func wholeFrames(frames ...[]byte) []capturedFrame {
	c := make([]capturedFrame, len(frames))
	for i, f := range frames {
		c[i].data = f
	}
	return c
}

// writeTestPcap writes frames to an Ethernet pcap named name in a new
// temporary directory, frame i captured at start plus i steps, and
// returns its path.
func writeTestPcap(t testing.TB, name string, start time.Time, step time.Duration, frames []capturedFrame) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	w, err := capture.NewPcapWriter(bw, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, fr := range frames {
		data := fr.data
		if fr.snap > 0 && fr.snap < len(data) {
			data = data[:fr.snap]
		}
		if err := w.WritePacket(start.Add(time.Duration(i)*step), data, len(fr.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
