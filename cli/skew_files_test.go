package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/gen"
)

// skewScenario: two connections, each losing a packet of its fourth
// WRITE in the fabric, after the mirror saw it (the responder NAKs, the
// requester goes back N) and before (a gap the resends fill).
const skewScenario = `
name: skew
seed: 2
start: 2026-11-01T10:00:00Z
flows:
  - {name: gbn-seen, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x101, dest_qpn: 0x201, start_psn: 100, mtu: 1024,
     ops: [{op: write, bytes: 4096, count: 6, gap_us: 3}], events: [{at_msg: 4, fabric_drop: {psn_offset: 1}}]}
  - {name: gbn-gap, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x102, dest_qpn: 0x202, start_psn: 200, mtu: 1024, start_us: 40,
     ops: [{op: write, bytes: 4096, count: 6, gap_us: 3}], events: [{at_msg: 4, fabric_drop: {psn_offset: 1, packets: 2, seen: false}}]}
`

// TestSkewedDirectionFiles: the capture written as two files, one per
// direction (the requests' and the responses'), the responses' clock
// ahead, so that each NAK sorts after the resends it asked for. The
// flows count what the one capture counts, and the report finds the same
// go-back-N episodes: no mirror copy, no ACK timeout (before: the
// resends of the first connection were 3 mirror copies and its NAK went
// unanswered, those of the second a timeout).
func TestSkewedDirectionFiles(t *testing.T) {
	dir := t.TempDir()
	one, req, resp := splitByDirection(t, dir, skewScenario)
	type flow struct {
		Src        string `json:"src"`
		Packets    int    `json:"packets"`
		Retx       int    `json:"retransmitted_packets"`
		OutOfOrder int    `json:"out_of_order"`
		Dups       int    `json:"mirror_duplicates"`
	}
	type report struct {
		Flows    []flow `json:"flows"`
		Findings []struct {
			Evidence struct {
				Counts map[string]any `json:"counts"`
			} `json:"evidence"`
		} `json:"findings"`
	}
	summary := func(files ...string) (map[string]flow, map[string]float64) {
		out, stderr, code := runCLI(t, append([]string{"report", "--format", "json"}, files...)...)
		if code != ExitOK && code != ExitFindings {
			t.Fatalf("report %v: exit %d: %s", files, code, stderr)
		}
		var rep report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		fl := map[string]flow{}
		for _, r := range rep.Flows {
			fl[r.Src] = r
		}
		counts := map[string]float64{}
		for _, fd := range rep.Findings {
			for _, k := range []string{"gbn_episodes", "timeouts", "mirror_duplicates"} {
				if v, ok := fd.Evidence.Counts[k].(float64); ok {
					counts[k] += v
				}
			}
		}
		return fl, counts
	}
	wantFlows, wantCounts := summary(one)
	if wantCounts["gbn_episodes"] != 2 {
		t.Fatalf("one capture: %v, want 2 go-back-N episodes", wantCounts)
	}
	for _, ahead := range []time.Duration{3 * time.Microsecond, 5 * time.Microsecond} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			a, b := filepath.Join(dir, fmt.Sprintf("req%v.pcapng", ahead)), filepath.Join(dir, fmt.Sprintf("resp%v.pcapng", ahead))
			if err := randWriteFile(a, req, 0); err != nil {
				t.Fatal(err)
			}
			if err := randWriteFile(b, resp, ahead); err != nil {
				t.Fatal(err)
			}
			gotFlows, gotCounts := summary(a, b)
			for src, w := range wantFlows {
				if g := gotFlows[src]; g != w {
					t.Errorf("flow from %s: %+v, want %+v", src, g, w)
				}
			}
			if fmt.Sprint(gotCounts) != fmt.Sprint(wantCounts) {
				t.Errorf("findings count %v, want %v", gotCounts, wantCounts)
			}
		})
	}
}

// splitByDirection generates the scenario's capture in dir and returns
// its path and its records split by direction: those from an address
// ending in .1 (the requesters) and the others.
func splitByDirection(t *testing.T, dir, scenario string) (one string, req, resp []randRecord) {
	t.Helper()
	sc, err := gen.ParseScenario([]byte(scenario), "skew")
	if err != nil {
		t.Fatal(err)
	}
	one = filepath.Join(dir, "one.pcapng")
	f, err := os.Create(one)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(f, sc); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs, err := randReadRecords(one)
	if err != nil {
		t.Fatal(err)
	}
	var dec packet.Decoder
	var p packet.Packet
	for _, r := range recs {
		if err := dec.Decode(r.lt, r.data, r.origLen, &p); err != nil {
			t.Fatal(err)
		}
		if b := p.Src.As4(); b[3] == 1 {
			req = append(req, r)
		} else {
			resp = append(resp, r)
		}
	}
	return one, req, resp
}

// TestSkewedDirectionFilesECN: a CE mark answered by a CNP 4 µs later,
// the capture written as two files, one per direction, the responses'
// clock 100 µs behind: the CNP sorts 96 µs before the mark, as the ACKs
// before their WRITEs, and still acts on it (before: "1 CE-marked packet
// got no CNP back").
func TestSkewedDirectionFilesECN(t *testing.T) {
	const scenario = `
name: skew-ecn
seed: 2
start: 2026-11-01T10:00:00Z
flows:
  - {name: ce, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x101, dest_qpn: 0x201, start_psn: 100, mtu: 1024,
     ops: [{op: write, bytes: 1024, count: 200, gap_us: 10}], events: [{at_msg: 60, ce_mark: {cnp: true}}]}
`
	dir := t.TempDir()
	_, req, resp := splitByDirection(t, dir, scenario)
	a, b := filepath.Join(dir, "req.pcapng"), filepath.Join(dir, "resp.pcapng")
	if err := randWriteFile(a, req, 0); err != nil {
		t.Fatal(err)
	}
	if err := randWriteFile(b, resp, -100*time.Microsecond); err != nil {
		t.Fatal(err)
	}
	early := false
	for _, f := range reportFindingTitles(t, a, b) {
		if f.Kind == "ecn_not_acted" {
			t.Errorf("finding %q", f.Title)
		}
		early = early || f.Kind == "capture_health" && strings.Contains(f.Title, "captured before the requests")
	}
	if !early {
		t.Error("no finding says the responses came before their requests")
	}
}

// findingTitle is a finding of report --format json, by kind and title.
type findingTitle struct {
	Kind  string `json:"kind"`
	Title string `json:"title"`
}

// reportFindingTitles runs report --format json with args and returns its
// findings' kinds and titles.
func reportFindingTitles(t *testing.T, args ...string) []findingTitle {
	t.Helper()
	out, stderr, code := runCLI(t, append([]string{"report", "--format", "json"}, args...)...)
	if code != ExitOK && code != ExitFindings {
		t.Fatalf("report %v: exit %d: %s", args, code, stderr)
	}
	var rep struct {
		Findings []findingTitle `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Findings
}
