package capture

import (
	"fmt"
	"io"
	"testing"
)

// TestMergerParallel: files that overlap in time (parallel captures) are
// parallel, rotated files (the next begins when the last ends, at the same
// time too) are not, whatever order they are given in, read one record or
// a batch at a time, and with more files than are kept open.
func TestMergerParallel(t *testing.T) {
	dir := t.TempDir()
	a := writeTaggedPcap(t, dir, "a.pcap", 'a', []int{0, 10, 20})
	b := writeTaggedPcap(t, dir, "b.pcap", 'b', []int{20, 25, 30}) // rotated after a, same µs
	c := writeTaggedPcap(t, dir, "c.pcap", 'c', []int{31, 40})     // rotated after b
	p := writeTaggedPcap(t, dir, "p.pcap", 'p', []int{5, 35})      // parallel to a, b and c
	names := map[string]byte{a: 'a', b: 'b', c: 'c', p: 'p'}
	want := map[[2]byte]bool{{'a', 'p'}: true, {'b', 'p'}: true, {'c', 'p'}: true}
	for _, paths := range [][]string{{a, b, c, p}, {p, c, b, a}} {
		for _, batch := range []bool{false, true} {
			m, err := OpenMerged(paths)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]Record, 4)
			for {
				if batch {
					_, _, err = m.NextBatch(recs)
				} else {
					_, err = m.Next(&recs[0])
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			for i, x := range paths {
				for j, y := range paths {
					k := [2]byte{min(names[x], names[y]), max(names[x], names[y])}
					if got := m.Parallel(i, j); got != want[k] {
						t.Errorf("%s: Parallel(%c, %c) = %v, want %v", fmt.Sprint(batch), names[x], names[y], got, want[k])
					}
				}
			}
			m.Close()
		}
	}
}
