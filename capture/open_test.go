package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestNotACapture(t *testing.T) {
	pcapV3, _ := encodePcap(pcapSpec{order: binary.LittleEndian, major: 3, linkType: 1}, nil)
	ngBadBOM := &ngFile{}
	ngBadBOM.shb(binary.LittleEndian)
	copy(ngBadBOM.b[8:], []byte{1, 2, 3, 4})
	ngV2 := &ngFile{}
	ngV2.shb(binary.BigEndian)
	ngV2.b[13] = 2
	tests := []struct {
		name     string
		file     []byte
		sentinel error
		want     string
	}{
		{"text", []byte("Hello, world\n"), ErrNotCapture, "x: not a pcap or pcapng file (starts with 48 65 6c 6c)"},
		{"empty", nil, ErrEmpty, "x: empty file"},
		{"one byte", []byte{'H'}, ErrNotCapture, "x: not a pcap or pcapng file (starts with 48)"},
		{"start of pcap magic", []byte{0xd4, 0xc3}, ErrCutOff, "x: file cut off in file header (have 2 of 4 bytes)"},
		{"start of gzip magic", []byte{0x1f}, ErrCutOff, "x: file cut off in file header (have 1 of 4 bytes)"},
		{"pcap header cut", []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0}, ErrCutOff, "x: file cut off in file header (have 6 of 24 bytes)"},
		{"pcap version 3", pcapV3, ErrUnsupported, "x: unsupported pcap version 3.4"},
		{"modified pcap", []byte{0x34, 0xcd, 0xb2, 0xa1, 0, 0}, ErrUnsupported, "x: a modified (Kuznetzov) pcap file is not supported: convert it with editcap -F pcap"},
		{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0}, ErrUnsupported, "x: zstd-compressed; decompress it first"},
		{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0}, ErrUnsupported, "x: xz-compressed; decompress it first"},
		{"pcapng bad byte-order magic", ngBadBOM.b, ErrNotCapture,
			"x: not a pcap or pcapng file (pcapng signature, but byte-order magic 01 02 03 04)"},
		{"pcapng version 2", ngV2.b, ErrUnsupported, "x: unsupported pcapng version 2.0"},
		{"gzip of text", gz([]byte("Hello")), ErrNotCapture,
			"x: gzip-compressed, but inside: not a pcap or pcapng file (starts with 48 65 6c 6c)"},
		{"gzip of nothing", gz(nil), ErrEmpty, "x: gzip-compressed, but inside: empty file"},
		{"gzip of gzip", gz(gz([]byte("Hello"))), ErrNotCapture,
			"x: gzip-compressed, but inside: not a pcap or pcapng file (starts with 1f 8b 08 00)"},
		{"gzip header cut", []byte{0x1f, 0x8b, 8}, ErrCutOff, "x: file cut off in file header (have 3 of 10 bytes)"},
		{"gzip bad header", []byte{0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0}, ErrNotCapture, "x: gzip: invalid header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewReader(bytes.NewReader(tt.file), "x")
			if err == nil {
				t.Fatalf("NewReader succeeded (format %v), want %v", r.Format(), tt.want)
			}
			if !errors.Is(err, tt.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tt.sentinel)
			}
			if err.Error() != tt.want {
				t.Errorf("error %q\nwant     %q", err, tt.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, samplePkts())
	for name, content := range map[string][]byte{"a.pcap": file, "a.txt.gz": gz(file), "b.pcapng.txt": file} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatalf("Open(%s): %v", name, err)
		}
		if r.Name() != path {
			t.Errorf("Name() = %q, want %q", r.Name(), path)
		}
		recs, err := readAll(t, r)
		if err != io.EOF || len(recs) != len(samplePkts()) {
			t.Errorf("%s: got %d records and %v", name, len(recs), err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		var rec Record
		if err := r.Next(&rec); !errors.Is(err, os.ErrClosed) {
			t.Errorf("Next after Close: %v, want os.ErrClosed", err)
		}
		if err := r.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing.pcap")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing): %v, want fs.ErrNotExist", err)
	}
	if _, err := Open(dir); err == nil {
		t.Errorf("Open(directory) succeeded")
	}
}

// failingReader returns some bytes, then an I/O error.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestIOError(t *testing.T) {
	file, ends := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, samplePkts())
	boom := errors.New("boom")
	r, err := NewReader(&failingReader{data: file[:ends[0]+3], err: boom}, "io.pcap")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := readAll(t, r)
	if len(recs) != 1 || !errors.Is(err, boom) || errors.Is(err, ErrCutOff) {
		t.Fatalf("got %d records and %v, want 1 and the I/O error", len(recs), err)
	}
	if want := "io.pcap: record 2: boom"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}
