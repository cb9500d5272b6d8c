package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// samplePkts are three frames with distinct timestamps and lengths; frac is
// interpreted as µs or ns by the file's magic.
func samplePkts() []pkt {
	return []pkt{
		{sec: 1700000000, frac: 123456, data: frame(1, 60)},
		{sec: 1700000001, frac: 999999, data: frame(2, 98), orig: 1500},
		{sec: 1700000002, frac: 0, data: nil, orig: 64},
		{sec: 1700000003, frac: 7, data: frame(4, 1)},
	}
}

func TestPcapVariants(t *testing.T) {
	tests := []struct {
		name    string
		spec    pcapSpec
		wrap    func([]byte) []byte
		format  string
		snaplen int
	}{
		{"us-le", pcapSpec{order: binary.LittleEndian, snaplen: 65535, linkType: 1}, nil, "pcap", 65535},
		{"us-be", pcapSpec{order: binary.BigEndian, snaplen: 65535, linkType: 1}, nil, "pcap", 65535},
		{"ns-le", pcapSpec{order: binary.LittleEndian, nano: true, snaplen: 262144, linkType: 276}, nil, "pcap (ns)", 262144},
		{"ns-be", pcapSpec{order: binary.BigEndian, nano: true, snaplen: 262144, linkType: 101}, nil, "pcap (ns)", 262144},
		{"snaplen0", pcapSpec{order: binary.LittleEndian, snaplen: 0, linkType: 1}, nil, "pcap", 0},
		{"us-le-gzip", pcapSpec{order: binary.LittleEndian, snaplen: 65535, linkType: 1}, gz, "pcap (gzip)", 65535},
		{"us-be-gzip", pcapSpec{order: binary.BigEndian, snaplen: 65535, linkType: 1}, gz, "pcap (gzip)", 65535},
		{"ns-le-gzip", pcapSpec{order: binary.LittleEndian, nano: true, snaplen: 262144, linkType: 276}, gz, "pcap (ns) (gzip)", 262144},
		{"ns-be-gzip-multistream", pcapSpec{order: binary.BigEndian, nano: true, snaplen: 262144, linkType: 101}, gzMulti, "pcap (ns) (gzip)", 262144},
		{"snaplen0-gzip", pcapSpec{order: binary.LittleEndian, snaplen: 0, linkType: 1}, gz, "pcap (gzip)", 0},
	}
	for _, tt := range tests {
		for _, small := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/smallbuf=%v", tt.name, small), func(t *testing.T) {
				pkts := samplePkts()
				file, _ := encodePcap(tt.spec, pkts)
				if tt.wrap != nil {
					file = tt.wrap(file)
				}
				r, recs, err := readBytes(t, file, "t.pcap", small)
				if err != io.EOF {
					t.Fatalf("reading ended with %v, want io.EOF", err)
				}
				if got := r.Format().String(); got != tt.format {
					t.Errorf("Format() = %q, want %q", got, tt.format)
				}
				if got := r.Format().ByteOrder; got != tt.spec.order {
					t.Errorf("Format().ByteOrder = %v, want %v", got, tt.spec.order)
				}
				if got := r.SnapLen(); got != tt.snaplen {
					t.Errorf("SnapLen() = %d, want %d", got, tt.snaplen)
				}
				lt := LinkType(tt.spec.linkType)
				if got := r.LinkTypes(); len(got) != 1 || got[0] != lt {
					t.Errorf("LinkTypes() = %v, want [%v]", got, lt)
				}
				if len(recs) != len(pkts) {
					t.Fatalf("got %d records, want %d", len(recs), len(pkts))
				}
				for i, p := range pkts {
					nsec := int64(p.frac)
					if !tt.spec.nano {
						nsec *= 1000
					}
					orig := int(p.orig)
					if orig == 0 {
						orig = len(p.data)
					}
					want := Record{Timestamp: utc(int64(p.sec), nsec), CapLen: len(p.data), OrigLen: orig,
						LinkType: lt, Number: i + 1, Data: p.data}
					checkRecord(t, recs[i], want)
				}
			})
		}
	}
}

// checkRecord compares every field of a record.
func checkRecord(t *testing.T, got, want Record) {
	t.Helper()
	if !got.Timestamp.Equal(want.Timestamp) || got.Timestamp.Location() != want.Timestamp.Location() {
		t.Errorf("record %d: Timestamp %v, want %v", want.Number, got.Timestamp, want.Timestamp)
	}
	if got.CapLen != want.CapLen || got.OrigLen != want.OrigLen {
		t.Errorf("record %d: CapLen/OrigLen %d/%d, want %d/%d", want.Number, got.CapLen, got.OrigLen, want.CapLen, want.OrigLen)
	}
	if got.LinkType != want.LinkType || got.Interface != want.Interface || got.Number != want.Number {
		t.Errorf("record %d: LinkType/Interface/Number %v/%d/%d, want %v/%d/%d", want.Number,
			got.LinkType, got.Interface, got.Number, want.LinkType, want.Interface, want.Number)
	}
	if string(got.Data) != string(want.Data) {
		t.Errorf("record %d: Data % x, want % x", want.Number, got.Data, want.Data)
	}
}

func TestPcapLinkTypeFCS(t *testing.T) {
	tests := []struct {
		name   string
		field  uint32
		lt     LinkType
		fcsLen int
	}{
		{"plain", 1, LinkTypeEthernet, -1},
		{"fcs 4 bytes", 2<<28 | 0x04000000 | 1, LinkTypeEthernet, 4},
		{"fcs 0 bytes", 0x04000000 | 1, LinkTypeEthernet, 0},
		{"fcs bits without P flag", 2<<28 | 1, LinkTypeEthernet, -1},
		{"reserved bits ignored", 0x03ff0000 | 276, LinkTypeLinuxSLL2, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: tt.field}, samplePkts()[:1])
			r, recs, err := readBytes(t, file, "fcs.pcap", false)
			if err != io.EOF || len(recs) != 1 {
				t.Fatalf("got %d records and %v, want 1 and io.EOF", len(recs), err)
			}
			if recs[0].LinkType != tt.lt {
				t.Errorf("LinkType %v, want %v", recs[0].LinkType, tt.lt)
			}
			if got := r.Interfaces()[0].FCSLen; got != tt.fcsLen {
				t.Errorf("FCSLen %d, want %d", got, tt.fcsLen)
			}
		})
	}
}

func TestPcapOrigLenShorterThanCapLen(t *testing.T) {
	file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, []pkt{{data: frame(1, 100), orig: 40}})
	_, recs, err := readBytes(t, file, "short.pcap", false)
	if err != io.EOF || len(recs) != 1 {
		t.Fatalf("got %d records and %v", len(recs), err)
	}
	if recs[0].OrigLen != 100 || recs[0].CapLen != 100 {
		t.Errorf("CapLen/OrigLen %d/%d, want 100/100", recs[0].CapLen, recs[0].OrigLen)
	}
}

func TestPcapImplausibleCapLen(t *testing.T) {
	var pkts []pkt
	for i := range 16 {
		pkts = append(pkts, pkt{sec: uint32(i), data: frame(i, 60+i)})
	}
	file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, snaplen: 65535, linkType: 1}, pkts)
	o := binary.LittleEndian
	file = o.AppendUint32(file, 99)
	file = o.AppendUint32(file, 0)
	file = o.AppendUint32(file, 0xffffffff)
	file = o.AppendUint32(file, 0xffffffff)
	file = append(file, frame(0, 100)...) // whatever follows is not read
	for _, small := range []bool{false, true} {
		_, recs, err := readBytes(t, file, "huge.pcap", small)
		if len(recs) != 16 {
			t.Errorf("got %d records, want 16", len(recs))
		}
		const want = "huge.pcap: record 17: captured length 4294967295 is implausible"
		if err == nil || err.Error() != want {
			t.Fatalf("error %v, want %q", err, want)
		}
		var re *RecordError
		if !errors.Is(err, ErrBadRecord) || !errors.As(err, &re) || re.Record != 17 || re.Name != "huge.pcap" {
			t.Errorf("error %#v does not wrap ErrBadRecord as a *RecordError for record 17", err)
		}
		if re != nil && re.Offset != int64(len(file)-16-100) {
			t.Errorf("Offset %d, want %d", re.Offset, len(file)-16-100)
		}
	}
}

func TestPcapCapLenCap(t *testing.T) {
	tests := []struct {
		name    string
		snaplen uint32
		capLen  int
		ok      bool
	}{
		{"snaplen 0 allows 262144", 0, 262144, true},
		{"snaplen 0 refuses 262145", 0, 262145, false},
		{"small snaplen still allows 262144", 1500, 262144, true},
		{"snaplen 4 MiB allows 3 MiB", 4 << 20, 3 << 20, true},
		{"snaplen 4 MiB refuses more", 4 << 20, 4<<20 + 1, false},
		{"snaplen beyond 16 MiB capped", 1 << 30, 16<<20 + 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, snaplen: tt.snaplen, linkType: 1},
				[]pkt{{sec: 1, data: frame(3, tt.capLen)}})
			_, recs, err := readBytes(t, file, "cap.pcap", false)
			if tt.ok {
				if err != io.EOF || len(recs) != 1 || len(recs[0].Data) != tt.capLen {
					t.Fatalf("got %d records and %v, want one of %d bytes", len(recs), err, tt.capLen)
				}
				if string(recs[0].Data) != string(frame(3, tt.capLen)) {
					t.Errorf("data differs")
				}
				return
			}
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("error %v, want ErrBadRecord", err)
			}
		})
	}
}

// TestPcapJoinedWithCat: two pcaps joined with cat (or two gzip members
// of whole pcaps, as cat a.pcap.gz b.pcap.gz leaves them) hold a second
// file header where a record should start. It was read as a frame (its
// magic as ts_sec, thiszone as incl_len), then the next header as a cut
// or an implausible length: the error did not say why the second capture
// was lost. The frames before it are still read, on both paths.
func TestPcapJoinedWithCat(t *testing.T) {
	var pkts []pkt
	for i := range 5 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i), data: frame(i, 60+i)})
	}
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, nano := range []bool{false, true} {
			one, _ := encodePcap(pcapSpec{order: o, nano: nano, linkType: 1}, pkts)
			joined := append(append([]byte(nil), one...), one...)
			var ng ngFile
			ng.shb(o)
			ng.idb(1, 0)
			ng.epb(0, 1, frame(9, 60), 60)
			files := map[string][]byte{
				"joined.pcap":    joined,
				"joined.pcap.gz": append(gz(one), gz(one)...),
				"pcapng.pcap":    append(append([]byte(nil), one...), ng.b...),
			}
			for name, b := range files {
				p := filepath.Join(t.TempDir(), name)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
				readers := map[string]func() (*Reader, error){
					"open":   func() (*Reader, error) { return Open(p) },
					"stream": func() (*Reader, error) { return newReaderSize(bytes.NewReader(b), p, minBufSize) },
				}
				for how, open := range readers {
					r, err := open()
					if err != nil {
						t.Fatal(err)
					}
					recs, err := readAll(t, r)
					r.Close()
					var re *RecordError
					if len(recs) != 5 || !errors.As(err, &re) || re.Record != 6 || !errors.Is(err, ErrBadRecord) ||
						!strings.Contains(err.Error(), "file header") || !strings.Contains(err.Error(), "joined with cat") {
						t.Errorf("%v nano %v %s (%s): %d records, then %v; want 5, then another file header at record 6",
							o, nano, name, how, len(recs), err)
					}
				}
			}
		}
	}
}

// TestPcapZeroTail: zeros from a record boundary to the end of a pcap (a
// capture host that crashed, a preallocated file) are not records: they
// were read as thousands of empty frames of 1970 (the capture then spanned
// 56 years, and its clock went back). They are ignored, as zeros after a
// gzip stream are, and Trailing says where they start, on both paths and
// inside gzip; zeros and then data are a bad record.
func TestPcapZeroTail(t *testing.T) {
	var pkts []pkt
	for i := range 5 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i), data: frame(i, 60+i)})
	}
	one, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	zeros := func(n int) []byte { return append(append([]byte(nil), one...), make([]byte, n)...) }
	tests := []struct {
		name     string
		file     []byte
		trailing bool // else a bad record
	}{
		{"zeros.pcap", zeros(100000), true},
		{"one-zero-header.pcap", zeros(16), true},
		{"zeros-beyond-buffer.pcap", zeros(3 << 20), true},
		{"zeros.pcap.gz", gz(zeros(5000)), true},
		{"zeros-beyond-buffer-then-data.pcap", append(zeros(3<<20), one[24:]...), false},
		{"zeros-then-data.pcap", append(zeros(32), one[24:]...), false},
	}
	for _, tt := range tests {
		p := filepath.Join(t.TempDir(), tt.name)
		if err := os.WriteFile(p, tt.file, 0o644); err != nil {
			t.Fatal(err)
		}
		readers := map[string]func() (*Reader, error){
			"open":   func() (*Reader, error) { return Open(p) },
			"stream": func() (*Reader, error) { return newReaderSize(bytes.NewReader(tt.file), p, minBufSize) },
		}
		for how, open := range readers {
			r, err := open()
			if err != nil {
				t.Fatal(err)
			}
			recs, err := readAll(t, r)
			trailing := r.Trailing()
			r.Close()
			if len(recs) != 5 {
				t.Errorf("%s (%s): %d records, want 5", tt.name, how, len(recs))
			}
			if tt.trailing {
				want := fmt.Sprintf("zeros from byte %d to the end", len(one))
				if err != io.EOF || !errors.Is(trailing, ErrTrailingData) || !strings.Contains(trailing.Error(), want) {
					t.Errorf("%s (%s): end %v, trailing %v; want io.EOF and %q", tt.name, how, err, trailing, want)
				}
				continue
			}
			var re *RecordError
			if !errors.As(err, &re) || re.Record != 6 || !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "zeros where a record should start") {
				t.Errorf("%s (%s): end %v; want a bad record 6 of zeros", tt.name, how, err)
			}
		}
	}
}
