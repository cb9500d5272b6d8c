package reports

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
)

const opACK = bth.Opcode(0x11) // RC ACKNOWLEDGE

// reorderInput is one RC WRITE flow whose PSN 3 overtook PSNs 1 and 2
// (adaptive routing: 0, 3, 1, 2, 4, 5, nothing lost), the responder
// acknowledging PSN 5; and, on another QP when twoQPs, 0, 2, 1, 3.
func reorderInput(t0 time.Time, qp uint32, twoQPs bool) *Input {
	s := &synth{t0: t0}
	in := &Input{Config: Config{}.WithDefaults()}
	c := NewCollector(flows.NewTable(flows.Config{}), in.Config)
	req := func(qp, psn uint32, us float64) {
		c.Add(roce("10.0.0.1", "10.0.0.2", qp, opWriteOnly, psn, 26, 2), s.ref(us))
	}
	ack := func(qp, psn uint32, us float64) {
		c.Add(roce("10.0.0.2", "10.0.0.1", qp+0x100, opACK, psn, 26, 2), s.ref(us))
	}
	for i, p := range []uint32{0, 3, 1, 2, 4, 5} {
		req(qp, p, float64(i))
	}
	ack(qp, 5, 10)
	if twoQPs {
		for i, p := range []uint32{0, 2, 1, 3} {
			req(qp+1, p, 20+2*float64(i))
		}
		ack(qp+1, 3, 40)
	}
	c.Finish()
	in.Collect, in.Flows = c, c.Table.Flows()
	return in
}

func reorderingOf(t *testing.T, fs []Finding) *Finding {
	t.Helper()
	for i := range fs {
		if fs[i].Kind == KindReordering {
			return &fs[i]
		}
	}
	return nil
}

// The report says how many packets of how many flows came out of PSN
// order and how far: PSN 1 came 2 PSNs behind (3 overtook 1 and 2), 1 µs
// after 3; PSN 2 came 1 PSN behind, 2 µs after 3.
func TestReorderingFinding(t *testing.T) {
	r := Run(reorderInput(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0x200, true), "test")
	f := reorderingOf(t, r.Findings)
	if f == nil {
		t.Fatalf("no reordering finding: %+v", r.Findings)
	}
	want := map[string]float64{"flows": 2, "reordered_packets": 3, "read_responses_out_of_order": 0, "max_psns_behind": 2, "max_late_us": 2}
	for k, v := range want {
		if f.Evidence.Counts[k] != v {
			t.Errorf("%s = %v, want %v (counts %v)", k, f.Evidence.Counts[k], v, f.Evidence.Counts)
		}
	}
	if f.Severity != Info {
		t.Errorf("severity %v, want info", f.Severity)
	}
	if want := "Reordering: 3 packets of 2 flows out of PSN order (up to 2 PSNs behind, up to 2 µs late)"; f.Title != want {
		t.Errorf("title %q, want %q", f.Title, want)
	}
	for _, fd := range r.Findings {
		if fd.Kind == KindRetransmission || fd.Kind == KindMirrorLoss {
			t.Errorf("reordering made a %s finding: %s", fd.Kind, fd.Title)
		}
	}
	// Merged: counts summed, maxima kept, the title made from them.
	a := Run(reorderInput(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 0x200, false), "test")
	b := Run(reorderInput(time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC), 0x300, true), "test")
	m, err := Merge([]MergeSource{{"a", a}, {"b", b}}, MergeOptions{Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	f = reorderingOf(t, m.Findings)
	if f == nil {
		t.Fatalf("merged: no reordering finding: %+v", m.Findings)
	}
	want = map[string]float64{"flows": 3, "reordered_packets": 5, "max_psns_behind": 2, "max_late_us": 2}
	for k, v := range want {
		if f.Evidence.Counts[k] != v {
			t.Errorf("merged: %s = %v, want %v", k, f.Evidence.Counts[k], v)
		}
	}
	if want := "Reordering: 5 packets of 3 flows out of PSN order (up to 2 PSNs behind, up to 2 µs late)"; f.Title != want {
		t.Errorf("merged title %q, want %q", f.Title, want)
	}
}

// In order: no finding.
func TestReorderingNoneInOrder(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	in := &Input{Config: Config{}.WithDefaults()}
	c := NewCollector(flows.NewTable(flows.Config{}), in.Config)
	for p := uint32(0); p < 6; p++ {
		c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, p, 26, 2), s.ref(float64(p)))
	}
	c.Finish()
	in.Collect, in.Flows = c, c.Table.Flows()
	if f := reorderingOf(t, Run(in, "test").Findings); f != nil {
		t.Errorf("in order, yet %s", f.Title)
	}
}
