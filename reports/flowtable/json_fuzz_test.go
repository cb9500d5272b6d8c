package flowtable

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendRecord holds JSONEncoder to encoding/json on records whose
// strings (addresses, times, names, file names, map keys, CM's) and
// numbers come from the fuzzer, with one encoder reused across settings
// (compact or indented, HTML escaped or not) and depths.
func FuzzAppendRecord(f *testing.F) {
	f.Add("10.0.0.1", "fe80::1%eth0", "a.pcap", `q"b\c`, "RC_SEND_ONLY", uint64(12345), 1.5, uint8(0))
	f.Add("\u2028", "\xff", "<&>", "\x00\x1f", "é", uint64(1)<<63, -0.0, uint8(7))
	var e JSONEncoder
	f.Fuzz(func(t *testing.T, s1, s2, file, key, name string, n uint64, v float64, sel uint8) {
		psn := uint32(n)
		port := uint16(n)
		r := Record{
			ID: int(n >> 1), Src: s1, Dst: s2, PairedBy: name, Transport: key, First: s2, Last: s1,
			FirstFile: file, LastFile: file, Packets: n, Bytes: n / 3, DurationS: v, MeanBps: v * 2, PeakBps: float64(n),
			FirstPSN: &psn, RetransmittedPackets: n >> 7,
			Opcodes: map[string]uint64{key: n, name: 1, file: 2}, DSCP: map[string]uint64{},
			UDPSrcPorts: []uint16{port, 1},
		}
		if sel&8 != 0 {
			r.CM = &CMRecord{ServiceID: name, PortSpace: key, Port: port, File: file, Frame: int(sel)}
		}
		if sel&16 != 0 {
			r.LastFile = s1
			r.UDPSrcPorts = nil
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		html := sel&1 != 0
		enc.SetEscapeHTML(html)
		if err := enc.Encode(&r); err != nil {
			if _, err2 := e.AppendRecord(nil, &r, 0); err2 == nil {
				t.Fatalf("encoding/json: %v; AppendRecord no error", err)
			}
			return
		}
		compact := bytes.TrimSuffix(want.Bytes(), []byte("\n"))
		indent := []string{"", "  ", "\t"}[int(sel>>1&3)%3]
		depth := int(sel >> 5 & 3)
		w := indentedAt(t, compact, indent, depth)
		e.Indent, e.EscapeHTML = indent, html
		for _, dst := range [][]byte{nil, []byte("xy"), make([]byte, 1, 4096)} {
			got, err := e.AppendRecord(dst, &r, depth)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[len(dst):], w) {
				t.Fatalf("indent %q html %v depth %d:\ngot  %s\nwant %s", indent, html, depth, got[len(dst):], w)
			}
		}
	})
}
