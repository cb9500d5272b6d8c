package cli

import (
	"fmt"
	"io"
	"math"
	"time"
)

// Upper bounds for checkFlag where a flag has none of its own.
const (
	noMaxInt      = math.MaxInt
	noMaxDuration = time.Duration(math.MaxInt64)
)

// checkFlag is the check of every number and duration flag: the usage
// error (exit 2) for a value outside [lo, hi], naming the flag, the value
// and what it takes, or nil. A float flag parses "NaN" and "Inf", which
// are never in range. Flags are checked here rather than where they are
// used so that a value the flag does not take never silently means
// something else (--ecn-window 0 was the 1 ms default, -1ms every CE mark
// "not acted").
func checkFlag[T int | float64 | time.Duration](flag string, v, lo, hi T, want string) error {
	if f := float64(v); v >= lo && v <= hi && !math.IsNaN(f) && !math.IsInf(f, 0) {
		return nil
	}
	return usageErrorf("%s %v: want %s", flag, v, want)
}

// firstError returns the first of errs that is not nil.
func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkWorkers checks --workers as checkFlag does and, for a value above
// maxWorkers, which a pass runs instead, says so on w: a script that passes
// the machine's CPU count keeps working on a machine of more than 256, and
// its user learns that the rest sit idle.
func checkWorkers(w io.Writer, n int) error {
	if err := checkFlag("--workers", n, 0, noMaxInt, "0 (one per CPU) or more"); err != nil {
		return err
	}
	if n > maxWorkers {
		fmt.Fprintf(w, "rocedump: warning: --workers %d: running %d goroutines, the most a pass uses\n", n, maxWorkers)
	}
	return nil
}
