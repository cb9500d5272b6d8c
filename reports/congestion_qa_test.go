package reports

import (
	"testing"
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
