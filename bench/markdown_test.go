package bench

import (
	"fmt"
	"testing"
)

func TestNoNegativeZero(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    int
		want string
	}{{-0.00001, 4, "0.0000"}, {-0.0005, 4, "-0.0005"}, {-0.004, 2, "0.00"}, {0.22, 2, "0.22"}} {
		if got := fmt.Sprintf("%.*f", c.d, noNegativeZero(c.v, c.d)); got != c.want {
			t.Errorf("%v at %d decimals: %s, want %s", c.v, c.d, got, c.want)
		}
	}
}
