package prefetch

import (
	"testing"
	"unsafe"
)

// TestLines: a hint reads nothing the program sees, changes nothing, and
// does not fault on a nil pointer or a count below one; nor does Line.
func TestLines(t *testing.T) {
	buf := make([]byte, 4*LineSize)
	for i := range buf {
		buf[i] = byte(i)
	}
	Lines(unsafe.Pointer(&buf[0]), 4)
	Lines(unsafe.Pointer(&buf[0]), 0)
	Lines(unsafe.Pointer(&buf[0]), -1)
	Lines(nil, 1)
	for n := 1; n <= 4; n++ { // both of the loop's exits, odd and even
		Lines(unsafe.Pointer(&buf[0]), n)
	}
	Line(unsafe.Pointer(&buf[0]))
	Line(nil)
	Six(unsafe.Pointer(&buf[0]))
	Six(nil)
	for i := range buf {
		if buf[i] != byte(i) {
			t.Fatalf("byte %d changed", i)
		}
	}
}

func BenchmarkLines(b *testing.B) {
	buf := make([]byte, 1<<20)
	for i := 0; b.Loop(); i++ {
		Lines(unsafe.Pointer(&buf[(i*4160)&(len(buf)-1-6*LineSize)]), 6)
	}
}
