package reports

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
)

// earlyInput is one RC connection split by direction: 40 RDMA WRITEs
// 10 µs apart in requests.pcap, an ACK of every fourth 8 µs after it in
// acks.pcap, whose clock is skew off; merged in time order, as the CLI
// merges files.
func earlyInput(skew time.Duration) *Input {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type ev struct {
		at   time.Duration
		file int
		ack  bool
		psn  uint32
	}
	var evs []ev
	for i := range 40 {
		at := time.Duration(i) * 10 * time.Microsecond
		evs = append(evs, ev{at: at, psn: uint32(i)})
		if i%4 == 3 {
			evs = append(evs, ev{at: at + 8*time.Microsecond + skew, file: 1, ack: true, psn: uint32(i)})
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	tab := flows.NewTable(flows.Config{})
	frames := [2]int{}
	for _, e := range evs {
		p := roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, e.psn, 26, 2)
		if e.ack {
			p = roce("10.0.0.2", "10.0.0.1", 0x100, bth.Opcode(0x11), e.psn, 26, 2)
			p.BTH.AETH.Syndrome = 0x1f
		}
		p.BTH.Ext = p.BTH.Opcode.Headers()
		frames[e.file]++
		tab.Add(p, flows.FrameRef{File: e.file, Frame: frames[e.file], Time: t0.Add(e.at)})
	}
	tab.Finish()
	in := &Input{Config: Config{}.WithDefaults(), Flows: tab.Flows()}
	in.Capture.Files = []string{"requests.pcap", "acks.pcap"}
	in.Capture.Packets, in.Capture.RoCE = uint64(len(evs)), uint64(len(evs))
	return in
}

// TestEarlyResponsesFinding: a capture split by direction, the ACKs'
// file's clock 20 µs behind the requests' (its times 20 µs early), says so
// in capture_health, naming the two files and how far behind at least, and
// says to shift the ACKs' file forward; in the wire's order (or the ACKs'
// clock ahead) it says nothing.
func TestEarlyResponsesFinding(t *testing.T) {
	for _, skew := range []time.Duration{0, 5 * time.Microsecond, -20 * time.Microsecond} {
		var got []Finding
		for _, f := range CaptureHealth(earlyInput(skew)) {
			if _, ok := f.Evidence.Counts["early_responses"]; ok {
				got = append(got, f)
			}
		}
		if skew >= 0 {
			if len(got) != 0 {
				t.Errorf("skew %v: %q", skew, got[0].Title)
			}
			continue
		}
		if len(got) != 1 {
			t.Fatalf("skew %v: %d early-response findings, want 1", skew, len(got))
		}
		f := got[0]
		// Each ACK comes 12 µs before the WRITE it acknowledges (8 µs
		// after it, less 20 µs).
		want := "10 responses captured before the requests they answer: the clock of acks.pcap runs at least 12.0 µs behind requests.pcap's"
		if f.Title != want || f.Severity != Warning || f.Kind != KindCaptureHealth {
			t.Errorf("got %s %s %q, want warning %q", f.Kind, f.Severity, f.Title, want)
		}
		if c := f.Evidence.Counts; c["early_responses"] != 10 || c["flows"] != 1 || c["lead_s"] != 12e-6 {
			t.Errorf("counts %v", c)
		}
		if !strings.Contains(f.Next, "forward by at least the offset (editcap -t SECONDS") {
			t.Errorf("next %q: the early file's times must go forward", f.Next)
		}
		if len(f.Evidence.Details) != 1 || !strings.Contains(f.Evidence.Details[0], "acks.pcap before requests in requests.pcap: 10, by up to 12.0 µs") {
			t.Errorf("details %q", f.Evidence.Details)
		}
	}
}
