package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// TestCutOffEveryOffset cuts small files at every byte offset: every whole
// record must be delivered, then a clean io.EOF at a record boundary or
// ErrCutOff anywhere else, and never a panic.
func TestCutOffEveryOffset(t *testing.T) {
	type variant struct {
		name       string
		file       []byte
		boundaries []int // offsets where the file may end cleanly
		packets    []int // offset after each packet record
	}
	var variants []variant
	for _, spec := range []pcapSpec{
		{order: binary.LittleEndian, snaplen: 65535, linkType: 1},
		{order: binary.BigEndian, nano: true, linkType: 276},
	} {
		file, ends := encodePcap(spec, samplePkts())
		variants = append(variants, variant{fmt.Sprintf("pcap-%v-nano=%v", spec.order, spec.nano), file,
			append([]int{pcapFileHeaderLen}, ends...), ends})
	}
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		f, _ := sampleNG(o)
		variants = append(variants, variant{fmt.Sprintf("pcapng-%v", o), f.b, f.boundaries, f.packets})
	}
	for _, v := range variants {
		_, full, err := readBytes(t, v.file, "full", false)
		if err != io.EOF {
			t.Fatalf("%s: whole file: %v", v.name, err)
		}
		for _, small := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/smallbuf=%v", v.name, small), func(t *testing.T) {
				for k := 0; k <= len(v.file); k++ {
					_, recs, err := readBytes(t, v.file[:k], "cut", small)
					wantN := 0
					for _, end := range v.packets {
						if end <= k {
							wantN++
						}
					}
					var wantErr error
					switch {
					case k == 0:
						wantErr = ErrEmpty
					case slices.Contains(v.boundaries, k):
						wantErr = io.EOF
					default:
						wantErr = ErrCutOff
					}
					if !errors.Is(err, wantErr) || (wantErr == io.EOF && err != io.EOF) {
						t.Fatalf("cut at %d: error %v, want %v", k, err, wantErr)
					}
					if len(recs) != wantN {
						t.Fatalf("cut at %d: got %d records, want %d", k, len(recs), wantN)
					}
					for i := range recs {
						checkRecord(t, recs[i], full[i])
					}
					var co *CutOffError
					// The cut record is the one after the last delivered, or a
					// block before the next packet that takes a frame number
					// (a pcapng custom block).
					lo, hi := 1, len(v.file)
					if wantN > 0 {
						lo = full[wantN-1].Number + 1
					}
					if wantN < len(full) {
						hi = full[wantN].Number
					}
					if errors.As(err, &co) && (co.Have >= co.Need || co.Have < 0 || (co.Record < lo || co.Record > hi) && co.Record != 0) {
						t.Fatalf("cut at %d: implausible %#v", k, co)
					}
				}
			})
		}
	}
}

// TestCutOffGzip cuts gzip-compressed files at every byte: the records
// delivered are a prefix of the whole, and the end is ErrCutOff (io.EOF only
// for the whole file).
func TestCutOffGzip(t *testing.T) {
	pcapFile, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, samplePkts())
	ng, _ := sampleNG(binary.BigEndian)
	for name, plain := range map[string][]byte{"pcap": pcapFile, "pcapng": ng.b} {
		_, full, _ := readBytes(t, plain, "full", false)
		for wrapName, wrap := range map[string]func([]byte) []byte{"gzip": gz, "multistream": gzMulti} {
			t.Run(name+"/"+wrapName, func(t *testing.T) {
				file := wrap(plain)
				for k := 0; k <= len(file); k++ {
					_, recs, err := readBytes(t, file[:k], "cut.gz", false)
					switch {
					case k == 0 && !errors.Is(err, ErrEmpty),
						k == len(file) && err != io.EOF,
						k > 0 && k < len(file) && !errors.Is(err, ErrCutOff):
						t.Fatalf("cut at %d of %d: error %v", k, len(file), err)
					}
					for i := range recs {
						checkRecord(t, recs[i], full[i])
					}
				}
			})
		}
	}
}

func TestCutOffMessage(t *testing.T) {
	file, ends := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, samplePkts())
	tests := []struct {
		cut  int
		want string
	}{
		{ends[0] + 40, "capture.pcap: file cut off in record 2 (have 40 of 114 bytes)"},
		{ends[0] + 5, "capture.pcap: file cut off in record 2 (have 5 of 16 bytes)"},
		{ends[2] + 16, "capture.pcap: file cut off in record 4 (have 16 of 17 bytes)"},
	}
	for _, tt := range tests {
		for _, small := range []bool{false, true} {
			_, _, err := readBytes(t, file[:tt.cut], "capture.pcap", small)
			if err == nil || err.Error() != tt.want {
				t.Errorf("cut at %d: error %v, want %q", tt.cut, err, tt.want)
			}
		}
	}
	ng, _ := sampleNG(binary.LittleEndian)
	_, _, err := readBytes(t, ng.b[:ng.packets[0]-3], "capture.pcapng", false)
	if want := "capture.pcapng: file cut off in record 1 (have 89 of 92 bytes)"; err == nil || err.Error() != want {
		t.Errorf("pcapng: error %v, want %q", err, want)
	}
}
