package cli

import (
	"encoding/json"
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
