package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// sampleNG builds a pcapng file in byte order o exercising every block type
// the reader knows and several it skips, and returns the records expected.
func sampleNG(o byteOrder) (*ngFile, []Record) {
	f := &ngFile{}
	f.shb(o, f.optIn(o, 4, []byte("rocedump-test")))
	f.idb(1, 65535, f.opt(2, []byte("eth0")), f.opt(9, []byte{9}))
	f.block(4, append(f.opt(1, []byte{10, 0, 0, 1, 'h', 'o', 's', 't', 0}), 0, 0, 0, 0)) // NRB: one IPv4 record, end
	f.idb(276, 262144, f.opt(9, []byte{6}))
	f.idb(1, 0, f.opt(9, []byte{0x8a}), f.opt(14, f.o.AppendUint64(nil, 100)))
	f.epb(0, 1700000000*1e9+123456789, frame(1, 60), 60)
	f.epb(1, 1700000001*1e6+654321, frame(2, 80), 80)
	f.block(5, make([]byte, 20))                                              // ISB
	f.block(0x40000bad, []byte{0, 0, 0x7f, 0xff, 1, 2, 3})                    // custom block
	f.epb(2, 1700000002*1024+512, frame(3, 61), 1514)                         // 2^-10 s, +100 s offset
	f.epb(2, 5*1024+1, nil, 0)                                                // 1/1024 s = 976562.5 ns
	f.spb(frame(5, 64), 64)                                                   // no timestamp
	f.spb(frame(6, 99), 99)                                                   // padded to 100
	f.pb(1, 1700000003*1e6+1, frame(7, 33), 33)                               // obsolete Packet Block
	f.block(0x0a, append(append(f.u32(0x544c534b), f.u32(4)...), 1, 2, 3, 4)) // DSB: TLS key log
	f.block(0x12345678, make([]byte, 8))                                      // unknown
	f.epb(1, 1700000004*1e6, frame(8, 5), 5, f.opt(1, []byte("hi")))
	f.block(0x80000001, []byte{1, 2, 3, 4}) // local use
	want := []Record{
		{Timestamp: utc(1700000000, 123456789), CapLen: 60, OrigLen: 60, LinkType: 1, Interface: 0, Data: frame(1, 60)},
		{Timestamp: utc(1700000001, 654321000), CapLen: 80, OrigLen: 80, LinkType: 276, Interface: 1, Data: frame(2, 80)},
		{Timestamp: utc(1700000102, 500000000), CapLen: 61, OrigLen: 1514, LinkType: 1, Interface: 2, Data: frame(3, 61)},
		{Timestamp: utc(105, 976562), CapLen: 0, OrigLen: 0, LinkType: 1, Interface: 2, Data: nil},
		{CapLen: 64, OrigLen: 64, LinkType: 1, Interface: 0, Data: frame(5, 64)},
		{CapLen: 99, OrigLen: 99, LinkType: 1, Interface: 0, Data: frame(6, 99)},
		{Timestamp: utc(1700000003, 1000), CapLen: 33, OrigLen: 33, LinkType: 276, Interface: 1, Data: frame(7, 33)},
		{Timestamp: utc(1700000004, 0), CapLen: 5, OrigLen: 5, LinkType: 276, Interface: 1, Data: frame(8, 5)},
	}
	for i := range want {
		want[i].Number = i + 1
		if i >= 2 {
			want[i].Number++ // the custom block is frame 3, as Wireshark numbers it
		}
	}
	return f, want
}

// optIn encodes an option before the section's byte order is set.
func (f *ngFile) optIn(o byteOrder, code uint16, val []byte) []byte {
	f.o = o
	return f.opt(code, val)
}

func TestPcapngVariants(t *testing.T) {
	tests := []struct {
		name   string
		order  byteOrder
		wrap   func([]byte) []byte
		format string
	}{
		{"le", binary.LittleEndian, nil, "pcapng"},
		{"be", binary.BigEndian, nil, "pcapng"},
		{"le-gzip", binary.LittleEndian, gz, "pcapng (gzip)"},
		{"be-gzip-multistream", binary.BigEndian, gzMulti, "pcapng (gzip)"},
	}
	for _, tt := range tests {
		for _, small := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/smallbuf=%v", tt.name, small), func(t *testing.T) {
				f, want := sampleNG(tt.order)
				file := f.b
				if tt.wrap != nil {
					file = tt.wrap(file)
				}
				r, recs, err := readBytes(t, file, "t.pcapng", small)
				if err != io.EOF {
					t.Fatalf("reading ended with %v, want io.EOF", err)
				}
				if got := r.Format().String(); got != tt.format {
					t.Errorf("Format() = %q, want %q", got, tt.format)
				}
				if got := r.Format().ByteOrder; got != tt.order {
					t.Errorf("Format().ByteOrder = %v, want %v", got, tt.order)
				}
				if got := r.SnapLen(); got != 65535 {
					t.Errorf("SnapLen() = %d, want 65535", got)
				}
				if got := fmt.Sprint(r.LinkTypes()); got != "[EN10MB (1) LINUX_SLL2 (276)]" {
					t.Errorf("LinkTypes() = %s", got)
				}
				ifs := r.Interfaces()
				if len(ifs) != 3 || ifs[0].Name != "eth0" || ifs[0].TicksPerSecond != 1e9 ||
					ifs[1].TicksPerSecond != 1e6 || ifs[2].TicksPerSecond != 1024 || ifs[2].TSOffset != 100 {
					t.Errorf("Interfaces() = %+v", ifs)
				}
				if len(recs) != len(want) {
					t.Fatalf("got %d records, want %d", len(recs), len(want))
				}
				for i := range want {
					checkRecord(t, recs[i], want[i])
				}
			})
		}
	}
}

// TestPcapngSections reads a file whose sections differ in byte order and
// link types; interface indexes restart in each section.
func TestPcapngSections(t *testing.T) {
	f := &ngFile{}
	f.shb(binary.LittleEndian)
	f.idb(1, 1500)
	f.epb(0, 1e6, frame(1, 10), 10)
	f.shb(binary.BigEndian)
	f.idb(276, 9000, f.opt(9, []byte{9}))
	f.idb(101, 9000)
	f.epb(0, 2e9, frame(2, 20), 20)
	f.epb(1, 3e6, frame(3, 30), 30)
	f.shb(binary.LittleEndian)
	f.idb(113, 0)
	f.epb(0, 4e6, frame(4, 40), 40)
	want := []Record{
		{Timestamp: utc(1, 0), CapLen: 10, OrigLen: 10, LinkType: 1, Interface: 0, Number: 1, Data: frame(1, 10)},
		{Timestamp: utc(2, 0), CapLen: 20, OrigLen: 20, LinkType: 276, Interface: 0, Number: 2, Data: frame(2, 20)},
		{Timestamp: utc(3, 0), CapLen: 30, OrigLen: 30, LinkType: 101, Interface: 1, Number: 3, Data: frame(3, 30)},
		{Timestamp: utc(4, 0), CapLen: 40, OrigLen: 40, LinkType: 113, Interface: 0, Number: 4, Data: frame(4, 40)},
	}
	for _, small := range []bool{false, true} {
		r, recs, err := readBytes(t, f.b, "sections.pcapng", small)
		if err != io.EOF || len(recs) != len(want) {
			t.Fatalf("got %d records and %v", len(recs), err)
		}
		for i := range want {
			checkRecord(t, recs[i], want[i])
		}
		if r.SnapLen() != 1500 || r.Format().ByteOrder != binary.LittleEndian {
			t.Errorf("SnapLen %d, byte order %v: want those of the first section", r.SnapLen(), r.Format().ByteOrder)
		}
		if got := fmt.Sprint(r.LinkTypes()); got != "[EN10MB (1) LINUX_SLL2 (276) RAW (101) LINUX_SLL (113)]" {
			t.Errorf("LinkTypes() = %s", got)
		}
		if ifs := r.Interfaces(); len(ifs) != 1 || ifs[0].LinkType != LinkTypeLinuxSLL {
			t.Errorf("Interfaces() = %+v, want the last section's one", ifs)
		}
	}
}

func TestPcapngBadBlocks(t *testing.T) {
	le := binary.LittleEndian
	tests := []struct {
		name     string
		build    func(f *ngFile)
		sentinel error
		reason   string // expected message after "bad.pcapng: record 2: "
	}{
		{"length not a multiple of 4", func(f *ngFile) { f.raw(f.u32(6), f.u32(33)) },
			ErrBadRecord, "Enhanced Packet Block length 33 is not a multiple of 4"},
		{"length below 12", func(f *ngFile) { f.raw(f.u32(0x99), f.u32(8)) },
			ErrBadRecord, "block of type 0x00000099 length 8 is too short (minimum 12)"},
		{"EPB shorter than its fixed fields", func(f *ngFile) { f.raw(f.u32(6), f.u32(28), make([]byte, 16), f.u32(28)) },
			ErrBadRecord, "Enhanced Packet Block length 28 is too short (minimum 32)"},
		{"implausible length", func(f *ngFile) { f.raw(f.u32(6), f.u32(0xfffffff0)) },
			ErrBadRecord, "Enhanced Packet Block length 4294967280 is implausible"},
		{"trailing length differs", func(f *ngFile) {
			f.epb(0, 0, frame(1, 4), 4)
			f.b = f.b[:len(f.b)-4]
			f.raw(f.u32(40))
		}, ErrBadRecord, "Enhanced Packet Block trailing length 40 does not match leading length 36"},
		{"skipped block trailing length differs", func(f *ngFile) { f.raw(f.u32(5), f.u32(16), f.u32(0), f.u32(12)) },
			ErrBadRecord, "Interface Statistics Block trailing length 12 does not match leading length 16"},
		{"captured length beyond block", func(f *ngFile) {
			f.epb(0, 0, frame(1, 8), 8)
			f.o.PutUint32(f.b[len(f.b)-40+20:], 9)
		}, ErrBadRecord, "Enhanced Packet Block captured length 9 exceeds the block (room for 8)"},
		{"undeclared interface", func(f *ngFile) { f.epb(5, 0, frame(1, 8), 8) },
			ErrBadRecord, "Enhanced Packet Block on interface 5, but the section declares 1"},
		{"SPB before any interface", func(f *ngFile) { f.shb(le); f.spb(frame(1, 8), 8) },
			ErrBadRecord, "Simple Packet Block on interface 0, but the section declares no interface (no Interface Description Block before it)"},
		{"EPB before any interface", func(f *ngFile) { f.shb(le); f.epb(0, 0, frame(1, 8), 8) },
			ErrBadRecord, "Enhanced Packet Block on interface 0, but the section declares no interface (no Interface Description Block before it)"},
		{"IDB option overruns", func(f *ngFile) {
			f.idb(1, 0, f.opt(2, []byte("eth1")))
			f.o.PutUint16(f.b[len(f.b)-4-4-8+2:], 9) // if_name length 9 > 8 left
		}, ErrBadRecord, "Interface Description Block option 2 (length 9) overruns the block"},
		{"tsresol beyond 64 bits", func(f *ngFile) { f.idb(1, 0, f.opt(9, []byte{20})) },
			ErrUnsupported, "if_tsresol 10^-20 does not fit in 64 bits"},
		{"binary tsresol beyond 64 bits", func(f *ngFile) { f.idb(1, 0, f.opt(9, []byte{0x80 | 64})) },
			ErrUnsupported, "if_tsresol 2^-64 does not fit in 64 bits"},
		{"second SHB with bad byte-order magic", func(f *ngFile) {
			f.raw(f.u32(0x0a0d0d0a), f.u32(28), []byte{1, 2, 3, 4}, make([]byte, 12), f.u32(28))
		}, ErrBadRecord, "Section Header Block has bad byte-order magic 01 02 03 04"},
		{"second SHB of version 2", func(f *ngFile) {
			f.raw(f.u32(0x0a0d0d0a), f.u32(28), f.u32(0x1a2b3c4d), []byte{2, 0, 0, 0}, make([]byte, 8), f.u32(28))
		}, ErrUnsupported, "unsupported pcapng version 2.0"},
	}
	for _, tt := range tests {
		for _, order := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
			for _, small := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%v/smallbuf=%v", tt.name, order, small), func(t *testing.T) {
					f := &ngFile{}
					f.shb(order)
					f.idb(1, 0)
					f.epb(0, 1e6, frame(0, 14), 14)
					tt.build(f)
					f.raw(make([]byte, 64)) // trailing garbage, never reached
					_, recs, err := readBytes(t, f.b, "bad.pcapng", small)
					if len(recs) != 1 {
						t.Errorf("got %d records, want 1", len(recs))
					}
					want := "bad.pcapng: record 2: " + tt.reason
					if tt.name == "second SHB of version 2" && order == binary.BigEndian {
						want = "bad.pcapng: record 2: unsupported pcapng version 512.0"
					}
					if err == nil || err.Error() != want {
						t.Fatalf("error %v\nwant %s", err, want)
					}
					var re *RecordError
					if !errors.Is(err, tt.sentinel) || !errors.As(err, &re) || re.Record != 2 {
						t.Errorf("error %#v does not wrap %v as a *RecordError for record 2", err, tt.sentinel)
					}
				})
			}
		}
	}
}

func TestTicks(t *testing.T) {
	tests := []struct {
		tsresol   byte
		ticks     uint64
		sec, nsec int64
	}{
		{6, 1700000000_123456, 1700000000, 123456000},
		{9, 1700000000_123456789, 1700000000, 123456789},
		{0, 1700000000, 1700000000, 0},
		{3, 1700000000_999, 1700000000, 999000000},
		{12, 1700000_000000123_999, 1700000, 123}, // picoseconds round down
		{19, 1_0000000000000000001, 1, 0},
		{0x8a, 1024*7 + 512, 7, 500000000},
		{0x8a, 1024*7 + 1, 7, 976562},
		{0x80 | 32, 1<<32*3 + 1<<31, 3, 500000000},
		{0x80 | 63, 1<<63 + 1<<62, 1, 500000000},
		{0x80 | 0, 42, 42, 0},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("0x%02x/%d", tt.tsresol, tt.ticks), func(t *testing.T) {
			tps, err := ticksPerSecond(tt.tsresol)
			if err != nil {
				t.Fatal(err)
			}
			ifc := Interface{TicksPerSecond: tps}
			got, nanos := ifc.timestamp(tt.ticks)
			want := time.Unix(tt.sec, tt.nsec).UTC()
			if !got.Equal(want) {
				t.Errorf("timestamp = %v, want %v", got, want)
			}
			if nanos != want.UnixNano() {
				t.Errorf("nanoseconds = %d, want %d", nanos, want.UnixNano())
			}
		})
	}
}

// TestPcapngSPBCapLen: a Simple Packet Block's captured length is the
// original length limited by the snap length; a block too short for that
// (which Wireshark refuses) delivers what it holds.
func TestPcapngSPBCapLen(t *testing.T) {
	tests := []struct {
		name         string
		snap         uint32
		data         int
		orig         uint32
		capLen, want int
	}{
		{"snap length cuts", 64, 100, 1500, 64, 1500},
		{"no snap length, block cuts", 0, 100, 70000, 100, 70000},
		{"padding excluded", 0, 97, 97, 97, 97},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &ngFile{}
			f.shb(binary.LittleEndian)
			f.idb(1, tt.snap)
			f.spb(frame(1, tt.data), tt.orig)
			_, recs, err := readBytes(t, f.b, "spb.pcapng", false)
			if err != io.EOF || len(recs) != 1 {
				t.Fatalf("got %d records and %v", len(recs), err)
			}
			if recs[0].CapLen != tt.capLen || recs[0].OrigLen != tt.want || !strings.HasPrefix(string(frame(1, tt.data)), string(recs[0].Data)) {
				t.Errorf("CapLen/OrigLen %d/%d, want %d/%d", recs[0].CapLen, recs[0].OrigLen, tt.capLen, tt.want)
			}
		})
	}
}
