package cli

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// untimedCapture writes a little-endian pcapng of the real capture name
// with the frames untimed says as Simple Packet Blocks (no time) and the
// others as Enhanced Packet Blocks, and returns its path and the time
// every frame (numbered from 1) has in an analysis pass: its own, or, for
// an untimed frame, that of the frame before it, or for the frames before
// the first timed frame that of the first timed frame.
func untimedCapture(t *testing.T, name string, untimed func(n int) bool) (string, []time.Time) {
	t.Helper()
	le := binary.LittleEndian
	file := pcapngStart()
	times := []time.Time{{}} // times[0] unused
	lead := 0                // untimed frames before the first timed one
	eachRealRecord(t, name, func(n int, rec *capture.Record) {
		if untimed(n) {
			file = append(file, pcapngSPB(rec)...)
			times = append(times, times[n-1])
			if times[n].IsZero() {
				lead++
			}
			return
		}
		for i := 1; i <= lead; i++ {
			times[i] = rec.Timestamp
		}
		lead = 0
		times = append(times, rec.Timestamp)
		us := uint64(rec.Timestamp.UnixMicro())
		epb := le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 0), uint32(us>>32)), uint32(us))
		epb = le.AppendUint32(le.AppendUint32(epb, uint32(len(rec.Data))), uint32(rec.OrigLen))
		file = append(file, pcapngBlock(6, append(epb, rec.Data...))...)
	})
	src := filepath.Join(t.TempDir(), "mixed.pcapng")
	if err := os.WriteFile(src, file, 0o644); err != nil {
		t.Fatal(err)
	}
	return src, times
}

// TestUntimedFramesTakeNeighbourTime: a frame of a pcapng Simple Packet
// Block has no time. When one was a flow's first packet, flows and report
// gave the flow the zero Time as its first, a duration of 2562047h (the
// largest time.Duration) and rates and waits from the year 1. In an
// analysis pass an untimed frame now takes the time of the frame before
// it (the leading ones that of the first timed frame), so a flow spans
// the timed frames around its untimed ones; the output is the same on
// one worker and on four, and read still prints the frame without a time.
func TestUntimedFramesTakeNeighbourTime(t *testing.T) {
	const name = "linlinw5_rdma_write_bw.pcap"
	cases := map[string]func(n int) bool{
		// Frame 22 is flow 1's first packet, 25 flow 2's (its first ACK).
		"middle":  func(n int) bool { return n == 22 || n == 25 || n == 40 },
		"leading": func(n int) bool { return n <= 22 || n == 25 },
		"every2":  func(n int) bool { return n%2 == 0 },
	}
	for cname, untimed := range cases {
		src, times := untimedCapture(t, name, untimed)
		var outs []string
		for _, workers := range []string{"1", "4"} {
			out, stderr, code := runCLI(t, "flows", "--format", "json", "--workers", workers, src)
			if code != ExitOK {
				t.Fatalf("%s: flows --workers %s: exit %d: %s", cname, workers, code, stderr)
			}
			outs = append(outs, out)
			var fl []struct {
				ID         int       `json:"id"`
				First      time.Time `json:"first"`
				Last       time.Time `json:"last"`
				FirstFrame int       `json:"first_frame"`
				LastFrame  int       `json:"last_frame"`
				Duration   float64   `json:"duration_s"`
			}
			if err := json.Unmarshal([]byte(out), &fl); err != nil {
				t.Fatal(err)
			}
			if len(fl) != 2 {
				t.Fatalf("%s: %d flows, want 2", cname, len(fl))
			}
			for _, f := range fl {
				wantFirst, wantLast := times[f.FirstFrame], times[f.LastFrame]
				if !f.First.Equal(wantFirst) || !f.Last.Equal(wantLast) {
					t.Errorf("%s --workers %s: flow %d from %v to %v, want %v to %v", cname, workers, f.ID, f.First, f.Last, wantFirst, wantLast)
				}
				if want := wantLast.Sub(wantFirst).Seconds(); f.Duration < want-1e-9 || f.Duration > want+1e-9 {
					t.Errorf("%s --workers %s: flow %d lasts %v s, want %v", cname, workers, f.ID, f.Duration, want)
				}
			}
			rep, stderr, code := runCLI(t, "report", "--format", "json", "--workers", workers, src)
			if code == ExitUsage {
				t.Fatalf("%s: report --workers %s: exit %d: %s", cname, workers, code, stderr)
			}
			if strings.Contains(rep, "0001-01-01") || strings.Contains(rep, "9223372036") {
				t.Errorf("%s: report --workers %s has a time of the year 1 or a duration of 2562047h", cname, workers)
			}
			outs = append(outs, rep)
		}
		if outs[0] != outs[2] || outs[1] != outs[3] {
			t.Errorf("%s: flows or report differ between 1 and 4 workers", cname)
		}
	}
	// read prints an untimed frame with no time (no "time" at all, not the
	// zero Time of year 1: TestReadSimplePacketBlockHasNoTime).
	src, _ := untimedCapture(t, name, func(n int) bool { return n == 22 })
	out, _, _ := runCLI(t, "read", "--format", "json", "--count", "1", src)
	if !strings.HasPrefix(out, `{"frame":22,"src":`) {
		t.Errorf("read gives the untimed frame a time: %s", out)
	}
}

// TestUntimedOnlyCaptureUnchanged: a capture of Simple Packet Blocks
// alone has no time at all: flows and report say so, as they did.
func TestUntimedOnlyCaptureUnchanged(t *testing.T) {
	src, _ := untimedCapture(t, "linlinw5_rdma_write_bw.pcap", func(int) bool { return true })
	for _, workers := range []string{"1", "4"} {
		out, stderr, code := runCLI(t, "flows", "--format", "json", "--workers", workers, src)
		if code != ExitOK {
			t.Fatalf("flows: exit %d: %s", code, stderr)
		}
		if !strings.Contains(out, `"first": "0001-01-01T00:00:00.000000000Z"`) || !strings.Contains(out, `"duration_s": 0,`) {
			t.Errorf("flows --workers %s on a capture without times:\n%s", workers, out)
		}
	}
}

// TestTimedInputBatches: timedInput gives every frame the time of the
// rule whatever the batches it is read in, holding leading untimed frames
// over several batches; past maxHeldUntimed they keep no time.
func TestTimedInputBatches(t *testing.T) {
	src, times := untimedCapture(t, "linlinw5_rdma_write_bw.pcap", func(n int) bool { return n <= 22 || n == 25 || n > 55 })
	for _, held := range []int{32 << 20, 1} {
		for _, size := range []int{1, 5, 64} {
			m, err := capture.OpenMerged([]string{src})
			if err != nil {
				t.Fatal(err)
			}
			in := &timedInput{m: m}
			old := maxHeldUntimed
			maxHeldUntimed = held
			recs := make([]capture.Record, size)
			frame := 0
			for {
				n, _, err := in.NextBatch(recs)
				if err != nil {
					break
				}
				for i := range n {
					frame++
					want := times[frame]
					if held == 1 && frame <= 22 {
						want = time.Time{}
					}
					if recs[i].Number != frame || !recs[i].Timestamp.Equal(want) || recs[i].TimeNanos != unixNanosOf(want) {
						t.Errorf("held %d, batches of %d: frame %d (record %d) at %v (%d), want %v", held, size, frame, recs[i].Number, recs[i].Timestamp, recs[i].TimeNanos, want)
					}
				}
			}
			maxHeldUntimed = old
			m.Close()
			if frame != 60 {
				t.Errorf("held %d, batches of %d: %d frames, want 60", held, size, frame)
			}
		}
	}
}

// unixNanosOf is what capture.Record.TimeNanos holds for ts.
func unixNanosOf(ts time.Time) int64 {
	if ts.IsZero() {
		return 0
	}
	return ts.UnixNano()
}
