package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/topology"
)

// liveSession is one live capture being analysed: the frames go, in the
// order they were captured, to the -w files and through the same
// per-frame step as an offline pass (frameAnalyzer), so the report at the
// end equals the offline report of the files.
type liveSession struct {
	opts   *LiveOptions
	src    liveSource
	reader *liveReader
	writer *capture.RotatingWriter // nil without -w
	topo   *topology.Topology
	cfg    reports.Config

	table *flows.Table
	coll  *reports.Collector
	st    *captureStats
	fa    *frameAnalyzer
	clock clockWatch // the capture's clock stepping back, as analyze notes it
	link  linkWatch  // the interface going down and up

	stats      capture.LiveStats // the capture's latest counters
	bytes      uint64            // wire bytes of the frames, for the rate
	captureErr error             // the capture failed and ended
	writeErr   error             // a -w file could not be written; capture stopped

	start time.Time
	view  liveViewState
}

func newLiveSession(opts *LiveOptions, src liveSource, w *capture.RotatingWriter, topo *topology.Topology) *liveSession {
	cfg := opts.Report.config()
	table := flows.NewTable(flows.Config{})
	coll := reports.NewCollector(table, cfg)
	st := &captureStats{}
	return &liveSession{
		opts: opts, src: src, writer: w, topo: topo, cfg: cfg,
		table: table, coll: coll, st: st,
		fa:     newFrameAnalyzer(st, []packetSink{coll}),
		reader: newLiveReader(src, opts.Count),
	}
}

// run captures until the count, the duration, the context or a failure
// ends it, drawing the live view every interval, and returns once every
// frame the capture took has been analysed and written.
func (s *liveSession) run(ctx context.Context, screen *liveScreen) {
	s.start = time.Now()
	go s.reader.run()
	if s.opts.started != nil {
		s.opts.started()
	}
	var tick, limit <-chan time.Time
	if s.opts.Interval > 0 {
		t := time.NewTicker(s.opts.Interval)
		defer t.Stop()
		tick = t.C
	}
	if s.opts.Duration > 0 {
		t := time.NewTimer(s.opts.Duration)
		defer t.Stop()
		limit = t.C
	}
	done := ctx.Done()
	for {
		select {
		case b, ok := <-s.reader.full:
			if !ok {
				return
			}
			s.consume(b)
			s.reader.free <- b
		case now := <-tick:
			screen.draw(s.snapshot(now))
		case <-done:
			s.reader.stop(time.Now())
			done, limit = nil, nil
		case <-limit:
			s.reader.stop(time.Now())
			done, limit = nil, nil
		}
	}
}

// consume writes and analyses one batch. Once a -w file cannot be
// written, the capture stops and no later frame is analysed either.
func (s *liveSession) consume(b *liveBatch) {
	for i := range b.recs {
		if s.writeErr != nil {
			break
		}
		rec := &b.recs[i]
		file := 0
		if s.writer != nil {
			f, n, err := s.writer.WritePacket(rec.Timestamp, rec.Data, rec.OrigLen)
			if err != nil {
				s.writeErr = err
				s.reader.stop(time.Now())
				break
			}
			file, rec.Number = f, n
		}
		s.clock.see(b.recs[i:i+1], file)
		s.bytes += uint64(rec.OrigLen)
		s.fa.add(rec, file)
	}
	if s.writer != nil && s.writeErr == nil && len(b.recs) > 0 {
		if err := s.writer.Flush(); err != nil {
			s.writeErr = err
			s.reader.stop(time.Now())
		}
	}
	if b.hasStats {
		s.stats = b.stats
		s.link.see(b.stats.Down, b.statsAt)
	}
	if b.err != nil {
		s.captureErr = b.err
	}
}

// finish closes the capture and the files and builds the report.
func (s *liveSession) finish() *reports.Report {
	s.src.Close()
	st := s.st
	if s.writer != nil {
		if err := s.writer.Close(); err != nil && s.writeErr == nil {
			s.writeErr = err
		}
		st.Files = s.writer.Files()
	} else {
		st.Files = []string{"live:" + s.opts.Interface}
	}
	if s.captureErr != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("the capture stopped early: %v", s.captureErr))
	}
	if s.writeErr != nil {
		st.Problems = append(st.Problems, fmt.Sprintf("writing %s: %v; the capture stopped there", s.opts.Write, s.writeErr))
	}
	st.Problems = append(st.Problems, s.clock.notes(st.Files)...)
	st.Problems = append(st.Problems, s.link.notes(s.opts.Interface, time.Now())...)
	if err := s.fa.finish(); err != nil {
		st.Problems = append(st.Problems, err.Error())
	}
	s.coll.Finish()
	return reports.Run(s.input(), "rocedump "+Version)
}

// input is the report input as it stands, with the drop counters.
func (s *liveSession) input() *reports.Input {
	ci := s.st.info()
	ci.Drops = &reports.Drops{Kernel: s.stats.KernelDrops, Interface: s.stats.InterfaceDrops}
	return &reports.Input{
		Capture:  ci,
		Flows:    s.table.Flows(),
		Collect:  s.coll,
		Topology: s.topo,
		Config:   s.cfg,
	}
}
