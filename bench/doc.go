// Package bench is rocedump's performance benchmark (issue 6): it generates
// a rail-optimised GPU fabric's RoCE traffic with package gen, runs the
// rocedump binary over it as a child process pinned to one core, measures
// throughput, wall time, peak resident memory and allocations per packet,
// times tshark on a prefix of the same capture, and renders the results as
// the Markdown of BENCHMARKS.md.
//
// cmd/rocebench is its command line; `make bench` and `make bench-quick`
// run it. The captures are large (DiskBytes: ~6 GB at most for `make
// bench`; the command checks the room first) and go to a temporary
// directory that is removed at the end, or on an interrupt (-keep keeps
// it); they are never committed.
//
// The benchmark reports; it never asserts a time. The hot-path Go
// benchmarks in this package's tests (BenchmarkHotPath*) split the
// per-packet cost by stage for profiling.
package bench
