package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
)

// captureStats describe the input as a whole: what was read, what could
// not be, and over which time span.
type captureStats struct {
	Files     []string
	Packets   uint64
	RoCE      uint64
	Malformed uint64
	Truncated uint64 // frames cut by the snap length, RoCE or not
	// RoCETruncated is the RoCE frames among Truncated.
	RoCETruncated uint64
	ICRCBad       uint64
	Unchecked     uint64 // RoCE frames whose ICRC was not checked (not captured whole); counted so that a whole frame costs nothing
	Unsupported   uint64 // frames of a link type rocedump does not decode
	First, Last   time.Time
	Problems      []string // files cut off, ended by a bad record, changed while read, or followed by data after their gzip stream
	CutOff        bool     // a file was cut off mid-record

	// The latest frame's time as flows.TimeNanos (lastNs), which
	// frameAnalyzer.addPeeked keeps without Last where TimeNanos holds
	// the time, and Last's (lastAt): when they differ, Last is behind and
	// the latest frame's time is that of lastNs (see settleLast, which
	// info and mergeWorkers call before they read Last).
	lastNs, lastAt int64
}

// settleLast makes Last the time of lastNs when the pass left it behind:
// the instant of the latest frame, which is what the report reads of it
// (Last.UTC(), Last.Sub).
func (st *captureStats) settleLast() {
	if st.lastNs != st.lastAt {
		st.Last, st.lastAt = time.Unix(0, st.lastNs).UTC(), st.lastNs
	}
}

// countICRC counts a RoCE frame whose ICRC was not checked (not captured
// whole) or did not verify. It is a call, in a line of its own, so that
// frameAnalyzer.addPeeked keeps the line offsets the compiler's profile
// (default.pgo) knows its hot calls by.
func (st *captureStats) countICRC(s bth.ICRCStatus) {
	switch s {
	case bth.ICRCUnchecked:
		st.Unchecked++
	case bth.ICRCBad:
		st.ICRCBad++
	}
}

// countTruncated counts a frame p the snap length cut, and RoCETruncated
// when it is RoCE. It is a call, in a line of its own, for the same reason
// as countICRC.
func (st *captureStats) countTruncated(p *packet.Packet) {
	st.Truncated++
	if p.Kind == packet.KindRoCE {
		st.RoCETruncated++
	}
}

// packetSink receives every decoded frame of an analysis, in time order.
type packetSink interface {
	// AddFrame accounts p, frame at, reading *at during the call only
	// (flows.Table.AddFrame, reports.Collector.AddFrame).
	AddFrame(p *packet.Packet, at *flows.FrameAt)
}

// payloadReader is a sink that reads the TCP or UDP payload of some
// frames it is given (reports.Collector: rpcbind's replies), from the
// analyzer's decoder.
type payloadReader interface {
	ReadPayloadsFrom(reports.PayloadSource)
}

// parallelAware is a sink that counts a packet captured in two input files
// taken in parallel once (flows.Table, reports.Collector).
type parallelAware interface {
	SetParallelFiles(flows.ParallelFiles)
}

// analyzeOptions say how to run an analysis pass.
type analyzeOptions struct {
	Files    []string // the capture files, directories expanded (expandCaptures)
	Progress io.Writer
	Sinks    []packetSink
	// Each, if set, is called for every frame after the sinks.
	Each func(rec *capture.Record, file int, p *packet.Packet)
	// Opened, if set, is given the input once it is open, for Each to
	// look up a record's interface (capture.Merger.InterfaceOf).
	Opened func(m *capture.Merger)

	// Shard, if set, makes the sink of shard i of n for an analysis that
	// can be split by host pairs (a flows.Split; see reports.MergeShards):
	// the pass then runs on Workers goroutines, each feeding its own
	// shard's sink the frames of its share, which worker 0 reads for all
	// (see relay and frameAnalyzer). It is called once for every shard,
	// with n = 1 when the pass runs on one goroutine. Sinks, if also set,
	// are fed by worker 0 (so see only its share); Each runs the pass on
	// one worker.
	Shard   func(i, n int) packetSink
	Workers int // goroutines for a sharded pass; 0 or less: one per CPU (GOMAXPROCS)
	// RelayCost is what reading costs the relay relative to analysing a
	// frame (see relayShare); 0: relayCost, the report's.
	RelayCost float64
}

// analyze reads every capture in time order and feeds each decoded frame to
// the sinks. Input that cannot be opened at all is a usage error (exit 2);
// files that end early are noted in Problems.
func analyze(o analyzeOptions) (*captureStats, error) {
	paths := o.Files
	m, err := capture.OpenMerged(paths)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	defer m.Close()
	if o.Opened != nil {
		o.Opened(m)
	}
	defer collectLessDuringPass()()
	n := passWorkers(o)
	cost := o.RelayCost
	if cost == 0 {
		cost = relayCost
	}
	split := flows.NewSplit(n, relayShare(n, cost))
	fas := make([]*frameAnalyzer, n)
	shardSinks := make([]packetSink, n)
	for i := range fas {
		var sinks []packetSink
		if o.Shard != nil {
			shardSinks[i] = o.Shard(i, n)
			sinks = append(sinks, shardSinks[i])
		}
		if i == 0 {
			sinks = append(sinks, o.Sinks...)
		}
		fas[i] = newShardAnalyzer(&captureStats{Files: paths}, sinks, i, split)
		for _, s := range sinks {
			if p, ok := s.(parallelAware); ok && len(paths) > 1 {
				p.SetParallelFiles(m) // files taken in parallel hold the same packets (see flows, "Copies across files")
			}
		}
	}
	var clock clockWatch
	in := &timedInput{m: m} // untimed frames take a time (see timedInput)
	if n == 1 {
		w := &worker{m: in, fa: fas[0], each: o.Each, progress: newProgress(o.Progress), clock: &clock}
		w.run()
	} else {
		// Worker 0 reads the input and hands every other worker its
		// share (see relay).
		r := newRelay(in, split, newProgress(o.Progress))
		r.clock = &clock
		var wg sync.WaitGroup
		for i := 1; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.work(i, fas[i], shardSinks[i])
			}()
		}
		r.run(fas[0], shardSinks[0])
		wg.Wait()
	}
	// Each worker counted the frames it kept.
	fa := fas[0]
	fa.mergeWorkers(fas[1:])
	for _, p := range m.Problems() {
		fa.st.Problems = append(fa.st.Problems, problemText(p))
		if errors.Is(p, capture.ErrCutOff) {
			fa.st.CutOff = true
		}
	}
	fa.st.Problems = append(fa.st.Problems, clock.notes(paths)...)
	return fa.st, fa.finish()
}

// problemText is how a problem of the input reads in the report: the
// note on data after a gzip stream starts with reports.TrailingDataNote,
// which tells it from the problems that ended a file early.
func problemText(p error) string {
	if errors.Is(p, capture.ErrTrailingData) {
		return reports.TrailingDataNote + p.Error()
	}
	return p.Error()
}

// passGCPercent is the garbage collector's GOGC during an analysis pass.
// The pass's memory is the flows' state, which stays live, and a packet
// allocates nothing once its flow exists: a collection finds little
// garbage (the arrays the flow index and lists outgrow) and rescans every
// flow. Collecting when the heap has grown 5 times over instead of twice
// takes ~10% less CPU time on captures that are mostly new flows and does
// not raise the peak (BENCHMARKS.md).
const passGCPercent = 400

// collectLessDuringPass sets GOGC to passGCPercent, unless the
// environment sets GOGC, and returns what puts it back.
func collectLessDuringPass() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	prev := debug.SetGCPercent(passGCPercent)
	return func() { debug.SetGCPercent(prev) }
}

// passWorkers is the number of goroutines for the pass: one unless it can
// be sharded (and no Each needs every frame).
func passWorkers(o analyzeOptions) int {
	if o.Shard == nil || o.Each != nil {
		return 1
	}
	if o.Workers > 0 {
		return min(o.Workers, maxWorkers)
	}
	return min(runtime.GOMAXPROCS(0), maxWorkers)
}

// maxWorkers bounds the goroutines of a pass: past the number of CPUs more
// only cost hand-offs, and every worker's block of a relay's round shrinks
// as workers are added (at 1,500 workers a pass over 2 M packets took 16
// s, against 1.1 s on one worker and 1.6 s on 256).
const maxWorkers = 256

// worker is the one goroutine of an analysis pass that is not split: it
// reads the input and hands every frame to its frameAnalyzer.
type worker struct {
	m        *timedInput
	fa       *frameAnalyzer
	each     func(rec *capture.Record, file int, p *packet.Packet)
	progress *progress
	clock    *clockWatch
}

func (w *worker) run() {
	var recs [batchFrames]capture.Record
	batch := recs[:]
	if lookAhead == lookAheadNever {
		batch = recs[:1]
	}
	for {
		n, file, err := w.m.NextBatch(batch)
		if err == io.EOF {
			break
		}
		w.clock.see(recs[:n], file)
		w.fa.nanosFit = w.m.m.TimesFitNanos(file)
		w.fa.addBatch(recs[:n], file, w.each)
		w.progress.tick(w.fa.seq)
	}
	w.progress.done()
}

// progress prints a self-overwriting progress line on a terminal when a run
// takes more than a moment.
type progress struct {
	w      io.Writer
	start  time.Time
	shown  bool
	ticked uint64 // frame count at the last tick: the line is updated every 65,536 frames
}

// progressDelay is how long a run goes before the progress line appears.
const progressDelay = 1500 * time.Millisecond

// newProgress returns a progress line on w, or a silent one when w is not a
// terminal (scripts, CI, redirected stderr).
func newProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w, start: time.Now()}
}

func (p *progress) tick(n uint64) {
	if p.w == nil || n>>16 == p.ticked>>16 {
		return
	}
	p.ticked = n
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
