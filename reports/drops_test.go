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

// TestLinkDownFinding: a live capture's notes that its interface was down
// make one capture_health warning, not the "could not be read to its end"
// one that other capture problems make.
func TestLinkDownFinding(t *testing.T) {
	c := CaptureInfo{Packets: 100, RoCE: 100, Problems: []string{
		LinkDownNote + "eth1 was down for 0.5 s, from 04:53:12.500 to 04:53:13.000 UTC: nothing was captured then",
		LinkDownNote + "eth1 went down at 04:53:14.000 UTC and was still down when the capture ended, 1.0 s later: nothing was captured after it",
	}}
	fs := CaptureHealth(&Input{Capture: c})
	if len(fs) != 1 || fs[0].Severity != Warning || fs[0].Title != "The capture interface went down 2 times" ||
		fs[0].Evidence.Counts["down_periods"] != 2 || len(fs[0].Evidence.Details) != 2 ||
		!strings.HasPrefix(fs[0].Evidence.Details[0], "eth1 was down for 0.5 s") {
		t.Errorf("got %s", summary(fs))
	}
}
