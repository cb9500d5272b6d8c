// Package prefetch asks the CPU to start loading memory that a program is
// about to use, without waiting for it: a hint, which changes no result.
//
// The analysis pass touches a few cache lines of per-flow state for every
// packet (the flow index slot, the flow, the report's per-flow counts), and
// with tens of thousands of flows interleaved on a mirror almost every one
// of those is a miss to main memory. Looking a few packets ahead and
// prefetching their lines lets those misses overlap instead of following
// one another (BENCHMARKS.md, "Where the time goes"). Go has no prefetch
// built-in for user code, so the hint is one instruction in assembly
// (PREFETCHT0 on amd64, PRFM PLDL1KEEP on arm64); on other architectures
// the functions do nothing.
package prefetch

import "unsafe"

// LineSize is the cache line size the hints assume.
const LineSize = 64

// Lines hints that the n cache lines from p on (p, p+64, ...) will be read
// soon. n below 1 does nothing. p need not be valid memory: a prefetch
// never faults.
func Lines(p unsafe.Pointer, n int) { lines(p, n) }

// Line is Lines of one line, in three instructions instead of nine: the
// look-ahead hints one index slot for nearly every frame (BENCHMARKS.md,
// session 21).
func Line(p unsafe.Pointer) { line(p) }

// Six is Lines(p, 6) unrolled, in 8 instructions instead of 22: the
// look-ahead hints a flow's six hot lines for nearly every frame
// (BENCHMARKS.md, session 23).
func Six(p unsafe.Pointer) { six(p) }
