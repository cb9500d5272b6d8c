package reports

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// TestPFCTimersPerSender: a PFC frame pauses only the link it is sent on,
// so the pauses of two ports are replayed on two timers. Two ports each
// pausing priority 3 for 84 µs of every 160 µs, by turns, are no storm;
// replayed on one timer per priority they read as one pause of 2.4 ms
// and a critical "PFC pause storm" finding neither link had. The same
// frames from one port are one.
func TestPFCTimersPerSender(t *testing.T) {
	t0 := time.Date(2026, 11, 5, 3, 0, 0, 0, time.UTC)
	a := [6]byte{2, 0, 0, 0, 0x0f, 1}
	b := [6]byte{2, 0, 0, 0, 0x0f, 2}
	run := func(second [6]byte) *pfcState {
		var s pfcState
		for i := range 30 {
			src := a
			if i%2 == 1 {
				src = second
			}
			f := packet.PFCFrame{Opcode: packet.MACControlPFC, ClassEnable: 1 << 3, Src: src}
			f.Quanta[3] = 65535 // 83.9 µs at 400 Gb/s
			at := flows.FrameRef{Frame: i + 1, Time: t0.Add(time.Duration(i) * 80 * time.Microsecond)}
			s.add(&f, &at)
		}
		s.finish(t0.Add(30 * 80 * time.Microsecond))
		return &s
	}

	two := run(b)
	p := &two.prio[3]
	if p.out.Storms != 0 || p.senders != 2 {
		t.Errorf("two senders by turns: %d storms, %d senders; want 0 storms, 2 senders", p.out.Storms, p.senders)
	}
	if p.longest > 84*time.Microsecond {
		t.Errorf("two senders by turns: longest pause %v, want one XOFF's 83.9 µs", p.longest)
	}
	if p.most != a || p.pausedT < 1200*time.Microsecond || p.pausedT > 1300*time.Microsecond {
		t.Errorf("two senders: most paused %x for %v, want %x for 15 × 83.9 µs", p.most, p.pausedT, a)
	}

	one := run(a)
	p = &one.prio[3]
	if p.out.Storms != 1 || p.senders != 1 || p.longest < 2*time.Millisecond {
		t.Errorf("one sender: %d storms, %d senders, longest %v; want 1 storm of about 2.4 ms from 1 sender", p.out.Storms, p.senders, p.longest)
	}
}
