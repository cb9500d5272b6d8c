package render_test

import (
	"os"
	"time"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/render"
)

// A report with one finding, written for the terminal. WriteMarkdown,
// WriteJSON and WriteHTML take the same arguments.
func ExampleWriteText() {
	at := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	r := &reports.Report{
		SchemaVersion: reports.SchemaVersion,
		Tool:          "rocedump",
		Capture:       reports.CaptureInfo{Files: []string{"rail0.pcap"}, Packets: 1200, RoCE: 1190, First: at, Last: at.Add(time.Second), DurationS: 1},
		Summary:       reports.Summary{Flows: 0, Warning: 1, Verdict: "No critical findings; 1 warnings across 0 QP flows."},
		Findings: []reports.Finding{{
			Kind: reports.KindNonRDMAOnCompute, Severity: reports.Warning,
			Title:    "SSH on a compute link",
			Evidence: reports.Evidence{Counts: map[string]float64{"packets": 10}, First: &reports.Frame{Frame: 7, Time: at}},
			Next:     "Move SSH to the management network.",
		}},
	}
	render.WriteText(os.Stdout, r)
	// Output:
	// rocedump report (rocedump)
	//
	// Verdict: No critical findings; 1 warnings across 0 QP flows.
	// Capture: rail0.pcap, 1200 packets (1190 RoCE), 2025-03-14T09:26:53.000000000Z to
	//          2025-03-14T09:26:54.000000000Z (1.00 s), 0 truncated; drops: not counted (file input)
	// Summary: 0 QP flows, 0 QPs, 0 hosts; findings: 0 critical, 1 warning, 0 info; no topology
	//
	// FINDINGS (1, critical first)
	//
	//  1. [WARNING] SSH on a compute link
	//     Kind: non_rdma_on_compute
	//     Evidence: packets = 10
	//     First: frame 7 at 2025-03-14T09:26:53.000000000Z
	//     Next: Move SSH to the management network.
	//
	// TOP FLOWS BY BYTES
	//
	// No RoCE flows.
}
