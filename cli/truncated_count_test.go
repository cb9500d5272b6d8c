package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// writeMixedCutCapture writes 2 RoCE SENDs cut to 100 bytes, 1 RoCE SEND
// whole, and 3 UDP datagrams to port 9999 cut to 60 bytes: 5 frames cut
// by the snap length, 2 of them RoCE.
func writeMixedCutCapture(t *testing.T) string {
	t.Helper()
	send := func(psn uint32) []byte {
		h := bth.BTH{Opcode: bth.OpcodeRCSendOnly, PKey: 0xffff, DestQP: 0x11, PSN: psn}
		return fuzzFrame(0, 1, 0, false, false, append(h.AppendHeaders(nil), make([]byte, 200)...))
	}
	other := func() []byte {
		fr := fuzzFrame(2, 3, 0, false, false, make([]byte, 200))
		binary.BigEndian.PutUint16(fr[14+20+2:], 9999) // not RoCE: UDP to port 9999
		return fr
	}
	frames := []capturedFrame{{send(1), 100}, {other(), 60}, {send(2), 0}, {other(), 60}, {send(3), 100}, {other(), 60}}
	return writeTestPcap(t, "mixed_cut.pcap", time.Unix(1700000000, 0), time.Microsecond, frames)
}

// TestTruncatedCountsEveryFrame: the truncated count of read, flows and
// report is every frame the snap length cut, RoCE or not (as the report
// schema says: "Frames cut by the snap length"); where some of them are
// not RoCE the summaries say how many are ("5 truncated (2 RoCE)"), and
// the report's capture has roce_truncated, the RoCE frames among them.
func TestTruncatedCountsEveryFrame(t *testing.T) {
	file := writeMixedCutCapture(t)
	const want = "6 packets read, 3 RoCE, 0 malformed, 5 truncated (2 RoCE), 0 ICRC bad"
	for _, cmd := range []string{"read", "flows"} {
		_, errOut, code := runCLI(t, cmd, file)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", cmd, code, errOut)
		}
		if !strings.Contains(errOut, want) {
			t.Errorf("%s summary: %q, want %q", cmd, errOut, want)
		}
	}
	out, errOut, code := runCLI(t, "report", "--fail-on", "never", "--format", "json", file)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var rep struct {
		Capture struct {
			Truncated     uint64  `json:"truncated"`
			RoCETruncated *uint64 `json:"roce_truncated"`
		} `json:"capture"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Capture; c.Truncated != 5 || c.RoCETruncated == nil || *c.RoCETruncated != 2 {
		t.Errorf("report capture: truncated %d roce_truncated %v, want 5 and 2", c.Truncated, deref(c.RoCETruncated))
	}
	out, errOut, code = runCLI(t, "report", "--fail-on", "never", file)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "5 truncated (2 RoCE)") { // the text wraps its lines
		t.Errorf("report text does not say 5 truncated (2 RoCE):\n%s", out)
	}
}

// TestMergeRoCETruncated: merge adds up roce_truncated; for a report
// without it (of an earlier rocedump) it counts the truncated frames of
// the report's flow records, and a problem says so.
func TestMergeRoCETruncated(t *testing.T) {
	dir := t.TempDir()
	now := filepath.Join(dir, "now.json")
	if _, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", now, writeMixedCutCapture(t)); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(now)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc["capture"].(map[string]any), "roce_truncated")
	old := filepath.Join(dir, "old.json")
	if b, err = json.Marshal(doc); err == nil {
		err = os.WriteFile(old, b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	type merged struct {
		Capture struct {
			Truncated     uint64   `json:"truncated"`
			RoCETruncated uint64   `json:"roce_truncated"`
			Problems      []string `json:"problems"`
		} `json:"capture"`
	}
	for _, c := range []struct {
		files []string
		note  bool
	}{{[]string{now, now}, false}, {[]string{now, old}, true}} {
		out, errOut, code := runCLI(t, append([]string{"merge", "--fail-on", "never", "--format", "json"}, c.files...)...)
		if code != ExitOK {
			t.Fatalf("merge: exit %d: %s", code, errOut)
		}
		var m merged
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		// The note says the count is an estimate, of which report, and
		// which way it may be wrong.
		note := strings.Contains(strings.Join(m.Capture.Problems, "\n"), "roce_truncated is estimated for "+old+
			" (without roce_truncated: a report of an earlier rocedump)")
		if note && !strings.Contains(strings.Join(m.Capture.Problems, "\n"), "may fall short") {
			t.Errorf("merge %v: the roce_truncated note does not say the estimate may fall short: %q", c.files, m.Capture.Problems)
		}
		if m.Capture.Truncated != 10 || m.Capture.RoCETruncated != 4 || note != c.note {
			t.Errorf("merge %v: truncated %d roce_truncated %d, note %v; want 10, 4, %v", c.files, m.Capture.Truncated, m.Capture.RoCETruncated, note, c.note)
		}
	}
}

// TestRoCETruncatedTrailerCut: a RoCE frame the snap length cut only in
// the 4 bytes that followed its IP datagram (an FCS) is truncated, yet its
// ICRC was checked: read, flows and the report count it among the RoCE
// frames cut all the same.
func TestRoCETruncatedTrailerCut(t *testing.T) {
	h := bth.BTH{Opcode: bth.OpcodeRCSendOnly, PKey: 0xffff, DestQP: 0x11, PSN: 1}
	frame := fuzzFrame(0, 1, 0, false, false, append(h.AppendHeaders(nil), make([]byte, 64)...))
	path := filepath.Join(t.TempDir(), "trailer_cut.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewPcapWriter(f, capture.LinkTypeEthernet, 0)
	if err == nil {
		err = w.WritePacket(time.Unix(1700000000, 0), frame, len(frame)+4)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	const want = "1 packet read, 1 RoCE, 0 malformed, 1 truncated, 0 ICRC bad"
	for _, cmd := range []string{"read", "flows"} {
		if _, errOut, _ := runCLI(t, cmd, path); !strings.Contains(errOut, want) {
			t.Errorf("%s summary: %q, want %q", cmd, errOut, want)
		}
	}
	out, errOut, code := runCLI(t, "report", "--fail-on", "never", "--format", "json", path)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	var rep struct {
		Capture struct {
			Truncated     uint64 `json:"truncated"`
			RoCETruncated uint64 `json:"roce_truncated"`
			ICRCChecked   uint64 `json:"icrc_checked"`
		} `json:"capture"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if c := rep.Capture; c.Truncated != 1 || c.RoCETruncated != 1 || c.ICRCChecked != 1 {
		t.Errorf("report capture: truncated %d roce_truncated %d icrc_checked %d, want 1, 1, 1", c.Truncated, c.RoCETruncated, c.ICRCChecked)
	}
}

// TestLiveRoCETruncated: live, whose pass is the offline one's
// (frameAnalyzer), writes the same capture counts into its report as
// `rocedump report` on the frames it wrote: truncated counts every cut
// frame, roce_truncated the RoCE ones, and its text report's capture line
// says "5 truncated (2 RoCE)" as the offline one does.
func TestLiveRoCETruncated(t *testing.T) {
	r, err := capture.Open(writeMixedCutCapture(t))
	if err != nil {
		t.Fatal(err)
	}
	var frames []liveFrame
	var lt capture.LinkType
	for {
		var rec capture.Record
		err := r.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		frames, lt = append(frames, liveFrame{data: bytes.Clone(rec.Data), orig: rec.OrigLen}), rec.LinkType
	}
	r.Close()
	for _, format := range []string{"json", "text"} {
		src := &fakeLive{frames: frames, lt: lt}
		dir := t.TempDir()
		o, _, errOut := liveTestOptions(dir)
		o.Count, o.Report.Format = len(frames), format
		o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
		if err := liveRun(o); err != nil {
			t.Fatalf("live: %v\n%s", err, errOut)
		}
		live, err := os.ReadFile(o.Report.Output)
		if err != nil {
			t.Fatal(err)
		}
		if format == "text" {
			if !strings.Contains(strings.Join(strings.Fields(string(live)), " "), "5 truncated (2 RoCE)") {
				t.Errorf("live text report does not say 5 truncated (2 RoCE):\n%s", live)
			}
			continue
		}
		got := reportJSON(t, live)
		c := got["capture"].(map[string]any)
		if c["truncated"] != 5.0 || c["roce_truncated"] != 2.0 {
			t.Errorf("live report: truncated %v roce_truncated %v, want 5 and 2", c["truncated"], c["roce_truncated"])
		}
		sameReport(t, "mixed cut frames", offlineReport(t, liveWrittenFiles(t, errOut.String(), o.Write)...), got)
	}
}
