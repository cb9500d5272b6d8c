package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Run is one measured command.
type Run struct {
	Name    string   // what it is, for the table: "rocedump report --format json"
	Args    []string // the command line, program first
	Packets int      // frames in its input
	Cores   int      // cores it may use (GOMAXPROCS and taskset)
	Pinned  bool     // it ran under taskset

	Wall   time.Duration
	CPU    time.Duration // user + system
	MaxRSS int64         // peak resident set, bytes
	// Machine is what the rest of the machine did meanwhile.
	Machine Activity
	Stderr  string
	Err     error

	exitCode int // -1 when it did not run or was killed
}

// PPS is packets per second of wall time.
func (r *Run) PPS() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Packets) / r.Wall.Seconds()
}

// PPSPerCore is packets per second per core: per second of wall time on
// one pinned core; per second of CPU time otherwise.
func (r *Run) PPSPerCore() float64 {
	d := r.Wall
	if r.Cores != 1 {
		d = r.CPU
	}
	if d <= 0 {
		return 0
	}
	return float64(r.Packets) / d.Seconds()
}

// Runner runs commands as child processes with their standard output
// thrown away and measures them.
type Runner struct {
	// Taskset is the path of taskset(1), or "" to run without pinning.
	Taskset string
	// Timeout stops a command that runs longer (0: none).
	Timeout time.Duration
	// Helper, when set, is the command (program first) of a measuring
	// helper that runs each command and reports on it (see RunChild).
	Helper []string
}

// NewRunner finds taskset.
func NewRunner() *Runner {
	r := &Runner{}
	if p, err := exec.LookPath("taskset"); err == nil {
		r.Taskset = p
	}
	return r
}

// Measure runs args (program first) on cores CPUs: with GOMAXPROCS=cores,
// and pinned to CPUs 0..cores-1 by taskset when there is one. Standard
// output goes to /dev/null (so writing it costs what it costs on a real
// run, and nothing more); standard error is kept for the summary line.
// With a Helper, the measuring is done by a fresh helper process.
func (rn *Runner) Measure(name string, packets, cores int, args ...string) Run {
	argv := args
	pinned := false
	if rn.Taskset != "" && cores > 0 {
		argv = append([]string{rn.Taskset, "-c", cpuList(cores)}, args...)
		pinned = true
	}
	env := append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", max(cores, 1)))
	var r Run
	code := 0
	before := readCPUTimes()
	if len(rn.Helper) > 0 {
		r, code = rn.viaHelper(argv, env)
	} else {
		r = rn.measureDirect(name, 0, argv, env...)
		code = r.exitCode
	}
	r.Machine = activitySince(before, r.CPU)
	r.Name, r.Args, r.Packets, r.Cores, r.Pinned = name, args, packets, cores, pinned
	// rocedump report exits 1 for findings at or above --fail-on: that is
	// a result, not a failure.
	if r.Err == nil && code != 0 && !(code == 1 && strings.Contains(name, "report")) {
		r.Err = fmt.Errorf("%s: exit code %d: %s", strings.Join(args, " "), code, lastLine(r.Stderr))
	}
	return r
}

// MeasureBeside is Measure on one core (CPU 0) while a copy of the same
// command runs on CPU 1 (its output thrown away): set against Measure of
// the command alone, it says how much the machine's two CPUs slow each
// other at the time, which on a shared host (two vCPUs that may be one
// physical core's two threads, or contend with other tenants) changes
// from hour to hour, and which a run on two cores pays as well.
func (rn *Runner) MeasureBeside(name string, packets int, args ...string) Run {
	if rn.Taskset == "" || runtime.NumCPU() < 2 {
		return Run{Name: name, Args: args, Packets: packets, Err: errors.New("needs taskset(1) and two CPUs")}
	}
	other := exec.Command(rn.Taskset, append([]string{"-c", "1"}, args...)...)
	other.Env = append(os.Environ(), "GOMAXPROCS=1")
	if err := other.Start(); err != nil {
		return Run{Name: name, Args: args, Packets: packets, Err: fmt.Errorf("%s: %v", strings.Join(args, " "), err)}
	}
	r := rn.Measure(name, packets, 1, args...)
	if err := other.Wait(); err != nil && r.Err == nil && other.ProcessState.ExitCode() > 1 {
		r.Err = fmt.Errorf("the copy on CPU 1: %v", err)
	}
	return r
}

// measureDirect runs argv as a child of this process.
func (rn *Runner) measureDirect(name string, packets int, argv []string, env ...string) Run {
	r := Run{Name: name, Args: argv, Packets: packets, exitCode: -1}
	ctx := context.Background()
	if rn.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rn.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		r.Err = err
		return r
	}
	defer devnull.Close()
	var stderr bytes.Buffer
	cmd.Stdout = devnull
	cmd.Stderr = &stderr
	if len(env) > 0 {
		cmd.Env = env
	}
	start := time.Now()
	err = cmd.Run()
	r.Wall = time.Since(start)
	r.Stderr = strings.TrimSpace(stderr.String())
	if ps := cmd.ProcessState; ps != nil {
		r.exitCode = ps.ExitCode()
		r.CPU = ps.UserTime() + ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
		}
	}
	if err != nil && r.exitCode < 0 {
		r.Err = fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
	}
	return r
}

func cpuList(n int) string {
	if n == 1 {
		return "0"
	}
	return fmt.Sprintf("0-%d", n-1)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// Allocs are the heap allocations of an in-process run.
type Allocs struct {
	Name      string
	Packets   int
	Mallocs   uint64
	HeapBytes uint64 // bytes allocated (TotalAlloc), not the live heap
}

// PerPacket is allocations per packet.
func (a Allocs) PerPacket() float64 { return float64(a.Mallocs) / float64(max(a.Packets, 1)) }

// Marginal is the allocations and bytes per packet of the packets that b
// has and a has not: the steady-state cost, with start-up and output
// cancelled out (a is a prefix of b with the same flows).
func Marginal(a, b Allocs) (allocs, bytes float64) {
	n := float64(b.Packets - a.Packets)
	if n <= 0 {
		return 0, 0
	}
	return (float64(b.Mallocs) - float64(a.Mallocs)) / n, (float64(b.HeapBytes) - float64(a.HeapBytes)) / n
}

// BytesPerPacket is allocated bytes per packet.
func (a Allocs) BytesPerPacket() float64 { return float64(a.HeapBytes) / float64(max(a.Packets, 1)) }

// MeasureAllocs runs fn (a whole command, in this process) and counts the
// heap allocations it makes, from runtime.MemStats before and after. Other
// goroutines of this process must be idle meanwhile.
func MeasureAllocs(name string, packets int, fn func(out, errOut io.Writer) error) (Allocs, error) {
	a := Allocs{Name: name, Packets: packets}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := fn(io.Discard, io.Discard)
	runtime.ReadMemStats(&after)
	a.Mallocs = after.Mallocs - before.Mallocs
	a.HeapBytes = after.TotalAlloc - before.TotalAlloc
	return a, err
}
