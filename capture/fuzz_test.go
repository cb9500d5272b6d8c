package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReader feeds arbitrary bytes to the reader. Beyond not panicking:
// every record is self-consistent, the reading ends with io.EOF or an error
// wrapping one of the package's sentinels, a reader with a tiny buffer
// (records copied) sees exactly what one with the normal buffer (records
// aliased) sees, and the block path (every way blockReadings reads) sees
// exactly what the streaming path sees: records, errors and reader state,
// also when read in batches (NextBatch).
func FuzzReader(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(realDir, "*.pcap"))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		ng, _ := sampleNG(o)
		f.Add(ng.b)
		f.Add(gz(ng.b))
		file, _ := encodePcap(pcapSpec{order: o, nano: o == binary.BigEndian, linkType: 1}, samplePkts())
		f.Add(file)
		f.Add(gzMulti(file))
	}
	head, body := endlessPcapng()
	f.Add(append(head, body...))
	// Two sections in different byte orders, each with interfaces of
	// different link types and timestamp resolutions; the same gzipped,
	// and cut inside a block, plain and gzipped.
	le, _ := sampleNG(binary.LittleEndian)
	be, _ := sampleNG(binary.BigEndian)
	two := append(bytes.Clone(le.b), be.b...)
	f.Add(two)
	f.Add(gz(two))
	f.Add(two[:len(le.b)+len(be.b)/2])
	f.Add(gz(two)[:len(gz(two))*2/3])
	// The generated pcapng captures (two interfaces, gzip, mirrors).
	gen, _ := filepath.Glob(filepath.Join(realDir, "..", "gen", "*.pcapng*"))
	for _, p := range gen {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		normal, errN := fuzzRead(t, data, 32<<10) // most records fit: the aliasing path
		small, errS := fuzzRead(t, data, minBufSize)
		if errN.Error() != errS.Error() {
			t.Fatalf("buffer size changes the outcome: %v vs %v", errN, errS)
		}
		if len(normal) != len(small) {
			t.Fatalf("buffer size changes the record count: %d vs %d", len(normal), len(small))
		}
		for i := range normal {
			a, b := normal[i], small[i]
			if !a.Timestamp.Equal(b.Timestamp) || a.CapLen != b.CapLen || a.OrigLen != b.OrigLen ||
				a.LinkType != b.LinkType || a.Interface != b.Interface || !bytes.Equal(a.Data, b.Data) {
				t.Fatalf("record %d differs with the buffer size: %+v vs %+v", i+1, a, b)
			}
		}
		want := streamReading(t, data, "fuzz", 32<<10)
		for name, got := range blockReadings(t, data, "fuzz", 32<<10) {
			if d := diffReadings(want, got); d != "" {
				t.Fatalf("%s: %s", name, d)
			}
		}
		got := readBatches(t, func() (*Reader, error) { return newBlockReader(bytes.NewReader(data), "fuzz", minBufSize) }, 5)
		if d := diffReadings(want, got); d != "" {
			t.Fatalf("NextBatch: %s", d)
		}
	})
}

// fuzzRead reads data and checks the invariants; the returned error is never
// nil.
func fuzzRead(t *testing.T, data []byte, size int) ([]Record, error) {
	r, err := newReaderSize(bytes.NewReader(data), "fuzz", size)
	if err != nil {
		checkSentinel(t, err)
		return nil, err
	}
	var recs []Record
	var rec Record
	for {
		err := r.Next(&rec)
		if err != nil {
			if err != io.EOF {
				checkSentinel(t, err)
			}
			return recs, err
		}
		if rec.CapLen != len(rec.Data) || rec.OrigLen < rec.CapLen || !nextNumber(recs, rec.Number) ||
			rec.Interface < 0 || rec.Interface >= len(r.Interfaces()) {
			t.Fatalf("inconsistent record %+v", rec)
		}
		if rec.Timestamp.Location().String() != "UTC" {
			t.Fatalf("timestamp not in UTC: %v", rec.Timestamp)
		}
		if rec.TimeNanos != unixNanos(rec.Timestamp) {
			t.Fatalf("TimeNanos %d, but Timestamp %v", rec.TimeNanos, rec.Timestamp)
		}
		rec.Data = bytes.Clone(rec.Data)
		recs = append(recs, rec)
		if !r.Format().Gzip && len(recs) > len(data)/12 {
			t.Fatalf("%d records from %d bytes", len(recs), len(data))
		}
	}
}

func checkSentinel(t *testing.T, err error) {
	t.Helper()
	for _, s := range []error{ErrCutOff, ErrBadRecord, ErrNotCapture, ErrEmpty, ErrUnsupported} {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("error %q (%T) wraps no sentinel", err, err)
}

// TestFuzzRegressions replays inputs the fuzzer found, by name.
func TestFuzzRegressions(t *testing.T) {
	tests := []struct {
		name     string
		data     []byte
		sentinel error
		want     string
	}{
		// Corrupt deflate data right after the gzip header: an error from
		// sniffing the decompressed stream carried no sentinel.
		{"corrupt deflate before the capture header", []byte("\x1f\x8b\bA000000ZA11"),
			ErrBadRecord, "fuzz: gzip: flate: corrupt input before offset 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readBytes(t, tt.data, "fuzz", false)
			if !errors.Is(err, tt.sentinel) || err.Error() != tt.want {
				t.Errorf("error %v, want %q wrapping %v", err, tt.want, tt.sentinel)
			}
		})
	}
}
