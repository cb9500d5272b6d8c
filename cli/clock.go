package cli

import (
	"fmt"
	"math"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// clockBackTolerance is how far a frame's time may lie before a frame read
// earlier without a note: the small reorderings of a capture taken on
// several queues are tolerated by every analysis (reports.Collector); a
// step back beyond it (a clock set back, files concatenated out of order)
// makes durations, rates, waits and the timeline wrong where they span it.
const clockBackTolerance = time.Millisecond

// clockWatch notes, for the capture problems, the frames whose time lies
// more than clockBackTolerance before the latest frame read before them
// (the input is read in time order, so only a file whose own clock went
// back does this). Without the note, the report would show what such a
// step does to its numbers (a flow whose last packet is earlier than its
// first, a resend that came "0 µs" after its NAK) with nothing saying why.
type clockWatch struct {
	started bool
	latest  time.Time // the latest frame's time, when latestN cannot hold it (see latestTime)
	latestN int64     // the latest frame's time as flows.TimeNanos
	back    map[int]*clockStep
}

// clockStep is what one file's clock did: frames read after a later one,
// and the largest step back.
type clockStep struct {
	frames uint64
	most   time.Duration
}

// see accounts the records of a batch of input file number file. It runs
// on every frame, so the common case, a frame at most an hour after the
// latest, is decided by Record.TimeNanos alone (a few instructions); the
// rest go to seeOther. A TimeNanos that UnixNano wrapped (a time outside
// 1678-2262, which only a pcapng can give) is never the latest's plus
// less than an hour but by a coincidence of garbage timestamps.
func (c *clockWatch) see(recs []capture.Record, file int) {
	for {
		n := 0
		if c.started {
			n = c.inOrder(recs)
		}
		if n == len(recs) {
			return
		}
		c.seeOther(&recs[n], file)
		recs = recs[n+1:]
	}
}

// inOrder is see for the leading records of recs that are each at most an
// hour after the latest (then the latest): it returns how many there are.
// A loop of its own, with nothing else live, is ~7 instructions a frame
// cheaper than see's loop around seeOther's call (BENCHMARKS.md, session
// 22).
func (c *clockWatch) inOrder(recs []capture.Record) int {
	latestN := c.latestN
	for i := range recs {
		// d from 0 to an hour; latest is then time.Unix(0, latestN) (see
		// latestTime).
		ns := recs[i].TimeNanos
		if uint64(ns-latestN) >= uint64(time.Hour) {
			c.latestN = latestN
			return i
		}
		latestN = ns
	}
	c.latestN = latestN
	return len(recs)
}

// seeOther is see for a frame that is not at most an hour after the
// latest: the first, one without a time, one a long way ahead, and one
// earlier than the latest, a step back beyond the tolerance or not.
func (c *clockWatch) seeOther(rec *capture.Record, file int) {
	if rec.Timestamp.IsZero() {
		return // a pcapng Simple Packet Block: no time at all
	}
	ns := flows.TimeNanos(rec.Timestamp, rec.TimeNanos)
	latest := c.latestTime()
	if !c.started || flows.Later(ns, rec.Timestamp, c.latestN, latest) {
		c.started, c.latest, c.latestN = true, rec.Timestamp, ns
		return
	}
	if ns > c.latestN-int64(clockBackTolerance) {
		return // equal, or a small reordering
	}
	if d := latest.Sub(rec.Timestamp); d > clockBackTolerance {
		c.step(file, d)
	}
}

// latestTime is the latest frame's time: latest where TimeNanos could not
// hold it (latestN is then math.MinInt64 or math.MaxInt64), else the time
// of latestN, which see updates alone.
func (c *clockWatch) latestTime() time.Time {
	if c.latestN == math.MinInt64 || c.latestN == math.MaxInt64 {
		return c.latest
	}
	return time.Unix(0, c.latestN)
}

func (c *clockWatch) step(file int, d time.Duration) {
	if c.back == nil {
		c.back = map[int]*clockStep{}
	}
	s := c.back[file]
	if s == nil {
		s = &clockStep{}
		c.back[file] = s
	}
	s.frames++
	s.most = max(s.most, d)
}

// notes returns one problem per file whose clock went back, in the order
// of files.
func (c *clockWatch) notes(files []string) []string {
	var out []string
	for i, name := range files {
		s := c.back[i]
		if s == nil {
			continue
		}
		out = append(out, fmt.Sprintf("%s%s: %s earlier than a frame before them, by up to %s; "+
			"durations, rates, waits and timeline bins that span the step are not reliable",
			reports.ClockBackNote, name, frameCount(s.frames), flowtable.HumanDuration(s.most)))
	}
	return out
}

// frameCount is "1 frame is" or "N frames are".
func frameCount(n uint64) string {
	if n == 1 {
		return "1 frame is"
	}
	return fmt.Sprintf("%d frames are", n)
}
