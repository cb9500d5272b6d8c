package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// This file checks the block path (block.go and the hot loops in Next)
// against the streaming path, which is the reference: for the same bytes
// both must deliver the same records, the same errors and the same reader
// state.

// reading is everything a Reader made of an input.
type reading struct {
	openErr error // from the constructor; nothing else is set then
	recs    []Record
	err     error // the error that ended Next
	format  Format
	snapLen int
	lts     []LinkType
	ifaces  []Interface
}

// readWith reads a whole input with a Reader from open, checking the
// invariants every Record must meet on the way.
func readWith(t *testing.T, open func() (*Reader, error)) reading {
	t.Helper()
	r, err := open()
	if err != nil {
		return reading{openErr: err}
	}
	defer r.Close()
	var out reading
	var rec Record
	for {
		err := r.Next(&rec)
		if err != nil {
			out.err = err
			break
		}
		if rec.CapLen != len(rec.Data) || cap(rec.Data) != len(rec.Data) || !nextNumber(out.recs, rec.Number) {
			t.Fatalf("record %d: CapLen %d, len(Data) %d, cap(Data) %d", rec.Number, rec.CapLen, len(rec.Data), cap(rec.Data))
		}
		rec.Data = bytes.Clone(rec.Data)
		out.recs = append(out.recs, rec)
	}
	out.format, out.snapLen, out.lts, out.ifaces = r.Format(), r.SnapLen(), r.LinkTypes(), r.Interfaces()
	return out
}

// streamReading reads b on the streaming path with a buffer of size bytes.
func streamReading(t *testing.T, b []byte, name string, size int) reading {
	return readWith(t, func() (*Reader, error) { return newReaderSize(bytes.NewReader(b), name, size) })
}

// blockReadings reads b on the block path several ways: a block of size
// bytes, the smallest one (every record crosses a refill; most take the
// copy path), an odd size fed by short reads, and one read a byte at a
// time.
func blockReadings(t *testing.T, b []byte, name string, size int) map[string]reading {
	out := map[string]reading{
		"block": readWith(t, func() (*Reader, error) { return newBlockReader(bytes.NewReader(b), name, size) }),
		"block-min": readWith(t, func() (*Reader, error) {
			return newBlockReader(bytes.NewReader(b), name, minBufSize)
		}),
		"block-1000-half": readWith(t, func() (*Reader, error) {
			return newBlockReader(iotest.HalfReader(bytes.NewReader(b)), name, 1000)
		}),
	}
	if len(b) < 4096 {
		out["block-onebyte"] = readWith(t, func() (*Reader, error) {
			return newBlockReader(iotest.OneByteReader(bytes.NewReader(b)), name, 4096)
		})
	}
	return out
}

// diffReadings returns the first difference between two readings, or "".
func diffReadings(want, got reading) string {
	if d := diffErrors(want.openErr, got.openErr); d != "" {
		return "opening: " + d
	}
	if want.openErr != nil {
		return ""
	}
	for i := range min(len(want.recs), len(got.recs)) {
		if d := diffRecords(want.recs[i], got.recs[i]); d != "" {
			return fmt.Sprintf("record %d: %s", i+1, d)
		}
	}
	if len(want.recs) != len(got.recs) {
		return fmt.Sprintf("%d records, want %d", len(got.recs), len(want.recs))
	}
	if d := diffErrors(want.err, got.err); d != "" {
		return "end: " + d
	}
	if want.format != got.format || want.snapLen != got.snapLen || !slices.Equal(want.lts, got.lts) ||
		!reflect.DeepEqual(want.ifaces, got.ifaces) {
		return fmt.Sprintf("reader state %+v %d %v %+v, want %+v %d %v %+v", got.format, got.snapLen, got.lts, got.ifaces,
			want.format, want.snapLen, want.lts, want.ifaces)
	}
	return ""
}

// diffRecords compares every field of two records, and checks TimeNanos.
func diffRecords(want, got Record) string {
	if !got.Timestamp.Equal(want.Timestamp) || got.Timestamp.Location() != want.Timestamp.Location() ||
		got.CapLen != want.CapLen || got.OrigLen != want.OrigLen || got.LinkType != want.LinkType ||
		got.Interface != want.Interface || got.Number != want.Number || got.TimeNanos != want.TimeNanos ||
		!bytes.Equal(got.Data, want.Data) {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	if got.TimeNanos != unixNanos(got.Timestamp) {
		return fmt.Sprintf("TimeNanos %d, but Timestamp %v", got.TimeNanos, got.Timestamp)
	}
	return ""
}

// diffErrors compares two errors by type, message, sentinels and fields.
// The Cause of a cut-off may be io.EOF on one side and io.ErrUnexpectedEOF
// on the other: which one depends on the buffer size alone (a record that
// fits the buffer is peeked, a larger one read with io.ReadFull), on the
// streaming path too.
func diffErrors(want, got error) string {
	if want == nil || got == nil || want == io.EOF || got == io.EOF {
		if want != got {
			return fmt.Sprintf("error %v, want %v", got, want)
		}
		return ""
	}
	if reflect.TypeOf(want) != reflect.TypeOf(got) || want.Error() != got.Error() {
		return fmt.Sprintf("error %q (%T), want %q (%T)", got, got, want, want)
	}
	for _, s := range []error{ErrCutOff, ErrBadRecord, ErrNotCapture, ErrEmpty, ErrUnsupported, io.EOF, io.ErrUnexpectedEOF, fs.ErrClosed} {
		if errors.Is(want, s) != errors.Is(got, s) {
			return fmt.Sprintf("error %q: errors.Is(%v) differs", got, s)
		}
	}
	sameCause := func(a, b error) bool {
		return a == b || a != nil && b != nil && (a.Error() == b.Error() || isTruncation(a) && isTruncation(b))
	}
	switch w := want.(type) {
	case *CutOffError:
		g := got.(*CutOffError)
		if w.Name != g.Name || w.Record != g.Record || w.Offset != g.Offset || w.Have != g.Have || w.Need != g.Need || !sameCause(w.Cause, g.Cause) {
			return fmt.Sprintf("error %#v, want %#v", g, w)
		}
	case *RecordError:
		g := got.(*RecordError)
		if w.Name != g.Name || w.Record != g.Record || w.Offset != g.Offset || w.Reason != g.Reason || w.Err != g.Err || !sameCause(w.Cause, g.Cause) {
			return fmt.Sprintf("error %#v, want %#v", g, w)
		}
	case *FileError:
		g := got.(*FileError)
		if w.Name != g.Name || w.Reason != g.Reason || w.Err != g.Err || !sameCause(w.Cause, g.Cause) {
			return fmt.Sprintf("error %#v, want %#v", g, w)
		}
	}
	return ""
}

// checkSame reads b on the streaming path and every block variant and
// fails on the first difference. It returns the reference reading. size is
// the streaming path's buffer and the first block variant's block: the
// tests that read thousands of copies use less than the default sizes,
// whose allocation (and zeroing) would dominate.
func checkSame(t *testing.T, b []byte, what string, size int) reading {
	t.Helper()
	want := streamReading(t, b, "x", size)
	for name, got := range blockReadings(t, b, "x", size) {
		if d := diffReadings(want, got); d != "" {
			t.Fatalf("%s, %s: %s", what, name, d)
		}
	}
	return want
}

// testCaptures returns every file under testdata/pcaps and the generated
// samples, by name.
func testCaptures(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir("../testdata/pcaps", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("only %d files under testdata/pcaps", len(files))
	}
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, nano := range []bool{false, true} {
			for _, snap := range []uint32{0, 64, 65535} {
				file, _ := encodePcap(pcapSpec{order: o, nano: nano, snaplen: snap, linkType: 1}, samplePkts())
				files[fmt.Sprintf("gen-pcap-%v-nano=%v-snap=%d", o, nano, snap)] = file
			}
		}
		ng, _ := sampleNG(o)
		files[fmt.Sprintf("gen-pcapng-%v", o)] = ng.b
	}
	sections := &ngFile{}
	sections.shb(binary.LittleEndian)
	sections.idb(1, 1500)
	sections.epb(0, 1e6, frame(1, 10), 10)
	sections.shb(binary.BigEndian)
	sections.idb(276, 9000, sections.opt(9, []byte{9}))
	sections.idb(101, 9000)
	sections.epb(0, 2e9, frame(2, 20), 20)
	sections.epb(1, 3e6, frame(3, 30), 30)
	sections.shb(binary.LittleEndian)
	sections.idb(113, 0, sections.opt(14, sections.o.AppendUint64(nil, 1<<40)))
	sections.epb(0, 4e6, frame(4, 40), 40)
	files["gen-pcapng-sections"] = sections.b
	head, body := endlessPcapng()
	files["gen-pcapng-loop"] = slices.Concat(head, body, body, body)
	head, body = endlessPcap(60, 300<<10, 1514, 0, 9000) // one record larger than the block
	files["gen-pcap-big"] = slices.Concat(head, body, body)
	return files
}

// TestBlockMatchesStream reads every capture under testdata/pcaps (and the
// generated ones) on the block path, several ways, and with Open, and
// compares each reading with the streaming path's.
func TestBlockMatchesStream(t *testing.T) {
	dir := t.TempDir()
	for name, b := range testCaptures(t) {
		want := streamReading(t, b, "x", bufSize)
		for variant, got := range blockReadings(t, b, "x", blockSize) {
			if d := diffReadings(want, got); d != "" {
				t.Fatalf("%s, %s: %s", name, variant, d)
			}
		}
		// Open takes the block path for a regular file.
		path := filepath.Join(dir, "capture")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want = streamReading(t, b, path, bufSize)
		got := readWith(t, func() (*Reader, error) { return Open(path) })
		if d := diffReadings(want, got); d != "" {
			t.Fatalf("%s, Open: %s", name, d)
		}
	}
}

// TestBlockMatchesStreamCutOff cuts every capture at many offsets (every
// offset of the small ones; of the others every offset of the first 600 and
// last 64 bytes, a few around the length fields of some records and some
// at random) and compares the block path with the streaming path on each
// copy.
func TestBlockMatchesStreamCutOff(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for name, b := range testCaptures(t) {
		var cuts []int
		if len(b) <= 3000 {
			for k := range len(b) {
				cuts = append(cuts, k)
			}
		} else {
			for k := range 600 {
				cuts = append(cuts, k)
			}
			for k := range 64 {
				cuts = append(cuts, len(b)-1-k)
			}
			for _, f := range someFields(lengthFields(b), rng) {
				for d := -9; d <= 3; d++ {
					cuts = append(cuts, f.off+d)
				}
			}
			for range 50 {
				cuts = append(cuts, rng.IntN(len(b)))
			}
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		for _, k := range cuts {
			if k >= 0 && k < len(b) {
				checkSame(t, b[:k], fmt.Sprintf("%s cut at %d of %d", name, k, len(b)), 16<<10)
			}
		}
	}
}

// TestBlockMatchesStreamCorrupt overwrites the length fields of records
// and blocks (pcap incl_len and orig_len; pcapng block total lengths,
// leading and trailing, Enhanced Packet Block captured length and
// interface) with wrong values, and anything at random, and compares the
// block path with the streaming path on each copy.
func TestBlockMatchesStreamCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for name, b := range testCaptures(t) {
		for _, f := range someFields(lengthFields(b), rng) {
			old := f.order.Uint32(b[f.off:])
			for _, v := range []uint32{0, 1, 4, 12, 28, 31, 32, old - 4, old - 1, old + 1, old + 4, old + 64, old * 2,
				1514, 65536, defaultMaxCapLen, defaultMaxCapLen + 1, maxRecordLen, maxBlockLen + 4, 1 << 31, 0xffffffff} {
				c := bytes.Clone(b)
				f.order.PutUint32(c[f.off:], v)
				checkSame(t, c, fmt.Sprintf("%s with the field at %d set to %d (was %d)", name, f.off, v, old), 16<<10)
			}
		}
		for range 20 {
			c := bytes.Clone(b)
			if len(c) == 0 {
				break
			}
			for range 1 + rng.IntN(4) {
				c[rng.IntN(len(c))] = byte(rng.Uint32())
			}
			checkSame(t, c, name+" with random bytes changed", 16<<10)
		}
	}
}

// someFields returns the first 16 fields, the last 4 and 4 more at random.
func someFields(fields []field, rng *rand.Rand) []field {
	if len(fields) <= 24 {
		return fields
	}
	out := slices.Concat(fields[:16], fields[len(fields)-4:])
	for range 4 {
		out = append(out, fields[16+rng.IntN(len(fields)-20)])
	}
	return out
}

// field is a 4-byte length (or interface) field of a capture.
type field struct {
	off   int
	order binary.ByteOrder
}

// lengthFields walks a plain pcap or pcapng file the way the format says
// (independently of the reader) and returns the offsets of the fields whose
// corruption the reader must catch: per pcap record incl_len and orig_len;
// per pcapng block the leading and trailing total length, and for an
// Enhanced Packet Block the interface ID and captured length. It stops at
// the first thing that does not parse.
func lengthFields(b []byte) []field {
	var out []field
	if len(b) < 24 {
		return nil
	}
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d, 0xd4c3b2a1, 0x4d3cb2a1:
		var o binary.ByteOrder = binary.LittleEndian
		if b[0] == 0xa1 {
			o = binary.BigEndian
		}
		for off := 24; off+16 <= len(b); {
			out = append(out, field{off + 8, o}, field{off + 12, o})
			off += 16 + int(o.Uint32(b[off+8:]))
		}
	case blockSHB:
		var o binary.ByteOrder = binary.LittleEndian
		for off := 0; off+12 <= len(b); {
			if binary.LittleEndian.Uint32(b[off:]) == blockSHB {
				o = binary.LittleEndian
				if binary.LittleEndian.Uint32(b[off+8:]) != byteOrderMagic {
					o = binary.BigEndian
				}
			}
			typ, n := o.Uint32(b[off:]), int(o.Uint32(b[off+4:]))
			if n < 12 || n%4 != 0 || off+n > len(b) {
				break
			}
			out = append(out, field{off + 4, o}, field{off + n - 4, o})
			if typ == blockEPB && n >= 32 {
				out = append(out, field{off + 8, o}, field{off + 20, o})
			}
			off += n
		}
	}
	return out
}

// TestBlockSourceErrors: an I/O error, a timeout and a source that makes no
// progress end the reading the same way on both paths.
func TestBlockSourceErrors(t *testing.T) {
	file, ends := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, samplePkts())
	ng, _ := sampleNG(binary.BigEndian)
	boom := errors.New("boom")
	type source func() io.Reader
	sources := map[string]source{
		"io error in record 2":   func() io.Reader { return &failingReader{data: file[:ends[0]+3], err: boom} },
		"io error at a boundary": func() io.Reader { return &failingReader{data: file[:ends[1]], err: boom} },
		"io error in header":     func() io.Reader { return &failingReader{data: file[:10], err: boom} },
		"io error in pcapng":     func() io.Reader { return &failingReader{data: ng.b[:ng.packets[2]-5], err: boom} },
		"data with EOF":          func() io.Reader { return iotest.DataErrReader(bytes.NewReader(file)) },
		// Where these two fail depends on the size of the reads, so the
		// block is as large as the streaming path's buffer: one read
		// takes the whole file.
		"timeout":     func() io.Reader { return iotest.TimeoutReader(bytes.NewReader(file)) },
		"no progress": func() io.Reader { return io.MultiReader(bytes.NewReader(file[:ends[0]+5]), emptyReader{}) },
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			want := readWith(t, func() (*Reader, error) { return newReaderSize(src(), "src", bufSize) })
			sizes := []int{minBufSize, 100, blockSize}
			if name == "timeout" || name == "no progress" {
				sizes = []int{blockSize}
			}
			for _, size := range sizes {
				got := readWith(t, func() (*Reader, error) { return newBlockReader(src(), "src", size) })
				if d := diffReadings(want, got); d != "" {
					t.Errorf("block size %d: %s", size, d)
				}
			}
		})
	}
}

// emptyReader returns no bytes and no error, forever.
type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// TestOpenTakesBlockPath: Open reads a regular file on the block path (a
// gzip-compressed one through it, and its decompressed bytes too), and a
// pipe on the streaming path, unless it is gzip-compressed.
func TestOpenTakesBlockPath(t *testing.T) {
	dir := t.TempDir()
	file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, samplePkts())
	ng, _ := sampleNG(binary.LittleEndian)
	for name, tt := range map[string]struct {
		b    []byte
		fast fastPath
	}{
		"a.pcap":    {file, fastPcap},
		"a.pcapng":  {ng.b, fastPcapng},
		"a.pcap.gz": {gz(file), fastPcap},
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, tt.b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if r.br != nil && tt.fast != fastNone || r.fast != tt.fast || len(r.blk.buf) != blockSize {
			t.Errorf("%s: streaming %v, hot path %d, block of %d bytes", name, r.br != nil, r.fast, len(r.blk.buf))
		}
		r.Close()
		if r.fast != fastNone {
			t.Errorf("%s: hot path %d after Close", name, r.fast)
		}
	}
	for _, tt := range []struct {
		name string
		b    []byte
		fast fastPath
	}{{"pipe", file, fastNone}, {"gzip pipe", gz(file), fastPcap}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			pw.Write(tt.b)
			pw.Close()
		}()
		r, err := openSize(fmt.Sprintf("/dev/fd/%d", pr.Fd()), bufSize)
		pr.Close()
		if err != nil {
			t.Skipf("no /dev/fd: %v", err)
		}
		if (r.br != nil) != (tt.fast == fastNone) || r.fast != tt.fast {
			t.Errorf("%s: streaming %v, hot path %d", tt.name, r.br != nil, r.fast)
		}
		if recs, err := readAll(t, r); err != io.EOF || len(recs) != len(samplePkts()) {
			t.Errorf("%s: %d records and %v", tt.name, len(recs), err)
		}
		r.Close()
	}
}

// TestBlockFileShrinks truncates, rewrites and extends a file while Open's
// Reader reads it: no crash (a mapping would raise SIGBUS), the records
// read are those of the file as it was when their block was read, and the
// reading ends with ErrCutOff or io.EOF.
func TestBlockFileShrinks(t *testing.T) {
	var pkts []pkt
	for i := range 20000 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i), frac: uint32(i), data: frame(i, 96)})
	}
	file, ends := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	for _, tt := range []struct {
		name   string
		change func(path string) error
	}{
		{"truncated to nothing", func(p string) error { return os.Truncate(p, 0) }},
		{"truncated mid-record", func(p string) error { return os.Truncate(p, int64(ends[len(ends)/2]+7)) }},
		{"rewritten shorter", func(p string) error { return os.WriteFile(p, file[:len(file)/3], 0o644) }},
		{"extended", func(p string) error {
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write(file[pcapFileHeaderLen : pcapFileHeaderLen+3*112])
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "live.pcap")
			if err := os.WriteFile(path, file, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var rec Record
			for range 10 {
				if err := r.Next(&rec); err != nil {
					t.Fatal(err)
				}
			}
			if err := tt.change(path); err != nil {
				t.Fatal(err)
			}
			n := 10
			for {
				err = r.Next(&rec)
				if err != nil {
					break
				}
				n++
				if i := (n - 1) % len(pkts); !bytes.Equal(rec.Data, pkts[i].data) || rec.Timestamp.Unix() != int64(pkts[i].sec) {
					t.Fatalf("record %d is not what the file held", n)
				}
			}
			if err != io.EOF && !errors.Is(err, ErrCutOff) {
				t.Fatalf("after %d records: %v", n, err)
			}
			t.Logf("%d records, then %v", n, err)
		})
	}
}

// TestNextAllocsBlock: the block path allocates nothing per record either,
// whether the records come from the hot loops or through refills and the
// copy path.
func TestNextAllocsBlock(t *testing.T) {
	pcapHead, pcapBody := endlessPcap(60, 1514, 9000, 0, 128)
	bigHead, bigBody := endlessPcap(60, 3<<20, 1514)
	ngHead, ngBody := endlessPcapng()
	tests := []struct {
		name       string
		head, body []byte
		size       int
	}{
		{"pcap", pcapHead, pcapBody, blockSize},
		{"pcap small block", pcapHead, pcapBody, minBufSize},
		{"pcap record larger than the block", bigHead, bigBody, blockSize},
		{"pcapng", ngHead, ngBody, blockSize},
		{"pcapng small block", ngHead, ngBody, minBufSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := newBlockReader(&loopReader{head: tt.head, body: tt.body}, "loop", tt.size)
			if err != nil {
				t.Fatal(err)
			}
			var rec Record
			for range 20 {
				if err := r.Next(&rec); err != nil {
					t.Fatal(err)
				}
			}
			if allocs := testing.AllocsPerRun(1000, func() {
				if err := r.Next(&rec); err != nil {
					t.Fatal(err)
				}
			}); allocs != 0 {
				t.Errorf("Next allocates %.1f times per record, want 0", allocs)
			}
		})
	}
}

// TestMergerOneFile: merging one file gives what reading it gives, problems
// included, and allocates nothing per record.
func TestMergerOneFile(t *testing.T) {
	dir := t.TempDir()
	var pkts []pkt
	for i := range 5000 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i/100), frac: uint32(i * 7), data: frame(i, 40+i%200)})
	}
	file, _ := encodePcap(pcapSpec{order: binary.BigEndian, nano: true, linkType: 1}, pkts)
	ng, _ := sampleNG(binary.LittleEndian)
	for name, b := range map[string][]byte{"whole.pcap": file, "cut.pcap": file[:len(file)-50], "a.pcapng": ng.b,
		"bad.pcap": append(bytes.Clone(file[:pcapFileHeaderLen+8]), 0xff, 0xff, 0xff, 0xff)} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		want := readWith(t, func() (*Reader, error) { return Open(path) })
		m, err := OpenMerged([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		var got []Record
		var rec Record
		for {
			f, err := m.Next(&rec)
			if err == io.EOF {
				break
			}
			if err != nil || f != 0 {
				t.Fatalf("%s: file %d, error %v", name, f, err)
			}
			rec.Data = bytes.Clone(rec.Data)
			got = append(got, rec)
		}
		if f, err := m.Next(&rec); f != -1 || err != io.EOF {
			t.Errorf("%s: after the end: %d, %v", name, f, err)
		}
		if len(got) != len(want.recs) {
			t.Fatalf("%s: %d records, want %d", name, len(got), len(want.recs))
		}
		for i := range got {
			if d := diffRecords(want.recs[i], got[i]); d != "" {
				t.Fatalf("%s: record %d: %s", name, i+1, d)
			}
		}
		var wantProblems []error
		if want.err != io.EOF {
			wantProblems = []error{want.err}
		}
		if p := m.Problems(); len(p) != len(wantProblems) || len(p) == 1 && diffErrors(wantProblems[0], p[0]) != "" {
			t.Errorf("%s: problems %v, want %v", name, p, wantProblems)
		}
		m.Close()
	}

	m, err := OpenMerged([]string{filepath.Join(dir, "whole.pcap")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var rec Record
	for range 10 {
		m.Next(&rec)
	}
	if n := testing.AllocsPerRun(1000, func() { m.Next(&rec) }); n != 0 {
		t.Errorf("want 0 allocs per merged record, got %v", n)
	}
}

// TestMergerLastFileStraight: once the other files are done, the merge
// reads the last one straight into the caller's record, in order, with
// the right file index.
func TestMergerLastFileStraight(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0, 10})
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{5, 15, 25, 35, 45})
	c := writeTaggedPcap(t, dir, "c.pcap", 'c', []int{1})
	m, err := OpenMerged([]string{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got []string
	var prev int64
	var rec Record
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.TimeNanos < prev || rec.TimeNanos != rec.Timestamp.UnixNano() {
			t.Errorf("record %c%d: TimeNanos %d after %d, Timestamp %v", rec.Data[0], rec.Data[1], rec.TimeNanos, prev, rec.Timestamp)
		}
		prev = rec.TimeNanos
		got = append(got, fmt.Sprintf("%c%d%d", rec.Data[0], rec.Data[1], file))
	}
	if want := "a00 c02 b01 a10 b11 b21 b31 b41"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
}

// TestMergeKeyZeroTime: records without a time (Simple Packet Blocks) are
// merged by the zero Time's UnixNano, as they always were.
func TestMergeKeyZeroTime(t *testing.T) {
	if k := mergeKey(&Record{}); k != (time.Time{}).UnixNano() {
		t.Errorf("key of a record without a time %d, want %d", k, (time.Time{}).UnixNano())
	}
	epoch := time.Unix(0, 0).UTC()
	if k := mergeKey(&Record{Timestamp: epoch}); k != 0 {
		t.Errorf("key of a record at the epoch %d, want 0", k)
	}
}

// BenchmarkReadPcapBlock reads an endless pcap of 96-byte frames on the
// block path, 64 KiB at a time from memory (a cache-resident copy rather
// than a read system call); one operation is one record.
func BenchmarkReadPcapBlock(b *testing.B) {
	sizes := make([]int, 64<<10/112)
	for i := range sizes {
		sizes[i] = 96
	}
	head, body := endlessPcap(sizes...)
	benchmarkReadBlock(b, head, body, len(sizes))
}

// BenchmarkReadPcapngBlock reads an endless pcapng of Enhanced Packet
// Blocks of 96-byte frames on the block path, 64 KiB at a time from
// memory; one operation is one record.
func BenchmarkReadPcapngBlock(b *testing.B) {
	f := &ngFile{}
	f.shb(binary.LittleEndian)
	f.idb(1, 0)
	n := len(f.b)
	records := 64 << 10 / 128
	for i := range records {
		f.epb(0, 1700000000*1e6+uint64(i), frame(i, 96), 96)
	}
	benchmarkReadBlock(b, f.b[:n], f.b[n:], records)
}

func benchmarkReadBlock(b *testing.B, head, body []byte, records int) {
	r, err := newBlockReader(&loopReader{head: head, body: body}, "bench", blockSize)
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

// TestBlockLengthLimits reads records and blocks at and just past the
// length limits (pcap: the snap length or 262144, at most 16 MiB; pcapng:
// maxBlockLen) with a block large enough to hold them whole, so that the
// hot loops, not the generic code, decide; the streaming path must agree.
func TestBlockLengthLimits(t *testing.T) {
	files := map[string][]byte{}
	for _, tt := range []struct {
		snaplen uint32
		capLen  int
	}{
		{0, 262144}, {0, 262145}, {1500, 262144}, {1500, 262145}, {4 << 20, 4 << 20}, {4 << 20, 4<<20 + 1},
		{1 << 30, 16 << 20}, {1 << 30, 16<<20 + 1},
	} {
		for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
			file, _ := encodePcap(pcapSpec{order: o, snaplen: tt.snaplen, linkType: 1},
				[]pkt{{sec: 1, data: frame(1, 60)}, {sec: 2, data: frame(3, tt.capLen)}, {sec: 3, data: frame(4, 60)}})
			files[fmt.Sprintf("pcap %v snaplen %d, record of %d", o, tt.snaplen, tt.capLen)] = file
		}
	}
	for _, length := range []int{maxBlockLen, maxBlockLen + 4} {
		for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
			f := &ngFile{}
			f.shb(o)
			f.idb(1, 0)
			f.epb(0, 1e6, frame(1, 60), 60)
			f.epb(0, 2e6, frame(2, length-32), uint32(length-32))
			f.epb(0, 3e6, frame(3, 60), 60)
			files[fmt.Sprintf("pcapng %v block of %d", o, length)] = f.b
		}
	}
	for name, b := range files {
		want := streamReading(t, b, "x", bufSize)
		got := readWith(t, func() (*Reader, error) { return newBlockReader(bytes.NewReader(b), "x", len(b)+64) })
		if d := diffReadings(want, got); d != "" {
			t.Errorf("%s: %s", name, d)
		}
		if !(len(want.recs) == 3 && want.err == io.EOF || len(want.recs) == 1 && errors.Is(want.err, ErrBadRecord)) {
			t.Errorf("%s: %d records, then %v: want all three or the first and ErrBadRecord", name, len(want.recs), want.err)
		}
	}
}
