package bth

import (
	"testing"

	"github.com/google/gopacket"
)

// realUDP returns the UDP payload of the first real frame with opcode op.
func realUDP(t testing.TB, name string, op Opcode) []byte {
	t.Helper()
	for _, f := range roceFrames(t, name) {
		if Opcode(f.UDP[0]) == op {
			return f.UDP
		}
	}
	t.Fatalf("%s: no %v frame", name, op)
	return nil
}

// TestDecodeAllocs guards the hot path: decoding real packets into a reused
// BTH, checking the ICRC and naming the opcode allocate nothing.
func TestDecodeAllocs(t *testing.T) {
	tests := []struct {
		name string
		file string
		op   Opcode
	}{
		{"ACK", "linlinw5_rdma_write_bw.pcap", 0x11},
		{"WRITE_FIRST", "linlinw5_rdma_write_bw.pcap", 0x06},
		{"UD SEND_ONLY", "linlinw5_pingpong_ud.pcap", 0x64},
		{"CM MAD", "linlinw5_rping.pcap", 0x64},
		{"ATOMIC_ACKNOWLEDGE", "linlinw5_rdma_atomic_bw.pcap", 0x12},
	}
	for _, tt := range tests {
		data := realUDP(t, tt.file, tt.op)
		var b BTH
		var fb feedback
		if n := testing.AllocsPerRun(100, func() {
			if err := b.DecodeFromBytes(data, &fb); err != nil {
				t.Fatal(err)
			}
			_ = b.Opcode.String()
			_ = b.PayloadLen(len(data))
		}); n != 0 {
			t.Errorf("%s: DecodeFromBytes: want 0 allocs, got %v", tt.name, n)
		}
		truncated := data[:BTHLen+2]
		if n := testing.AllocsPerRun(100, func() { _ = b.DecodeFromBytes(truncated, &fb) }); n != 0 {
			t.Errorf("%s truncated: want 0 allocs, got %v", tt.name, n)
		}
	}
	mad := realMAD(t, "linlinw5_rping.pcap", 1)
	var m CMMAD
	if n := testing.AllocsPerRun(100, func() { _ = m.DecodeFromBytes(mad, nil) }); n != 0 {
		t.Errorf("CMMAD.DecodeFromBytes: want 0 allocs, got %v", n)
	}
	var g GRH
	grh := roceV1()
	if n := testing.AllocsPerRun(100, func() { _ = g.DecodeFromBytes(grh, nil) }); n != 0 {
		t.Errorf("GRH.DecodeFromBytes: want 0 allocs, got %v", n)
	}
	ip := realIPv4(t)
	v6 := roceV2IPv6()
	garbage := []byte{0x45, 0, 0, 20}
	if n := testing.AllocsPerRun(100, func() {
		_ = VerifyICRCv2(ip)
		_ = VerifyICRCv2(v6)
		_ = VerifyICRCv1(grh)
		_ = VerifyICRCv2(garbage)
	}); n != 0 {
		t.Errorf("VerifyICRC: want 0 allocs, got %v", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		for i := 0; i < 256; i++ {
			_ = Opcode(i).String()
			_ = NAKCode(i & 0x1f).String()
		}
	}); n != 0 {
		t.Errorf("String: want 0 allocs, got %v", n)
	}
	var b BTH
	if err := b.DecodeFromBytes(realUDP(t, "linlinw5_rdma_write_bw.pcap", 0x06), nil); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, MaxHeaderLen)
	if n := testing.AllocsPerRun(100, func() { buf = b.AppendHeaders(buf[:0]) }); n != 0 {
		t.Errorf("AppendHeaders: want 0 allocs, got %v", n)
	}
}

func BenchmarkDecodeBTH(b *testing.B) {
	for _, bc := range []struct {
		name string
		file string
		op   Opcode
	}{
		{"ACK", "linlinw5_rdma_write_bw.pcap", 0x11},
		{"WRITE_FIRST", "linlinw5_rdma_write_bw.pcap", 0x06},
		{"UD_SEND_ONLY", "linlinw5_pingpong_ud.pcap", 0x64},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := realUDP(b, bc.file, bc.op)
			var h BTH
			df := gopacket.NilDecodeFeedback
			b.SetBytes(int64(bc.op.HeaderLen()))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := h.DecodeFromBytes(data, df); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkVerifyICRCv2(b *testing.B) {
	var ip []byte
	for _, f := range roceFrames(b, "linlinw5_rdma_write_bw.pcap") {
		if Opcode(f.UDP[0]) == 0x06 {
			ip = f.IP
		}
	}
	b.SetBytes(int64(len(ip)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if VerifyICRCv2(ip) != ICRCOK {
			b.Fatal("bad ICRC")
		}
	}
}

// TestRejectAllocs guards the paths that garbage on port 4791 takes: a
// reserved opcode, a bad transport version and a length check allocate
// nothing, so decoders can reject junk at line rate.
func TestRejectAllocs(t *testing.T) {
	reserved := append(bthBytes(0x1a), tRETH...)
	version := append(bthBytes(0x11), tAETH...)
	version[1] |= 3
	var b BTH
	for name, data := range map[string][]byte{"reserved opcode": reserved, "bad version": version} {
		if n := testing.AllocsPerRun(100, func() { _ = b.DecodeFromBytes(data, nil) }); n != 0 {
			t.Errorf("%s: want 0 allocs, got %v", name, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = b.LengthOK(3) }); n != 0 {
		t.Errorf("LengthOK: want 0 allocs, got %v", n)
	}
}
