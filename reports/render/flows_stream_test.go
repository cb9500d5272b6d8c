package render

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
	topo "github.com/rocedump/rocedump/topology"
)

// genReport runs the report over a generated capture as `rocedump report`
// does: a report whose flow records are made from the flows as they are
// written.
func genReport(t *testing.T, path string, tp *topo.Topology) *reports.Report {
	t.Helper()
	m, err := capture.OpenMerged([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tab := flows.NewTable(flows.Config{})
	coll := reports.NewCollector(tab, reports.Config{})
	ci := reports.CaptureInfo{Files: []string{filepath.Base(path)}, Problems: []string{}}
	var rec capture.Record
	var p packet.Packet
	var dec packet.Decoder
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		ci.Packets++
		if ci.First.IsZero() {
			ci.First = rec.Timestamp.UTC()
		}
		ci.Last = rec.Timestamp.UTC()
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) == nil {
			if p.Kind == packet.KindRoCE {
				ci.RoCE++
			}
			coll.Add(&p, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
		}
	}
	coll.Finish()
	ci.DurationS = ci.Last.Sub(ci.First).Seconds()
	return reports.Run(&reports.Input{Capture: ci, Flows: tab.Flows(), Collect: coll, Topology: tp}, "rocedump test")
}

// TestFlowsStreamSameAsRecords: a report from Run, whose flow records are
// made one at a time from its flows as each format writes them, writes the
// same bytes as the same report holding all its records, the way reports
// were written before (and, for JSON, as one encoding/json Encode of the
// whole document), on every generated capture, with and without a
// topology.
func TestFlowsStreamSameAsRecords(t *testing.T) {
	paths, _ := filepath.Glob("../../testdata/pcaps/gen/*.pcap*")
	if len(paths) < 10 {
		t.Fatalf("found %d generated captures", len(paths))
	}
	pod, err := topo.Load("../../testdata/topology/report_pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	writers := map[string]func(io.Writer, *reports.Report) error{
		"text": WriteText, "markdown": WriteMarkdown, "json": WriteJSON, "html": WriteHTML,
	}
	for _, path := range paths {
		for _, tp := range []*topo.Topology{nil, pod} {
			r := genReport(t, path, tp)
			if r.Flows != nil {
				t.Fatalf("%s: Run made every record (Flows is set)", path)
			}
			held := *r
			held.Flows = r.FlowRecords().Records()
			if len(held.Flows) != r.Summary.Flows {
				t.Fatalf("%s: %d records, %d flows", path, len(held.Flows), r.Summary.Flows)
			}
			for name, write := range writers {
				var got, want bytes.Buffer
				if err := write(&got, r); err != nil {
					t.Fatal(err)
				}
				if err := write(&want, &held); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Errorf("%s (topology %v), %s: streamed flows differ from held records: %s", filepath.Base(path), tp != nil, name,
						firstDiff(want.String(), got.String()))
				}
				if name == "json" {
					whole, err := wholeJSON(&held)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), whole) {
						t.Errorf("%s (topology %v): streamed JSON differs from the whole-document encoding: %s", filepath.Base(path), tp != nil,
							firstDiff(string(whole), got.String()))
					}
				}
			}
		}
	}
}
