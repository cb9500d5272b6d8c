package topology

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCompareNames: addresses first in address order, then names with
// their numeric runs compared as numbers; the order is total
// (antisymmetric, and 0 only for equal names) and does not depend on the
// input's order.
func TestCompareNames(t *testing.T) {
	want := []string{"10.0.0.2", "10.0.0.9", "10.0.0.10", "10.0.1.1", "192.0.2.77", "fd00::9", "fd00::a", "fd00::10", "", "1.2.3", "dgx", "dgx-01", "dgx-1", "dgx-2", "dgx-9",
		"dgx-10", "dgx-10a", "dgx-10b", "dgx-11", "dgx-100", "dgx-a", "node", "node0", "node00", "node2", "node2-b", "node10",
		"node99999999999999999999", "node100000000000000000000"}
	for i, a := range want {
		for j, b := range want {
			c := CompareNames(a, b)
			if (c < 0) != (i < j) || (c == 0) != (i == j) || c != -CompareNames(b, a) {
				t.Errorf("CompareNames(%q, %q) = %d, want the sign of %d", a, b, c, i-j)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		got := slices.Clone(want)
		r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
		slices.SortFunc(got, CompareNames)
		if !slices.Equal(got, want) {
			t.Fatalf("sorted:\n%q\nwant\n%q", got, want)
		}
	}
}
