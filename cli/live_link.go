package cli

import (
	"fmt"
	"time"

	"github.com/rocedump/rocedump/reports"
)

// linkWatch follows the capture interface going down and coming back, as
// the counters read every liveStatsEvery see it (capture.LiveStats.Down).
// libpcap reads on across an interface taken down and up again without a
// word: the capture then simply sees nothing, and no drop counter says so.
type linkWatch struct {
	since   time.Time // first seen down; zero while up
	periods []linkDown
}

// linkDown is one time the interface was down; to is zero if it still was
// when the capture ended.
type linkDown struct{ from, to time.Time }

// see notes the interface's state as read at at.
func (w *linkWatch) see(down bool, at time.Time) {
	switch {
	case down && w.since.IsZero():
		w.since = at
	case !down && !w.since.IsZero():
		w.periods = append(w.periods, linkDown{w.since, at})
		w.since = time.Time{}
	}
}

// down says whether the interface was down when last read.
func (w *linkWatch) down() bool { return !w.since.IsZero() }

// notes are the capture problems (reports.LinkDownNote) for each time the
// interface was down, the capture having ended at end. The times are those
// of the counter reads, so within liveStatsEvery of the real ones.
func (w *linkWatch) notes(iface string, end time.Time) []string {
	periods := w.periods
	if !w.since.IsZero() {
		periods = append(periods[:len(periods):len(periods)], linkDown{from: w.since})
	}
	var out []string
	for _, p := range periods {
		from := p.from.UTC().Format("15:04:05.000")
		if p.to.IsZero() {
			out = append(out, fmt.Sprintf("%s%s went down at %s UTC and was still down when the capture ended, %s later: "+
				"nothing was captured after it", reports.LinkDownNote, iface, from, liveDownFor(end.Sub(p.from))))
			continue
		}
		out = append(out, fmt.Sprintf("%s%s was down for %s, from %s to %s UTC: nothing was captured then",
			reports.LinkDownNote, iface, liveDownFor(p.to.Sub(p.from)), from, p.to.UTC().Format("15:04:05.000")))
	}
	return out
}

// liveDownFor formats how long the interface was down, to the tenth of a
// second the counter reads allow.
func liveDownFor(d time.Duration) string {
	return fmt.Sprintf("%.1f s", max(d, 0).Seconds())
}
