package packet

import (
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// allocCases are the frames the zero-allocation guarantee is checked on.
func allocCases() []decodeCase {
	want := map[string]bool{
		"plain": true, "vlan": true, "erspan2": true, "erspan3 O bit": true, "ipv6": true, "cm req": true,
		"rocev1": true, "erspan vxlan": true, "sll2": true, "reserved opcode": true, "tver 1": true,
		"garbage": true, "short bth": true, "bad length": true, "udp length long": true, "too many tunnels": true,
	}
	var out []decodeCase
	for _, c := range decodeCases() {
		if want[c.name] {
			out = append(out, c)
		}
	}
	return out
}

func TestDecodeAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race")
	}
	var d Decoder
	var p Packet
	cases := allocCases()
	if len(cases) != 16 {
		t.Fatalf("found %d alloc cases, want 16", len(cases))
	}
	for _, c := range cases {
		for _, n := range []int{len(c.data), len(c.data) * 2 / 3, 50} {
			data := c.data[:min(n, len(c.data))]
			allocs := testing.AllocsPerRun(100, func() {
				_ = d.Decode(c.lt, data, len(c.data), &p)
			})
			if allocs != 0 {
				t.Errorf("%s (%d of %d bytes): %v allocations per frame, want 0", c.name, len(data), len(c.data), allocs)
			}
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	byName := map[string]decodeCase{}
	for _, c := range decodeCases() {
		byName[c.name] = c
	}
	for _, name := range []string{"plain", "vlan", "ipv6", "erspan2", "erspan3 O bit", "erspan vxlan", "cm req"} {
		c := byName[name]
		b.Run(name, func(b *testing.B) {
			var d Decoder
			var p Packet
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				_ = d.Decode(c.lt, c.data, len(c.data), &p)
			}
		})
	}
}

// BenchmarkDecodeCapture decodes a real NCCL capture, mostly TCP and RoCE.
func BenchmarkDecodeCapture(b *testing.B) {
	frames := readCapture(b, realDir+"/linlinw5_nccl_nccl_node0.pcap")
	var size int64
	for _, f := range frames {
		size += int64(len(f.data))
	}
	var d Decoder
	var p Packet
	b.ReportAllocs()
	b.SetBytes(size)
	for b.Loop() {
		for _, f := range frames {
			_ = d.Decode(capture.LinkTypeEthernet, f.data, f.origLen, &p)
		}
	}
}
