//go:build !linux

package flows

import "unsafe"

// adviseHugePages does nothing where Linux's transparent huge pages are not
// to be had.
func adviseHugePages(p unsafe.Pointer, n uintptr) {}
