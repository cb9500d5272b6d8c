package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// TestLiveViewTruncated: the live view says how many frames were
// malformed, cut by the snap length (with the RoCE ones among them, as
// read's and flows' summaries say it: "433 truncated (429 RoCE)") and of
// bad ICRC, in the log line and on the screen. report_storage.pcap (RoCE
// and TCP) replayed once, each frame cut to 96 bytes, must show what
// flows' summary says of the same frames written to a file.
func TestLiveViewTruncated(t *testing.T) {
	const snap = 96
	frames, lt := loadLiveFrames(t, genCapture("report_storage.pcap"), "")
	cut := make([]capturedFrame, len(frames))
	for i, f := range frames {
		cut[i] = capturedFrame{f.data, snap}
		if len(f.data) > snap {
			frames[i].data = f.data[:snap]
		}
	}
	_, summary, code := runCLI(t, "flows", "-o", os.DevNull, writeTestPcap(t, "cut.pcap", time.Unix(1700000000, 0), time.Millisecond, cut))
	if code != ExitOK {
		t.Fatalf("flows: exit %d: %s", code, summary)
	}
	_, counts, _ := strings.Cut(strings.TrimSpace(summary), " RoCE, ")
	if !strings.Contains(counts, " truncated (") {
		t.Fatalf("flows of the cut frames: %q, want some truncated frames not RoCE", summary)
	}
	src := &fakeLive{frames: frames, lt: lt, snap: snap}
	o, _, errOut := liveTestOptions(t.TempDir())
	o.Report.Output, o.Write = "", ""
	o.Interval, o.Duration = 50*time.Millisecond, 400*time.Millisecond
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	if err := liveRun(o); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	var last string
	for _, l := range strings.Split(errOut.String(), "\n") {
		if strings.HasPrefix(l, "rocedump live fake0 ") {
			last = l
		}
	}
	if want := " RoCE, " + counts + ", "; !strings.Contains(last, want) {
		t.Errorf("last view line lacks %q (flows' summary: %s):\n%s\nstderr:\n%s", want, summary, last, errOut)
	}

	v := &liveView{Interface: "ens1f1", Packets: 484, RoCE: 462, Flows: 14, Malformed: 1, Truncated: 433, RoCETruncated: 429, ICRCBad: 2}
	var buf bytes.Buffer
	(&liveScreen{w: &buf, term: true}).draw(v)
	if want := "frames   1 malformed, 433 truncated (429 RoCE), 2 ICRC bad\033[K"; !strings.Contains(buf.String(), want) {
		t.Errorf("screen lacks %q:\n%s", want, buf.String())
	}
	v.Truncated, v.RoCETruncated = 5, 5
	buf.Reset()
	(&liveScreen{w: &buf}).draw(v)
	if want := ", 462 RoCE, 1 malformed, 5 truncated, 2 ICRC bad, 14 flows, "; !strings.Contains(buf.String(), want) {
		t.Errorf("log line lacks %q:\n%s", want, buf.String())
	}
}
