package render

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rocedump/rocedump/bench"
	"github.com/rocedump/rocedump/reports"
)

// fabricReport is the report of a generated capture of a small fabric:
// 6,624 flows, their records made as they are written.
func fabricReport(t *testing.T) *reports.Report {
	t.Helper()
	f := bench.Fabric{Rails: 2, Nodes: 24, QPsPerPeer: 3, MsgBytes: 4096, MTU: 4096, Snaplen: 96}
	path := filepath.Join(t.TempDir(), "fabric.pcap")
	if _, err := bench.Generate(f, 2*f.Connections()*f.FramesPerMessage(), path); err != nil {
		t.Fatal(err)
	}
	r := genReport(t, path, nil)
	if r.Summary.Flows != f.Flows() {
		t.Fatalf("%d flows, want %d", r.Summary.Flows, f.Flows())
	}
	return r
}

// writeJSONProcs is WriteJSON with GOMAXPROCS set to procs.
func writeJSONProcs(procs int, w io.Writer, r *reports.Report) error {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	return WriteJSON(w, r)
}

// TestWriteJSONConcurrent: the flow records of a report, made and encoded
// on every P, are written in order, the same bytes with one P or four
// (and those of one encoding/json Encode of the whole document); a writer
// that fails half-way fails WriteJSON, which leaves no goroutine behind.
func TestWriteJSONConcurrent(t *testing.T) {
	r := fabricReport(t)
	var one, four bytes.Buffer
	if err := writeJSONProcs(1, &one, r); err != nil {
		t.Fatal(err)
	}
	if err := writeJSONProcs(4, &four, r); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one.Bytes(), four.Bytes()) {
		t.Errorf("GOMAXPROCS 4 differs from 1: %s", firstDiff(one.String(), four.String()))
	}
	held := *r
	held.Flows = r.FlowRecords().Records()
	whole, err := wholeJSON(&held)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(four.Bytes(), whole) {
		t.Errorf("GOMAXPROCS 4 differs from the whole-document encoding: %s", firstDiff(string(whole), four.String()))
	}

	// Four Ps keep fewer chunks of records in flight than the report has,
	// so that goroutines are still waiting to take one when the writer
	// fails.
	before := runtime.NumGoroutine()
	if err := writeJSONProcs(4, &shortWriter{n: one.Len() / 2}, r); !errors.Is(err, errShort) {
		t.Errorf("failing writer: error %v, want %v", err, errShort)
	}
	for i := 0; runtime.NumGoroutine() > before; i++ {
		if i == 50 {
			t.Fatalf("%d goroutines left, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shortWriter takes n bytes, then fails.
type shortWriter struct{ n int }

var errShort = errors.New("no space left on device")

func (w *shortWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		n := w.n
		w.n = 0
		return n, errShort
	}
	w.n -= len(p)
	return len(p), nil
}
