//go:build amd64 || arm64

package prefetch

import "unsafe"

// lines is written in assembly (prefetch_GOARCH.s).
//
//go:noescape
func lines(p unsafe.Pointer, n int)

// line is written in assembly (prefetch_GOARCH.s).
//
//go:noescape
func line(p unsafe.Pointer)

// six is written in assembly (prefetch_GOARCH.s).
//
//go:noescape
func six(p unsafe.Pointer)
