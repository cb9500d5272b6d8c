package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// writeFragmentedMirror writes the frames of the real capture name mirrored
// in ERSPAN type II over GRE over IPv4 (RFC 2890 sequence number,
// draft-foschiano-erspan-03 §4.2) without DF, as a switch sends them to a
// collector whose path has an MTU of mtu: every GRE datagram longer than
// that is split into IPv4 fragments (RFC 791 §3.2), each in a frame of its
// own. It returns the path and the number of frames written.
func writeFragmentedMirror(t *testing.T, name string, mtu int) (string, int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	frames := 0
	eachRealRecord(t, name, func(n int, rec *capture.Record) {
		// GRE with S (RFC 2890 §2.2), protocol 0x88BE, then the ERSPAN II
		// header: version 1, VLAN 0; session 5; index 0.
		gre := be.AppendUint32(be.AppendUint16(be.AppendUint16(nil, 0x1000), 0x88be), uint32(n))
		gre = be.AppendUint32(be.AppendUint16(be.AppendUint16(gre, 0x1000), 5), 0)
		gre = append(gre, rec.Data...)
		per := (mtu - 20) &^ 7 // fragment payloads are multiples of 8 bytes
		for off := 0; off < len(gre); off += per {
			end := min(off+per, len(gre))
			flags := uint16(off / 8)
			if end < len(gre) {
				flags |= 0x2000 // MF
			}
			ip := make([]byte, 20)
			ip[0], ip[8], ip[9] = 0x45, 64, 47
			be.PutUint16(ip[2:], uint16(20+end-off))
			be.PutUint16(ip[4:], uint16(n))
			be.PutUint16(ip[6:], flags)
			copy(ip[12:], []byte{192, 0, 2, 1, 192, 0, 2, 2})
			frame := append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}, ip...)
			frame = append(frame, gre[off:end]...)
			if err := w.WritePacket(rec.Timestamp, frame, len(frame)); err != nil {
				t.Fatal(err)
			}
			frames++
		}
	})
	path := filepath.Join(t.TempDir(), "erspan-fragmented.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, frames
}

// TestReadFragmentedMirrorMatchesTshark: an ERSPAN mirror whose GRE
// datagrams were fragmented on the way to the collector still shows every
// RoCE packet, decoded from the first fragment as far as it goes, as
// tshark does when it does not reassemble (-o ip.defragment:FALSE).
// Before, the first fragments were not decoded past their outer IPv4
// header: the RoCE packets were lost with no word about them.
func TestReadFragmentedMirrorMatchesTshark(t *testing.T) {
	tshark := needTool(t, "tshark")
	file, _ := writeFragmentedMirror(t, fragmentedSource, 1000)
	ours := readJSON(t, file)
	theirs := tsharkIBWith(t, tshark, file, "-o", "ip.defragment:FALSE")
	if len(theirs) != 20 {
		t.Fatalf("tshark decodes %d RoCE packets, want the 20 of %s", len(theirs), fragmentedSource)
	}
	compareTsharkFrames(t, ours, theirs)
	if len(ours) != len(theirs) {
		t.Errorf("rocedump printed %d packets, tshark decodes %d", len(ours), len(theirs))
	}
}

// fragmentedSource is the capture the fragmentation tests mirror.
const fragmentedSource = "linlinw5_rdma_write_bw.pcap"

// TestFlowsFragmentedMirror: the flows of a mirror fragmented on the way
// to the collector are those of the capture the switch mirrored.
func TestFlowsFragmentedMirror(t *testing.T) {
	file, frames := writeFragmentedMirror(t, fragmentedSource, 1000)
	if frames <= 60 {
		t.Fatalf("%d frames: no datagram was fragmented", frames)
	}
	sameFlowsAsSource(t, file)
}

// sameFlowsAsSource checks that file has the flows of fragmentedSource:
// the same QPs, packets, bytes, payload, messages and PSN gaps.
func sameFlowsAsSource(t *testing.T, file string) {
	t.Helper()
	type flow struct {
		DestQPN  uint64 `json:"dest_qpn"`
		Packets  uint64 `json:"packets"`
		Bytes    uint64 `json:"bytes"`
		Payload  uint64 `json:"payload_bytes"`
		Messages uint64 `json:"messages"`
		Gaps     uint64 `json:"psn_gaps"`
	}
	flowsOf := func(file string) []flow {
		out, errOut, code := runCLI(t, "flows", "--format", "json", "--sort", "id", file)
		if code != ExitOK {
			t.Fatalf("flows %s: exit %d: %s", file, code, errOut)
		}
		var fs []flow
		if err := json.Unmarshal([]byte(out), &fs); err != nil {
			t.Fatalf("flows %s: %v", file, err)
		}
		return fs
	}
	want := flowsOf(filepath.Join(repoRoot, "testdata", "pcaps", "real", fragmentedSource))
	got := flowsOf(file)
	if len(got) != len(want) {
		t.Fatalf("%d flows, want the %d of %s: %+v", len(got), len(want), fragmentedSource, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("flow %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestFlowsFragmentedRoCE: RoCEv2 datagrams that were themselves split
// into IPv4 fragments (sent without DF over a smaller MTU) keep the flows
// of the capture they came from, bytes included: a first fragment counts
// the whole datagram its IP and UDP headers describe, as a frame cut by
// the snap length does. Before, it counted the fragment's length: the
// flows of linlinw5_rdma_write_bw.pcap cut into 512-byte fragments had
// 7980 bytes for 15000 bytes of payload, instead of 15740.
func TestFlowsFragmentedRoCE(t *testing.T) {
	var buf bytes.Buffer
	w, err := capture.NewPcapWriter(&buf, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	const per = 512 // fragment payload, a multiple of 8 bytes
	fragmented := 0
	eachRealRecord(t, fragmentedSource, func(_ int, rec *capture.Record) {
		f := rec.Data
		roce := len(f) > 14+20+8 && be.Uint16(f[12:]) == 0x0800 && f[14] == 0x45 &&
			f[14+9] == 17 && be.Uint16(f[14+20+2:]) == 4791
		total := 0
		if roce {
			total = int(be.Uint16(f[16:]))
		}
		if total-20 <= per {
			if err := w.WritePacket(rec.Timestamp, f, rec.OrigLen); err != nil {
				t.Fatal(err)
			}
			return
		}
		fragmented++
		payload := f[14+20 : 14+total]
		for off := 0; off < len(payload); off += per {
			end := min(off+per, len(payload))
			flags := uint16(off / 8)
			if end < len(payload) {
				flags |= 0x2000 // MF
			}
			ip := append([]byte(nil), f[14:14+20]...)
			be.PutUint16(ip[2:], uint16(20+end-off))
			be.PutUint16(ip[6:], flags)
			ip[10], ip[11] = 0, 0 // no checksum: rocedump does not check it
			frame := append(append(append([]byte(nil), f[:14]...), ip...), payload[off:end]...)
			if err := w.WritePacket(rec.Timestamp, frame, len(frame)); err != nil {
				t.Fatal(err)
			}
		}
	})
	if fragmented == 0 {
		t.Fatal("no datagram was fragmented")
	}
	file := filepath.Join(t.TempDir(), "roce-fragmented.pcap")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sameFlowsAsSource(t, file)
}

// TestExtractFragmentedMirrorKeepsFragments: extract from a mirror whose
// GRE datagrams were fragmented writes, with the first fragment of each
// chosen packet, the later fragments of its datagram, so that the output
// reassembles in Wireshark (tshark's default, ip.defragment on) into the
// RoCE packets it was extracted for. Before, only the first fragments
// were written: tshark found no RoCE packet in the output at all, and the
// fragments of the other mirrored frames (TCP here) stay out.
func TestExtractFragmentedMirrorKeepsFragments(t *testing.T) {
	tshark := needTool(t, "tshark")
	file, _ := writeFragmentedMirror(t, fragmentedSource, 600)
	if n := len(tsharkIBWith(t, tshark, file)); n != 20 {
		t.Fatalf("tshark reassembles %d RoCE packets in the mirror, want the 20 of %s", n, fragmentedSource)
	}
	out := filepath.Join(t.TempDir(), "extract.pcap")
	if _, errOut, code := runCLI(t, "extract", "--flow", "1", "-o", out, file); code != ExitOK {
		t.Fatalf("extract: exit %d: %s", code, errOut)
	}
	if n := len(tsharkIBWith(t, tshark, out)); n != 20 {
		t.Errorf("tshark reassembles %d RoCE packets in the extract, want 20", n)
	}
	// Only those: the fragments of the mirrored RoCE frames, not those of
	// the mirrored TCP frames.
	want := 0
	eachRealRecord(t, fragmentedSource, func(_ int, rec *capture.Record) {
		f := rec.Data
		if len(f) > 14+20+4 && f[14+9] == 17 && binary.BigEndian.Uint16(f[14+20+2:]) == 4791 {
			const per = (600 - 20) &^ 7
			want += (16 + len(f) + per - 1) / per // GRE and ERSPAN II: 16 bytes
		}
	})
	r, err := capture.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec capture.Record
	frames := 0
	for r.Next(&rec) == nil {
		frames++
	}
	if frames != want {
		t.Errorf("%d frames written, want the %d fragments of the RoCE packets", frames, want)
	}
}
