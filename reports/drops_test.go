package reports

import (
	"strings"
	"testing"
)

// TestLossFindingsSayCaptureDrops: when a live capture dropped packets,
// every finding that counts lost PSNs (go-back-N, ACK timeouts, re-issued
// READs, mirror loss: those with fabric_lost_psns) says that its gaps may
// be the capture's own drops; the NAK-based ones (fatal NAKs, RNR) do not,
// and no finding says it when nothing was dropped.
func TestLossFindingsSayCaptureDrops(t *testing.T) {
	const note = "The capture itself dropped 42 packets (40 in the kernel, 2 at the interface"
	for _, name := range []string{"retransmissions", "retx_mixed", "retx_mirror_widespread"} {
		for _, drops := range []*Drops{nil, {}, {Kernel: 40, Interface: 2}} {
			in := retxInput(t, retxGen(t, name))
			in.Capture.Drops = drops
			lossy := 0
			for _, f := range Retransmissions(in) {
				_, gaps := f.Evidence.Counts["fabric_lost_psns"]
				lossy += map[bool]int{true: 1}[gaps]
				want := gaps && drops != nil && drops.Kernel+drops.Interface > 0
				if got := strings.Contains(f.Detail, note); got != want {
					t.Errorf("%s, drops %v: %q says the capture's drops: %v, want %v\n%s", name, drops, f.Title, got, want, f.Detail)
				}
			}
			if lossy == 0 {
				t.Errorf("%s: no finding counts lost PSNs", name)
			}
		}
	}
}

// TestCaptureDropsDetail: the drops finding counts the drops beside the
// packets read, not "out of" them (5289 dropped out of 4711 read).
func TestCaptureDropsDetail(t *testing.T) {
	fs := CaptureHealth(&Input{Capture: CaptureInfo{Packets: 4711, RoCE: 4711, Drops: &Drops{Kernel: 5289}}})
	if len(fs) == 0 {
		t.Fatal("no finding")
	}
	const want = "The capture itself lost 5289 packets (5289 in the kernel, 0 at the interface) besides the 4711 it read."
	if !strings.Contains(fs[0].Detail, want) {
		t.Errorf("detail %q\nwant it to say %q", fs[0].Detail, want)
	}
}
