package cli

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/bench"
	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/reports"
)

// TestWorkersGiveOneWorkersOutput runs `rocedump report` and `rocedump
// flows` on every generated and real capture (and on all the generated
// ones at once, merged in time order, gzip-compressed ones included) with
// 1, 2 and 3 workers and requires byte-identical output: a sharded pass
// must not change a report. It runs again with blocks of a few frames
// and looking ahead at every frame, so that the relay's rounds end
// everywhere in the captures.
func TestWorkersGiveOneWorkersOutput(t *testing.T) {
	topo := topologyFile("report_pod.yaml")
	inputs := [][]string{captures(t, "gen", "*.pcap*")}
	for _, dir := range []string{"gen", "real"} {
		for _, f := range captures(t, dir, "*.pcap*") {
			inputs = append(inputs, []string{f})
		}
	}
	commands := [][]string{
		{"report", "--format", "json", "--topology", topo, "--fail-on", "never"},
		{"report", "--format", "text", "--topology", topo, "--fail-on", "never"},
		{"report", "--format", "html", "--topology", topo, "--fail-on", "never"}, // draws the per-flow series
		{"flows", "--format", "json"},
	}
	for _, small := range []bool{false, true} {
		if small {
			defer setBlocks(blockFrames, blockBytes, roundsInFlight)
			setBlocks(5, 700, 2)
			defer func(l int) { lookAhead = l }(lookAhead)
			lookAhead = lookAheadAlways
		}
		for _, in := range inputs {
			name := filepath.Base(in[0])
			if len(in) > 1 {
				name = fmt.Sprintf("%d-generated-merged", len(in))
			}
			if small {
				name += "/small-blocks"
			}
			t.Run(name, func(t *testing.T) {
				for _, cmd := range commands {
					run := func(workers int) (string, string, int) {
						args := append(append([]string{}, cmd...), fmt.Sprintf("--workers=%d", workers))
						return runCLI(t, append(args, in...)...)
					}
					wantOut, wantErr, wantCode := run(1)
					for _, n := range []int{2, 3} {
						out, errOut, code := run(n)
						if code != wantCode || errOut != wantErr {
							t.Errorf("%s with %d workers: exit %d, stderr %q; with 1: exit %d, stderr %q", cmd[0], n, code, errOut, wantCode, wantErr)
						}
						if out != wantOut {
							t.Errorf("%s %s with %d workers differs from 1 worker: %s", cmd[0], cmd[2], n, firstDiff(wantOut, out))
						}
					}
				}
			})
		}
	}
}

// setBlocks sets the relay's block sizes and rounds in flight; blocks of
// fewer frames than a batch also make the relay read fewer at once, so
// that rounds end everywhere.
func setBlocks(frames, bytes, inFlight int) {
	blockFrames, blockBytes, roundsInFlight = frames, bytes, inFlight
	relayBatch = batchFrames
	if frames < batchFrames {
		relayBatch = max(frames/2, 1)
	}
}

// TestWorkersReadStandardInputOnce: standard input can be read only once,
// and the relay reads it for every worker.
func TestWorkersReadStandardInputOnce(t *testing.T) {
	path := captures(t, "gen", "incident_demo.pcap")[0]
	topo := topologyFile("report_pod.yaml")
	cmd := []string{"report", "--format", "json", "--topology", topo, "--fail-on", "never"}
	want, _, _ := runCLI(t, append(cmd, "--workers=1", path)...)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer func(in *os.File) { os.Stdin = in }(os.Stdin)
	os.Stdin = f
	got, errOut, code := runCLI(t, append(cmd, "--workers=2", "-")...)
	if code != 0 {
		t.Fatalf("--workers=2 on standard input: exit %d, %s", code, errOut)
	}
	// The report names its input: standard input, not the file.
	got = strings.ReplaceAll(got, `"-"`, strconv.Quote(path))
	if got != want {
		t.Errorf("--workers=2 on standard input differs from one worker on the file: %s", firstDiff(want, got))
	}
}

// TestWorkersFlag: a negative --workers is a usage error (exit 2).
func TestWorkersFlag(t *testing.T) {
	capture := captures(t, "gen", "clean_allreduce.pcap")[0]
	for _, cmd := range []string{"report", "flows"} {
		_, errOut, code := runCLI(t, cmd, "--workers=-1", capture)
		if code != 2 || !strings.Contains(errOut, "--workers") {
			t.Errorf("%s --workers=-1: exit %d, stderr %q; want 2 and a word on --workers", cmd, code, errOut)
		}
	}
}

// TestManyWorkers: more workers than maxWorkers run as maxWorkers, with
// a warning that says so (and none at maxWorkers or below), and with many
// workers (tiny blocks for each) the output is still one worker's.
func TestManyWorkers(t *testing.T) {
	if got := passWorkers(analyzeOptions{Shard: func(int, int) packetSink { return nil }, Workers: 100_000}); got != maxWorkers {
		t.Errorf("--workers=100000: %d workers, want %d", got, maxWorkers)
	}
	capture := captures(t, "gen", "incident_demo.pcap")[0]
	for _, cmd := range [][]string{{"report", "--format", "json"}, {"flows", "--format", "json"}, {"read", "--format", "json"}} {
		want, _, wantCode := runCLI(t, append(cmd, "--workers=1", capture)...)
		for _, n := range []int{64, maxWorkers, 1000} {
			got, errOut, code := runCLI(t, append(cmd, fmt.Sprintf("--workers=%d", n), capture)...)
			if code != wantCode || got != want {
				t.Errorf("%s --workers=%d: exit %d (%s), want %d; output differs: %s", cmd[0], n, code, errOut, wantCode, firstDiff(want, got))
			}
			warned := strings.Contains(errOut, fmt.Sprintf("warning: --workers %d: running %d goroutines", n, maxWorkers))
			if warned != (n > maxWorkers) {
				t.Errorf("%s --workers=%d: stderr %q; want a warning of the cap only above %d", cmd[0], n, errOut, maxWorkers)
			}
		}
	}
}

// TestPassGC: an analysis pass collects garbage less often (passGCPercent)
// unless GOGC is set, and puts the setting back afterwards.
func TestPassGC(t *testing.T) {
	t.Setenv("GOGC", "")
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := collectLessDuringPass()
	if got := debug.SetGCPercent(passGCPercent); got != passGCPercent {
		t.Errorf("GOGC during the pass %d, want %d", got, passGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC after the pass %d, want 100 back", got)
	}
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	restore = collectLessDuringPass()
	if got := debug.SetGCPercent(50); got != 50 {
		t.Errorf("GOGC=50 in the environment: %d during the pass", got)
	}
	restore()
}

// TestWorkersCloseSeries: on a capture of more flows than get a series,
// the shards of a pass on several workers stop keeping series once the
// flows before their next block are enough (seriesShard), and the
// per-flow series of the pass (only the HTML report draws them) and the
// report are still those of one worker.
func TestWorkersCloseSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a capture of 7,680 flows")
	}
	f := bench.Fabric{Rails: 2, Nodes: 16, QPsPerPeer: 8, MsgBytes: 4096, MTU: 4096, Snaplen: 96, Messages: 2}
	path := filepath.Join(t.TempDir(), "flows.pcap")
	if _, err := bench.Generate(f, f.Messages*f.Connections()*f.FramesPerMessage(), path); err != nil {
		t.Fatal(err)
	}
	defer setBlocks(blockFrames, blockBytes, roundsInFlight)
	setBlocks(256, 256*128, 4)

	pass := func(workers int) (tl *reports.Timeline, rows int, report string) {
		shards := &collectorShards{}
		if _, err := analyze(analyzeOptions{Files: []string{path}, Shard: shards.shard, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		for _, c := range shards.collectors {
			rows += c.SeriesRows()
		}
		tl = shards.merged().Timeline()
		out, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", fmt.Sprintf("--workers=%d", workers), path)
		if code != 0 || !strings.HasPrefix(out, "{") {
			t.Fatalf("report with %d workers: exit %d, %s", workers, code, errOut)
		}
		return tl, rows, out
	}
	wantTL, _, wantReport := pass(1)
	if len(wantTL.FlowBits) != reports.SeriesFlows {
		t.Fatalf("one worker: %d flow series, want %d", len(wantTL.FlowBits), reports.SeriesFlows)
	}
	for _, n := range []int{2, 3} {
		tl, rows, report := pass(n)
		if !reflect.DeepEqual(tl, wantTL) {
			t.Errorf("%d workers: the timeline differs from one worker's (%d flow series, want %d)", n, len(tl.FlowBits), len(wantTL.FlowBits))
		}
		if report != wantReport {
			t.Errorf("%d workers: the report differs from one worker's: %s", n, firstDiff(wantReport, report))
		}
		// Open, every shard would keep its own first SeriesFlows flows'
		// series; closed, the shards keep the pass's first flows and
		// those that appeared in the blocks in flight when the count
		// passed SeriesFlows.
		if rows < reports.SeriesFlows || rows >= reports.SeriesFlows+(n-1)*reports.SeriesFlows/2 {
			t.Errorf("%d workers: %d series rows over the shards, want from %d to well below %d", n, rows, reports.SeriesFlows, n*reports.SeriesFlows)
		}
		t.Logf("%d workers: %d series rows over the shards (%d flows)", n, rows, f.Flows())
	}
}

// TestWorkersFarFutureTimes: frame times on both sides of what int64
// nanoseconds hold (a pcapng timestamp in microseconds can say any year)
// still give every worker count the output of one worker: the relay
// orders frame times as times, not as Record.TimeNanos (which wraps).
func TestWorkersFarFutureTimes(t *testing.T) {
	// ECN marks whose reaction window is still open at the end: how each
	// shard ends them depends on the capture's last time.
	src, err := capture.Open(captures(t, "gen", "report_ecn.pcap")[0])
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var b bytes.Buffer
	le := binary.LittleEndian
	block := func(typ uint32, body []byte) {
		n := 12 + (len(body)+3)&^3
		h := make([]byte, n)
		le.PutUint32(h[0:], typ)
		le.PutUint32(h[4:], uint32(n))
		copy(h[8:], body)
		le.PutUint32(h[n-4:], uint32(n))
		b.Write(h)
	}
	shb := make([]byte, 16)
	le.PutUint32(shb[0:], 0x1A2B3C4D)
	le.PutUint16(shb[4:], 1)
	le.PutUint64(shb[8:], ^uint64(0))
	block(0x0A0D0D0A, shb)
	idb := make([]byte, 8) // Ethernet, no options: microsecond times
	le.PutUint16(idb[0:], uint16(capture.LinkTypeEthernet))
	block(1, idb)
	// The frames keep their spacing, moved so that the capture's middle
	// frame falls on 2262-04-11 23:47:16.854775 UTC, past which Unix
	// nanoseconds no longer fit in an int64.
	var recs []capture.Record
	for {
		var rec capture.Record
		if err := src.Next(&rec); err != nil {
			break
		}
		rec.Data = bytes.Clone(rec.Data)
		recs = append(recs, rec)
	}
	const wrapUs = int64(math.MaxInt64 / 1000)
	offset := wrapUs - recs[len(recs)/2].Timestamp.UnixMicro()
	for _, rec := range recs {
		us := uint64(offset + rec.Timestamp.UnixMicro())
		epb := make([]byte, 20+len(rec.Data))
		le.PutUint32(epb[4:], uint32(us>>32))
		le.PutUint32(epb[8:], uint32(us))
		le.PutUint32(epb[12:], uint32(len(rec.Data)))
		le.PutUint32(epb[16:], uint32(rec.OrigLen))
		copy(epb[20:], rec.Data)
		block(6, epb)
	}
	path := filepath.Join(t.TempDir(), "far.pcapng")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	defer setBlocks(blockFrames, blockBytes, roundsInFlight)
	setBlocks(5, 700, 2)
	for _, cmd := range [][]string{{"report", "--format", "json", "--fail-on", "never"}, {"flows", "--format", "json"}} {
		want, _, wantCode := runCLI(t, append(cmd, "--workers=1", path)...)
		if !strings.Contains(want, `"2262-04-11T23:4`) {
			t.Fatalf("%s: no time on 2262-04-11 in the output of one worker:\n%.400s", cmd[0], want)
		}
		for _, n := range []int{2, 3} {
			got, errOut, code := runCLI(t, append(cmd, fmt.Sprintf("--workers=%d", n), path)...)
			if code != wantCode || got != want {
				t.Errorf("%s with %d workers: exit %d (%s), want %d; %s", cmd[0], n, code, errOut, wantCode, firstDiff(want, got))
			}
		}
	}
}
