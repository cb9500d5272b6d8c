package reports

import (
	"math/rand/v2"
	"testing"
)

// TestPerHostCountsDistinct: perHost counts each host's distinct values as
// a set does, for QPNs (sorted per host) and for peers (marked), in any
// order and with repeats.
func TestPerHostCountsDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 300} {
		for _, peers := range []bool{false, true} {
			var keys []uint64
			want := make([]map[uint32]bool, n)
			for h := range want {
				want[h] = map[uint32]bool{}
			}
			for range 20 * n {
				h := rng.IntN(n)
				v := uint32(rng.IntN(n))
				if !peers {
					v = uint32(rng.IntN(1 << 24))
					if rng.IntN(4) == 0 {
						v = uint32(rng.IntN(8)) // repeats
					}
				}
				keys = append(keys, uint64(h)<<32|uint64(v))
				want[h][v] = true
			}
			got := perHost(keys, n, peers)
			for h := range n {
				if got[h] != len(want[h]) {
					t.Fatalf("n %d, peers %v: host %d has %d distinct values, want %d", n, peers, h, got[h], len(want[h]))
				}
			}
		}
	}
	if got := perHost(nil, 3, false); len(got) != 3 || got[0]+got[1]+got[2] != 0 {
		t.Errorf("no keys: %v", got)
	}
}
