package bth

import (
	"encoding/binary"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tsharkFields runs tshark on a capture and returns, per frame number, the
// values of the given fields (the first occurrence of each). It skips the
// test when tshark is not installed.
func tsharkFields(t *testing.T, path, filter string, fields ...string) map[int][]string {
	t.Helper()
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not on PATH")
	}
	args := []string{"-r", path, "-Y", filter, "-T", "fields", "-E", "separator=|", "-e", "frame.number"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	rows := map[int][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		cols := strings.Split(line, "|")
		n, err := strconv.Atoi(cols[0])
		if err != nil {
			t.Fatalf("tshark line %q: %v", line, err)
		}
		for i, c := range cols {
			cols[i], _, _ = strings.Cut(c, ",")
		}
		rows[n] = cols[1:]
	}
	return rows
}

// tsharkUint parses a tshark number: decimal, 0x hex, or a hex byte string
// such as immdt's "01000000". ok is false for an absent field.
func tsharkUint(t *testing.T, s string, bytesField bool) (v uint64, ok bool) {
	t.Helper()
	if s == "" {
		return 0, false
	}
	if bytesField {
		b, err := hex.DecodeString(strings.ReplaceAll(s, ":", ""))
		if err != nil || len(b) > 8 {
			t.Fatalf("tshark bytes %q: %v", s, err)
		}
		for _, c := range b {
			v = v<<8 | uint64(c)
		}
		return v, true
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("tshark number %q: %v", s, err)
	}
	return v, true
}

func boolUint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// realField is a tshark field and how to read the same thing from a BTH;
// present is false when the header is not in the decode.
type realField struct {
	name  string
	bytes bool
	get   func(b *BTH) (v uint64, present bool)
}

var realFields = []realField{
	{"infiniband.bth.opcode", false, func(b *BTH) (uint64, bool) { return uint64(b.Opcode), true }},
	{"infiniband.bth.destqp", false, func(b *BTH) (uint64, bool) { return uint64(b.DestQP), true }},
	{"infiniband.bth.psn", false, func(b *BTH) (uint64, bool) { return uint64(b.PSN), true }},
	{"infiniband.bth.p_key", false, func(b *BTH) (uint64, bool) { return uint64(b.PKey), true }},
	{"infiniband.bth.se", false, func(b *BTH) (uint64, bool) { return boolUint(b.SolicitedEvent), true }},
	{"infiniband.bth.m", false, func(b *BTH) (uint64, bool) { return boolUint(b.MigReq), true }},
	{"infiniband.bth.padcnt", false, func(b *BTH) (uint64, bool) { return uint64(b.PadCount), true }},
	{"infiniband.bth.tver", false, func(b *BTH) (uint64, bool) { return uint64(b.TransportVersion), true }},
	{"infiniband.bth.a", false, func(b *BTH) (uint64, bool) { return boolUint(b.AckReq), true }},
	{"infiniband.bth.reserved7", false, func(b *BTH) (uint64, bool) { return uint64(b.Reserved7), true }},
	{"infiniband.rdeth.eecnxt", false, func(b *BTH) (uint64, bool) { return uint64(b.RDETH.EECnxt), b.Ext&HasRDETH != 0 }},
	// Wireshark shows an AtomicETH's VA and R_Key with the RETH fields.
	{"infiniband.reth.va", false, func(b *BTH) (uint64, bool) {
		if b.Ext&HasAtomicETH != 0 {
			return b.AtomicETH.VA, true
		}
		return b.RETH.VA, b.Ext&HasRETH != 0
	}},
	{"infiniband.reth.r_key", false, func(b *BTH) (uint64, bool) {
		if b.Ext&HasAtomicETH != 0 {
			return uint64(b.AtomicETH.RKey), true
		}
		return uint64(b.RETH.RKey), b.Ext&HasRETH != 0
	}},
	{"infiniband.reth.dmalen", false, func(b *BTH) (uint64, bool) { return uint64(b.RETH.DMALen), b.Ext&HasRETH != 0 }},
	{"infiniband.aeth.syndrome", false, func(b *BTH) (uint64, bool) { return uint64(b.AETH.Syndrome), b.Ext&HasAETH != 0 }},
	{"infiniband.aeth.msn", false, func(b *BTH) (uint64, bool) { return uint64(b.AETH.MSN), b.Ext&HasAETH != 0 }},
	{"infiniband.deth.q_key", false, func(b *BTH) (uint64, bool) { return uint64(b.DETH.QKey), b.Ext&HasDETH != 0 }},
	{"infiniband.deth.srcqp", false, func(b *BTH) (uint64, bool) { return uint64(b.DETH.SrcQP), b.Ext&HasDETH != 0 }},
	{"infiniband.immdt", true, func(b *BTH) (uint64, bool) { return uint64(b.ImmDt.Data), b.Ext&HasImmDt != 0 }},
	{"infiniband.ieth", true, func(b *BTH) (uint64, bool) { return uint64(b.IETH.RKey), b.Ext&HasIETH != 0 }},
	{"infiniband.atomiceth.swapdt", false, func(b *BTH) (uint64, bool) { return b.AtomicETH.SwapData, b.Ext&HasAtomicETH != 0 }},
	{"infiniband.atomiceth.cmpdt", false, func(b *BTH) (uint64, bool) { return b.AtomicETH.CompareData, b.Ext&HasAtomicETH != 0 }},
	{"infiniband.atomicacketh.origremdt", false, func(b *BTH) (uint64, bool) {
		return b.AtomicAckETH.OrigRemoteData, b.Ext&HasAtomicAckETH != 0
	}},
}

// compareWithTshark decodes every RoCEv2 frame of a capture and compares
// each realFields value with what tshark says.
func compareWithTshark(t *testing.T, path string, frames []roceFrame) {
	t.Helper()
	names := make([]string, len(realFields))
	for i, f := range realFields {
		names[i] = f.name
	}
	rows := tsharkFields(t, path, "udp.dstport==4791", names...)
	if len(rows) != len(frames) {
		t.Errorf("tshark saw %d RoCEv2 frames, we found %d", len(rows), len(frames))
	}
	for _, f := range frames {
		row, ok := rows[f.Number]
		if !ok {
			t.Errorf("frame %d: not in tshark's output", f.Number)
			continue
		}
		var b BTH
		if err := b.DecodeFromBytes(f.UDP, nil); err != nil {
			t.Errorf("frame %d: want no error, got %v", f.Number, err)
			continue
		}
		for i, rf := range realFields {
			want, wantOK := tsharkUint(t, row[i], rf.bytes)
			got, gotOK := rf.get(&b)
			if wantOK != gotOK || (wantOK && want != got) {
				t.Errorf("frame %d %v: %s: want %#x (present %v), got %#x (present %v)",
					f.Number, b.Opcode, rf.name, want, wantOK, got, gotOK)
			}
		}
	}
}

// TestRealCapturesMatchTshark decodes every RoCEv2 frame of the real
// captures and compares the BTH and extended header fields with tshark.
func TestRealCapturesMatchTshark(t *testing.T) {
	for _, name := range realCaptures(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			frames := roceFrames(t, name)
			if len(frames) == 0 {
				t.Fatal("no RoCEv2 frames")
			}
			compareWithTshark(t, filepath.Join(realDir, name), frames)
		})
	}
}

// TestRealCaptures checks, without tshark, what every real RoCEv2 frame must
// satisfy: it decodes whole, its length checks out, its payload length from
// the UDP length matches the bytes captured, and its ICRC is good (and bad
// with any one bit of the payload or invariant headers flipped).
func TestRealCaptures(t *testing.T) {
	seen := map[Opcode]int{}
	for _, name := range realCaptures(t) {
		for _, f := range roceFrames(t, name) {
			var b BTH
			if err := b.DecodeFromBytes(f.UDP, nil); err != nil {
				t.Errorf("%s frame %d: %v", name, f.Number, err)
				continue
			}
			seen[b.Opcode]++
			if b.Truncated || b.Ext != b.Opcode.Headers() {
				t.Errorf("%s frame %d: want whole decode, got Truncated=%v Ext=%v", name, f.Number, b.Truncated, b.Ext)
			}
			if err := b.CheckLength(len(f.UDP)); err != nil {
				t.Errorf("%s frame %d: CheckLength: %v", name, f.Number, err)
			}
			if want := len(b.LayerPayload()) - int(b.PadCount) - ICRCLen; !b.Opcode.IsCNP() && b.PayloadLen(len(f.UDP)) != want {
				t.Errorf("%s frame %d: PayloadLen: want %d, got %d", name, f.Number, want, b.PayloadLen(len(f.UDP)))
			}
			if enc := b.AppendHeaders(nil); string(enc) != string(b.LayerContents()) {
				t.Errorf("%s frame %d: AppendHeaders: want % x, got % x", name, f.Number, b.LayerContents(), enc)
			}
			if st := VerifyICRCv2(f.IP); st != ICRCOK {
				t.Errorf("%s frame %d: ICRC: want ok, got %v", name, f.Number, st)
			}
			udpLen := int(binary.BigEndian.Uint16(f.IP[len(f.IP)-len(f.UDP)-4:]))
			if udpLen != len(f.UDP)+8 {
				t.Errorf("%s frame %d: UDP length %d, want %d", name, f.Number, udpLen, len(f.UDP)+8)
			}
		}
	}
	t.Logf("opcodes seen: %v", seen)
	for _, op := range []Opcode{0x04, 0x06, 0x07, 0x08, 0x0a, 0x0b, 0x0c, 0x0d, 0x0f, 0x10, 0x11, 0x12, 0x14, 0x24, 0x64} {
		if seen[op] == 0 {
			t.Errorf("want real frames with opcode %v, saw none", op)
		}
	}
}
