package reports

import (
	"fmt"
	"strings"
	"testing"
)

// TestPFCPriorityWithoutRoCE: pauses of a priority that carried none of
// the capture's tagged RoCE data (here RoCE on priority 3, XOFFs on 4)
// hold back other traffic, or show PFC enabled on another priority than
// RoCE's: the pfc finding says so and counts the priorities. Pauses of
// the RoCE priority, or of a capture whose RoCE is untagged (the priority
// cannot be told), say nothing of it.
func TestPFCPriorityWithoutRoCE(t *testing.T) {
	scenario := func(encap string, prios string) string {
		return fmt.Sprintf(`name: pfc-prio
start: 2026-11-02T10:00:00Z
%s
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x100, dest_qpn: 0x200, mtu: 4096, start_us: 0, ops: [{op: write, bytes: 65536}]}
pfc:
  - {priorities: %s, quanta: 1000, count: 5, at_us: 10, interval_us: 5}
`, encap, prios)
	}
	for _, tc := range []struct {
		name, encap, prios string
		want               bool
	}{
		{"RoCE on 3, pauses on 4", "encap: [{vlan: 100, pcp: 3}]", "[4]", true},
		{"RoCE on 3, pauses on 3", "encap: [{vlan: 100, pcp: 3}]", "[3]", false},
		{"RoCE untagged, pauses on 4", "", "[4]", false},
	} {
		in := docScenario(t, scenario(tc.encap, tc.prios))
		fs := ofKind(runAll(in), KindPFC)
		if len(fs) != 1 {
			t.Fatalf("%s: want one pfc finding, got %s", tc.name, summary(fs))
		}
		f := fs[0]
		n, ok := f.Evidence.Counts["paused_priorities_without_roce"]
		said := strings.Contains(f.Detail, "Priority 4 was paused but carried none of the")
		if tc.want && (n != 1 || !said) {
			t.Errorf("%s: paused_priorities_without_roce %v (present %v), detail %q; want 1 and the priority named", tc.name, n, ok, f.Detail)
		}
		if !tc.want && (ok || strings.Contains(f.Detail, "carried none of the")) {
			t.Errorf("%s: paused_priorities_without_roce %v (present %v), detail %q; want neither", tc.name, n, ok, f.Detail)
		}
	}
}
