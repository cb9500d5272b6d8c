package cli

import (
	"strings"
	"testing"

	"github.com/rocedump/rocedump/reports"
)

// TestMergeHelpNamesEveryKind: merge --help says, for every finding kind,
// how a merge makes it: recomputed from the flow records, or combined
// from the reports' findings of that kind.
func TestMergeHelpNamesEveryKind(t *testing.T) {
	out, _, _ := runCLI(t, "merge", "--help")
	text := strings.Join(strings.Fields(out), " ")
	for _, k := range []reports.Kind{reports.KindRetransmission, reports.KindMirrorLoss, reports.KindReordering, reports.KindCongestion,
		reports.KindECNNotActed, reports.KindDSCPMismatch, reports.KindPCPMismatch, reports.KindPFC, reports.KindCrossRail,
		reports.KindRDMAOnManagement, reports.KindStorageOnCompute, reports.KindNonRDMAOnCompute, reports.KindFanOut, reports.KindCaptureHealth} {
		if !strings.Contains(text, string(k)+",") && !strings.Contains(text, string(k)+" ") {
			t.Errorf("rocedump merge --help does not say how a merge makes %s findings", k)
		}
	}
}

// TestReportHelpHealthVariants: report --help names the capture_health
// variants a user would look for (each a finding of its own).
func TestReportHelpHealthVariants(t *testing.T) {
	out, _, _ := runCLI(t, "report", "--help")
	text := strings.Join(strings.Fields(out), " ")
	for _, v := range []string{"truncation", "ICRC errors", "malformed frames", "cut-off files", "drops", "mirror copies",
		"connections seen one way", "files that hold the same packets", "responses captured before their requests"} {
		if !strings.Contains(text, v) {
			t.Errorf("rocedump report --help does not name the capture_health variant %q", v)
		}
	}
}

// TestMergeHelpRoCETruncated: merge --help names, among what stays
// approximate, the capture's roce_truncated of a report made before it
// (merger.roceTruncated estimates it, with a note).
func TestMergeHelpRoCETruncated(t *testing.T) {
	out, _, _ := runCLI(t, "merge", "--help")
	if text := strings.Join(strings.Fields(out), " "); !strings.Contains(text, "the capture's roce_truncated for reports of an earlier rocedump") {
		t.Errorf("rocedump merge --help does not say roce_truncated is estimated for earlier reports:\n%s", out)
	}
}
