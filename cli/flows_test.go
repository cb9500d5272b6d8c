package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// TestFlowsGolden pins the flows table, Markdown, CSV and JSON for real and
// generated captures (go test ./cli -update rewrites them).
func TestFlowsGolden(t *testing.T) {
	tests := []goldenCase{
		{"nccl_ring_table", []string{"flows", "real/linlinw5_nccl_ring2_node0.pcap"}},
		{"nccl_tree_json", []string{"flows", "--format", "json", "--sort", "id", "real/linlinw5_nccl_tree2_node2.pcap"}},
		{"rdma_cm_table", []string{"flows", "real/linlinw5_rdma_cm.pcap"}},
		{"read_bw_json", []string{"flows", "--format", "json", "real/linlinw5_rdma_read_bw.pcap"}},
		{"atomic_markdown", []string{"flows", "--format", "markdown", "real/linlinw5_rdma_atomic_bw.pcap"}},
		{"retransmissions_table", []string{"flows", "--sort", "retx", "gen/retransmissions.pcap"}},
		{"congestion_csv", []string{"flows", "--format", "csv", "--sort", "id", "gen/congestion.pcap"}},
		{"storage_json", []string{"flows", "--format", "json", "--top", "3", "gen/storage.pcap"}},
		{"erspan3_table", []string{"flows", "gen/mirror_erspan3_ipv6.pcapng"}},
	}
	runGoldenCases(t, "flows", tests)
}

// TestFlowsMergesFiles: the three node captures of one NCCL run, given
// together, are merged in time order into one flow table whose packet count
// is the sum of the three.
func TestFlowsMergesFiles(t *testing.T) {
	var files []string
	total := 0
	for _, n := range []string{"0", "1", "2"} {
		f := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_nccl_ring2_node"+n+".pcap")
		files = append(files, f)
		_, stderr, _ := runCLI(t, "flows", f)
		total += parseFlowsRoCE(t, stderr)
	}
	out, stderr, code := runCLI(t, append([]string{"flows", "--format", "json", "--sort", "id"}, files...)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := parseFlowsRoCE(t, stderr); got != total {
		t.Errorf("merged RoCE packets: want %d, got %d", total, got)
	}
	var recs []struct {
		ID    int    `json:"id"`
		First string `json:"first"`
	}
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(recs); i++ {
		if recs[i].First < recs[i-1].First {
			t.Errorf("flow %d starts at %s, before flow %d at %s: flows are not numbered in time order", recs[i].ID, recs[i].First, recs[i-1].ID, recs[i-1].First)
		}
	}
}

func parseFlowsRoCE(t *testing.T, stderr string) int {
	t.Helper()
	var flows, read, roce int
	i := strings.Index(stderr, "rocedump: ")
	if i < 0 {
		t.Fatalf("no summary: %s", stderr)
	}
	fmt.Sscanf(stderr[i:], "rocedump: %d flows, %d packets read, %d RoCE", &flows, &read, &roce)
	return roce
}

// TestExtract: the extracted capture holds exactly the chosen flow and its
// partner, frame for frame, and tshark reads it.
func TestExtract(t *testing.T) {
	src := filepath.Join(repoRoot, "testdata", "pcaps", "gen", "retransmissions.pcap")
	out, _, code := runCLI(t, "flows", "--format", "json", "--sort", "id", src)
	if code != ExitOK {
		t.Fatal("flows failed")
	}
	var recs []struct {
		ID        int    `json:"id"`
		Packets   int    `json:"packets"`
		PartnerID *int   `json:"partner_id"`
		Src       string `json:"src"`
		Dst       string `json:"dst"`
	}
	if err := json.Unmarshal([]byte(out), &recs); err != nil {
		t.Fatal(err)
	}
	var pick = recs[0]
	if pick.PartnerID == nil {
		t.Fatalf("flow 1 has no partner: %+v", pick)
	}
	want := pick.Packets + recs[*pick.PartnerID-1].Packets

	dst := filepath.Join(t.TempDir(), "flow1.pcap")
	_, stderr, code := runCLI(t, "extract", "--flow", "1", "-o", dst, src)
	if code != ExitOK {
		t.Fatalf("extract: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf("wrote %d packets of 2 flows", want)) {
		t.Errorf("want %d packets of 2 flows, got: %s", want, stderr)
	}
	out, _, _ = runCLI(t, "flows", "--format", "json", dst)
	var got []struct {
		Src     string `json:"src"`
		Packets int    `json:"packets"`
	}
	json.Unmarshal([]byte(out), &got)
	if len(got) != 2 || got[0].Packets+got[1].Packets != want {
		t.Errorf("extracted capture: want 2 flows of %d packets, got %+v", want, got)
	}
	if tshark, err := exec.LookPath("tshark"); err == nil {
		n, err := exec.Command(tshark, "-r", dst, "-T", "fields", "-e", "frame.number").Output()
		if err != nil {
			t.Fatalf("tshark cannot read the extracted file: %v", err)
		}
		if lines := strings.Count(string(n), "\n"); lines != want {
			t.Errorf("tshark reads %d frames, want %d", lines, want)
		}
	}
	for _, tt := range []struct {
		args []string
		msg  string
	}{
		{[]string{"extract", "--flow", "1", src}, "-o"},
		{[]string{"extract", "-o", dst, src}, "choose flows"},
		{[]string{"extract", "--flow", "999", "-o", dst, src}, "hold 20 flows"},
		{[]string{"extract", "--pair", "10.0.0.1", "-o", dst, src}, "two addresses"},
		{[]string{"extract", "--qpn", "0x999999", "-o", dst, src}, "no flow matches"},
	} {
		_, stderr, code := runCLI(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.msg) {
			t.Errorf("%v: want exit 2 and %q, got %d: %s", tt.args, tt.msg, code, stderr)
		}
	}
	// --pair takes both directions between two hosts.
	_, stderr, code = runCLI(t, "extract", "--pair", pick.Src+","+pick.Dst, "--no-partner", "-o", dst, src)
	if code != ExitOK || !strings.Contains(stderr, fmt.Sprintf("wrote %d packets", want)) {
		t.Errorf("--pair: want %d packets, got %d: %s", want, code, stderr)
	}
}

// TestExtractGzip: an output named .pcap.gz or .pcapng.gz is that format,
// gzip-compressed (it was written uncompressed under the .gz name), and
// reads back as the same packets as the plain file.
func TestExtractGzip(t *testing.T) {
	src := filepath.Join(repoRoot, "testdata", "pcaps", "gen", "retransmissions.pcap")
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain.pcap")
	if _, stderr, code := runCLI(t, "extract", "--flow", "1", "-o", plain, src); code != ExitOK {
		t.Fatalf("extract: exit %d: %s", code, stderr)
	}
	want, _, _ := runCLI(t, "read", plain)
	for _, name := range []string{"out.pcap.gz", "out.pcapng.GZ"} {
		dst := filepath.Join(dir, name)
		if _, stderr, code := runCLI(t, "extract", "--flow", "1", "-o", dst, src); code != ExitOK {
			t.Fatalf("extract -o %s: exit %d: %s", name, code, stderr)
		}
		raw, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s is not gzip-compressed: %v", name, err)
		}
		inner, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.HasSuffix(strings.ToLower(name), ".pcapng.gz") != bytes.HasPrefix(inner, []byte{0x0a, 0x0d, 0x0d, 0x0a}) {
			t.Errorf("%s holds the wrong format: starts % x", name, inner[:min(4, len(inner))])
		}
		if got, _, _ := runCLI(t, "read", dst); got != want {
			t.Errorf("%s reads back otherwise than the plain extract:\n%s\nwant\n%s", name, got, want)
		}
	}
}

// TestExtractSimplePacketBlocks: frames of pcapng Simple Packet Blocks,
// which carry no time, are extracted (at the epoch, as editcap writes
// them) to pcap and pcapng: the writers refused their zero time and
// extract failed with nothing written.
func TestExtractSimplePacketBlocks(t *testing.T) {
	file := pcapngStart()
	eachRealRecord(t, "linlinw5_rdma_write_bw.pcap", func(_ int, rec *capture.Record) {
		file = append(file, pcapngSPB(rec)...)
	})
	dir := t.TempDir()
	src := filepath.Join(dir, "spb.pcapng")
	if err := os.WriteFile(src, file, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"out.pcap", "out.pcapng"} {
		dst := filepath.Join(dir, name)
		_, stderr, code := runCLI(t, "extract", "--flow", "1", "-o", dst, src)
		if code != ExitOK || !strings.Contains(stderr, "wrote 20 packets of 2 flows") {
			t.Fatalf("extract -o %s: exit %d: %s", name, code, stderr)
		}
		out, _, _ := runCLI(t, "read", "--time", "epoch", dst)
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 20 || !strings.HasPrefix(lines[0], "0.000000000 ") {
			t.Errorf("extract -o %s: read gives %d lines, first %q; want 20 at the epoch", name, len(lines), lines[0])
		}
	}
}

// TestReportSpanSimplePacketBlock: a Simple Packet Block has no time, so
// its frame says nothing about when the capture began or ended. One in
// the middle of a pcapng of Enhanced Packet Blocks made the report's
// capture span start at the frame after it (the zero Time it left in the
// first time was taken for "no frame yet"), dropping every frame before
// it from the span, with one worker and with two.
func TestReportSpanSimplePacketBlock(t *testing.T) {
	le := binary.LittleEndian
	file := pcapngStart()
	var first, last time.Time
	eachRealRecord(t, "linlinw5_rdma_write_bw.pcap", func(n int, rec *capture.Record) {
		if n == 30 {
			file = append(file, pcapngSPB(rec)...)
			return
		}
		if first.IsZero() {
			first = rec.Timestamp
		}
		last = rec.Timestamp
		us := uint64(rec.Timestamp.UnixMicro())
		epb := le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, 0), uint32(us>>32)), uint32(us))
		epb = le.AppendUint32(le.AppendUint32(epb, uint32(len(rec.Data))), uint32(rec.OrigLen))
		file = append(file, pcapngBlock(6, append(epb, rec.Data...))...)
	})
	src := filepath.Join(t.TempDir(), "spb.pcapng")
	if err := os.WriteFile(src, file, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, workers := range []string{"1", "2"} {
		out, stderr, code := runCLI(t, "report", "--format", "json", "--workers", workers, src)
		if code == ExitUsage {
			t.Fatalf("report --workers %s: exit %d: %s", workers, code, stderr)
		}
		var rep struct {
			Capture struct{ First, Last time.Time } `json:"capture"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if !rep.Capture.First.Equal(first) || !rep.Capture.Last.Equal(last) {
			t.Errorf("report --workers %s: capture from %v to %v, want %v to %v", workers, rep.Capture.First, rep.Capture.Last, first, last)
		}
	}
}

// pcapngBlock is a little-endian pcapng block of type typ around body,
// padded to 32 bits.
func pcapngBlock(typ uint32, body []byte) []byte {
	le := binary.LittleEndian
	body = append(body, make([]byte, -len(body)&3)...)
	b := le.AppendUint32(le.AppendUint32(nil, typ), uint32(12+len(body)))
	return le.AppendUint32(append(b, body...), uint32(12+len(body)))
}

// pcapngStart is the start of a little-endian pcapng: a Section Header
// Block and one Ethernet interface.
func pcapngStart() []byte {
	le := binary.LittleEndian
	shb := le.AppendUint64(le.AppendUint16(le.AppendUint16(le.AppendUint32(nil, 0x1a2b3c4d), 1), 0), ^uint64(0))
	idb := le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, uint16(capture.LinkTypeEthernet)), 0), 0)
	return append(pcapngBlock(0x0a0d0d0a, shb), pcapngBlock(1, idb)...)
}

// pcapngSPB is a little-endian pcapng Simple Packet Block of rec (no
// time).
func pcapngSPB(rec *capture.Record) []byte {
	return pcapngBlock(3, append(binary.LittleEndian.AppendUint32(nil, uint32(rec.OrigLen)), rec.Data...))
}

// eachRealRecord calls fn with every record of the real capture name
// (testdata/pcaps/real), numbered from 1.
func eachRealRecord(t *testing.T, name string, fn func(n int, rec *capture.Record)) {
	t.Helper()
	r, err := capture.Open(filepath.Join(repoRoot, "testdata", "pcaps", "real", name))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec capture.Record
	for n := 1; r.Next(&rec) == nil; n++ {
		fn(n, &rec)
	}
}
