package flows

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// runs Linux on with 4 KiB base pages (x86-64, arm64 with 4 KiB pages).
const hugePageSize = 2 << 20

// adviseHugePages asks the kernel to back the whole huge pages within
// [p, p+n) with transparent huge pages (madvise MADV_HUGEPAGE), which it
// does when /sys/kernel/mm/transparent_hugepage/enabled is "always" or
// "madvise", the usual defaults, and not when it is "never". The memory
// should not have been touched yet for the pages to be huge from the
// start (memory the Go heap takes fresh from the kernel is not; pages
// already touched are left to the kernel's khugepaged). It is advice: an
// error changes nothing and is ignored.
func adviseHugePages(p unsafe.Pointer, n uintptr) {
	beg := (uintptr(p) + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (uintptr(p) + n) &^ (hugePageSize - 1)
	if beg >= end {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, beg-uintptr(p))), end-beg), syscall.MADV_HUGEPAGE)
}
