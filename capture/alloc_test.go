package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"time"
)

// loopReader yields head once, then body over and over: an endless capture.
type loopReader struct {
	head, body []byte
	off        int
}

func (l *loopReader) Read(p []byte) (int, error) {
	if len(l.head) > 0 {
		n := copy(p, l.head)
		l.head = l.head[n:]
		return n, nil
	}
	n := copy(p, l.body[l.off:])
	l.off = (l.off + n) % len(l.body)
	return n, nil
}

// endlessPcap returns a pcap header and a body of records of mixed sizes.
func endlessPcap(sizes ...int) (head, body []byte) {
	var pkts []pkt
	for i, n := range sizes {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i), frac: uint32(i), data: frame(i, n)})
	}
	file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, nano: true, linkType: 1, snaplen: 4 << 20}, pkts)
	return file[:pcapFileHeaderLen], file[pcapFileHeaderLen:]
}

// endlessPcapng returns a section header with two interfaces and a body of
// packet blocks of every kind on both, plus a skipped block.
func endlessPcapng() (head, body []byte) {
	f := &ngFile{}
	f.shb(binary.BigEndian)
	f.idb(1, 0, f.opt(9, []byte{9}))
	f.idb(276, 0, f.opt(9, []byte{0x8a}))
	n := len(f.b)
	f.epb(0, 1e18, frame(1, 1514), 1514)
	f.epb(1, 1<<40, frame(2, 90), 90)
	f.block(5, make([]byte, 20))
	f.spb(frame(3, 60), 60)
	f.pb(1, 1<<41, frame(4, 200), 300)
	return f.b[:n], f.b[n:]
}

func TestNextAllocs(t *testing.T) {
	bigHead, bigBody := endlessPcap(60, 3<<20, 1514) // one record larger than the buffer
	tests := []struct {
		name       string
		head, body []byte
		size       int
	}{
		{"pcap", nil, nil, bufSize},
		{"pcapng", nil, nil, bufSize},
		{"pcap small buffer", nil, nil, minBufSize},
		{"pcapng small buffer", nil, nil, minBufSize},
		{"pcap record larger than buffer", bigHead, bigBody, bufSize},
	}
	tests[0].head, tests[0].body = endlessPcap(60, 1514, 9000, 0, 128)
	tests[1].head, tests[1].body = endlessPcapng()
	tests[2].head, tests[2].body = tests[0].head, tests[0].body
	tests[3].head, tests[3].body = tests[1].head, tests[1].body
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newReaderSize(&loopReader{head: tt.head, body: tt.body}, "loop", tt.size)
			if err != nil {
				t.Fatal(err)
			}
			var rec Record
			for range 20 { // warm up: grow the copy buffer
				if err := r.Next(&rec); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if err := r.Next(&rec); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("Next allocates %.1f times per record, want 0", allocs)
			}
		})
	}
}

func TestWriterAllocs(t *testing.T) {
	pw, _ := NewPcapWriter(io.Discard, LinkTypeEthernet, 0)
	nw, _ := NewPcapngWriter(io.Discard)
	data := frame(1, 1514)
	ts := time.Unix(1700000000, 5).UTC()
	nw.WritePacket(ts, LinkTypeEthernet, data, 0)
	nw.WritePacket(ts, LinkTypeLinuxSLL2, data, 0)
	if a := testing.AllocsPerRun(100, func() { pw.WritePacket(ts, data, 1514) }); a != 0 {
		t.Errorf("PcapWriter.WritePacket allocates %.1f times, want 0", a)
	}
	if a := testing.AllocsPerRun(100, func() { nw.WritePacket(ts, LinkTypeLinuxSLL2, data, 1514) }); a != 0 {
		t.Errorf("PcapngWriter.WritePacket allocates %.1f times, want 0", a)
	}
}

func benchmarkRead(b *testing.B, head, body []byte, records int) {
	r, err := NewReader(&loopReader{head: head, body: body}, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var rec Record
	b.ReportAllocs()
	b.SetBytes(int64(len(body) / records))
	b.ResetTimer()
	for range b.N {
		if err := r.Next(&rec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadPcap reads an endless pcap of 64..1514-byte frames; one
// operation is one record.
func BenchmarkReadPcap(b *testing.B) {
	sizes := []int{64, 1514, 128, 1024, 90, 4096, 60, 1514}
	head, body := endlessPcap(sizes...)
	benchmarkRead(b, head, body, len(sizes))
}

// BenchmarkReadPcapng reads an endless pcapng of EPB, SPB and PB frames on
// two interfaces; one operation is one record.
func BenchmarkReadPcapng(b *testing.B) {
	head, body := endlessPcapng()
	benchmarkRead(b, head, body, 4)
}

// BenchmarkReadPcapGzip reads a gzip-compressed pcap of 10000 frames; one
// operation is the whole file, bytes are uncompressed.
func BenchmarkReadPcapGzip(b *testing.B) {
	var pkts []pkt
	for i := range 10000 {
		pkts = append(pkts, pkt{sec: uint32(i), data: frame(i, 64+i%1400)})
	}
	plain, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	file := gz(plain)
	b.ReportAllocs()
	b.SetBytes(int64(len(plain)))
	b.ResetTimer()
	for range b.N {
		r, err := NewReader(bytes.NewReader(file), "bench.gz")
		if err != nil {
			b.Fatal(err)
		}
		var rec Record
		for r.Next(&rec) == nil {
		}
	}
}
