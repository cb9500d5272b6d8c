package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// TestReportReordered: two requests of a QP captured out of PSN order
// (linlinw5_nccl_nccl_node0 with PSN 2 of qp 0x1c, frame 499, moved 1 µs
// later, after PSN 3 and before the ACKs) were reordered, not lost and
// resent: the next request of the QP is new (PSN 4), not the go-back-N
// resend of PSN 3. No retransmission finding; the flow says reordered 1.
func TestReportReordered(t *testing.T) {
	var recs []capture.Record
	eachRealRecord(t, "linlinw5_nccl_nccl_node0.pcap", func(n int, rec *capture.Record) {
		r := *rec
		r.Data = bytes.Clone(rec.Data)
		if n == 499 {
			r.Timestamp = r.Timestamp.Add(time.Microsecond)
		}
		recs = append(recs, r)
	})
	// Frame 499 goes after frame 500 (PSN 3), at the same time as it.
	recs[498], recs[499] = recs[499], recs[498]
	var b bytes.Buffer
	w, err := capture.NewPcapWriter(&b, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.WritePacket(recs[i].Timestamp, recs[i].Data, recs[i].OrigLen); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "reordered.pcap")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Flows []struct {
			ID         int    `json:"id"`
			DestQPN    uint32 `json:"dest_qpn"`
			OutOfOrder uint64 `json:"out_of_order"`
			Reordered  uint64 `json:"reordered"`
		} `json:"flows"`
		Findings []struct {
			Kind  string `json:"kind"`
			Title string `json:"title"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Kind == "retransmission" {
			t.Errorf("retransmission finding %q", f.Title)
		}
	}
	found := false
	for _, f := range rep.Flows {
		if f.DestQPN == 0x1c && f.OutOfOrder != 0 {
			found = true
			if f.Reordered != 1 || f.OutOfOrder != 1 {
				t.Errorf("flow %d (qp 0x1c): reordered %d, out of order %d; want 1, 1", f.ID, f.Reordered, f.OutOfOrder)
			}
		} else if f.Reordered != 0 {
			t.Errorf("flow %d: reordered %d, want 0", f.ID, f.Reordered)
		}
	}
	if !found {
		t.Error("no flow to qp 0x1c with a request out of order: the capture was not reordered")
	}
}
