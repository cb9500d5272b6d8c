package reports

import (
	"cmp"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// rotatedFiles says no two files overlap in time (one capture rotated).
type rotatedFiles struct{}

func (rotatedFiles) Parallel(a, b int) bool { return false }

// TestConversationsParallelFiles: a TCP connection captured at both of
// its hosts (each packet in file 0 and again in file 1, whose clock is
// 3 ms ahead, beyond a mirror's copy window) counts each packet once, as
// the RoCE flows do; the same packets in files that do not overlap in
// time (rotated), a copy more than flows.MaxFileOffset later, and a
// file's own packet again 3 ms later (a resend) count each time.
func TestConversationsParallelFiles(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type ev struct {
		file int
		at   time.Duration
		id   uint16
	}
	tcp := func(id uint16) *packet.Packet {
		return &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"),
			Proto: protoTCP, SrcPort: 51022, DstPort: 29500, TCPFlags: tcpACK, IPTotalLen: 100, IPID: uint32(id), L4Checksum: 0xbeef ^ id, TTL: 64}
	}
	run := func(par flows.ParallelFiles, evs []ev) *Conversation {
		t.Helper()
		c := NewCollector(flows.NewTable(flows.Config{}), Config{})
		if par != nil {
			c.SetParallelFiles(par)
		}
		frames := [2]int{}
		for _, e := range evs {
			frames[e.file]++
			c.Add(tcp(e.id), flows.FrameRef{File: e.file, Frame: frames[e.file], Time: t0.Add(e.at)})
		}
		c.Finish()
		got := c.Conversations()
		if len(got) != 1 {
			t.Fatalf("%d conversations, want 1", len(got))
		}
		return got[0]
	}
	// Each packet in both files, interleaved in time order as the files
	// are merged: file 1's copy 3 ms after file 0's.
	var both []ev
	for i := range 5 {
		at := time.Duration(i) * time.Millisecond
		both = append(both, ev{0, at, uint16(100 + i)}, ev{1, at + 3*time.Millisecond, uint16(100 + i)})
	}
	slices.SortStableFunc(both, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	for _, tc := range []struct {
		name                string
		par                 flows.ParallelFiles
		evs                 []ev
		packets, fileCopies uint64
	}{
		{"parallel", allParallel{}, both, 5, 5},
		{"rotated", rotatedFiles{}, both, 10, 0},
		{"no parallel files", nil, both, 10, 0},
		{"beyond the offset", allParallel{}, []ev{{0, 0, 7}, {1, flows.MaxFileOffset + time.Millisecond, 7}}, 2, 0},
		{"a file's own resend", allParallel{}, []ev{{0, 0, 7}, {0, 3 * time.Millisecond, 7}}, 2, 0},
		{"a third capture", allParallel{}, []ev{{0, 0, 7}, {1, time.Millisecond, 7}, {1, 2 * time.Millisecond, 7}}, 2, 1},
	} {
		g := run(tc.par, tc.evs)
		if g.Packets != tc.packets || g.FileCopies != tc.fileCopies || g.Bytes != 100*tc.packets || g.Copies != 0 {
			t.Errorf("%s: packets %d, file copies %d, bytes %d, mirror copies %d; want %d, %d, %d, 0",
				tc.name, g.Packets, g.FileCopies, g.Bytes, g.Copies, tc.packets, tc.fileCopies, 100*tc.packets)
		}
	}
}

// parallelConvInput is a RoCE connection and a TCP one captured at both
// hosts: every packet in file 0 and again in file 1, 3 ms later.
func parallelConvInput() *Input {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	c.SetParallelFiles(allParallel{})
	type ev struct {
		file int
		at   time.Duration
		p    *packet.Packet
	}
	var evs []ev
	for i := range 10 {
		w := roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, uint32(i), 26, 2)
		w.BTH.Ext = w.BTH.Opcode.Headers()
		tcp := &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"),
			Proto: protoTCP, SrcPort: 51022, DstPort: 29500, TCPFlags: tcpACK, IPTotalLen: 100, IPID: uint32(i + 1), L4Checksum: 0x1234, TTL: 64}
		at := time.Duration(i) * time.Millisecond
		for file := range 2 {
			d := time.Duration(file) * 3 * time.Millisecond
			evs = append(evs, ev{file, at + d, w}, ev{file, at + d + 10*time.Microsecond, tcp})
		}
	}
	slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
	frames := [2]int{}
	for _, e := range evs {
		frames[e.file]++
		c.Add(e.p, flows.FrameRef{File: e.file, Frame: frames[e.file], Time: t0.Add(e.at)})
	}
	c.Finish()
	in := &Input{Flows: c.Table.Flows(), Collect: c, Config: c.cfg}
	in.Capture.Files = []string{"node0.pcap", "node1.pcap"}
	in.Capture.Packets, in.Capture.RoCE = uint64(len(evs)), uint64(len(evs)/2)
	return in
}

// TestParallelConversationsFinding: capture_health's parallel files
// finding says how many TCP or UDP packets were in both files.
func TestParallelConversationsFinding(t *testing.T) {
	in := parallelConvInput()
	var got *Finding
	for _, f := range CaptureHealth(in) {
		if f.Evidence.Counts["file_copies"] > 0 {
			got = &f
		}
	}
	if got == nil {
		t.Fatalf("no parallel files finding:%s", summary(CaptureHealth(in)))
	}
	wantCounts(t, *got, map[string]float64{"file_copies": 10, "conversation_file_copies": 10})
	if !strings.Contains(got.Detail, "The files held 10 packets of TCP or UDP twice as well") {
		t.Errorf("detail %q", got.Detail)
	}
}
