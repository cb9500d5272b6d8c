package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/filter"
	"github.com/rocedump/rocedump/reports"
)

// liveFrame is one frame a fake capture delivers.
type liveFrame struct {
	data []byte
	orig int
}

// fakeLive is a liveSource that delivers frames as a capture would: each
// stamped with the time it is read, then ErrLiveTimeout after a short
// wait. With loop set it replays its frames for ever, a few at a time.
type fakeLive struct {
	frames  []liveFrame
	lt      capture.LinkType
	snap    int
	loop    bool
	noPause bool // loop as fast as the reader reads
	// stamp, if set, gives the capture time of the n-th frame (from 1)
	// instead of the time it is read: a clock set back, say.
	stamp func(n int) time.Time

	mu     sync.Mutex
	i, n   int
	stats  capture.LiveStats
	closed bool
}

func (f *fakeLive) Next(rec *capture.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return io.EOF
	}
	if f.i == len(f.frames) {
		if !f.loop {
			f.mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			f.mu.Lock()
			return capture.ErrLiveTimeout
		}
		f.i = 0
	}
	if f.loop && !f.noPause && f.n%32 == 31 {
		time.Sleep(time.Millisecond) // a steady trickle, not a flood
	}
	fr := f.frames[f.i]
	f.i++
	f.n++
	f.stats.Received++
	ts := time.Now().UTC()
	if f.stamp != nil {
		ts = f.stamp(f.n).UTC()
	}
	*rec = capture.Record{Timestamp: ts, TimeNanos: ts.UnixNano(), CapLen: len(fr.data), OrigLen: fr.orig, LinkType: f.lt, Number: f.n, Data: fr.data}
	return nil
}

func (f *fakeLive) Stats() (capture.LiveStats, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stats, nil
}
func (f *fakeLive) LinkType() capture.LinkType { return f.lt }
func (f *fakeLive) SnapLen() int               { return f.snap }
func (f *fakeLive) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// loadLiveFrames reads a capture's frames that match expr (pcap-filter
// syntax, compiled by rocedump's own filter package, "" for all): what a
// live capture with that BPF filter would see of the capture replayed.
func loadLiveFrames(t *testing.T, path, expr string) ([]liveFrame, capture.LinkType) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		out []liveFrame
		lt  capture.LinkType
		flt *filter.Filter
	)
	for {
		var rec capture.Record
		err := r.Next(&rec)
		if err == io.EOF {
			return out, lt
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if flt == nil {
			lt = rec.LinkType
			if flt, err = filter.Compile(expr, uint32(lt)); err != nil {
				t.Fatalf("filter: %v", err)
			}
		}
		if rec.CapLen != rec.OrigLen {
			t.Fatalf("%s frame %d is cut (%d of %d bytes): replay needs whole frames", path, rec.Number, rec.CapLen, rec.OrigLen)
		}
		if flt.Match(rec.Data) {
			out = append(out, liveFrame{data: bytes.Clone(rec.Data), orig: rec.OrigLen})
		}
	}
}

// genCapture is the path of a generated capture.
func genCapture(name string) string {
	return filepath.Join(repoRoot, "testdata", "pcaps", "gen", name)
}

// liveTestOptions are options for a live run in a test: JSON report to a
// file, no --fail-on, quick refreshes so that the findings so far run
// several times during the capture.
func liveTestOptions(dir string) (*LiveOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	o := &LiveOptions{
		IO:        IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Interface: "fake0",
		BufferMiB: 64,
		Filter:    capture.DefaultLiveFilter(),
		Interval:  20 * time.Millisecond,
		Duration:  20 * time.Second, // a safety net: tests end on -c or a cancel
		Top:       10,
		Write:     filepath.Join(dir, "live.pcap"),
		Report: ReportOptions{
			Format: "json", Output: filepath.Join(dir, "live.json"), FailOn: "never",
			DataDSCP: 26, CNPDSCP: 48, DataPCP: 3, CNPPCP: 6, ECNWindow: time.Millisecond,
		},
	}
	return o, &out, &errOut
}

// reportJSON reads a JSON report and drops what only a live capture has:
// the drop counters (files cannot tell them).
func reportJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("report is not JSON: %v\n%.500s", err, data)
	}
	if c, ok := m["capture"].(map[string]any); ok {
		delete(c, "drops")
	}
	return m
}

// offlineReport runs `rocedump report --format json` on files.
func offlineReport(t *testing.T, files ...string) map[string]any {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"report", "--format", "json", "--fail-on", "never"}, files...)...)
	if code != ExitOK {
		t.Fatalf("offline report: exit %d: %s", code, stderr)
	}
	return reportJSON(t, []byte(out))
}

// sameReport fails the test when two JSON reports differ, showing where.
func sameReport(t *testing.T, what string, want, got map[string]any) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	w, _ := json.MarshalIndent(want, "", "  ")
	g, _ := json.MarshalIndent(got, "", "  ")
	t.Errorf("%s: live report differs from the offline one\n%s", what, firstDiff(string(w), string(g)))
}

// readFrames reads every frame of pcap files in order, failing on any
// error (a cut-off file included).
func readFrames(t *testing.T, files ...string) []capture.Record {
	t.Helper()
	var out []capture.Record
	for _, f := range files {
		r, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			var rec capture.Record
			err := r.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil {
				r.Close()
				t.Fatalf("%s: %v", f, err)
			}
			rec.Data = bytes.Clone(rec.Data)
			out = append(out, rec)
		}
		r.Close()
	}
	return out
}

// sameFrames checks that the written frames are the replayed ones, cut to
// the snap length, in order.
func sameFrames(t *testing.T, want []liveFrame, got []capture.Record, snap int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("-w files hold %d frames, want %d", len(got), len(want))
	}
	for i, w := range want {
		data := w.data
		if snap > 0 && len(data) > snap {
			data = data[:snap]
		}
		if !bytes.Equal(got[i].Data, data) || got[i].OrigLen != w.orig {
			t.Fatalf("frame %d: written %d of %d bytes, want %d of %d (or the bytes differ)", i+1, got[i].CapLen, got[i].OrigLen, len(data), w.orig)
		}
	}
}

// TestLiveEqualsOffline: a live capture (here a fake one replaying
// generated captures) gives the same report as `rocedump report` on the
// files it wrote, rotated or not, and the files hold the frames captured.
func TestLiveEqualsOffline(t *testing.T) {
	tests := []struct {
		name     string
		captures []string
		sizeMB   float64
		count    int // -W
	}{
		{"clean allreduce", []string{"clean_allreduce.pcap"}, 0, 0},
		{"retransmissions", []string{"retransmissions.pcap"}, 0, 0},
		{"congestion, rotated by size", []string{"congestion.pcap"}, 0.01, 0},
		{"storage and ssh through the default filter", []string{"report_storage.pcap", "report_ssh_bootstrap.pcap"}, 0, 0},
		{"mirror, vlan, pcapng", []string{"gre_teb.pcapng", "erspan1_qinq.pcap"}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var frames []liveFrame
			var lt capture.LinkType
			for _, c := range tt.captures {
				fs, l := loadLiveFrames(t, genCapture(c), capture.DefaultLiveFilter())
				frames, lt = append(frames, fs...), l
			}
			src := &fakeLive{frames: frames, lt: lt}
			dir := t.TempDir()
			o, _, errOut := liveTestOptions(dir)
			o.Count, o.FileSizeMB, o.FileCount = len(frames), tt.sizeMB, tt.count
			o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
			if err := liveRun(o); err != nil {
				t.Fatalf("live: %v\n%s", err, errOut)
			}
			files := liveWrittenFiles(t, errOut.String(), o.Write)
			if tt.sizeMB > 0 && len(files) < 2 {
				t.Errorf("-C %v wrote %d file(s), want several", tt.sizeMB, len(files))
			}
			sameFrames(t, frames, readFrames(t, files...), 0)
			live, err := os.ReadFile(o.Report.Output)
			if err != nil {
				t.Fatal(err)
			}
			got := reportJSON(t, live)
			sameReport(t, tt.name, offlineReport(t, files...), got)
			if n := got["capture"].(map[string]any)["packets"].(float64); int(n) != len(frames) {
				t.Errorf("report counts %v packets, want %d", n, len(frames))
			}
		})
	}
}

// TestLiveClockBack: when the capture's clock steps back (the host's
// clock set back mid-capture), the live report says so, as `rocedump
// report` on the -w file does: the two reports are the same.
func TestLiveClockBack(t *testing.T) {
	frames, lt := loadLiveFrames(t, genCapture("retransmissions.pcap"), capture.DefaultLiveFilter())
	base := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	half := len(frames) / 2
	src := &fakeLive{frames: frames, lt: lt, stamp: func(n int) time.Time {
		at := base.Add(time.Duration(n) * 10 * time.Microsecond)
		if n > half {
			at = at.Add(-2 * time.Second) // the clock set back 2 s
		}
		return at
	}}
	dir := t.TempDir()
	o, _, errOut := liveTestOptions(dir)
	o.Count = len(frames)
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	if err := liveRun(o); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	live, err := os.ReadFile(o.Report.Output)
	if err != nil {
		t.Fatal(err)
	}
	got := reportJSON(t, live)
	want := offlineReport(t, o.Write)
	sameReport(t, "clock set back", want, got)
	if !strings.Contains(string(live), reports.ClockBackNote) {
		t.Errorf("the live report does not say the clock went back")
	}
	if !strings.Contains(errOut.String(), reports.ClockBackNote) {
		t.Errorf("live's stderr does not say the clock went back:\n%s", errOut)
	}
}

// liveWrittenFiles lists the -w files in the order written, from the
// files on disk: path, path1, path2, ...
func liveWrittenFiles(t *testing.T, stderr, path string) []string {
	t.Helper()
	var files []string
	for i := 0; ; i++ {
		name := capture.RotatedName(path, i, 0)
		if _, err := os.Stat(name); err != nil {
			break
		}
		files = append(files, name)
	}
	if len(files) == 0 {
		t.Fatalf("no -w file %s\n%s", path, stderr)
	}
	return files
}

// TestLiveCancelMidCapture: cancelling the run (what Ctrl-C does) while
// packets flow ends it with a complete report and a complete -w file that
// holds exactly the packets the report counts.
func TestLiveCancelMidCapture(t *testing.T) {
	frames, lt := loadLiveFrames(t, genCapture("congestion.pcap"), "")
	src := &fakeLive{frames: frames, lt: lt, loop: true}
	dir := t.TempDir()
	o, _, errOut := liveTestOptions(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Context = ctx
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	o.started = func() { time.AfterFunc(300*time.Millisecond, cancel) }
	start := time.Now()
	if err := liveRun(o); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the run took %v after the cancel at 300ms", d)
	}
	checkCancelled(t, o, len(frames))
}

// checkCancelled checks the output of a run stopped mid-capture: the -w
// file reads back whole, and the report counts exactly its packets.
func checkCancelled(t *testing.T, o *LiveOptions, min int) {
	t.Helper()
	recs := readFrames(t, o.Write)
	data, err := os.ReadFile(o.Report.Output)
	if err != nil {
		t.Fatal(err)
	}
	rep := reportJSON(t, data)
	n := int(rep["capture"].(map[string]any)["packets"].(float64))
	if n != len(recs) {
		t.Errorf("report counts %d packets, the -w file holds %d", n, len(recs))
	}
	if n < min {
		t.Errorf("only %d packets captured before the stop; want at least %d", n, min)
	}
	sameReport(t, "stopped mid-capture", offlineReport(t, o.Write), rep)
}

// TestLiveDrops: the capture's drop counters reach the report's capture
// section and make a critical capture-health finding.
func TestLiveDrops(t *testing.T) {
	frames, lt := loadLiveFrames(t, genCapture("retransmissions.pcap"), "")
	src := &fakeLive{frames: frames, lt: lt, stats: capture.LiveStats{KernelDrops: 1532, InterfaceDrops: 7}}
	o, _, errOut := liveTestOptions(t.TempDir())
	o.Count = len(frames)
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	if err := liveRun(o); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	data, _ := os.ReadFile(o.Report.Output)
	var rep struct {
		Capture struct {
			Drops *struct{ Kernel, Interface uint64 } `json:"drops"`
		} `json:"capture"`
		Findings []struct {
			Kind, Severity string
		} `json:"findings"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if d := rep.Capture.Drops; d == nil || d.Kernel != 1532 || d.Interface != 7 {
		t.Errorf("capture.drops = %+v, want kernel 1532, interface 7", d)
	}
	if len(rep.Findings) == 0 || rep.Findings[0].Kind != "capture_health" || rep.Findings[0].Severity != "critical" {
		t.Errorf("first finding %+v, want a critical capture_health one for the drops", rep.Findings)
	}
	if !strings.Contains(errOut.String(), "dropped 1532 in the kernel, 7 at the interface") {
		t.Errorf("stderr does not report the drops:\n%s", errOut)
	}
}

// TestLiveView: off a terminal, the live view is one plain line per
// refresh on stderr, and stdout carries only the report.
func TestLiveView(t *testing.T) {
	frames, lt := loadLiveFrames(t, genCapture("congestion.pcap"), "")
	src := &fakeLive{frames: frames, lt: lt, loop: true}
	o, out, errOut := liveTestOptions(t.TempDir())
	o.Report.Output, o.Write = "", ""
	o.Interval, o.Duration = 50*time.Millisecond, 400*time.Millisecond
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	if err := liveRun(o); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	reportJSON(t, out.Bytes()) // stdout is the report alone
	var lines int
	clocks := map[string]bool{} // refreshes under a second apart show tenths: no two alike
	for _, l := range strings.Split(errOut.String(), "\n") {
		if rest, ok := strings.CutPrefix(l, "rocedump live fake0 "); ok {
			lines++
			clock, _, _ := strings.Cut(rest, ": ")
			if _, dec, _ := strings.Cut(clock, "."); len(dec) != 2 {
				t.Errorf("view line's clock %q lacks hundredths at a 50ms interval: %s", clock, l)
			}
			clocks[clock] = true
			for _, w := range []string{"packets (", "b/s), ", "CNP ", "CE ", "retx ", "drops 0 kernel 0 interface", "findings "} {
				if !strings.Contains(l, w) {
					t.Errorf("view line lacks %q: %s", w, l)
				}
			}
		}
	}
	if lines < 3 {
		t.Errorf("%d view lines in 400ms at a 50ms interval; stderr:\n%s", lines, errOut)
	}
	if len(clocks) < 3 {
		t.Errorf("%d view lines show only %d times: %v", lines, len(clocks), clocks)
	}
}

// TestLiveClock: the view's clock and the decimals a refresh interval
// needs.
func TestLiveClock(t *testing.T) {
	for _, c := range []struct {
		d        time.Duration
		interval time.Duration
		want     string
	}{
		{83 * time.Second, time.Second, "00:01:23"},
		{83*time.Second + 600*time.Millisecond, 2 * time.Second, "00:01:24"},
		{1500 * time.Millisecond, 500 * time.Millisecond, "00:00:01.5"},
		{3*time.Hour + 59*time.Minute + 59*time.Second + 960*time.Millisecond, 100 * time.Millisecond, "04:00:00.0"},
		{1234 * time.Millisecond, 50 * time.Millisecond, "00:00:01.23"},
		{1234567 * time.Microsecond, time.Millisecond, "00:00:01.235"},
		{1234567 * time.Microsecond, time.Microsecond, "00:00:01.235"},
	} {
		if got := liveClock(c.d, clockDecimals(c.interval)); got != c.want {
			t.Errorf("liveClock(%v) at interval %v = %q, want %q", c.d, c.interval, got, c.want)
		}
	}
}

// TestLiveScreen pins the full-screen view for one state.
func TestLiveScreen(t *testing.T) {
	v := &liveView{
		Interface: "ens1f1", Elapsed: 83 * time.Second, Packets: 1234567, RoCE: 1200000, PPS: 105200, BPS: 85.31e9, Flows: 512,
		CNPs: 120, CNPRate: 12, CE: 3400, CERate: 340, Retx: 12, RetxRate: 1, NAKs: 3,
		Drops:   capture.LiveStats{KernelDrops: 10},
		Top:     []liveFlowRow{{ID: 1, Src: "10.0.0.1", Dst: "10.0.0.2", QPN: 0x2c0, BPS: 12.34e9, Packets: 123456}},
		Writing: "/captures/x.pcap2", Files: 3, FindingsAt: 82 * time.Second, Critical: 1,
	}
	var buf bytes.Buffer
	sc := &liveScreen{w: &buf, term: true}
	sc.draw(v)
	got := buf.String()
	for _, want := range []string{
		ansiClear, "rocedump live on ens1f1   00:01:23",
		"packets  1234567 (105.2 kpps, 85.31 Gb/s)   RoCE 1200000   QP flows 512",
		"CNPs     120 (12/s)   CE marks 3400 (340/s)   retransmitted 12 (1.0/s)   NAKs 3   PSN gaps 0",
		"drops    10 in the kernel, 0 at the interface (0.00% of the packets: loss findings are unreliable)",
		"writing  /captures/x.pcap2 (file 3)",
		"      1  10.0.0.1 > 10.0.0.2                0x0002c0  12.34 Gb/s     123456       0       0       0",
		"FINDINGS SO FAR (00:01:22): 1 critical, 0 warning, 0 info (preliminary: flows pair at the end)\033[K",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen lacks %q:\n%s", want, got)
		}
	}
	buf.Reset()
	sc.draw(v)
	if !strings.HasPrefix(buf.String(), ansiHome) || strings.Contains(buf.String(), ansiClear) {
		t.Errorf("second draw does not redraw in place: %q", buf.String()[:20])
	}
}

// TestLiveOpenErrors: no permission, no such interface, no libpcap and a
// bad filter are usage errors (exit 2) that say what to do.
func TestLiveOpenErrors(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want []string
	}{
		{"permission", &capture.LiveError{Interface: "eth1", Err: capture.ErrLivePermission, Reason: "socket: Operation not permitted"},
			[]string{"rocedump live needs root or CAP_NET_RAW: sudo setcap cap_net_raw,cap_net_admin=eip $(which rocedump)", "Operation not permitted"}},
		{"no such interface", &capture.LiveError{Interface: "eth9", Err: capture.ErrNoSuchInterface, Available: []string{"lo", "eth0", "any"}},
			[]string{`no interface "eth9"; the interfaces are: lo, eth0, any`}},
		{"no cgo", &capture.LiveError{Interface: "eth1", Err: capture.ErrNoLiveCapture},
			[]string{"live capture needs a build with cgo and libpcap: CGO_ENABLED=1 and libpcap-dev"}},
		{"bad filter", &capture.LiveError{Interface: "eth1", Err: capture.ErrLiveFilter, Reason: "syntax error"},
			[]string{"--filter: syntax error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, _, _ := liveTestOptions(t.TempDir())
			o.open = func(capture.LiveConfig) (liveSource, error) { return nil, tt.err }
			err := liveRun(o)
			if code := exitCode(err); code != ExitUsage {
				t.Fatalf("exit %d (%v), want %d", code, err, ExitUsage)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestLiveFlags: bad flag combinations are usage errors before anything
// is opened.
func TestLiveFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no interface", []string{"live"}, "-i IFACE is required"},
		{"arguments", []string{"live", "-i", "x", "extra"}, `takes no arguments, got "extra"`},
		{"snaplen", []string{"live", "-i", "x", "--snaplen", "-1"}, "--snaplen"},
		{"rotation without -w", []string{"live", "-i", "x", "-C", "10"}, "need -w FILE"},
		{"ring without rotation", []string{"live", "-i", "x", "-w", "f.pcap", "-W", "3"}, "-W needs -C or -G"},
		{"-w to stdout", []string{"live", "-i", "x", "-w", "-"}, "standard output carries the report"},
		{"report over the capture", []string{"live", "-i", "x", "-w", "f.pcap", "-o", "./f.pcap"}, "the report would replace the capture"},
		{"report over a rotated file", []string{"live", "-i", "x", "-w", "f.pcap", "-C", "1", "-W", "3", "-o", "f.pcap0"}, "-o f.pcap0 is a file -w f.pcap writes"},
		{"format", []string{"live", "-i", "x", "--format", "csv"}, "--format"},
		{"fail-on", []string{"live", "-i", "x", "--fail-on", "info"}, "--fail-on"},
		{"buffer", []string{"live", "-i", "x", "-B", "0"}, "--buffer-size"},
		{"negative interval", []string{"live", "-i", "x", "--interval=-1s"}, "--interval -1s"},
		{"negative duration", []string{"live", "-i", "x", "--duration=-5m"}, "--duration -5m0s"},
		{"negative count", []string{"live", "-i", "x", "-c", "-1"}, "-c -1"},
		{"negative top", []string{"live", "-i", "x", "--top", "-1"}, "--top -1"},
		{"NaN file size", []string{"live", "-i", "x", "-w", "f.pcap", "-C", "NaN"}, "-C NaN: want 0 (no size limit)"},
		{"infinite file size", []string{"live", "-i", "x", "-w", "f.pcap", "-C", "Inf"}, "-C +Inf"},
		{"file size past int64", []string{"live", "-i", "x", "-w", "f.pcap", "-C", "1e13"}, "-C 1e+13"},
		{"rotation past int64 ns", []string{"live", "-i", "x", "-w", "f.pcap", "-G", "10000000000"}, "-G 10000000000"},
		{"negative ring", []string{"live", "-i", "x", "-w", "f.pcap", "-G", "1", "-W", "-1"}, "-W -1"},
		{"zero ECN window", []string{"live", "-i", "x", "--ecn-window", "0"}, "--ecn-window 0s: want a duration above 0"},
		{"negative ECN window", []string{"live", "-i", "x", "--ecn-window=-1ms"}, "--ecn-window -1ms"},
		{"PCP past 7", []string{"live", "-i", "x", "--data-pcp", "8"}, "--data-pcp 8: want an 802.1Q priority, 0 to 7"},
		{"CNP PCP past 7", []string{"live", "-i", "x", "--cnp-pcp", "9"}, "--cnp-pcp 9: want an 802.1Q priority, 0 to 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("rocedump %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tt.args, " "), code, stderr, tt.want)
			}
		})
	}
}

// TestLiveFlagDefaults: the defaults the issue asks for, and the default
// filter when --filter is not given.
func TestLiveFlagDefaults(t *testing.T) {
	var got *LiveOptions
	cmd := NewCmdLive(IOStreams{Out: io.Discard, ErrOut: io.Discard}, func(o *LiveOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-i", "eth1"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.SnapLen != 128 || !got.Promisc || got.BufferMiB != 64 || got.Interval != time.Second || got.Immediate ||
		got.Filter != capture.DefaultLiveFilter() || got.Report.Format != "text" || got.Report.FailOn != "critical" {
		t.Errorf("defaults: %+v", got)
	}
	cmd = NewCmdLive(IOStreams{Out: io.Discard, ErrOut: io.Discard}, func(o *LiveOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-i", "eth1", "--filter", ""})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Filter != "" {
		t.Errorf("--filter '': filter %q, want none", got.Filter)
	}
}

// TestLiveDefaultFilter: the default filter keeps every frame of the
// RoCE, mirror, PFC and storage captures (tagged or not) and drops
// what no report reads.
func TestLiveDefaultFilter(t *testing.T) {
	flt, err := filter.Compile(capture.DefaultLiveFilter(), uint32(capture.LinkTypeEthernet))
	if err != nil {
		t.Fatalf("the default filter does not compile: %v", err)
	}
	_ = flt
	for _, c := range []string{"clean_allreduce.pcap", "retransmissions.pcap", "congestion.pcap", "gre_teb.pcapng", "erspan1_qinq.pcap",
		"mirror_erspan3_ipv6.pcapng", "transports.pcap", "report_storage.pcap", "storage.pcap"} {
		all, _ := loadLiveFrames(t, genCapture(c), "")
		kept, _ := loadLiveFrames(t, genCapture(c), capture.DefaultLiveFilter())
		if len(kept) != len(all) {
			t.Errorf("%s: the default filter keeps %d of %d frames", c, len(kept), len(all))
		}
	}
	all, _ := loadLiveFrames(t, genCapture("report_ssh_bootstrap.pcap"), "")
	kept, _ := loadLiveFrames(t, genCapture("report_ssh_bootstrap.pcap"), capture.DefaultLiveFilter())
	if len(kept) == 0 || len(kept) == len(all) {
		t.Errorf("report_ssh_bootstrap: kept %d of %d frames; want SSH and RoCE kept, NCCL bootstrap dropped", len(kept), len(all))
	}
	// NVMe/TCP discovery (tcp/8009) is storage: kept, unlike the bootstrap.
	disc := genCapture("report_nvme_discovery.pcap")
	all, _ = loadLiveFrames(t, disc, "")
	kept, _ = loadLiveFrames(t, disc, capture.DefaultLiveFilter())
	boot, _ := loadLiveFrames(t, disc, "tcp port 37011")
	if len(boot) == 0 || len(kept) != len(all)-len(boot) {
		t.Errorf("report_nvme_discovery: kept %d of %d frames; want all but the %d of the NCCL bootstrap", len(kept), len(all), len(boot))
	}
}

// TestLiveWriteError: a -w file that cannot be written is exit 2.
func TestLiveWriteError(t *testing.T) {
	o, _, _ := liveTestOptions(t.TempDir())
	o.Write = filepath.Join(o.Write, "no", "such", "dir", "x.pcap")
	src := &fakeLive{lt: capture.LinkTypeEthernet}
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	err := liveRun(o)
	if exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "-w:") {
		t.Errorf("got %v, want a -w usage error", err)
	}
	if !src.closed {
		t.Error("the capture was left open")
	}
}

// TestLiveUnsupportedLinkType: an interface of a link type rocedump does
// not decode is refused at once.
func TestLiveUnsupportedLinkType(t *testing.T) {
	o, _, _ := liveTestOptions(t.TempDir())
	o.open = func(capture.LiveConfig) (liveSource, error) {
		return &fakeLive{lt: capture.LinkTypeIEEE80211Radio}, nil
	}
	if err := liveRun(o); exitCode(err) != ExitUsage || !errors.Is(err, err) || !strings.Contains(err.Error(), "unsupported link type") {
		t.Errorf("got %v, want an unsupported link type error", err)
	}
}

// TestLiveReaderAllocs: the reader, which must keep up with the kernel,
// allocates nothing per frame: frames are copied into the batches it
// allocated once.
func TestLiveReaderAllocs(t *testing.T) {
	frames, lt := loadLiveFrames(t, genCapture("retransmissions.pcap"), "")
	const n = 200000
	src := &fakeLive{frames: frames, lt: lt, loop: true, noPause: true}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := newLiveReader(src, n)
	go r.run()
	got := 0
	for b := range r.full {
		got += len(b.recs)
		r.free <- b
	}
	runtime.ReadMemStats(&after)
	if got != n {
		t.Fatalf("read %d frames, want %d", got, n)
	}
	// The batches themselves: liveBatches times (records + buffer), and a
	// few for the goroutine and the channels.
	if per := float64(after.Mallocs-before.Mallocs) / n; per > 0.001 {
		t.Errorf("%.4f allocations per frame (%d in all), want none but the batches", per, after.Mallocs-before.Mallocs)
	}
}

// TestLiveWriteFails: a -w file that fails mid-capture (a full disk)
// stops the capture; the report of what was taken is still written, and
// the exit code is 2.
func TestLiveWriteFails(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	frames, lt := loadLiveFrames(t, genCapture("congestion.pcap"), "")
	src := &fakeLive{frames: frames, lt: lt, loop: true}
	o, _, errOut := liveTestOptions(t.TempDir())
	o.Write = "/dev/full"
	o.open = func(capture.LiveConfig) (liveSource, error) { return src, nil }
	err := liveRun(o)
	if exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "writing /dev/full") {
		t.Fatalf("got %v, want exit 2 for the write error\n%s", err, errOut)
	}
	data, rerr := os.ReadFile(o.Report.Output)
	if rerr != nil {
		t.Fatal(rerr)
	}
	rep := reportJSON(t, data)
	problems := rep["capture"].(map[string]any)["problems"].([]any)
	if len(problems) == 0 || !strings.Contains(problems[0].(string), "writing /dev/full") {
		t.Errorf("report problems %v, want the write error", problems)
	}
	if strings.Contains(errOut.String(), "wrote /dev/full") {
		t.Errorf("stderr claims the failed file was written:\n%s", errOut)
	}
}

// TestPrintWritten: after a write error the file that failed is not
// among the files said to be written; those rotated out before it are.
func TestPrintWritten(t *testing.T) {
	fail := errors.New("no space left on device")
	tests := []struct {
		name  string
		files []string
		err   error
		want  string
	}{
		{"written", []string{"a.pcap"}, nil, "rocedump: wrote a.pcap\n"},
		{"the only file failed", []string{"/dev/full"}, fail, ""},
		{"rotated, the last failed", []string{"a0", "a1", "a2"}, fail, "rocedump: wrote a0, a1 before writing a2 failed\n"},
		{"a ring reused the name that failed", []string{"a0", "a1", "a0"}, fail, "rocedump: wrote a1 before writing a0 failed\n"},
		{"a ring went round", []string{"a0", "a1", "a2", "a0", "a1"}, nil, "rocedump: wrote a0, a1, a2\n" +
			"rocedump: warning: the -W ring reused its files: they hold the last 3 of the 5 files written, so \"rocedump report\" on them covers less than this report\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		printWritten(&b, tt.files, tt.err)
		if b.String() != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, b.String(), tt.want)
		}
	}
}

// TestLiveScreenNotOnDevNull: with stdout on /dev/null (a character
// device, not a terminal) the live view goes to stderr, as for any
// redirected stdout; it was drawn on /dev/null, out of sight.
func TestLiveScreenNotOnDevNull(t *testing.T) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	errOut, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer errOut.Close()
	sc := newLiveScreen(IOStreams{Out: devNull, ErrOut: errOut})
	if sc.w != errOut || sc.term {
		t.Errorf("stdout on %s: the live view goes to %v (in place: %v), want stderr, one line per refresh", os.DevNull, sc.w, sc.term)
	}
}
