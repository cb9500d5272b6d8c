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
	"time"
)

// writePcap writes frames with the given timestamps (µs offsets) to a pcap
// file; each frame's first byte is its tag, so the merge order can be read.
func writeTaggedPcap(t *testing.T, dir, name string, tag byte, offsets []int) string {
	t.Helper()
	var b bytes.Buffer
	w, err := NewPcapWriter(&b, LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for i, off := range offsets {
		frame := make([]byte, 60)
		frame[0], frame[1] = tag, byte(i)
		if err := w.WritePacket(base.Add(time.Duration(off)*time.Microsecond), frame, 60); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMergerTimeOrder(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0, 10, 20, 30})
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{5, 10, 25})
	c := writeTaggedPcap(t, dir, "c.pcap", 'c', []int{40})
	m, err := OpenMerged([]string{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var got []string
	var rec Record
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string([]byte{rec.Data[0], '0' + rec.Data[1], '0' + byte(file)}))
	}
	// Ties (a1 and b1 at 10 µs) go to the earlier file.
	want := []string{"a00", "b01", "a10", "b11", "a20", "b21", "a30", "c02"}
	if len(got) != len(want) {
		t.Fatalf("want %v, got %v", want, got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("want %v, got %v", want, got)
		}
	}
}

func TestMergerCutOffFileKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0, 10, 20})
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{5, 15, 25})
	data, _ := os.ReadFile(b)
	os.WriteFile(b, data[:len(data)-30], 0o644) // cut b's last record
	m, err := OpenMerged([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	n := 0
	var rec Record
	for {
		if _, err := m.Next(&rec); err != nil {
			break
		}
		n++
	}
	if n != 5 {
		t.Errorf("want 5 records (3 + 2 whole), got %d", n)
	}
	if p := m.Problems(); len(p) != 1 || !errors.Is(p[0], ErrCutOff) {
		t.Errorf("want one ErrCutOff problem, got %v", p)
	}
}

func TestMergerAllocs(t *testing.T) {
	dir := t.TempDir()
	offs := make([]int, 2000)
	for i := range offs {
		offs[i] = i * 3
	}
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', offs)
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', offs)
	m, err := OpenMerged([]string{a, b})
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

// benchmarkMerge merges the files made by write through Next (batch 1) or
// NextBatch (batch > 1), reopening them when they are done; one operation
// is one record.
func benchmarkMerge(b *testing.B, paths []string, batch int) {
	recs := make([]Record, batch)
	var m *Merger
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		if m == nil {
			var err error
			if m, err = OpenMerged(paths); err != nil {
				b.Fatal(err)
			}
		}
		var k int
		var err error
		if batch == 1 {
			_, err = m.Next(&recs[0])
			k = 1
		} else {
			k, _, err = m.NextBatch(recs)
		}
		if err != nil {
			m.Close()
			m = nil
			continue
		}
		n += k
	}
	if m != nil {
		m.Close()
	}
}

// mergeBenchFiles writes n files of 20,000 96-byte records each, their
// times interleaved (one mirror per file) or one after the other (the
// rotated files of one).
func mergeBenchFiles(b *testing.B, n int, rotated bool) []string {
	dir := b.TempDir()
	var paths []string
	for f := range n {
		var pkts []pkt
		for i := range 20000 {
			t := i*n + f // interleaved
			if rotated {
				t = f*20000 + i
			}
			pkts = append(pkts, pkt{sec: uint32(1700000000 + t/1000000), frac: uint32(t % 1000000), data: frame(i, 96)})
		}
		file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, linkType: 1}, pkts)
		p := filepath.Join(dir, fmt.Sprintf("f%04d.pcap", f))
		if err := os.WriteFile(p, file, 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func BenchmarkMerge(b *testing.B) {
	for _, bc := range []struct {
		name    string
		files   int
		rotated bool
	}{{"1file", 1, false}, {"2interleaved", 2, false}, {"2rotated", 2, true}, {"4interleaved", 4, false}, {"200rotated", 200, true}} {
		paths := mergeBenchFiles(b, bc.files, bc.rotated)
		for _, batch := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/batch%d", bc.name, batch), func(b *testing.B) { benchmarkMerge(b, paths, batch) })
		}
	}
}

// TestMergerRotatedOutOfOrderTies: the rotated files of one mirror, each
// starting at the time the one before ended (a frame of each at that
// microsecond), given out of order as a shell glob sorts tcpdump -C names
// (cap.pcap, cap.pcap10, cap.pcap2): the merge still gives the frames in
// the order the mirror wrote them, at a tie the end of the earlier file
// first.
func TestMergerRotatedOutOfOrderTies(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "cap.pcap", 'a', []int{0, 10, 20})
	b := writeTaggedPcap(t, dir, "cap.pcap2", 'b', []int{20, 20, 30})
	c := writeTaggedPcap(t, dir, "cap.pcap10", 'c', []int{30, 40})
	want := "a0 a1 a2 b0 b1 b2 c0 c1"
	for _, paths := range [][]string{{a, b, c}, {a, c, b}, {c, b, a}, {b, a, c}} {
		for _, batch := range []bool{false, true} {
			m, err := OpenMerged(paths)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			recs := make([]Record, 4)
			for {
				n := 1
				if batch {
					n, _, err = m.NextBatch(recs)
				} else {
					_, err = m.Next(&recs[0])
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range recs[:n] {
					got = append(got, string([]byte{r.Data[0], '0' + r.Data[1]}))
				}
			}
			m.Close()
			if g := strings.Join(got, " "); g != want {
				t.Errorf("files %v (batch %v): want %s, got %s", paths, batch, want, g)
			}
		}
	}
}
