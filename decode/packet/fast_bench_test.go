package packet

import (
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// mirrorFrame is a frame as a switch mirror captures it.
type mirrorFrame struct {
	name    string
	data    []byte
	origLen int
}

// snap returns frame cut to n bytes (if longer), with its length on the wire.
func snap(name string, frame []byte, n int) mirrorFrame {
	return mirrorFrame{name, frame[:min(n, len(frame))], len(frame)}
}

// mirrorFrames are frames like those of the benchmark capture (package
// bench): RDMA WRITEs of 4096-byte packets cut at 96 bytes and whole ACKs,
// plain and wrapped in ERSPAN II (50 bytes more, cut at 146), plus the
// other layouts the fast path takes.
func mirrorFrames() []mirrorFrame {
	writeFirst := bth.BTH{Opcode: 0x06, PKey: 0xffff, DestQP: 0x0012d4, PSN: 0x00a0b1,
		RETH: bth.RETH{VA: 0x7f3a00001000, RKey: 0x1c2d3e, DMALen: 16384}}
	writeMiddle := bth.BTH{Opcode: 0x07, PKey: 0xffff, DestQP: 0x0012d4, PSN: 0x00a0b2}
	ack := bth.BTH{Opcode: bth.OpcodeRCAcknowledge, PKey: 0xffff, DestQP: 0x0011c3, PSN: 0x00a0b4,
		AETH: bth.AETH{Syndrome: 0x1f, MSN: 77}}
	page := make([]byte, 4096)
	w1 := eth(0x0800, roce4("10.0.3.7", "10.0.3.21", writeFirst, page))
	w2 := eth(0x0800, roce4("10.0.3.7", "10.0.3.21", writeMiddle, page))
	a := eth(0x0800, roce4("10.0.3.21", "10.0.3.7", ack, nil))
	a6 := eth(0x86dd, roce6("fd00::21", "fd00::7", ack, nil))
	aq := eth(0x0800, roce4("10.0.3.21", "10.0.3.7", ack, nil), vtag{0x88a8, 0, 200}, vtag{0x8100, 3, 100})
	e2 := func(inner []byte) []byte {
		return eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fS, 0x88be, 0, erspan2(100, false, inner))))
	}
	e3 := func(inner []byte) []byte {
		return eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fS, 0x22eb, 0, erspan3(100, 0, true, inner))),
			vtag{0x8100, 0, 10})
	}
	return []mirrorFrame{
		snap("write first", w1, 96),
		snap("write middle", w2, 96),
		snap("ack", a, len(a)),
		snap("ack ipv6", a6, len(a6)),
		snap("ack qinq", aq, len(aq)),
		snap("erspan2 write first", e2(w1), 146),
		snap("erspan2 ack", e2(a), 146),
		snap("erspan3 ack", e3(a), 1000),
		snap("erspan1 ack", eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(0, 0x88be, 0, a))), 1000),
		snap("erspan2 ipv6 outer, gre key, cut by switch",
			eth(0x86dd, ip6("fd00::a", "fd00::b", 47, gre(fK|fS, 0x88be, 42, erspan2(7, true, a6[:78])))), 1000),
		snap("erspan3 gre checksum, write middle",
			eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fC|fS, 0x22eb, 0, erspan3(9, 0, false, w2)))), 146),
		snap("erspan2 ack whole, T bit set", eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fS, 0x88be, 0, erspan2(100, true, a)))), 1000),
		snap("erspan2 ack whole, outer length past the frame", longerOuter(e2(a), 40), 1000),
	}
}

// longerOuter returns frame, an Ethernet frame carrying IPv4, with the IP
// total length n bytes more than the frame holds.
func longerOuter(frame []byte, n int) []byte {
	f := append([]byte(nil), frame...)
	total := int(f[16])<<8 | int(f[17])
	total += n
	f[16], f[17] = byte(total>>8), byte(total)
	return f
}

// BenchmarkDecodeMirror decodes frames like the benchmark capture's, one
// layout at a time, and the capture's mix: four WRITE packets per ACK.
func BenchmarkDecodeMirror(b *testing.B) {
	frames := mirrorFrames()
	for _, f := range frames {
		b.Run(f.name, func(b *testing.B) {
			var d Decoder
			var p Packet
			b.ReportAllocs()
			for b.Loop() {
				_ = d.Decode(capture.LinkTypeEthernet, f.data, f.origLen, &p)
			}
		})
	}
	byName := map[string]mirrorFrame{}
	for _, f := range frames {
		byName[f.name] = f
	}
	w1, w2, a := byName["write first"], byName["write middle"], byName["ack"]
	mix := []mirrorFrame{w1, w2, w2, w2, a}
	b.Run("mix", func(b *testing.B) {
		var d Decoder
		var p Packet
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range mix {
				_ = d.Decode(capture.LinkTypeEthernet, f.data, f.origLen, &p)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(mix)), "ns/frame")
	})
}
