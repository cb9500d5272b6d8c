package allocs

import (
	"strings"
	"sync"
	"testing"
)

const self = "github.com/rocedump/rocedump/internal/allocs"

var sink [][]byte

//go:noinline
func allocate(n int) {
	for range n {
		sink = append(sink, make([]byte, 64))
	}
	sink = sink[:0]
}

//go:noinline
func allocateNothing(n int) int {
	s := 0
	for i := range n {
		s += i
	}
	return s
}

func TestCountsAllocationsOfNamedPackages(t *testing.T) {
	n, sites := Count(func() { allocate(1000) }, self)
	// 1000 buffers, plus the growth of sink's backing array.
	if n < 1000 || n > 1100 {
		t.Errorf("allocate(1000): %d allocations, want 1000 to 1100 (%v)", n, sites)
	}
	if len(sites) == 0 || !strings.Contains(sites[0], self+".allocate") {
		t.Errorf("sites %q, want allocate's", sites)
	}
	if n, _ := Count(func() { allocateNothing(1000) }, self); n != 0 {
		t.Errorf("allocateNothing: %d allocations, want 0", n)
	}
}

func TestIgnoresOtherPackages(t *testing.T) {
	var wg sync.WaitGroup
	n, sites := Count(func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b strings.Builder
			for range 100 {
				b.WriteString("allocated by strings")
			}
			_ = b.String()
		}()
		wg.Wait()
	}, "github.com/rocedump/rocedump/flows")
	if n != 0 {
		t.Errorf("%d allocations counted for a package that did not run: %v", n, sites)
	}
}
