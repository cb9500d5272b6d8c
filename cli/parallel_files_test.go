package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestParallelNodeCaptures: the three node captures of one NCCL run (each
// packet in the sender's file and the receiver's, the hosts' clocks up to
// ~660 µs apart) given together hold each packet once: every flow has the
// packets it has in either file alone, no resend and no mirror copy, and
// the report finds no ACK timeout (it found one, 2 packets after a 649 µs
// wait, and 268 mirror copies, on the nccl set) but says the files hold
// the same packets.
func TestParallelNodeCaptures(t *testing.T) {
	type flow struct {
		Src        string `json:"src"`
		Dst        string `json:"dst"`
		QPN        int    `json:"dest_qpn"`
		Packets    int    `json:"packets"`
		Retx       int    `json:"retransmitted_packets"`
		Gaps       int    `json:"psn_gaps"`
		OutOfOrder int    `json:"out_of_order"`
		Dups       int    `json:"mirror_duplicates"`
	}
	flowsOf := func(files ...string) map[string]flow {
		out, stderr, code := runCLI(t, append([]string{"flows", "--format", "json"}, files...)...)
		if code != ExitOK {
			t.Fatalf("flows %v: exit %d: %s", files, code, stderr)
		}
		var recs []flow
		if err := json.Unmarshal([]byte(out), &recs); err != nil {
			t.Fatal(err)
		}
		m := map[string]flow{}
		for _, r := range recs {
			m[fmt.Sprintf("%s>%s %#x", r.Src, r.Dst, r.QPN)] = r
		}
		return m
	}
	for _, set := range []string{"nccl", "ring2", "tree2"} {
		var files []string
		alone := map[string]flow{}
		for n := range 3 {
			f := filepath.Join(repoRoot, "testdata", "pcaps", "real", fmt.Sprintf("linlinw5_nccl_%s_node%d.pcap", set, n))
			files = append(files, f)
			for k, r := range flowsOf(f) {
				if a, ok := alone[k]; ok && a.Packets != r.Packets {
					t.Fatalf("%s: flow %s has %d packets in one file, %d in another", set, k, a.Packets, r.Packets)
				}
				alone[k] = r
			}
		}
		merged := flowsOf(files...)
		if len(merged) != len(alone) {
			t.Errorf("%s: %d flows merged, %d in the files alone", set, len(merged), len(alone))
		}
		for k, r := range merged {
			if a := alone[k]; r.Packets != a.Packets || r.Retx != 0 || r.Gaps != 0 || r.OutOfOrder != 0 || r.Dups != 0 {
				t.Errorf("%s: flow %s merged: %+v, alone %+v", set, k, r, a)
			}
		}
		for _, workers := range []string{"1", "2"} {
			same := false
			for _, f := range reportFindingTitles(t, append([]string{"--workers", workers}, files...)...) {
				if strings.Contains(f.Title, "timeout") || strings.Contains(f.Title, "resent") || strings.Contains(f.Title, "mirror delivered") {
					t.Errorf("%s (%s workers): finding %q", set, workers, f.Title)
				}
				same = same || strings.Contains(f.Title, "hold the same packets")
			}
			if !same {
				t.Errorf("%s (%s workers): no finding says the files hold the same packets", set, workers)
			}
		}
	}
}
