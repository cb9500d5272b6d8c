// Package allocs counts the heap allocations that a piece of code makes,
// for tests that require code to allocate nothing.
//
// runtime.MemStats.Mallocs counts every allocation of the process, so a
// test that compares it before and after a long loop also counts what the
// runtime and other goroutines allocate meanwhile (a cleanup run by the
// garbage collector, a timer of the test framework). Count instead samples
// every allocation with the memory profiler and keeps those made with a
// function of the named packages on the stack.
package allocs

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
)

// Count runs fn with every allocation profiled and returns how many
// objects were allocated with a function of one of pkgs (import paths,
// such as "github.com/rocedump/rocedump/flows") on the stack, and where:
// one line per allocation site, with its count. fn's own package counts
// only if it is named. Count is not safe for concurrent use: it sets
// runtime.MemProfileRate while fn runs.
func Count(fn func(), pkgs ...string) (n int64, sites []string) {
	rate := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = rate }()
	before := profile()
	fn()
	after := profile()
	bySite := map[string]int64{}
	for stack, objs := range after {
		objs -= before[stack]
		if objs <= 0 {
			continue
		}
		if site, ok := within(stack, pkgs); ok {
			n += objs
			bySite[site] += objs
		}
	}
	for site, objs := range bySite {
		sites = append(sites, fmt.Sprintf("%d at %s", objs, site))
	}
	sort.Strings(sites)
	return n, sites
}

// profileFunc is profile's name in stacks.
const profileFunc = "github.com/rocedump/rocedump/internal/allocs.profile"

// profile returns the allocated object count of every stack in the memory
// profile. The profile lags by up to two garbage collection cycles, so
// three are run first.
func profile() map[[32]uintptr]int64 {
	for range 3 {
		runtime.GC()
	}
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	objs := make(map[[32]uintptr]int64, len(recs))
	for _, r := range recs {
		objs[r.Stack0] += r.AllocObjects
	}
	return objs
}

// within reports whether stack has a frame in one of pkgs, and names the
// innermost such frame (function file:line).
func within(stack [32]uintptr, pkgs []string) (string, bool) {
	pcs := stack[:]
	for i, pc := range pcs {
		if pc == 0 {
			pcs = pcs[:i]
			break
		}
	}
	frames := runtime.CallersFrames(pcs)
	site := ""
	for {
		f, more := frames.Next()
		if f.Function == profileFunc {
			return "", false // Count's own snapshot
		}
		for _, pkg := range pkgs {
			if site == "" && strings.HasPrefix(f.Function, pkg+".") {
				site = fmt.Sprintf("%s %s:%d", f.Function, f.File, f.Line)
			}
		}
		if !more {
			return site, site != ""
		}
	}
}
