package cli

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/flows"
)

// spanOf is the capture's span as the pass took it frame by frame before
// it kept the latest time as an integer (frameAnalyzer.noteSpan): the
// earliest frame with a time, and the latest, compared by
// flows.TimeNanos.
func spanOf(recs []capture.Record) (first, last time.Time) {
	firstNs, lastNs := int64(math.MinInt64), int64(math.MinInt64)
	for i := range recs {
		ts := recs[i].Timestamp
		ns := flows.TimeNanos(ts, recs[i].TimeNanos)
		if (firstNs == math.MinInt64 && first.IsZero() || flows.Earlier(ns, ts, firstNs, first)) && !ts.IsZero() {
			first, firstNs = ts, ns
		}
		if flows.Later(ns, ts, lastNs, last) {
			last, lastNs = ts, ns
		}
	}
	return first, last
}

// spanRecord is a frame of time ts as the readers give it.
func spanRecord(ts time.Time) capture.Record {
	var ns int64
	if !ts.IsZero() {
		ns = ts.UnixNano()
	}
	return capture.Record{Timestamp: ts, TimeNanos: ns, LinkType: capture.LinkTypeEthernet, Data: make([]byte, 20), Number: 1}
}

// TestCaptureSpanAsFrameByFrame checks the capture's first and last time
// against spanOf over sequences of frames in and out of order, with equal
// times, frames without a time, and times flows.TimeNanos cannot hold,
// read at the end and part way (as live's view reads them).
func TestCaptureSpanAsFrameByFrame(t *testing.T) {
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	times := []func(r *rand.Rand) time.Time{
		func(r *rand.Rand) time.Time { return base.Add(time.Duration(r.IntN(1000)) * time.Microsecond) },
		func(r *rand.Rand) time.Time { return base.Add(-time.Duration(r.IntN(1000)) * time.Microsecond) },
		func(r *rand.Rand) time.Time { return base },
		func(r *rand.Rand) time.Time { return time.Time{} },
		func(r *rand.Rand) time.Time { return time.Unix(0, 0).UTC() },
		func(r *rand.Rand) time.Time { return time.Date(1500+r.IntN(2), 1, 1, 0, 0, 0, 0, time.UTC) },
		func(r *rand.Rand) time.Time { return time.Date(2400+r.IntN(2), 1, 1, 0, 0, 0, 0, time.UTC) },
	}
	r := rand.New(rand.NewPCG(1, 2))
	for seq := range 2000 {
		n := 1 + r.IntN(12)
		kinds := 1 + r.IntN(len(times))
		recs := make([]capture.Record, n)
		for i := range recs {
			if i > 0 && r.IntN(3) == 0 {
				// Mostly in order, as captures are.
				recs[i] = spanRecord(recs[i-1].Timestamp.Add(time.Duration(r.IntN(3)) * time.Microsecond))
				continue
			}
			recs[i] = spanRecord(times[r.IntN(kinds)](r))
		}
		st := &captureStats{}
		a := newFrameAnalyzer(st, nil)
		for i := range recs {
			a.add(&recs[i], 0)
			if r.IntN(4) == 0 || i == n-1 {
				wantFirst, wantLast := spanOf(recs[:i+1])
				ci := st.info()
				if !ci.First.Equal(wantFirst) || ci.First.IsZero() != wantFirst.IsZero() ||
					!ci.Last.Equal(wantLast) || ci.Last.IsZero() != wantLast.IsZero() {
					t.Fatalf("sequence %d, after frame %d of %v: first %v, last %v; want %v, %v",
						seq, i, stamps(recs), ci.First, ci.Last, wantFirst, wantLast)
				}
			}
		}
	}
}

func stamps(recs []capture.Record) []time.Time {
	ts := make([]time.Time, len(recs))
	for i := range recs {
		ts[i] = recs[i].Timestamp
	}
	return ts
}
