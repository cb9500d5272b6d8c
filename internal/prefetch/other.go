//go:build !amd64 && !arm64

package prefetch

import "unsafe"

// lines does nothing where there is no prefetch instruction in the
// package's assembly: the hint is optional.
func lines(p unsafe.Pointer, n int) {}

// line does nothing, as lines.
func line(p unsafe.Pointer) {}

// six does nothing, as lines.
func six(p unsafe.Pointer) {}
