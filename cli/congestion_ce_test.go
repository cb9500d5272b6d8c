package cli

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ceCNPScenario: a mirror copies a connection's every packet, each copy
// marked CE (the egress of the switch that marked it), the CNPs too: the
// first CNP's copy, which comes before the sender's second CNP shows that
// its IPv4 IDs vary, counts as a CNP, with its CE.
const ceCNPScenario = `
name: ce_cnp
seed: 3
start: 2026-11-04T10:00:00Z
flows:
  - name: a
    src: 10.0.24.1
    dst: 10.0.24.2
    src_qpn: 0x505
    dest_qpn: 0x605
    start_psn: 5000
    mtu: 256
    mirror_dup: {delay_us: 1, ecn: ce}
    ops: [{op: write, bytes: 256, count: 10, gap_us: 5}]
    events:
      - {at_msg: 1, ce_mark: {psn_offset: 0, packets: 1, cnp: true}}
      - {at_msg: 3, ce_mark: {psn_offset: 0, packets: 1, cnp: true}}
      - {at_msg: 5, ce_mark: {psn_offset: 0, packets: 1, cnp: true}}
`

// TestCongestionCEOfDataPackets: the congestion finding's ce_marked counts
// the CE marks of the packets data_packets counts (not CNPs), so that its
// share is at most 100%, with one worker or two, and merge of the report
// says the same. Before, the CE of a CNP counted: 21 of 20 (105%).
func TestCongestionCEOfDataPackets(t *testing.T) {
	dir := t.TempDir()
	path := writeGenScenario(t, dir, "ce_cnp", ceCNPScenario)
	congestion := func(r *jsonReport) (map[string]float64, string) {
		for _, f := range r.Findings {
			if f.Kind == "congestion" {
				return f.Evidence.Counts, f.Detail
			}
		}
		t.Fatalf("no congestion finding: %s", kinds(r))
		return nil, ""
	}
	var outs []string
	for _, w := range []string{"--workers=1", "--workers=2"} {
		out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", w, path)
		if code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", w, code, stderr)
		}
		outs = append(outs, out)
	}
	if outs[0] != outs[1] {
		t.Errorf("two workers differ from one: %s", firstDiff(outs[0], outs[1]))
	}
	one := decodeReport(t, outs[0])
	c, detail := congestion(one)
	// 10 WRITEs and 10 ACKs, each CE on its copy; 3 CNPs and the first
	// one's copy, which carries CE.
	want := map[string]float64{"ce_marked": 20, "data_packets": 20, "cnps": 4}
	for k, v := range want {
		if c[k] != v {
			t.Errorf("%s = %v, want %v (counts %v)", k, c[k], v, c)
		}
	}
	if !strings.Contains(detail, "Switches marked 20 packets CE (100% of the 20 RoCE packets other than CNPs, ACKs included)") || !strings.Contains(detail, "1 CNP carried CE as well") {
		t.Errorf("detail %q", detail)
	}

	rep := filepath.Join(dir, "r.json")
	if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", rep, path); code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	merged, stderr, code := runCLI(t, "merge", "--format", "json", "--fail-on", "never", rep)
	if code != ExitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	mc, mdetail := congestion(decodeReport(t, merged))
	delete(c, "peak_cnps_per_ms")
	delete(mc, "peak_cnps_per_ms")
	if !reflect.DeepEqual(mc, c) || !strings.Contains(mdetail, "Switches marked 20 packets CE (100% of the 20 RoCE packets other than CNPs, ACKs included)") ||
		!strings.Contains(mdetail, "higher). 1 CNP carried CE as well") {
		t.Errorf("merged: counts %v, detail %q; want the single run's %v", mc, mdetail, c)
	}
}
