package reports

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/topology"
)

const (
	genDir  = "../testdata/pcaps/gen"
	topoDir = "../testdata/topology"
)

// genCapture returns the path of the generated capture NAME.pcap[ng][.gz].
func genCapture(t testing.TB, name string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(genDir, name+".pcap*"))
	if len(m) != 1 {
		t.Fatalf("%s: want one generated capture, found %v", name, m)
	}
	return m[0]
}

// writeScenario generates the capture of scenario sc into a file of the
// test's temporary directory and returns its path.
func writeScenario(t testing.TB, sc *gen.Scenario) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "scenario"+gen.FileExt(sc))
	w, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(w, sc); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// genTruth reads NAME.truth.json.
func genTruth(t testing.TB, name string) *gen.Truth {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(genDir, name+".truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	tr := new(gen.Truth)
	if err := json.Unmarshal(b, tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// loadInput reads a capture the way `rocedump report` does (capture →
// decode/packet → Collector with its flow table) and returns the Input for
// the modules; topologyPath "" means no topology.
func loadInput(t testing.TB, capturePath, topologyPath string) *Input {
	t.Helper()
	in := &Input{Config: Config{}.WithDefaults()}
	if topologyPath != "" {
		topo, err := topology.Load(topologyPath)
		if err != nil {
			t.Fatal(err)
		}
		in.Topology = topo
	}
	m, err := capture.OpenMerged([]string{capturePath})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	col := NewCollector(flows.NewTable(flows.Config{}), in.Config)
	c := &in.Capture
	c.Files = []string{filepath.Base(capturePath)}
	var (
		rec capture.Record
		pkt packet.Packet
		dec packet.Decoder
	)
	col.ReadPayloadsFrom(&dec) // as the CLI's pass does
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		c.Packets++
		if c.First.IsZero() || rec.Timestamp.Before(c.First) {
			c.First = rec.Timestamp
		}
		if rec.Timestamp.After(c.Last) {
			c.Last = rec.Timestamp
		}
		if err := dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &pkt); err != nil {
			c.Unsupported++
			continue
		}
		if pkt.Truncated {
			c.Truncated++
		}
		switch pkt.Kind {
		case packet.KindRoCE:
			c.RoCE++
			if pkt.ICRC != bth.ICRCUnchecked {
				c.ICRCChecked++
			}
			if pkt.ICRC == bth.ICRCBad {
				c.ICRCBad++
			}
		case packet.KindMalformed:
			c.Malformed++
		}
		col.Add(&pkt, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
	}
	for _, p := range m.Problems() {
		c.Problems = append(c.Problems, p.Error())
		if errors.Is(p, capture.ErrCutOff) {
			c.CutOff = true
		}
	}
	c.DurationS = c.Last.Sub(c.First).Seconds()
	col.Finish()
	in.Collect = col
	in.Flows = col.Table.Flows()
	return in
}

// loadGen loads a generated capture with an optional topology file from
// testdata/topology ("" for none).
func loadGen(t testing.TB, name, topo string) *Input {
	t.Helper()
	if topo != "" {
		topo = filepath.Join(topoDir, topo)
	}
	return loadInput(t, genCapture(t, name), topo)
}

// ofKind returns the findings of kind k.
func ofKind(fs []Finding, k Kind) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Kind == k {
			out = append(out, f)
		}
	}
	return out
}

// runAll runs every module I own over in (the way Run does, but without
// the modules of others), normalised.
func runAll(in *Input) []Finding {
	var out []Finding
	for _, m := range []func(*Input) []Finding{CaptureHealth, Congestion, CrossRail, RDMAOnManagement, StorageOnCompute, NonRDMAOnCompute, FanOut} {
		for _, f := range m(in) {
			f.normalize()
			out = append(out, f)
		}
	}
	return out
}

// summary is a finding as "kind severity: title", for failure messages.
func summary(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("\n  " + string(f.Kind) + " " + f.Severity.String() + ": " + f.Title)
	}
	return b.String()
}

// wantCounts checks the named counts of f.
func wantCounts(t *testing.T, f Finding, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if got, ok := f.Evidence.Counts[k]; !ok || got != v {
			t.Errorf("%s %q: count %s = %v (present %v), want %v", f.Kind, f.Title, k, got, ok, v)
		}
	}
}
