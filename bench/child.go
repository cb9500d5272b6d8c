package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ChildFlag is the first argument that makes the benchmark command act as
// the measuring helper (RunChild) instead of running the benchmark.
const ChildFlag = "-measure-child"

// childResult is what the helper reports on its standard output.
type childResult struct {
	WallNS   int64  `json:"wall_ns"`
	CPUNS    int64  `json:"cpu_ns"`
	MaxRSS   int64  `json:"max_rss"`
	ExitCode int    `json:"exit_code"`
	Stderr   string `json:"stderr"`
	Err      string `json:"err,omitempty"`
}

// RunChild is the measuring helper: it runs argv with standard output to
// /dev/null and writes the child's wall time, CPU time, peak RSS and
// standard error as JSON to out.
//
// It exists because Linux carries the peak RSS of a process's image over
// exec, and os/exec starts children sharing the parent's memory (vfork):
// a command started by the benchmark process, which has just generated
// gigabytes of frames, would report at least the benchmark's own peak. The
// helper is a fresh, small process, so its children's peaks are their own
// (plus a few MB of the helper).
func RunChild(argv []string, out io.Writer) int {
	var res childResult
	if len(argv) == 0 {
		res.Err = "no command"
	} else {
		rn := &Runner{}
		r := rn.measureDirect("", 0, argv)
		res = childResult{WallNS: int64(r.Wall), CPUNS: int64(r.CPU), MaxRSS: r.MaxRSS, Stderr: r.Stderr, ExitCode: r.exitCode}
		if r.Err != nil && r.exitCode < 0 {
			res.Err = r.Err.Error()
		}
	}
	if err := json.NewEncoder(out).Encode(&res); err != nil {
		return 1
	}
	return 0
}

// viaHelper runs argv through the helper command and reads its report.
func (rn *Runner) viaHelper(argv []string, env []string) (Run, int) {
	var r Run
	cmd := exec.Command(rn.Helper[0], append(append(append([]string{}, rn.Helper[1:]...), ChildFlag), argv...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		r.Err = fmt.Errorf("measuring helper: %v: %s", err, stderr.String())
		return r, -1
	}
	var cr childResult
	if err := json.Unmarshal(b, &cr); err != nil {
		r.Err = fmt.Errorf("measuring helper: %v", err)
		return r, -1
	}
	if cr.Err != "" {
		r.Err = fmt.Errorf("measuring helper: %s", cr.Err)
		return r, -1
	}
	r.Wall, r.CPU, r.MaxRSS, r.Stderr = time.Duration(cr.WallNS), time.Duration(cr.CPUNS), cr.MaxRSS, cr.Stderr
	return r, cr.ExitCode
}

// HelperSelf is the helper command line for a benchmark binary that calls
// RunChild when its first argument is ChildFlag: this executable.
func HelperSelf() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe}
}
