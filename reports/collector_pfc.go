package reports

import (
	"bytes"
	"cmp"
	"slices"
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
// sender (the frame's source MAC: the port asking its link partner to
// pause) and priority: the priority is paused from an XOFF until the timer
// runs out or an XON of the same sender arrives, and a refresh that comes
// before the timer ran out extends the same pause.
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
	// timers are the pause timers per sender (the frame's source MAC)
	// and priority: a PFC frame pauses only the link it is sent on, so
	// one port's XOFF does not extend another's pause. Replayed as one
	// timer per priority, two ports pausing by turns read as a storm
	// neither had.
	timers map[pfcSender]*pfcTimer
}

// pfcSender is one port's pauses of one priority.
type pfcSender struct {
	mac  [6]byte
	prio uint8
}

// pfcPrio is what was seen of one priority, over every sender.
type pfcPrio struct {
	out     PFCPriority
	pausedT time.Duration // paused time within the capture of the sender that paused longest
	longest time.Duration // longest continuous pause of any sender, storm or not
	first   flows.FrameRef
	last    flows.FrameRef
	senders int     // distinct senders of PFC frames for this priority
	most    [6]byte // the sender with pausedT
}

// pfcTimer is the replayed pause timer of one sender and priority.
type pfcTimer struct {
	paused   bool
	runStart time.Time     // start of the current continuous pause
	until    time.Time     // when the current pause runs out
	pausedT  time.Duration // paused time within the capture
}

func (s *pfcState) add(f *packet.PFCFrame, at *flows.FrameRef) {
	if f.Opcode == packet.MACControlPause {
		s.pause++
		return
	}
	s.frames++
	for i := range s.prio {
		if f.ClassEnable&(1<<i) != 0 {
			s.prio[i].add(s.timer(f.Src, i), f.Quanta[i], at)
		}
	}
}

// timer returns the timer of sender mac for priority i, new or not.
func (s *pfcState) timer(mac [6]byte, i int) *pfcTimer {
	k := pfcSender{mac, uint8(i)}
	if t := s.timers[k]; t != nil {
		return t
	}
	if s.timers == nil {
		s.timers = map[pfcSender]*pfcTimer{}
	}
	t := &pfcTimer{}
	s.timers[k] = t
	s.prio[i].senders++
	return t
}

func (p *pfcPrio) add(tm *pfcTimer, q uint16, at *flows.FrameRef) {
	t := at.Time
	if p.out.Frames == 0 {
		p.first = *at
		p.out.First = &p.first
	}
	p.last = *at
	p.out.Last = &p.last
	p.out.Frames++
	if tm.paused && t.After(tm.until) {
		p.end(tm, tm.until, tm.until) // ran out before this frame
	}
	if q == 0 {
		p.out.XON++
		if tm.paused {
			p.end(tm, t, t)
		}
		return
	}
	p.out.XOFF++
	p.out.PauseQuanta += uint64(q)
	if !tm.paused {
		tm.paused, tm.runStart = true, t
	}
	tm.until = t.Add(pauseDuration(q))
}

// end closes tm's current continuous pause at t; the paused time counts
// only up to clip (the end of the capture, for a pause still running).
func (p *pfcPrio) end(tm *pfcTimer, t, clip time.Time) {
	d := t.Sub(tm.runStart)
	tm.paused = false
	if clip.After(t) {
		clip = t
	}
	tm.pausedT += max(clip.Sub(tm.runStart), 0)
	p.longest = max(p.longest, d)
	if d > PFCStormDuration {
		p.out.Storms++
		p.out.LongestStorm = max(p.out.LongestStorm, d)
	}
}

// finish lets every running pause run out: it counts whole for storms,
// and up to last, the end of the capture, for the paused time. Each
// priority's paused time is then that of the sender that paused it
// longest (ties: the lower MAC address, so that any order of the senders
// gives the same report).
func (s *pfcState) finish(last time.Time) {
	keys := make([]pfcSender, 0, len(s.timers))
	for k := range s.timers {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b pfcSender) int {
		if c := cmp.Compare(a.prio, b.prio); c != 0 {
			return c
		}
		return bytes.Compare(a.mac[:], b.mac[:])
	})
	for _, k := range keys {
		tm, p := s.timers[k], &s.prio[k.prio]
		if tm.paused {
			p.end(tm, tm.until, last)
		}
		if tm.pausedT > p.pausedT || p.most == ([6]byte{}) && p.pausedT == 0 {
			p.pausedT, p.most = tm.pausedT, k.mac
		}
	}
}
