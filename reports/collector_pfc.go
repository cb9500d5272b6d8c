package reports

import (
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// PFC pause time and storms.
//
// A PFC frame (IEEE 802.1Qbb) asks the link partner to stop sending on each
// priority whose class-enable bit is set, for that priority's pause time in
// quanta of 512 bit times; a time of 0 (XON) resumes it at once, and a new
// frame replaces the running timer. The Collector replays that timer per
// priority: the priority is paused from an XOFF until the timer runs out
// or an XON arrives, and a refresh that comes before the timer ran out
// extends the same pause.
//
// A quantum is a time only at a link speed, which the capture does not
// carry: PFCLinkGbps is assumed (the 400 Gb/s of a DGX H100 compute link).
// On a slower link the real pause is longer, so the assumption can only
// split a pause that was in fact continuous; it never invents one.
//
// A pause storm is one such continuous pause that lasts longer than
// PFCStormDuration: XOFF frames on one priority, each before the previous
// one's pause ran out, with no XON between them, for more than 1 ms. A
// healthy lossless fabric pauses a priority for microseconds at a time
// (one XOFF of 65535 quanta is 84 µs at 400 Gb/s); a priority held for a
// millisecond or more is a receiver that cannot drain (a stuck or slow NIC,
// a PFC deadlock) and spreads head-of-line blocking upstream.
const (
	PFCLinkGbps      = 400
	PFCStormDuration = time.Millisecond
)

// pauseDuration is the time q pause quanta last at PFCLinkGbps.
func pauseDuration(q uint16) time.Duration {
	ps := uint64(q) * 512 * 1000 / PFCLinkGbps // picoseconds
	return time.Duration((ps + 500) / 1000)
}

type pfcState struct {
	prio   [8]pfcPrio
	frames uint64 // PFC frames (a frame may pause several priorities)
	pause  uint64 // 802.3x PAUSE frames
}

// pfcPrio is the replayed pause timer of one priority.
type pfcPrio struct {
	out      PFCPriority
	paused   bool
	runStart time.Time     // start of the current continuous pause
	until    time.Time     // when the current pause runs out
	pausedT  time.Duration // paused time within the capture
	longest  time.Duration // longest continuous pause, storm or not
	first    flows.FrameRef
	last     flows.FrameRef
}

func (s *pfcState) add(f *packet.PFCFrame, at *flows.FrameRef) {
	if f.Opcode == packet.MACControlPause {
		s.pause++
		return
	}
	s.frames++
	for i := range s.prio {
		if f.ClassEnable&(1<<i) != 0 {
			s.prio[i].add(f.Quanta[i], at)
		}
	}
}

func (p *pfcPrio) add(q uint16, at *flows.FrameRef) {
	t := at.Time
	if p.out.Frames == 0 {
		p.first = *at
		p.out.First = &p.first
	}
	p.last = *at
	p.out.Last = &p.last
	p.out.Frames++
	if p.paused && t.After(p.until) {
		p.end(p.until, p.until) // ran out before this frame
	}
	if q == 0 {
		p.out.XON++
		if p.paused {
			p.end(t, t)
		}
		return
	}
	p.out.XOFF++
	p.out.PauseQuanta += uint64(q)
	if !p.paused {
		p.paused, p.runStart = true, t
	}
	p.until = t.Add(pauseDuration(q))
}

// end closes the current continuous pause at t; the paused time counts
// only up to clip (the end of the capture, for a pause still running).
func (p *pfcPrio) end(t, clip time.Time) {
	d := t.Sub(p.runStart)
	p.paused = false
	if clip.After(t) {
		clip = t
	}
	p.pausedT += max(clip.Sub(p.runStart), 0)
	p.longest = max(p.longest, d)
	if d > PFCStormDuration {
		p.out.Storms++
		p.out.LongestStorm = max(p.out.LongestStorm, d)
	}
}

// finish lets every running pause run out: it counts whole for storms,
// and up to last, the end of the capture, for the paused time.
func (s *pfcState) finish(last time.Time) {
	for i := range s.prio {
		if p := &s.prio[i]; p.paused {
			p.end(p.until, last)
		}
	}
}
