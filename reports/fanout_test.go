package reports

import (
	"math/rand/v2"
	"testing"
)

// TestHostGroupsCountDistinct: hostGroups counts each host's distinct
// values as a set does, for QPNs (sorted per host) and for peers (marked), in any
// order and with repeats.
func TestHostGroupsCountDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 7, 300} {
		for _, peers := range []bool{false, true} {
			type pair struct {
				h int32
				v uint32
			}
			var pairs []pair
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
				pairs = append(pairs, pair{int32(h), v})
				want[h][v] = true
			}
			g := newHostGroups(n)
			for pass := range 2 {
				for _, p := range pairs {
					g.add(pass, p.h, p.v)
				}
				if pass == 0 {
					g.place()
				}
			}
			got := g.distinct(peers)
			for h := range n {
				if got[h] != len(want[h]) {
					t.Fatalf("n %d, peers %v: host %d has %d distinct values, want %d", n, peers, h, got[h], len(want[h]))
				}
			}
		}
	}
	g := newHostGroups(3)
	g.place()
	if got := g.distinct(false); len(got) != 3 || got[0]+got[1]+got[2] != 0 {
		t.Errorf("no values: %v", got)
	}
}
