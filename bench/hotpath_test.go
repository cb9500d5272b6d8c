package bench

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/cli"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/render"
)

// hotPathPackets is the length of the capture the hot-path benchmarks read:
// long enough that the per-flow start-up (63,488 flows) is amortised.
const hotPathPackets = 2_000_000

// hotPath is a capture the hot-path benchmarks read, generated once per
// test binary run when a benchmark first asks for it.
type hotPath struct {
	once   sync.Once
	erspan bool
	cap    Capture
	err    error
}

var (
	hotPathDir    string
	hotPathDirErr error
	hotPathDirSet sync.Once

	hotPathPlain  = &hotPath{}
	hotPathERSPAN = &hotPath{erspan: true}
)

// hotPathCapture returns the benchmark fabric's capture.
func hotPathCapture(b *testing.B) Capture { return hotPathPlain.get(b) }

// get generates the capture on first use: the benchmark fabric, its
// frames wrapped in ERSPAN II if h.erspan.
func (h *hotPath) get(b *testing.B) Capture {
	hotPathDirSet.Do(func() { hotPathDir, hotPathDirErr = os.MkdirTemp("", "rocebench-hotpath-") })
	if hotPathDirErr != nil {
		b.Fatal(hotPathDirErr)
	}
	h.once.Do(func() {
		f, name := DefaultFabric(), "mirror.pcap"
		if h.erspan {
			f.ERSPAN, name = true, "erspan.pcap"
		}
		var cs []Capture
		if cs, h.err = Generate(f, hotPathPackets, filepath.Join(hotPathDir, name)); h.err == nil {
			h.cap = cs[0]
		}
	})
	if h.err != nil {
		b.Fatal(h.err)
	}
	return h.cap
}

func TestMain(m *testing.M) {
	code := m.Run()
	if hotPathDir != "" {
		os.RemoveAll(hotPathDir)
	}
	os.Exit(code)
}

// stage is the work done per packet after reading it.
type stage func(rec *capture.Record, file int)

// runHotPath reads the whole capture once per iteration, handing every
// record to the stage made by newStage, and reports ns and allocations per
// packet.
func runHotPath(b *testing.B, newStage func() (stage, func())) {
	c := hotPathCapture(b)
	b.SetBytes(c.Bytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, finish := newStage()
		r, err := capture.Open(c.Path)
		if err != nil {
			b.Fatal(err)
		}
		var rec capture.Record
		for {
			if err := r.Next(&rec); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				b.Fatal(err)
			}
			st(&rec, 0)
		}
		r.Close()
		if finish != nil {
			finish()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Packets), "ns/packet")
}

// BenchmarkHotPathRead: the pcap reader alone.
func BenchmarkHotPathRead(b *testing.B) {
	runHotPath(b, func() (stage, func()) { return func(*capture.Record, int) {}, nil })
}

// BenchmarkHotPathDecode: reader and the frame walk (decode/packet).
func BenchmarkHotPathDecode(b *testing.B) {
	runHotPath(b, func() (stage, func()) {
		var dec packet.Decoder
		var p packet.Packet
		return func(rec *capture.Record, _ int) { dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) }, nil
	})
}

// BenchmarkHotPathFlows: reader, decoder and the flow table (rocedump flows
// without its output).
func BenchmarkHotPathFlows(b *testing.B) {
	runHotPath(b, func() (stage, func()) {
		var dec packet.Decoder
		var p packet.Packet
		t := flows.NewTable(flows.Config{})
		return func(rec *capture.Record, file int) {
			if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) == nil {
				t.Add(&p, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
			}
		}, t.Finish
	})
}

// collectorStage is the report's per-packet work: decode, then the
// collector (which feeds the flow table).
func collectorStage() (stage, *flows.Table, *reports.Collector) {
	var dec packet.Decoder
	var p packet.Packet
	t := flows.NewTable(flows.Config{})
	c := reports.NewCollector(t, reports.Config{})
	return func(rec *capture.Record, file int) {
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) == nil {
			c.Add(&p, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
		}
	}, t, c
}

// BenchmarkHotPathCollector: reader, decoder, flow table and the report's
// collector (rocedump report's per-packet work).
func BenchmarkHotPathCollector(b *testing.B) {
	runHotPath(b, func() (stage, func()) {
		st, _, c := collectorStage()
		return st, c.Finish
	})
}

// BenchmarkHotPathReport: the collector pass, then the report modules and
// the JSON renderer (rocedump report --format json without the file list
// and exit code).
func BenchmarkHotPathReport(b *testing.B) {
	runHotPath(b, func() (stage, func()) {
		st, t, c := collectorStage()
		return st, func() {
			c.Finish()
			rep := reports.Run(&reports.Input{Flows: t.Flows(), Collect: c, Config: reports.Config{}}, "bench")
			if err := render.WriteJSON(io.Discard, rep); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHotPathCommand: the whole `rocedump report --format json`,
// `rocedump flows` and `rocedump read --format json` commands in process
// on one worker, output discarded, and `report` on the same traffic
// mirrored in ERSPAN: the pass as the commands run it (frames
// read in batches, each frame's flow state prefetched a few frames ahead:
// see cli's addBatch), which the stages above, fed frame by frame, do
// not. `make pgo` profiles it for the compiler (cmd/rocedump/default.pgo).
func BenchmarkHotPathCommand(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    *hotPath
		args []string
	}{
		{"report", hotPathPlain, []string{"report", "--format", "json", "--workers", "1"}},
		{"flows", hotPathPlain, []string{"flows", "--workers", "1"}},
		{"read", hotPathPlain, []string{"read", "--format", "json"}},
		{"report-erspan", hotPathERSPAN, []string{"report", "--format", "json", "--workers", "1"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := bc.h.get(b)
			b.SetBytes(c.Bytes)
			b.ReportAllocs()
			for b.Loop() {
				var errOut bytes.Buffer
				if code := cli.Execute(append(bc.args, c.Path), nil, io.Discard, &errOut); code > 1 {
					b.Fatalf("exit %d: %s", code, errOut.String())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Packets), "ns/packet")
		})
	}
}
