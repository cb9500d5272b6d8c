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

// fileEvent is a packet of one RC connection from 10.0.0.1 (QP 0x200)
// to 10.0.0.2 (QP 0x100) in a capture of two files: a WRITE at psn, or
// its ACK (ack), in file file at time at after the capture's start.
type fileEvent struct {
	at   time.Duration
	file int
	ack  bool
	psn  uint32
}

// twoFileInput merges evs in time order, as the CLI merges files, into a
// flow table told par (nil: none) of the files' overlap, and returns its
// flows as the Input of a capture of the two files named.
func twoFileInput(evs []fileEvent, par flows.ParallelFiles, file0, file1 string) *Input {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	slices.SortStableFunc(evs, func(a, b fileEvent) int { return cmp.Compare(a.at, b.at) })
	tab := flows.NewTable(flows.Config{})
	if par != nil {
		tab.SetParallelFiles(par)
	}
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
	in.Capture.Files = []string{file0, file1}
	in.Capture.Packets, in.Capture.RoCE = uint64(len(evs)), uint64(len(evs))
	return in
}

// allParallel says every two files overlap in time.
type allParallel struct{}

func (allParallel) Parallel(a, b int) bool { return a != b }

// parallelInput is one connection captured at both hosts: every WRITE
// and ACK in file 0 and again in file 1, whose clock is offset ahead.
func parallelInput(offset time.Duration) *Input {
	var evs []fileEvent
	for i := range 40 {
		at := time.Duration(i) * 10 * time.Microsecond
		for file, d := range []time.Duration{0, offset} {
			evs = append(evs, fileEvent{at: at + d, file: file, psn: uint32(i)}, fileEvent{at: at + d + 4*time.Microsecond, file: file, ack: true, psn: uint32(i)})
		}
	}
	return twoFileInput(evs, allParallel{}, "node0.pcap", "node1.pcap")
}

// TestParallelFilesFinding: two captures of one connection, the second's
// clock 700 µs behind, count each packet once (no resend, no timeout, no
// mirror copy) and capture_health says the files hold the same packets,
// with the offset their copies show.
func TestParallelFilesFinding(t *testing.T) {
	in := parallelInput(700 * time.Microsecond)
	r := Run(in, "test")
	var found *Finding
	for i, f := range r.Findings {
		switch {
		case strings.Contains(f.Title, "same packets"):
			found = &r.Findings[i]
		case f.Kind == KindRetransmission || strings.Contains(f.Title, "mirror"):
			t.Errorf("finding %q", f.Title)
		}
	}
	if found == nil {
		t.Fatal("no finding says the files hold the same packets")
	}
	c := found.Evidence.Counts
	if c["file_copies"] != 80 || c["flows"] != 2 {
		t.Errorf("counts %v, want 80 file copies on 2 flows", c)
	}
	if lo, hi := c["offset_min_s"], c["offset_max_s"]; lo != 700e-6 || hi != 700e-6 {
		t.Errorf("offset %v to %v s, want 700 µs", lo, hi)
	}
	for _, f := range in.Flows {
		if f.Packets != 40 || f.Requests.Retransmitted != 0 {
			t.Errorf("flow %d: %d packets, %d resent; want 40, 0", f.ID, f.Packets, f.Requests.Retransmitted)
		}
	}
}

// TestParallelFilesClockOffset: one connection captured at both hosts,
// file 1's clock 30 µs ahead of file 0's, the latency 10 µs or 50 µs by
// turns: a WRITE from 10.0.0.1 (file 0's host) is in file 1 40 or 80 µs
// later, its ACK from 10.0.0.2 in file 0 20 µs later or 20 µs earlier. By
// capture order both files captured a packet 20 µs after the other; by the
// packets' way the offset is 30 µs, which the finding says (it said
// about 0).
func TestParallelFilesClockOffset(t *testing.T) {
	const off = 30 * time.Microsecond
	var evs []fileEvent
	for i := range 40 {
		lat := 10 * time.Microsecond
		if i%2 == 1 {
			lat = 50 * time.Microsecond
		}
		at := time.Duration(i) * 200 * time.Microsecond
		ack := at + 80*time.Microsecond // sent by 10.0.0.2
		evs = append(evs,
			fileEvent{at: at, file: 0, psn: uint32(i)}, fileEvent{at: at + lat + off, file: 1, psn: uint32(i)},
			fileEvent{at: ack + off, file: 1, ack: true, psn: uint32(i)}, fileEvent{at: ack + lat, file: 0, ack: true, psn: uint32(i)})
	}
	in := twoFileInput(evs, allParallel{}, "node0.pcap", "node1.pcap")
	var found *Finding
	for _, f := range CaptureHealth(in) {
		if _, ok := f.Evidence.Counts["file_copies"]; ok {
			found = &f
		}
	}
	if found == nil {
		t.Fatal("no finding says the files hold the same packets")
	}
	if c := found.Evidence.Counts; c["file_copies"] != 80 {
		t.Errorf("counts %v, want 80 file copies", c)
	}
	want := "the clock of node1.pcap is about 30.0 µs ahead of node0.pcap's"
	if !slices.ContainsFunc(found.Evidence.Details, func(s string) bool { return strings.HasPrefix(s, want) }) {
		t.Errorf("details %q, want a line %q", found.Evidence.Details, want)
	}
}

// TestParallelFilesDropTimeline: a WRITE one of two parallel files lacks
// (its host's capture dropped it), the file ahead in capture order: the
// other file's packet later takes back the PSN gap the first showed
// (flows: a packet one parallel file lacked is no gap), and the
// timeline's PSN gaps stay counts, none wrapped round below zero.
func TestParallelFilesDropTimeline(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	c.SetParallelFiles(allParallel{})
	type ev struct {
		at   time.Duration
		file int
		psn  uint32
	}
	var evs []ev
	for i := range uint32(10) {
		at := time.Duration(i) * 10 * time.Microsecond
		if i != 4 {
			evs = append(evs, ev{at, 0, i})
		}
		evs = append(evs, ev{at + 700*time.Microsecond, 1, i})
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	for k, e := range evs {
		p := roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, e.psn, 26, 2)
		p.BTH.Ext = p.BTH.Opcode.Headers()
		c.Add(p, flows.FrameRef{File: e.file, Frame: k + 1, Time: t0.Add(e.at)})
	}
	c.Finish()
	f := c.Table.Flows()[0]
	if f.Requests.PSNGaps != 0 || f.Requests.OutOfOrder != 0 || f.Packets != 10 {
		t.Fatalf("%d packets, %d gaps, %d out of order; want 10, 0, 0", f.Packets, f.Requests.PSNGaps, f.Requests.OutOfOrder)
	}
	var sum float64
	for _, v := range c.Timeline().PSNGaps.Bins {
		if v < 0 || v > 1 {
			t.Errorf("a bin of %v PSN gaps", v)
		}
		sum += v
	}
	if sum > 1 {
		t.Errorf("%v PSN gaps in the timeline, want at most the one the leading file showed", sum)
	}
}
