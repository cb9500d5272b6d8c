package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// reissuePcap writes a capture of one RC connection, 10.0.0.1 (QP 0x22)
// READing from 10.0.0.2 (QP 0x11): a READ at PSN 100 of 3072 bytes
// (responses 100-102 at MTU 1024), a WRITE of three packets at 103-105,
// the READ responses respDelay later with the MIDDLE at 101 lost before
// the mirror, the READ re-issued from 101 for the rest (IBTA vol 1 ch. 9),
// and, wait after it, the WRITE sent again (go-back-N from the READ); the
// answers, and a new WRITE at 106.
func reissuePcap(t *testing.T, dir, name string, respDelay, wait time.Duration) string {
	t.Helper()
	var b bytes.Buffer
	w, err := capture.NewPcapWriter(&b, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pkt := func(dt time.Duration, src, dst byte, op bth.Opcode, qp, psn uint32, payload int, reth *bth.RETH) {
		t.Helper()
		now = now.Add(dt)
		h := bth.BTH{Opcode: op, PKey: 0xffff, DestQP: qp, PSN: psn, Ext: op.Headers()}
		if reth != nil {
			h.RETH = *reth
		}
		h.AETH.Syndrome = 0x1f
		h.PadCount = uint8((4 - payload%4) % 4)
		ib := h.AppendHeaders(nil)
		ib = append(ib, make([]byte, payload+int(h.PadCount)+bth.ICRCLen)...)
		ip := make([]byte, 28, 28+len(ib))
		ip[0], ip[1], ip[8], ip[9] = 0x45, 26<<2|2, 64, 17
		binary.BigEndian.PutUint16(ip[2:], uint16(28+len(ib)))
		copy(ip[12:], []byte{10, 0, 0, src, 10, 0, 0, dst})
		binary.BigEndian.PutUint16(ip[20:], 0xc000)
		binary.BigEndian.PutUint16(ip[22:], 4791)
		binary.BigEndian.PutUint16(ip[24:], uint16(8+len(ib)))
		ip = append(ip, ib...)
		crc, err := bth.ICRCv2(ip)
		if err != nil {
			t.Fatal(err)
		}
		binary.LittleEndian.PutUint32(ip[len(ip)-bth.ICRCLen:], crc)
		frame := append([]byte{2, 0, 0, 0, 0, dst, 2, 0, 0, 0, 0, src, 0x08, 0x00}, ip...)
		if err := w.WritePacket(now, frame, len(frame)); err != nil {
			t.Fatal(err)
		}
	}
	const a, z = 1, 2
	const zQP, aQP = 0x11, 0x22
	us := time.Microsecond
	write := func(dt time.Duration) {
		pkt(dt, a, z, 0x06, zQP, 103, 1024, &bth.RETH{VA: 0x90000, RKey: 0x99, DMALen: 3072})
		pkt(us, a, z, 0x07, zQP, 104, 1024, nil)
		pkt(us, a, z, 0x08, zQP, 105, 1024, nil)
	}
	pkt(us, a, z, 0x0c, zQP, 100, 0, &bth.RETH{VA: 0x10000, RKey: 0x1234, DMALen: 3072})
	write(us)
	pkt(respDelay+2*us, z, a, 0x0d, aQP, 100, 1024, nil) // READ FIRST; the MIDDLE at 101 lost
	pkt(us, z, a, 0x0f, aQP, 102, 1024, nil)
	pkt(3*us, a, z, 0x0c, zQP, 101, 0, &bth.RETH{VA: 0x10400, RKey: 0x1234, DMALen: 2048})
	write(wait)
	pkt(2*us, z, a, 0x0d, aQP, 101, 1024, nil)
	pkt(us, z, a, 0x0f, aQP, 102, 1024, nil)
	pkt(us, z, a, 0x11, aQP, 105, 0, nil)
	pkt(us, a, z, 0x0a, zQP, 106, 512, &bth.RETH{VA: 0xa0000, RKey: 0x99, DMALen: 512})
	pkt(us, z, a, 0x11, aQP, 106, 0, nil)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type reissueReport struct {
	Flows []struct {
		ID                   int    `json:"id"`
		DestQPN              uint32 `json:"dest_qpn"`
		RetransmittedPackets uint64 `json:"retransmitted_packets"`
		MirrorDuplicates     uint64 `json:"mirror_duplicates"`
	} `json:"flows"`
	Findings []struct {
		Kind     string `json:"kind"`
		Title    string `json:"title"`
		Evidence struct {
			Counts map[string]float64 `json:"counts"`
		} `json:"evidence"`
	} `json:"findings"`
}

// retxCounts returns the counts of the retransmission findings of rep by
// their first count name that tells them apart (timeouts, reissued_reads).
func (rep *reissueReport) retxCounts() (timeouts, reissue map[string]float64) {
	for _, f := range rep.Findings {
		if f.Kind != "retransmission" {
			continue
		}
		if _, ok := f.Evidence.Counts["timeouts"]; ok {
			timeouts = f.Evidence.Counts
		}
		if _, ok := f.Evidence.Counts["reissued_reads"]; ok {
			reissue = f.Evidence.Counts
		}
	}
	return
}

// TestReportReissuedReadResends: the requests that followed a READ, sent
// again right after the READ's re-issue, are the re-issue's recovery
// (resent_requests), not an ACK timeout, whether they come within the
// mirror window of their first copies (they are no mirror copies either)
// or past it; the same resends 5 ms after the re-issue are a timeout's.
// The count is the same for any --workers, merge sums it, and every
// format says it.
func TestReportReissuedReadResends(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name            string
		respDelay, wait time.Duration
		timeout         bool
	}{
		{"reissue.pcap", 0, time.Microsecond, false},
		{"reissue_slow.pcap", 800 * time.Microsecond, time.Microsecond, false},
		{"reissue_timeout.pcap", 0, 5 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := reissuePcap(t, dir, tc.name, tc.respDelay, tc.wait)
			var outs []string
			for _, workers := range []string{"1", "4"} {
				out, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "--workers", workers, path)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errOut)
				}
				outs = append(outs, out)
			}
			if outs[0] != outs[1] {
				t.Error("--workers 1 and --workers 4 differ")
			}
			var rep reissueReport
			if err := json.Unmarshal([]byte(outs[0]), &rep); err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Flows {
				if f.DestQPN == 0x11 && (f.RetransmittedPackets != 4 || f.MirrorDuplicates != 0) {
					t.Errorf("request flow: %d retransmitted, %d mirror duplicates; want 4 (the re-issue and 3 resends), 0",
						f.RetransmittedPackets, f.MirrorDuplicates)
				}
			}
			timeouts, reissue := rep.retxCounts()
			if reissue == nil {
				t.Fatal("no re-issued READ finding")
			}
			if tc.timeout {
				if timeouts == nil || timeouts["timeouts"] != 1 || timeouts["retransmitted_packets"] != 3 || timeouts["timeout_ms_min"] != 5 {
					t.Errorf("timeout finding counts %v, want 1 timeout, 3 resent, 5 ms", timeouts)
				}
				if reissue["resent_requests"] != 0 || reissue["retransmitted_packets"] != 2 {
					t.Errorf("re-issued READ finding counts %v, want 0 resent requests, 2 retransmitted", reissue)
				}
				return
			}
			if timeouts != nil {
				t.Errorf("an ACK timeout finding: %v", timeouts)
			}
			if reissue["resent_requests"] != 3 || reissue["retransmitted_packets"] != 5 || reissue["reissued_reads"] != 1 {
				t.Errorf("re-issued READ finding counts %v, want 3 resent requests, 5 retransmitted, 1 re-issued READ", reissue)
			}
			for _, format := range []string{"text", "markdown", "html"} {
				out, errOut, code := runCLI(t, "report", "--format", format, "--fail-on", "never", path)
				if code != 0 {
					t.Fatalf("%s: exit %d: %s", format, code, errOut)
				}
				if !strings.Contains(out, "3 requests after them resent") || strings.Contains(out, "ACK timeout:") {
					t.Errorf("%s report does not say the 3 requests resent after the re-issue", format)
				}
			}
		})
	}
	// merge: the counts of both add up.
	var jsons []string
	for _, name := range []string{"reissue.pcap", "reissue_timeout.pcap"} {
		out, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", filepath.Join(dir, name))
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		jsons = append(jsons, p)
	}
	out, errOut, code := runCLI(t, append([]string{"merge", "--format", "json", "--fail-on", "never"}, jsons...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errOut)
	}
	var rep reissueReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	timeouts, reissue := rep.retxCounts()
	if reissue["resent_requests"] != 3 || reissue["reissued_reads"] != 2 || reissue["retransmitted_packets"] != 7 {
		t.Errorf("merged re-issued READ finding counts %v, want 3 resent requests, 2 re-issued READs, 7 retransmitted", reissue)
	}
	if timeouts["timeouts"] != 1 || timeouts["retransmitted_packets"] != 3 {
		t.Errorf("merged timeout finding counts %v, want 1 timeout, 3 resent", timeouts)
	}
	for _, f := range rep.Findings {
		if _, ok := f.Evidence.Counts["reissued_reads"]; ok && !strings.Contains(f.Title, "2 RDMA READs re-issued") || ok && !strings.Contains(f.Title, "3 requests after them resent") {
			t.Errorf("merged title %q", f.Title)
		}
	}
}
