package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlowsPSNNullWithoutSequenced: first_psn, last_psn and highest_psn
// are those of a flow's sequenced packets (its requests, or the READ
// responses of a flow with no request); a flow with neither (ACKs only:
// the ACK side of a connection, or a mirror that saw one direction; CNPs
// only) has null there, not 0, which read as if PSN 0 had been seen
// while its ACKs carry other PSNs. Flows with requests keep their
// numbers. In json and in jsonl alike.
func TestFlowsPSNNullWithoutSequenced(t *testing.T) {
	file := filepath.Join(repoRoot, "testdata", "pcaps", "gen", "clean_allreduce.pcap")
	type rec struct {
		ID         int               `json:"id"`
		FirstPSN   *uint32           `json:"first_psn"`
		LastPSN    *uint32           `json:"last_psn"`
		HighestPSN *uint32           `json:"highest_psn"`
		Opcodes    map[string]uint64 `json:"opcodes"`
	}
	for _, format := range []string{"json", "jsonl"} {
		out, errOut, code := runCLI(t, "flows", "--format", format, "--sort", "id", file)
		if code != ExitOK {
			t.Fatalf("flows: exit %d: %s", code, errOut)
		}
		var recs []rec
		if format == "json" {
			if err := json.Unmarshal([]byte(out), &recs); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var r rec
				if err := json.Unmarshal([]byte(line), &r); err != nil {
					t.Fatal(err)
				}
				recs = append(recs, r)
			}
		}
		acks, reqs := 0, 0
		for _, r := range recs {
			ackOnly := len(r.Opcodes) == 1 && r.Opcodes["RC_ACKNOWLEDGE"] > 0
			null := r.FirstPSN == nil && r.LastPSN == nil && r.HighestPSN == nil
			switch {
			case ackOnly && !null:
				t.Errorf("%s: flow %d of ACKs only: first_psn %v last_psn %v highest_psn %v, want null", format, r.ID, r.FirstPSN, r.LastPSN, r.HighestPSN)
			case !ackOnly && (r.FirstPSN == nil || r.LastPSN == nil || r.HighestPSN == nil):
				t.Errorf("%s: flow %d with requests (%v): a PSN field is null", format, r.ID, r.Opcodes)
			case ackOnly:
				acks++
			default:
				reqs++
			}
		}
		if acks == 0 || reqs == 0 {
			t.Errorf("%s: %d flows of ACKs only, %d with requests: want some of each", format, acks, reqs)
		}
	}
}

// udOtherSendersScenario is an RDMA CM exchange that names QP 0x44 of
// 10.0.0.1 as the source of the flow to QP 0x33 of 10.0.0.2, then UD
// datagrams to that QP from another QP of the same host (0x45, PSNs from
// 100, not ECN-capable) and, when own is set, from 0x44 itself (PSNs
// from 5000).
func udOtherSendersScenario(own bool) string {
	s := `name: ud-other-senders
cm:
  - {client: 10.0.0.1, server: 10.0.0.2, port: 4420, client_qpn: 0x44, server_qpn: 0x33, at_us: 0}
flows:
  - {name: other, src: 10.0.0.1, dst: 10.0.0.2, transport: UD, src_qpn: 0x45, dest_qpn: 0x33, start_psn: 100, start_us: 200, ecn: not_ect, ops: [{op: send, bytes: 256, count: 3}]}
`
	if own {
		s += `  - {name: own, src: 10.0.0.1, dst: 10.0.0.2, transport: UD, src_qpn: 0x44, dest_qpn: 0x33, start_psn: 5000, start_us: 400, ops: [{op: send, bytes: 256, count: 3}]}
`
	}
	return s
}

// TestFlowsPSNUDOtherSenders: a UD flow whose source QP an RDMA CM
// exchange named before its first datagram follows that QP's PSNs only:
// the datagrams of another source QP of the host (which numbers them in
// a PSN sequence of its own) count in its packets and messages but give
// it no PSN. With only those, first_psn, last_psn and highest_psn are
// null, as for a flow of ACKs only (they were 0, and the flow's own
// datagrams that followed counted a gap of 5000 PSNs from 0); with its
// own source QP's datagrams after them, those are its PSNs, without a
// gap. In flows and report JSON alike; the report's ECN check counts the
// other sender's datagrams among the flow's data packets.
func TestFlowsPSNUDOtherSenders(t *testing.T) {
	type rec struct {
		DestQPN     uint32  `json:"dest_qpn"`
		SrcQPN      *uint32 `json:"src_qpn"`
		Packets     uint64  `json:"packets"`
		Messages    uint64  `json:"messages"`
		FirstPSN    *uint32 `json:"first_psn"`
		LastPSN     *uint32 `json:"last_psn"`
		HighestPSN  *uint32 `json:"highest_psn"`
		PSNGaps     uint64  `json:"psn_gaps"`
		MissingPSNs uint64  `json:"missing_psns"`
	}
	psn := func(p *uint32) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	for _, own := range []bool{false, true} {
		name := map[bool]string{false: "other only", true: "other then own"}[own]
		file := writeGenScenario(t, t.TempDir(), "ud_other_senders", udOtherSendersScenario(own))
		flowsOut, errOut, code := runCLI(t, "flows", "--format", "json", file)
		if code != ExitOK {
			t.Fatalf("%s: flows: exit %d: %s", name, code, errOut)
		}
		var recs []rec
		if err := json.Unmarshal([]byte(flowsOut), &recs); err != nil {
			t.Fatal(err)
		}
		repOut, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", file)
		if code != ExitOK {
			t.Fatalf("%s: report: exit %d: %s", name, code, errOut)
		}
		var rep struct {
			Flows    []rec `json:"flows"`
			Findings []struct {
				Kind     string `json:"kind"`
				Evidence struct {
					Counts map[string]float64 `json:"counts"`
				} `json:"evidence"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(repOut), &rep); err != nil {
			t.Fatal(err)
		}
		wantPackets, wantFirst, wantLast := uint64(3), "null", "null"
		if own {
			wantPackets, wantFirst, wantLast = 6, "5000", "5002"
		}
		for what, rs := range map[string][]rec{"flows": recs, "report": rep.Flows} {
			var ud *rec
			for i := range rs {
				if rs[i].DestQPN == 0x33 {
					ud = &rs[i]
				}
			}
			if ud == nil {
				t.Fatalf("%s: %s: no flow to QP 0x33", name, what)
			}
			if ud.SrcQPN == nil || *ud.SrcQPN != 0x44 || ud.Packets != wantPackets || ud.Messages != wantPackets {
				t.Errorf("%s: %s: src_qpn %v, %d packets, %d messages: want 0x44 (from CM), %d and %d", name, what, psn(ud.SrcQPN), ud.Packets, ud.Messages, wantPackets, wantPackets)
			}
			if psn(ud.FirstPSN) != wantFirst || psn(ud.LastPSN) != wantLast || psn(ud.HighestPSN) != wantLast {
				t.Errorf("%s: %s: first_psn %s last_psn %s highest_psn %s: want %s, %s, %s", name, what,
					psn(ud.FirstPSN), psn(ud.LastPSN), psn(ud.HighestPSN), wantFirst, wantLast, wantLast)
			}
			if ud.PSNGaps != 0 || ud.MissingPSNs != 0 {
				t.Errorf("%s: %s: %d PSN gaps, %d missing PSNs: want none", name, what, ud.PSNGaps, ud.MissingPSNs)
			}
		}
		var counts map[string]float64
		for _, f := range rep.Findings {
			if f.Kind == "ecn_not_acted" && f.Evidence.Counts["not_ect_packets"] > 0 {
				counts = f.Evidence.Counts
			}
		}
		// The CM MADs (on QP1) are no data packets of the check.
		if counts["not_ect_packets"] != 3 || counts["data_packets"] != float64(wantPackets) {
			t.Errorf("%s: ECN check's counts %v: want 3 not ECN-capable of %d data packets", name, counts, wantPackets)
		}
	}
}
