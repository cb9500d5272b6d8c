package reports

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// dscpBothWrongScenario: a QP whose packets are all on DSCP 0 (ACKs too)
// while the receiver sends its CNPs on DSCP 46: the flow of ACKs and CNPs
// back to the requester has wrong packets of both classes.
const dscpBothWrongScenario = `
name: dscp_both_wrong
seed: 1
start: 2026-11-01T10:00:00Z
dscp: 26
cnp_dscp: 46
ecn: ect0
flows:
  - name: a
    src: 10.0.0.1
    dst: 10.0.0.2
    src_qpn: 0x111
    dest_qpn: 0x211
    mtu: 1024
    dscp: 0
    ops: [{op: write, bytes: 4096, count: 4}]
    events:
      - {at_msg: 3, ce_mark: {packets: 2, cnp: true}}
`

// TestDSCPMismatchSpanPerClass: each dscp_mismatch variant cites the first
// and last wrong packet of its own class. On a flow carrying both ACKs and
// CNPs on wrong DSCPs the CNP variant cited the ACKs around the CNPs (and
// the data variant could cite a CNP).
func TestDSCPMismatchSpanPerClass(t *testing.T) {
	path := scenarioCapture(t, dscpBothWrongScenario)
	in := loadInput(t, path, "")
	// The expected spans, from the packets themselves.
	pkts, refs := decodeAll(t, path)
	var data, cnp frameSpan
	for i := range pkts {
		p := &pkts[i]
		if !p.HasBTH {
			continue
		}
		if p.BTH.Opcode.IsCNP() {
			if p.DSCP != in.Config.CNPDSCP {
				cnp.add(refs[i])
			}
		} else if p.BTH.DestQP != gsiQPN && p.DSCP != in.Config.DataDSCP {
			data.add(refs[i])
		}
	}
	if !data.ok || !cnp.ok {
		t.Fatal("scenario has no wrong data or no wrong CNPs")
	}
	fs := ofKind(runAll(in), KindDSCPMismatch)
	if len(fs) != 2 {
		t.Fatalf("%d dscp_mismatch findings, want 2:%s", len(fs), summary(fs))
	}
	for _, f := range fs {
		want := data
		if _, ok := f.Evidence.Counts["cnp_packets"]; ok {
			want = cnp
		}
		if f.Evidence.First == nil || f.Evidence.Last == nil {
			t.Fatalf("%q: no first/last", f.Title)
		}
		if f.Evidence.First.Frame != want.first.Frame || f.Evidence.Last.Frame != want.last.Frame {
			t.Errorf("%q: first/last frame %d/%d, want %d/%d", f.Title,
				f.Evidence.First.Frame, f.Evidence.Last.Frame, want.first.Frame, want.last.Frame)
		}
	}
}

// TestECNMarkAfterFirstCNP: a CNP covers a CE mark that comes at most
// cnpRateLimit after it (the NIC sends no CNP for that mark), also when
// the CNP is the first thing seen of that direction's congestion (the
// capture began mid-congestion). That mark was reported not acted on.
func TestECNMarkAfterFirstCNP(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{ECNWindow: time.Millisecond})
	add := func(p *packet.Packet, us float64) { c.Add(p, s.ref(us)) }
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 1, 26, 2), 0)
	add(roce("10.0.0.2", "10.0.0.1", 0x100, opCNP, 0, 48, 0), 5)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 2, 26, 3), 5+float64(cnpRateLimit/time.Microsecond)/2)
	add(roce("10.0.0.2", "10.0.0.1", 0x100, bth.Opcode(0x11), 2, 26, 2), 30)
	// Another direction with only CNPs is not listed.
	add(roce("10.0.1.2", "10.0.1.1", 0x101, opCNP, 0, 48, 0), 40)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 3, 26, 2), 3000)
	c.Finish()
	got := c.ECN()
	want := []ECNReaction{{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), CEMarked: 1, Acted: 1}}
	if len(got) != len(want) || got[0] != want[0] {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestCNPDetailSpan: the congestion finding's line for a notified QP says
// over what time its CNPs came, not how long its flow (ACKs included)
// lasted: "2 CNPs ... over 0 s", not over the flow's duration.
func TestCNPDetailSpan(t *testing.T) {
	path := scenarioCapture(t, dscpBothWrongScenario)
	in := loadInput(t, path, "")
	pkts, refs := decodeAll(t, path)
	var cnps frameSpan
	for i := range pkts {
		if p := &pkts[i]; p.HasBTH && p.BTH.Opcode.IsCNP() {
			cnps.add(refs[i])
		}
	}
	var notified *flows.Flow
	for _, f := range in.Flows {
		if f.CNPs > 0 {
			notified = f
		}
	}
	if !cnps.ok || notified == nil {
		t.Fatal("scenario has no CNPs")
	}
	span := cnps.last.Time.Sub(cnps.first.Time)
	if notified.Duration() == span {
		t.Fatal("scenario: the notified flow lasts as long as its CNPs")
	}
	fs := ofKind(runAll(in), KindCongestion)
	if len(fs) != 1 || len(fs[0].Evidence.Details) == 0 {
		t.Fatalf("want one congestion finding with details:%s", summary(fs))
	}
	want := fmt.Sprintf("%d CNPs from %s over %s (flow %d)", notified.CNPs, notified.Key.Src, flowtable.HumanDuration(span), notified.ID)
	if got := fs[0].Evidence.Details[0]; !strings.HasSuffix(got, want) {
		t.Errorf("detail %q, want it to end %q", got, want)
	}
}
