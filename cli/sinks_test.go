package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// seenSink notes the frames it is given, as "name:frame number".
type seenSink struct {
	name string
	seen *[]string
}

func (s seenSink) AddFrame(_ *packet.Packet, at *flows.FrameAt) {
	*s.seen = append(*s.seen, s.name+":"+string(rune('0'+at.Frame)))
}

// TestEverySinkGetsEveryFrame checks that a frameAnalyzer gives each frame
// it keeps to each of its sinks, in their order, however many there are
// (it calls a single sink directly and several through a sinkList), and
// that one without a sink takes frames too.
func TestEverySinkGetsEveryFrame(t *testing.T) {
	base := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for n := range 4 {
		var seen []string
		var sinks []packetSink
		var want []string
		for i := range n {
			sinks = append(sinks, seenSink{name: string(rune('a' + i)), seen: &seen})
		}
		a := newFrameAnalyzer(&captureStats{}, sinks)
		for frame := 1; frame <= 3; frame++ {
			rec := spanRecord(base.Add(time.Duration(frame) * time.Microsecond))
			rec.Number = frame
			if a.add(&rec, 0) == nil {
				t.Fatalf("%d sinks: frame %d not kept", n, frame)
			}
			for i := range n {
				want = append(want, string(rune('a'+i))+":"+string(rune('0'+frame)))
			}
		}
		if !slices.Equal(seen, want) {
			t.Errorf("%d sinks: the sinks saw %v; want %v", n, seen, want)
		}
	}
}
