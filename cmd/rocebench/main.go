// Command rocebench is rocedump's performance benchmark (issue 6; package
// bench): it generates a 256-GPU, 8-rail all-to-all capture and the same
// traffic ERSPAN-wrapped, measures `rocedump read --format json`, `flows`
// and `report --format json` on one pinned core (packets per second, wall
// time, peak RSS, allocations per packet), times tshark on the first
// packets of the same captures, and prints a Markdown results table:
//
//	go run ./cmd/rocebench [-packets 20000000] [-o BENCHMARKS.md]
//
// `make bench` and `make bench-quick` (1 M packets) run it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/rocedump/rocedump/bench"
	"github.com/rocedump/rocedump/cli"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == bench.ChildFlag {
		os.Exit(bench.RunChild(os.Args[2:], os.Stdout))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rocebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	packets := fs.Int("packets", 20_000_000, "packets in each main capture")
	small := fs.Int("small-packets", 0, "packets of the shorter capture of the same flows for the memory check (0: a tenth)")
	tsharkN := fs.Int("tshark-packets", 200_000, "packets of each capture tshark reads, from the start (tshark -c; 0: the whole capture, which at ~40 k packets a second takes it minutes)")
	flowsQPs := fs.Int("flows-qps", 7, "QPs per peer of the many-flows capture (7: 111,104 flows; 0: skip it)")
	out := fs.String("o", "", "write the results into this Markdown `FILE` (between its rocebench markers) as well as to standard output")
	dir := fs.String("dir", "", "directory for the captures (default: a new temporary one, removed at the end)")
	keep := fs.Bool("keep", false, "keep the captures")
	rocedump := fs.String("rocedump", "", "rocedump binary to measure (default: go build ./cmd/rocedump)")
	noTshark := fs.Bool("no-tshark", false, "skip tshark")
	waitLoad := fs.Float64("wait-load", 0, "before measuring, wait (up to -wait-max) until the 1-minute load average is below this")
	waitMax := fs.Duration("wait-max", 5*time.Minute, "longest wait for -wait-load")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 || *packets < 1 {
		fmt.Fprintln(stderr, "usage: rocebench [-packets N] [-o BENCHMARKS.md] [flags]")
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "rocebench:", err)
		return 1
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "rocebench-")
		if err != nil {
			return fail(err)
		}
		*dir = d
		if !*keep {
			defer os.RemoveAll(d)
			defer removeOnSignal(d, stderr)()
		}
	}
	build := *rocedump == ""
	if build {
		*rocedump = filepath.Join(*dir, "rocedump")
	}
	o := bench.Options{
		Fabric:        bench.DefaultFabric(),
		Packets:       *packets,
		SmallPackets:  *small,
		TsharkPackets: *tsharkN,
		Dir:           *dir,
		Rocedump:      *rocedump,
		Log:           stderr,
		Runner:        runner(),
		WaitLoad:      *waitLoad,
		WaitMax:       *waitMax,
		InProcess: func(args []string, out, errOut io.Writer) int {
			return cli.Execute(args, strings.NewReader(""), out, errOut)
		},
	}
	if *flowsQPs > 0 {
		o.FlowsFabric = bench.DefaultFabric()
		o.FlowsFabric.QPsPerPeer = *flowsQPs
		// Two messages of every connection: every flow, both ways.
		o.FlowsPackets = 2 * o.FlowsFabric.Connections() * o.FlowsFabric.FramesPerMessage()
	}
	if !*noTshark {
		if p, err := exec.LookPath("tshark"); err == nil {
			o.Tshark = p
		} else {
			fmt.Fprintln(stderr, "rocebench: no tshark on PATH: skipping the comparison")
		}
	}
	if err := checkSpace(*dir, bench.DiskBytes(o)); err != nil {
		return fail(err)
	}
	if build {
		if err := bench.BuildRocedump(".", *rocedump); err != nil {
			return fail(fmt.Errorf("building rocedump: %w", err))
		}
	}
	res, err := bench.Measure(o)
	if err != nil {
		return fail(err)
	}
	var md bytes.Buffer
	if err := bench.WriteMarkdown(&md, res, reproduce(args)); err != nil {
		return fail(err)
	}
	stdout.Write(md.Bytes())
	if *out != "" {
		old, err := os.ReadFile(*out)
		if err != nil && !os.IsNotExist(err) {
			return fail(err)
		}
		if err := os.WriteFile(*out, []byte(bench.Splice(string(old), md.String())), 0o644); err != nil {
			return fail(err)
		}
	}
	return 0
}

// removeOnSignal removes dir, the temporary captures (~5 GB for `make
// bench`), when an interrupt or a termination signal ends the benchmark
// before its deferred clean-up can run, and exits with 130 or 143 as a
// shell would; the function it returns stops watching.
func removeOnSignal(dir string, stderr io.Writer) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			os.RemoveAll(dir)
			fmt.Fprintf(stderr, "rocebench: %v: removed %s\n", s, dir)
			code := 130
			if s == syscall.SIGTERM {
				code = 143
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
	}
}

// checkSpace fails when dir's file system has less free space than the
// captures need (need bytes, bench.DiskBytes), before any is written:
// those of `make bench` (20 M packets each) take ~5 GB, more than many a
// /tmp holds.
func checkSpace(dir string, need int64) error {
	free, ok := freeBytes(dir)
	if !ok || free >= need {
		return nil
	}
	return fmt.Errorf("the captures need about %.1f GB in %s, which has %.1f GB free: give -dir a directory on a larger disk, or fewer -packets",
		float64(need)/1e9, dir, float64(free)/1e9)
}

// runner measures through this executable acting as the helper, so that
// peak RSS figures are the measured command's own (see bench.RunChild).
func runner() *bench.Runner {
	r := bench.NewRunner()
	r.Helper = bench.HelperSelf()
	return r
}

// reproduce is the command line that makes these results again.
func reproduce(args []string) string {
	return strings.TrimSpace("go run ./cmd/rocebench " + strings.Join(args, " "))
}
