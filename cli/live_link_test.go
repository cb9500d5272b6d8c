package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// TestLinkWatch: the times the interface was seen down become one capture
// problem each, with how long, and one still down at the end says so.
func TestLinkWatch(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 4, 53, 12, 250e6, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name  string
		reads []bool // down, one read every 250 ms from t0
		want  []string
	}{
		{"always up", []bool{false, false, false}, nil},
		{"down and up", []bool{false, true, true, false, false}, []string{
			"interface down: eth1 was down for 0.5 s, from 04:53:12.500 to 04:53:13.000 UTC: nothing was captured then"}},
		{"twice, still down at the end", []bool{true, false, true, true}, []string{
			"interface down: eth1 was down for 0.2 s, from 04:53:12.250 to 04:53:12.500 UTC: nothing was captured then",
			"interface down: eth1 went down at 04:53:12.750 UTC and was still down when the capture ended, 1.8 s later: nothing was captured after it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var w linkWatch
			for i, down := range tc.reads {
				w.see(down, at(250*i))
			}
			got := w.notes("eth1", at(2250))
			if !slices.Equal(got, tc.want) {
				t.Errorf("notes\n  %q\nwant\n  %q", got, tc.want)
			}
		})
	}
}

// TestLiveLinkDown: a capture whose interface is down (taken down, or its
// link lost) says so in the report, as a problem and a capture_health
// finding, and on stderr: libpcap itself reads on without a word.
func TestLiveLinkDown(t *testing.T) {
	frames, lt := loadLiveFrames(t, genCapture("congestion.pcap"), "")
	src := &fakeLive{frames: frames, lt: lt, stats: capture.LiveStats{Down: true}}
	o, _, errOut := liveTestOptions(t.TempDir())
	o.Count = len(frames)
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	if err := liveRun(o); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	data, err := os.ReadFile(o.Report.Output)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Capture struct {
			Problems []string `json:"problems"`
		} `json:"capture"`
		Findings []struct {
			Kind, Severity, Title string
		} `json:"findings"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	const note = "interface down: fake0 went down at "
	if !slices.ContainsFunc(rep.Capture.Problems, func(p string) bool { return strings.HasPrefix(p, note) }) {
		t.Errorf("capture.problems %q lack %q...", rep.Capture.Problems, note)
	}
	if !slices.ContainsFunc(rep.Findings, func(f struct{ Kind, Severity, Title string }) bool {
		return f.Kind == "capture_health" && f.Severity == "warning" && f.Title == "The capture interface went down once"
	}) {
		t.Errorf("findings %+v lack the capture_health warning for the interface down", rep.Findings)
	}
	if !strings.Contains(errOut.String(), note) {
		t.Errorf("stderr does not say the interface went down:\n%s", errOut)
	}
}

// TestLiveScreenDown: the live view says the interface is down, on a
// terminal and in the plain lines.
func TestLiveScreenDown(t *testing.T) {
	v := &liveView{Interface: "ens1f1", Elapsed: 3 * time.Second, Drops: capture.LiveStats{Down: true}}
	var buf bytes.Buffer
	(&liveScreen{w: &buf, term: true}).draw(v)
	if want := "DOWN     ens1f1 is down (not up, or no link): nothing is captured"; !strings.Contains(buf.String(), want) {
		t.Errorf("screen lacks %q:\n%s", want, buf.String())
	}
	if got, want := livePlainLine(v), "(ens1f1 is down: nothing is captured)"; !strings.Contains(got, want) {
		t.Errorf("plain line %q lacks %q", got, want)
	}
}
