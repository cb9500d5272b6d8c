package cli

import (
	"bufio"
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

// extJSONKeys are read's JSON members for each extended header.
var extJSONKeys = []struct {
	h   bth.ExtHeaders
	key string
}{
	{bth.HasRDETH, "rdeth"}, {bth.HasDETH, "deth"}, {bth.HasXRCETH, "xrceth"}, {bth.HasFETH, "feth"},
	{bth.HasRETH, "reth"}, {bth.HasAtomicETH, "atomic_eth"}, {bth.HasAETH, "aeth"},
	{bth.HasAtomicAckETH, "atomic_ack_eth"}, {bth.HasImmDt, "immediate"}, {bth.HasIETH, "ieth"},
}

// writeEveryOpcode writes a capture with one whole RoCEv2 frame (Ethernet,
// IPv4, UDP, the BTH and the opcode's extended headers with nonzero
// fields, 8 bytes of payload, a correct ICRC) for every known opcode but
// the CNPs, and returns its path and the opcodes in frame order.
func writeEveryOpcode(t *testing.T) (string, []bth.Opcode) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opcodes.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	w, err := capture.NewPcapWriter(bw, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	var ops []bth.Opcode
	for o := range 256 {
		op := bth.Opcode(o)
		if !op.Known() || op.IsCNP() {
			continue
		}
		h := bth.BTH{Opcode: op, PKey: 0xffff, DestQP: 0x12, PSN: 7,
			RDETH: bth.RDETH{EECnxt: 0x33}, DETH: bth.DETH{QKey: 0x11, SrcQP: 0x22}, XRCETH: bth.XRCETH{XRCSRQ: 0x44},
			FETH: bth.FETH{Raw: 0x31}, RETH: bth.RETH{VA: 0x1000, RKey: 0x55, DMALen: 8},
			AtomicETH: bth.AtomicETH{VA: 0x2000, RKey: 0x66, SwapData: 1, CompareData: 2},
			AETH:      bth.AETH{Syndrome: 0x1f, MSN: 3}, AtomicAckETH: bth.AtomicAckETH{OrigRemoteData: 9},
			ImmDt: bth.ImmDt{Data: 0x77}, IETH: bth.IETH{RKey: 0x88}}
		ib := append(h.AppendHeaders(nil), 1, 2, 3, 4, 5, 6, 7, 8)
		udpLen := 8 + len(ib) + bth.ICRCLen
		ip := []byte{0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
		binary.BigEndian.PutUint16(ip[2:], uint16(20+udpLen))
		ip = append(ip, 0xc0, 0x00, 0x12, 0xb7, byte(udpLen>>8), byte(udpLen), 0, 0)
		ip = append(ip, ib...)
		icrc, err := bth.ICRCv2(append(ip, 0, 0, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		ip = binary.LittleEndian.AppendUint32(ip, icrc)
		frame := append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}, ip...)
		if err := w.WritePacket(time.Unix(1700000000, int64(len(ops))), frame, len(frame)); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, op)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path, ops
}

// TestReadJSONExtHeaders: for every known opcode, read's JSON has an object
// for exactly the extended headers the opcode carries (IBTA vol 1 Table
// 38; FETH of RDMA FLUSH, IBTA 1.5), and the README's table of JSON fields
// lists each of them.
func TestReadJSONExtHeaders(t *testing.T) {
	file, ops := writeEveryOpcode(t)
	out, errOut, code := runCLI(t, "read", "--format", "json", file)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(ops) {
		t.Fatalf("%d packets printed, want %d", len(lines), len(ops))
	}
	seen := bth.ExtHeaders(0)
	for i, line := range lines {
		var p map[string]any
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		op := ops[i]
		if p["icrc"] != "ok" || p["headers_truncated"] != nil {
			t.Errorf("%v: icrc %v, headers_truncated %v: the test frame is wrong", op, p["icrc"], p["headers_truncated"])
		}
		for _, e := range extJSONKeys {
			if _, ok := p[e.key]; ok != op.Headers().Has(e.h) {
				t.Errorf("%v (headers %v): %q present %v", op, op.Headers(), e.key, ok)
			}
		}
		seen |= op.Headers()
		if op.Headers().Has(bth.HasFETH) {
			feth, _ := p["feth"].(map[string]any)
			if feth["placement_type"] != 1.0 || feth["selectivity_level"] != 3.0 {
				t.Errorf("%v: feth %v, want placement_type 1 and selectivity_level 3 (0x31)", op, p["feth"])
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := string(readme)
	table = table[strings.Index(table, "### JSON fields of `rocedump read --format json`"):]
	table = table[:strings.Index(table, "\n## ")]
	for _, e := range extJSONKeys {
		if !seen.Has(e.h) {
			t.Errorf("no opcode carries %v", e.h)
		}
		if !strings.Contains(table, "`"+e.key+"`") {
			t.Errorf("README's table of read's JSON fields does not list %q", e.key)
		}
	}
}

// writeRoCEv2Frame writes a capture of one Ethernet, IPv4, RoCEv2 frame
// whose UDP payload is ib and a correct ICRC, cut to snap bytes (0: whole),
// and returns its path.
func writeRoCEv2Frame(t *testing.T, ib []byte, snap int) string {
	t.Helper()
	udpLen := 8 + len(ib) + bth.ICRCLen
	ip := []byte{0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
		0xc0, 0x00, 0x12, 0xb7, byte(udpLen >> 8), byte(udpLen), 0, 0}
	binary.BigEndian.PutUint16(ip[2:], uint16(20+udpLen))
	ip = append(ip, ib...)
	icrc, err := bth.ICRCv2(append(ip, 0, 0, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	frame := append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}, binary.LittleEndian.AppendUint32(ip, icrc)...)
	wire := len(frame)
	if snap > 0 {
		frame = frame[:snap]
	}
	path := filepath.Join(t.TempDir(), "frame.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewPcapWriter(f, capture.LinkTypeEthernet, 0)
	if err == nil {
		err = w.WritePacket(time.Unix(1700000000, 0), frame, wire)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadMalformedLengthNotCut: an RDMA WRITE FIRST whose UDP length holds
// its BTH but not its RETH is malformed ("bad length"), captured whole: the
// RETH is missing because of the UDP length, not cut by the snap length, so
// neither the JSON (headers_truncated) nor -v ("extended headers cut off")
// says it was cut, and -v gives no payload length, which JSON leaves out
// too ("payload 0 bytes" was printed).
func TestReadMalformedLengthNotCut(t *testing.T) {
	h := bth.BTH{Opcode: 0x06, PKey: 0xffff, DestQP: 0x12, PSN: 7}
	ib := append(h.AppendHeaders(nil)[:bth.BTHLen], 1, 2, 3, 4) // 4 bytes of a 16-byte RETH
	path := writeRoCEv2Frame(t, ib, 0)

	out, errOut, code := runCLI(t, "read", "--format", "json", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if p["malformed"] != "bad length" || p["truncated"] != false {
		t.Fatalf("malformed %v, truncated %v; want bad length, false: %s", p["malformed"], p["truncated"], out)
	}
	for _, key := range []string{"headers_truncated", "payload_len", "reth"} {
		if v, ok := p[key]; ok {
			t.Errorf("JSON has %s %v: %s", key, v, out)
		}
	}
	out, _, _ = runCLI(t, "read", "-v", path)
	if strings.Contains(out, "cut off") || strings.Contains(out, "payload") {
		t.Errorf("-v says the headers were cut off or gives a payload length:\n%s", out)
	}
}

// TestReadMalformedTruncatedMark: the text line of a malformed packet the
// snap length cut ends in "[truncated to N]", as every other line does and
// as JSON's truncated and the summary's count say.
func TestReadMalformedTruncatedMark(t *testing.T) {
	h := bth.BTH{Opcode: 0x0a, TransportVersion: 1, PKey: 0xffff, DestQP: 0x12, PSN: 7,
		RETH: bth.RETH{VA: 0x1000, RKey: 0x55, DMALen: 400}}
	path := writeRoCEv2Frame(t, append(h.AppendHeaders(nil), make([]byte, 400)...), 128)
	out, errOut, code := runCLI(t, "read", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "malformed RoCE: bad transport version") || !strings.HasSuffix(strings.TrimSpace(out), "[truncated to 128]") {
		t.Errorf("want a malformed line ending in [truncated to 128]: %q", out)
	}
	if !strings.Contains(errOut, "1 malformed, 1 truncated") {
		t.Errorf("summary %q", errOut)
	}
}
