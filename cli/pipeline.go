package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// captureStats describe the input as a whole: what was read, what could
// not be, and over which time span.
type captureStats struct {
	Files       []string
	Packets     uint64
	RoCE        uint64
	Malformed   uint64
	Truncated   uint64
	ICRCBad     uint64
	Unsupported uint64 // frames of a link type rocedump does not decode
	First, Last time.Time
	Problems    []string // files cut off or ended by a bad record
	CutOff      bool     // a file was cut off mid-record
}

// packetSink receives every decoded frame of an analysis, in time order.
type packetSink interface {
	Add(p *packet.Packet, at flows.FrameRef)
}

// analyzeOptions say how to run an analysis pass.
type analyzeOptions struct {
	Paths    []string // as given on the command line (files, directories, "-")
	Progress io.Writer
	Sinks    []packetSink
	// Each, if set, is called for every frame after the sinks.
	Each func(rec *capture.Record, file int, p *packet.Packet)
}

// analyze reads every capture in time order and feeds each decoded frame to
// the sinks. Input that cannot be opened at all is a usage error (exit 2);
// files that end early are noted in Problems.
func analyze(o analyzeOptions) (*captureStats, error) {
	paths, err := capture.ExpandPaths(o.Paths)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	m, err := capture.OpenMerged(paths)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	defer m.Close()
	st := &captureStats{Files: paths}
	prog := newProgress(o.Progress)
	fa := newFrameAnalyzer(st, o.Sinks)
	var rec capture.Record
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		if p := fa.add(&rec, file); p != nil && o.Each != nil {
			o.Each(&rec, file, p)
		}
		prog.tick(st.Packets)
	}
	prog.done()
	for _, p := range m.Problems() {
		st.Problems = append(st.Problems, p.Error())
		if errors.Is(p, capture.ErrCutOff) {
			st.CutOff = true
		}
	}
	return st, fa.finish()
}

// progress prints a self-overwriting progress line on a terminal when a run
// takes more than a moment.
type progress struct {
	w     io.Writer
	start time.Time
	shown bool
}

// progressDelay is how long a run goes before the progress line appears.
const progressDelay = 1500 * time.Millisecond

// newProgress returns a progress line on w, or a silent one when w is not a
// terminal (scripts, CI, redirected stderr).
func newProgress(w io.Writer) *progress {
	f, ok := w.(*os.File)
	if !ok {
		return &progress{}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return &progress{}
	}
	return &progress{w: w, start: time.Now()}
}

func (p *progress) tick(n uint64) {
	if p.w == nil || n&0xffff != 0 {
		return
	}
	el := time.Since(p.start)
	if el < progressDelay {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\rrocedump: %d packets, %.1f s, %.2f Mpps   ", n, el.Seconds(), float64(n)/el.Seconds()/1e6)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

// printProblems writes warnings about the input to w.
func printProblems(w io.Writer, st *captureStats) {
	for _, p := range st.Problems {
		fmt.Fprintf(w, "rocedump: warning: %s\n", p)
	}
}
