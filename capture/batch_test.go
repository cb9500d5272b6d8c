package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// readBatches reads a whole input with NextBatch, batch records at a time.
// It copies the records of a batch only once the whole batch is returned,
// so a record the batch's later ones overwrote (a refill of the block)
// shows up as different bytes.
func readBatches(t *testing.T, open func() (*Reader, error), batch int) reading {
	t.Helper()
	r, err := open()
	if err != nil {
		return reading{openErr: err}
	}
	defer r.Close()
	var out reading
	recs := make([]Record, batch)
	for {
		n, err := r.NextBatch(recs)
		if err != nil {
			if n != 0 {
				t.Fatalf("NextBatch returned %d records and %v", n, err)
			}
			out.err = err
			break
		}
		if n < 1 || n > batch {
			t.Fatalf("NextBatch returned %d records for a batch of %d", n, batch)
		}
		for _, rec := range recs[:n] {
			rec.Data = bytes.Clone(rec.Data)
			out.recs = append(out.recs, rec)
		}
	}
	out.format, out.snapLen, out.lts, out.ifaces = r.Format(), r.SnapLen(), r.LinkTypes(), r.Interfaces()
	return out
}

// checkBatches compares reading b with NextBatch, on every path and
// several batch sizes, with reading it record by record on the streaming
// path.
func checkBatches(t *testing.T, b []byte, what string, size int) {
	t.Helper()
	want := streamReading(t, b, "x", size)
	for _, batch := range []int{1, 3, 64} {
		for name, open := range map[string]func() (*Reader, error){
			"stream":    func() (*Reader, error) { return newReaderSize(bytes.NewReader(b), "x", size) },
			"block":     func() (*Reader, error) { return newBlockReader(bytes.NewReader(b), "x", size) },
			"block-min": func() (*Reader, error) { return newBlockReader(bytes.NewReader(b), "x", minBufSize) },
			"block-1000-half": func() (*Reader, error) {
				return newBlockReader(iotest.HalfReader(bytes.NewReader(b)), "x", 1000)
			},
		} {
			if d := diffReadings(want, readBatches(t, open, batch)); d != "" {
				t.Fatalf("%s, %s, batches of %d: %s", what, name, batch, d)
			}
		}
	}
}

// TestNextBatchMatchesNext: NextBatch delivers the records, errors and
// reader state that Next does, on every capture, cut-off and corrupted
// copies of them, and every record of a batch is still whole when the
// batch is complete.
func TestNextBatchMatchesNext(t *testing.T) {
	for name, b := range testCaptures(t) {
		checkBatches(t, b, name, 16<<10)
		for _, k := range []int{len(b) / 3, len(b) / 2, len(b) - 1, len(b) - 17} {
			if k > 0 && k < len(b) {
				checkBatches(t, b[:k], fmt.Sprintf("%s cut at %d", name, k), 16<<10)
			}
		}
		for i, f := range lengthFields(b) {
			if i == 8 {
				break
			}
			c := bytes.Clone(b)
			f.order.PutUint32(c[f.off:], f.order.Uint32(c[f.off:])+4)
			checkBatches(t, c, fmt.Sprintf("%s with the field at %d changed", name, f.off), 16<<10)
		}
	}
}

// TestNextBatchEmpty: an empty batch reads nothing.
func TestNextBatchEmpty(t *testing.T) {
	for name, b := range testCaptures(t) {
		r, err := newBlockReader(bytes.NewReader(b), name, blockSize)
		if err != nil {
			continue
		}
		if n, err := r.NextBatch(nil); n != 0 || err != nil {
			t.Errorf("%s: NextBatch(nil) = %d, %v", name, n, err)
		}
		var rec Record
		if err := r.Next(&rec); err == nil && rec.Number != 1 {
			t.Errorf("%s: after an empty batch, Next read record %d", name, rec.Number)
		}
		r.Close()
		break
	}
}

// TestMergerNextBatch: a merge read in batches gives the records and file
// indexes of a merge read record by record, for one file and for several:
// interleaved, overlapping, and one after the other (rotated files, tied
// at the joins), where whole runs of a file come in one batch.
func TestMergerNextBatch(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0, 10})
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{5, 15, 25, 35, 45})
	c := writeTaggedPcap(t, dir, "c.pcap", 'c', []int{1})
	span := func(from, n int) []int {
		var offs []int
		for k := range n {
			offs = append(offs, from+k)
		}
		return offs
	}
	r1 := writeTaggedPcap(t, dir, "r1.pcap", 'x', span(0, 500))
	r2 := writeTaggedPcap(t, dir, "r2.pcap", 'y', span(499, 500)) // its first record ties r1's last
	r3 := writeTaggedPcap(t, dir, "r3.pcap", 'z', span(998, 500))
	o1 := writeTaggedPcap(t, dir, "o1.pcap", 'o', span(0, 300))
	o2 := writeTaggedPcap(t, dir, "o2.pcap", 'p', span(150, 300))
	for _, tc := range []struct {
		paths      []string
		maxBatches int // at most this many batches of 64 (0: no bound)
	}{
		{[]string{b}, 0}, {[]string{a, b, c}, 0}, {[]string{c, a}, 0},
		{[]string{r1, r2, r3}, 1500/64 + 6}, {[]string{r3, r1, r2}, 1500/64 + 6}, {[]string{o1, o2}, 0},
	} {
		var want []string
		m, err := OpenMerged(tc.paths)
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		for {
			file, err := m.Next(&rec)
			if err == io.EOF {
				break
			}
			want = append(want, fmt.Sprintf("%c%d/%d/%d", rec.Data[0], rec.Data[1], file, rec.Number))
		}
		m.Close()

		for _, size := range []int{1, 4, 64} {
			var got []string
			m, err = OpenMerged(tc.paths)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]Record, size)
			batches := 0
			for {
				n, file, err := m.NextBatch(recs)
				if err == io.EOF {
					if n != 0 || file != -1 {
						t.Errorf("%v: at the end: %d records, file %d", tc.paths, n, file)
					}
					break
				}
				batches++
				// Copied only now: every record of the batch must still
				// be whole.
				for _, rec := range recs[:n] {
					got = append(got, fmt.Sprintf("%c%d/%d/%d", rec.Data[0], rec.Data[1], file, rec.Number))
				}
			}
			m.Close()
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v, batches of %d: %v, want %v", tc.paths, size, got, want)
			}
			if size == 64 && tc.maxBatches > 0 && batches > tc.maxBatches {
				t.Errorf("%v: %d batches of up to 64 for %d records", tc.paths, batches, len(got))
			}
		}
	}
}

// TestNextBatchAllocs: reading in batches allocates nothing in steady
// state.
func TestNextBatchAllocs(t *testing.T) {
	var pkts []pkt
	for i := range 20000 {
		pkts = append(pkts, pkt{sec: uint32(1700000000 + i/100), frac: uint32(i), data: frame(i, 60+i%90)})
	}
	file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
	r, err := newBlockReader(bytes.NewReader(file), "x", blockSize)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := make([]Record, 64)
	if n := testing.AllocsPerRun(200, func() {
		if _, err := r.NextBatch(recs); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("want 0 allocs per batch, got %v", n)
	}
}
