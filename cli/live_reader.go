package cli

import (
	"errors"
	"io"
	"sync/atomic"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// liveSource is a live capture: capture.LiveHandle, or a fake in tests.
type liveSource interface {
	// Next reads the next frame; rec.Data is valid until the next call.
	// It returns capture.ErrLiveTimeout when nothing came within the
	// buffer timeout.
	Next(rec *capture.Record) error
	Stats() (capture.LiveStats, error)
	LinkType() capture.LinkType
	SnapLen() int
	Close() error
}

// Batching between the reader and the analysis. The reader does nothing
// but copy frames out of libpcap's buffer, so that the kernel ring drains
// as fast as it fills; the analysis takes whole batches.
const (
	liveBatches      = 16                     // batches in flight
	liveBatchFrames  = 4096                   // frames per batch, at most
	liveBatchBytes   = 1 << 20                // frame bytes per batch, at most (at least two frames)
	liveBatchAge     = 50 * time.Millisecond  // hand a batch over once its first frame is this old
	liveStatsEvery   = 250 * time.Millisecond // how often the reader reads the drop counters
	liveDrainTimeout = 2 * time.Second        // the longest the reader drains after a stop
)

// liveBatch is frames copied out of the capture, with the capture's
// counters at the time.
type liveBatch struct {
	recs     []capture.Record // Data points into buf
	buf      []byte
	stats    capture.LiveStats
	statsAt  time.Time // when stats were read
	hasStats bool
	err      error // the capture failed; this is the last batch
}

// liveReader reads a liveSource on its own goroutine and hands batches to
// the analysis on full, taking empty ones back on free. It stops after
// count frames (0: no limit), or when asked to: then it drains what the
// kernel had buffered up to that moment (frames stamped after it are left
// out), until the buffer is empty, and closes full.
type liveReader struct {
	src     liveSource
	count   int
	full    chan *liveBatch
	free    chan *liveBatch
	stopAt  atomic.Int64 // Unix nanoseconds of the stop request; 0 while running
	batchSz int          // frame bytes per batch
}

func newLiveReader(src liveSource, count int) *liveReader {
	r := &liveReader{
		src:     src,
		count:   count,
		full:    make(chan *liveBatch, liveBatches),
		free:    make(chan *liveBatch, liveBatches),
		batchSz: max(liveBatchBytes, 2*src.SnapLen()),
	}
	for range liveBatches {
		r.free <- &liveBatch{recs: make([]capture.Record, 0, liveBatchFrames), buf: make([]byte, 0, r.batchSz)}
	}
	return r
}

// stop asks the reader to finish: frames stamped after at are not taken.
// Only the first call counts.
func (r *liveReader) stop(at time.Time) { r.stopAt.CompareAndSwap(0, at.UnixNano()) }

// run reads until the count is reached, a stop has been drained, or the
// capture fails. It must run on one goroutine; it closes full when done.
func (r *liveReader) run() {
	defer close(r.full)
	var (
		b         = r.take()
		n         int       // frames taken
		statsAt   time.Time // when the counters were last read
		stopAt    time.Time // the stop request, once seen
		deadline  time.Time // end of the drain
		quiet     int       // timeouts in a row since the stop
		rec       capture.Record
		firstTime time.Time // capture time of the batch's first frame
	)
	send := func(final bool) {
		if final || time.Since(statsAt) >= liveStatsEvery {
			if s, err := r.src.Stats(); err == nil {
				b.stats, b.hasStats = s, true
			}
			statsAt = time.Now()
			b.statsAt = statsAt
		}
		r.full <- b
		if !final {
			b = r.take()
		}
	}
	for {
		if stopAt.IsZero() {
			if ns := r.stopAt.Load(); ns != 0 {
				stopAt = time.Unix(0, ns)
				deadline = time.Now().Add(liveDrainTimeout)
			}
		} else if time.Now().After(deadline) {
			break
		}
		err := r.src.Next(&rec)
		if errors.Is(err, capture.ErrLiveTimeout) {
			// The kernel had nothing for a whole buffer timeout. After a
			// stop, twice in a row means every block it held has been
			// handed over.
			if !stopAt.IsZero() {
				if quiet++; quiet >= 2 {
					break
				}
			}
			if len(b.recs) > 0 || time.Since(statsAt) >= liveStatsEvery {
				send(false)
			}
			continue
		}
		if errors.Is(err, io.EOF) { // closed under us: nothing more to read
			break
		}
		if err != nil {
			b.err = err
			break
		}
		quiet = 0
		if !stopAt.IsZero() && rec.Timestamp.After(stopAt) {
			break
		}
		if len(b.recs) == cap(b.recs) || len(b.buf)+len(rec.Data) > cap(b.buf) {
			send(false)
		}
		if len(b.recs) == 0 {
			firstTime = rec.Timestamp
		}
		start := len(b.buf)
		b.buf = append(b.buf, rec.Data...)
		rec.Data = b.buf[start:len(b.buf):len(b.buf)]
		b.recs = append(b.recs, rec)
		if n++; r.count > 0 && n >= r.count {
			break
		}
		if rec.Timestamp.Sub(firstTime) >= liveBatchAge {
			send(false)
		}
	}
	send(true)
}

// take returns an empty batch, waiting for the analysis to give one back.
func (r *liveReader) take() *liveBatch {
	b := <-r.free
	b.recs, b.buf, b.hasStats, b.err = b.recs[:0], b.buf[:0], false, nil
	return b
}
