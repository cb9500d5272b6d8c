package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"testing/iotest"
	"time"
)

// withInflateAhead runs f with inflateAhead forced to ahead.
func withInflateAhead(ahead bool, f func()) {
	prev := inflateAhead
	inflateAhead = func() bool { return ahead }
	defer func() { inflateAhead = prev }()
	f()
}

// TestInflaterSameRecords: a gzip-compressed capture gives the same
// records, the same error and the same reader state whether it is
// decompressed on the Reader's goroutine or ahead of it on its own, read
// from a file's block or a stream, whole, cut anywhere or corrupt; and a
// whole one, also followed by garbage or zeros, gives the records of the
// same capture uncompressed.
func TestInflaterSameRecords(t *testing.T) {
	var pkts []pkt
	for i := range 20000 { // ~2.2 MB: many chunks and blocks
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i/100), frac: uint32(i), data: frame(i, 96)})
	}
	plain, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	ng, _ := sampleNG(binary.BigEndian)
	whole := gz(plain)
	corrupt := bytes.Clone(whole)
	corrupt[len(corrupt)/2] ^= 0x55
	inputs := map[string]struct {
		b     []byte
		plain []byte // the same records uncompressed, if it is whole
	}{
		"whole":         {whole, plain},
		"two members":   {gzMulti(plain), plain},
		"pcapng":        {gz(ng.b), ng.b},
		"cut in half":   {whole[:len(whole)/2], nil},
		"cut in header": {whole[:5], nil},
		"cut in footer": {whole[:len(whole)-3], nil},
		"corrupt":       {corrupt, nil},
		"garbage after": {append(bytes.Clone(whole), "not gzip"...), plain},
		"zeros after":   {append(bytes.Clone(whole), make([]byte, 512)...), plain},
	}
	for name, in := range inputs {
		for _, size := range []int{bufSize, 1000, minBufSize} {
			for source, open := range map[string]func() (*Reader, error){
				"stream": func() (*Reader, error) { return newReaderSize(bytes.NewReader(in.b), "x", size) },
				"block":  func() (*Reader, error) { return newBlockReader(iotest.HalfReader(bytes.NewReader(in.b)), "x", size) },
			} {
				var here, ahead reading
				withInflateAhead(false, func() { here = readWith(t, open) })
				withInflateAhead(true, func() { ahead = readWith(t, open) })
				if !sameReading(here, ahead) {
					t.Errorf("%s, %s, buffer %d: decompressed ahead: %d records, %v, %v; on the Reader's goroutine: %d records, %v, %v",
						name, source, size, len(ahead.recs), ahead.openErr, ahead.err, len(here.recs), here.openErr, here.err)
				}
				if in.plain == nil {
					if here.err == io.EOF && here.openErr == nil {
						t.Errorf("%s, %s, buffer %d: a clean end", name, source, size)
					}
					continue
				}
				want := streamReading(t, in.plain, "x", size)
				want.format.Gzip = true
				if !sameReading(here, want) {
					t.Errorf("%s, %s, buffer %d: %d records and %v, uncompressed %d and %v", name, source, size, len(here.recs), here.err, len(want.recs), want.err)
				}
			}
		}
	}
}

// sameReading says whether two readings hold the same records, reader
// state and errors (compared by text: the gzip errors are made anew).
func sameReading(a, b reading) bool {
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	return errText(a.openErr) == errText(b.openErr) && errText(a.err) == errText(b.err) &&
		reflect.DeepEqual(a.recs, b.recs) && a.format == b.format && a.snapLen == b.snapLen &&
		reflect.DeepEqual(a.lts, b.lts) && reflect.DeepEqual(a.ifaces, b.ifaces)
}

// TestInflaterBytesThenError: an inflater hands out its source's bytes in
// order, whatever the sizes of the reads, then the source's own error.
func TestInflaterBytesThenError(t *testing.T) {
	src := frame(7, 100_000)
	boom := errors.New("boom")
	done := make(chan struct{})
	a := startInflater(iotest.OneByteReader(&failingReader{data: src, err: boom}), 4096, false, func() { close(done) })
	var got []byte
	buf := make([]byte, 333)
	var err error
	for err == nil {
		var n int
		n, err = a.Read(buf[:1+len(got)%333])
		got = append(got, buf[:n]...)
	}
	if err != boom || !bytes.Equal(got, src) {
		t.Errorf("got %d bytes (equal: %v) and %v, want %d and %v", len(got), bytes.Equal(got, src), err, len(src), boom)
	}
	if _, again := a.Read(buf); again != boom {
		t.Errorf("read after the end: %v, want %v", again, boom)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the goroutine did not end with its source")
	}
}

// TestInflaterStop: Stop ends the goroutine of an inflater whose source
// never ends.
func TestInflaterStop(t *testing.T) {
	done := make(chan struct{})
	a := startInflater(&loopReader{body: frame(1, 1000)}, 4096, false, func() { close(done) })
	buf := make([]byte, 10_000)
	if _, err := io.ReadFull(a, buf); err != nil {
		t.Fatal(err)
	}
	a.Stop()
	a.Stop() // twice is fine
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Stop did not end the goroutine")
	}
}

// TestReaderCloseStopsInflater: closing a Reader before the end of a
// gzip-compressed file ends its decompressor's goroutine.
func TestReaderCloseStopsInflater(t *testing.T) {
	var pkts []pkt
	for i := range 50000 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i), data: frame(i, 96)})
	}
	plain, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	withInflateAhead(true, func() {
		before := runtime.NumGoroutine()
		r, err := NewReader(bytes.NewReader(gz(plain)), "x")
		if err != nil {
			t.Fatal(err)
		}
		if r.inflate == nil {
			t.Fatal("no inflater")
		}
		var rec Record
		if err := r.Next(&rec); err != nil {
			t.Fatal(err)
		}
		if n := runtime.NumGoroutine(); n != before+1 {
			t.Errorf("%d goroutines while reading, want %d", n, before+1)
		}
		r.Close()
		if err := r.Next(&rec); err == nil {
			t.Error("Next after Close: no error")
		}
		deadline := time.Now().Add(10 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			t.Errorf("%d goroutines after Close, want %d", n, before)
		}
	})
}

// TestGzipTrailingData: a gzip-compressed capture followed by data that is
// not another gzip member (garbage, zeros) is read to its end, as gzip
// reads it, and Trailing says where the data starts; another member is
// read, and one that starts like a member but is damaged fails the file
// as before; the Merger notes the trailing data in its Problems, not as a
// cut.
func TestGzipTrailingData(t *testing.T) {
	var pkts []pkt
	for i := range 3000 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i/100), frac: uint32(i), data: frame(i, 96)})
	}
	plain, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	whole := gz(plain)
	after := func(tail []byte) []byte { return append(bytes.Clone(whole), tail...) }
	for _, tc := range []struct {
		name     string
		b        []byte
		trailing string // Trailing's error, "" for none
		err      error  // what ends the file, io.EOF at its clean end
	}{
		{"garbage", after([]byte("not gzip")), fmt.Sprintf("x: data after the end of the gzip stream, at byte %d (6e 6f 74 20), is not another gzip member", len(whole)), io.EOF},
		{"zeros", after(make([]byte, 512)), fmt.Sprintf("x: data after the end of the gzip stream, at byte %d (00 00 00 00), is not another gzip member", len(whole)), io.EOF},
		{"one byte", after([]byte{0}), fmt.Sprintf("x: data after the end of the gzip stream, at byte %d (00), is not another gzip member", len(whole)), io.EOF},
		{"two members", gzMulti(plain), "", io.EOF},
		{"an empty member", after(gz(nil)), "", io.EOF},
		{"a damaged member", after([]byte{0x1f, 0x8b, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "", ErrBadRecord},
		{"a member cut in its header", after([]byte{0x1f, 0x8b, 0x08}), "", ErrCutOff},
	} {
		for _, ahead := range []bool{false, true} {
			for source, open := range map[string]func() (*Reader, error){
				"stream": func() (*Reader, error) { return NewReader(bytes.NewReader(tc.b), "x") },
				"block":  func() (*Reader, error) { return newBlockReader(bytes.NewReader(tc.b), "x", blockSize) },
			} {
				withInflateAhead(ahead, func() {
					r, err := open()
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					n := 0
					var rec Record
					for err = r.Next(&rec); err == nil; err = r.Next(&rec) {
						n++
					}
					if n != len(pkts) || !errors.Is(err, tc.err) {
						t.Errorf("%s, %s, ahead %v: %d records, %v; want %d, %v", tc.name, source, ahead, n, err, len(pkts), tc.err)
					}
					got := ""
					if tr := r.Trailing(); tr != nil {
						got = tr.Error()
						if !errors.Is(tr, ErrTrailingData) {
							t.Errorf("%s: %v does not wrap ErrTrailingData", tc.name, tr)
						}
					}
					if got != tc.trailing {
						t.Errorf("%s, %s, ahead %v: Trailing %q, want %q", tc.name, source, ahead, got, tc.trailing)
					}
				})
			}
		}
	}

	dir := t.TempDir()
	p := filepath.Join(dir, "a.pcap.gz")
	if err := os.WriteFile(p, after(make([]byte, 512)), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := OpenMerged([]string{p, p})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	n := 0
	var rec Record
	for _, err := m.Next(&rec); err == nil; _, err = m.Next(&rec) {
		n++
	}
	probs := m.Problems()
	if n != 2*len(pkts) || len(probs) != 2 || !errors.Is(probs[0], ErrTrailingData) || errors.Is(probs[0], ErrCutOff) {
		t.Errorf("merged: %d records, problems %v; want %d, two ErrTrailingData", n, probs, 2*len(pkts))
	}
}
