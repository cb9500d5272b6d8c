package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// pauseFrame is an 802.3x link-level PAUSE (MAC control opcode 0x0001):
// no priorities, it stops the whole link.
func pauseFrame(quanta uint16) *packet.Packet {
	p := &packet.Packet{Kind: packet.KindOther, EtherType: 0x8808, HasPFC: true}
	p.PFC.Opcode = packet.MACControlPause
	p.PFC.Quanta[0] = quanta
	return p
}

// TestPFCTitleCountsPFCApartFrom8023x: the pfc finding's title counts PFC
// (802.1Qbb) frames as PFC frames and 802.3x PAUSE frames as PAUSE
// frames. The Wireshark wiki's Ethernet_Pause_Frame.pcap (two 802.3x
// PAUSE frames, quanta 65535 and 0, no PFC) was titled "2 PFC frames
// paused traffic" with pfc_frames 0, and its detail began "Switches or
// HCAs sent 0 XOFF pauses".
func TestPFCTitleCountsPFCApartFrom8023x(t *testing.T) {
	tests := []struct {
		name        string
		pfc, pause  int
		title       string
		notInDetail string
	}{
		{"PFC only", 3, 0, "3 PFC frames paused traffic", "802.3x"},
		{"802.3x only", 0, 2, "2 802.3x link-level PAUSE frames", "0 XOFF"},
		{"both", 1, 2, "1 PFC frame and 2 802.3x PAUSE frames paused traffic", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			c := NewCollector(flows.NewTable(flows.Config{}), Config{})
			for i := range tc.pfc {
				c.Add(pfcFrame(3, 100), s.ref(float64(10*i)))
			}
			for i := range tc.pause {
				c.Add(pauseFrame(uint16(65535*(1-i%2))), s.ref(float64(100+10*i)))
			}
			c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 1, 26, 2), s.ref(1000))
			c.Finish()
			f, ok := pfcFinding(&Input{Flows: c.Table.Flows(), Collect: c, Config: c.cfg})
			if !ok {
				t.Fatal("no pfc finding")
			}
			if f.Title != tc.title {
				t.Errorf("title %q, want %q", f.Title, tc.title)
			}
			if got := f.Evidence.Counts["pfc_frames"]; got != float64(tc.pfc) {
				t.Errorf("pfc_frames %v, want %d", got, tc.pfc)
			}
			if got := f.Evidence.Counts["pause_frames_802_3x"]; got != float64(tc.pause) {
				t.Errorf("pause_frames_802_3x %v, want %d", got, tc.pause)
			}
			if tc.notInDetail != "" && strings.Contains(f.Detail, tc.notInDetail) {
				t.Errorf("detail says %q: %s", tc.notInDetail, f.Detail)
			}
		})
	}
}
