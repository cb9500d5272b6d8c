package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/gen"
)

// icrcScenario is a snap length of 100 bytes that keeps every RoCE frame
// whole (80 small SENDs and one bad-ICRC frame: 81) and cuts all 278
// frames of a TCP session: the truncated frames are none of them RoCE.
const icrcScenario = `name: icrc_tcp_trunc
seed: 1
start: 2026-11-01T10:00:00Z
snaplen: 100
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x101, dest_qpn: 0x201, start_psn: 100, ops: [{op: send, bytes: 16, count: 40, gap_us: 2}]}
malformed:
  - {kind: bad_icrc, count: 1, at_us: 4, src: 10.0.0.1, dst: 10.0.0.2, bytes: 16}
tcp:
  - {client: 10.0.0.1, server: 10.0.0.2, port: 22, bytes: 200000, resp_bytes: 200000, at_us: 20}
`

// writeGenScenario generates scenario text src into dir and returns the
// capture's path.
func writeGenScenario(t *testing.T, dir, name, src string) string {
	t.Helper()
	s, err := gen.ParseScenario([]byte(src), name+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+gen.FileExt(s))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(f, s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// icrcFinding returns the counts and detail of r's ICRC finding.
func icrcFindingOf(t *testing.T, r *jsonReport) (map[string]float64, string) {
	t.Helper()
	for _, f := range r.Findings {
		if f.Kind == "capture_health" && strings.Contains(f.Title, "ICRC") {
			return f.Evidence.Counts, f.Title
		}
	}
	t.Fatalf("no ICRC finding: %s", kinds(r))
	return nil, ""
}

// TestICRCCheckedFrames: the ICRC finding's roce_frames_checked counts the
// RoCE frames whose ICRC was checked, not the RoCE frames less every
// truncated frame (TCP ones included), with one worker or two; the
// capture section carries the count (icrc_checked), and merge adds it up.
// A report of an older rocedump, without icrc_checked, merges with the
// count estimated from its flow records, and a merge note says so.
func TestICRCCheckedFrames(t *testing.T) {
	dir := t.TempDir()
	path := writeGenScenario(t, dir, "icrc", icrcScenario)
	var outs []string
	for _, w := range []string{"--workers=1", "--workers=2"} {
		out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", w, path)
		if code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", w, code, stderr)
		}
		outs = append(outs, out)
		r := decodeReport(t, out)
		if r.Capture["roce_packets"] != 81.0 || r.Capture["truncated"] != 278.0 || r.Capture["icrc_checked"] != 81.0 {
			t.Errorf("%s: capture %v: want 81 RoCE frames, 81 checked, 278 truncated", w, r.Capture)
		}
		counts, _ := icrcFindingOf(t, r)
		if counts["roce_frames_checked"] != 81 || counts["icrc_bad"] != 1 {
			t.Errorf("%s: ICRC counts %v, want 1 bad of 81 checked", w, counts)
		}
		if !strings.Contains(out, "1 of 81 RoCE frames captured whole (1.2%)") {
			t.Errorf("%s: the ICRC detail does not say 1 of 81", w)
		}
	}
	if outs[0] != outs[1] {
		t.Errorf("two workers differ from one: %s", firstDiff(outs[0], outs[1]))
	}

	// Merged with a report of a capture with no ICRC error, whose checked
	// frames count too (40 SENDs and their ACKs, all whole).
	clean := writeGenScenario(t, dir, "clean", strings.Replace(strings.Split(icrcScenario, "malformed:")[0], "10.0.0.", "10.0.1.", -1))
	var jsons []string
	for i, p := range []string{path, clean} {
		out := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		if _, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", "-o", out, p); code != ExitOK {
			t.Fatalf("report %s: exit %d: %s", p, code, stderr)
		}
		jsons = append(jsons, out)
	}
	whole, _, _ := runCLI(t, "report", "--format", "json", "--fail-on", "never", path, clean)
	merged, stderr, code := runCLI(t, append([]string{"merge", "--fail-on", "never"}, jsons...)...)
	if code != ExitOK {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	w, m := decodeReport(t, whole), decodeReport(t, merged)
	wc, wt := icrcFindingOf(t, w)
	mc, mt := icrcFindingOf(t, m)
	if wc["roce_frames_checked"] != 81+80 || mc["roce_frames_checked"] != wc["roce_frames_checked"] || mt != wt {
		t.Errorf("ICRC finding: merged %q %v, one run %q %v; want 161 checked in both", mt, mc, wt, wc)
	}
	if m.Capture["icrc_checked"] != w.Capture["icrc_checked"] {
		t.Errorf("capture.icrc_checked: merged %v, one run %v", m.Capture["icrc_checked"], w.Capture["icrc_checked"])
	}
	for _, p := range m.Problems() {
		if strings.Contains(p, "icrc_checked") {
			t.Errorf("merge note %q for reports that carry icrc_checked", p)
		}
	}

	// The same reports as an older rocedump wrote them.
	for _, j := range jsons {
		b := mustRead(t, j)
		old := strings.Replace(b, `"icrc_checked": `, `"icrc_checked_was": `, 1)
		if old == b {
			t.Fatalf("%s has no icrc_checked", j)
		}
		if err := os.WriteFile(j, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	merged, stderr, code = runCLI(t, append([]string{"merge", "--fail-on", "never"}, jsons...)...)
	if code != ExitOK {
		t.Fatalf("merge of older reports: exit %d: %s", code, stderr)
	}
	m = decodeReport(t, merged)
	if mc, _ := icrcFindingOf(t, m); mc["roce_frames_checked"] != 161 {
		t.Errorf("older reports merged: ICRC counts %v, want the 161 RoCE frames of the flow records, none cut", mc)
	}
	note := false
	for _, p := range m.Problems() {
		note = note || strings.HasPrefix(p, "merge: capture_health") && strings.Contains(p, "icrc_checked")
	}
	if !note {
		t.Errorf("older reports merged: no merge note on icrc_checked in %q", m.Problems())
	}
}
