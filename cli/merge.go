package cli

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/render"
)

// MergeOptions are the inputs of `rocedump merge`.
type MergeOptions struct {
	IO IOStreams

	Reports     []string
	Topology    string
	RailSubnets []string
	Format      string
	Output      string
	FailOn      string
	// FormatFromOutput: --format was not given (see pickFormat).
	FormatFromOutput bool
}

// NewCmdMerge builds `rocedump merge`. runF replaces mergeRun in tests.
func NewCmdMerge(ios IOStreams, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "merge REPORT.json... [--topology FILE] [--format json|text|markdown|html] [-o FILE]",
		Short: "Merge the JSON reports of several mirrors (one per rail) into one report",
		Long: `Merge the outputs of "rocedump report --format json" for captures taken in
different places - one mirror per rail, say - into one report, without the
captures. The result is the report one run over all the captures would give
when every QP connection, both directions and its CNPs, is in one report
only (each mirror sees its own connections, as one mirror per rail does):

  capture    files listed, counts and drops summed, span from the earliest
             to the latest packet, problems kept
  flows      every flow record, renumbered in order of first appearance
             (time, then the order of the reports on the command line: give
             them in the order you would give the captures)
  recomputed capture_health, congestion, cross_rail, rdma_on_management and
             fan_out are computed again from the merged flows and counts,
             so shares, thresholds and QPs per HCA are those of the whole
             fabric; give --topology (or --rail-subnet) as for report

What JSON cannot recombine exactly:

  - retransmission, mirror_loss, reordering, ecn_not_acted, dscp_mismatch,
    pcp_mismatch, pfc, storage_on_compute and non_rdma_on_compute come
    from per-packet state that is not in the JSON. Findings of one kind and variant (go-back-N
    with go-back-N, SSH with SSH) are combined: counts summed (the largest
    for peak_/max_ counts and those ending in _max, the smallest for _min),
    flows, nodes and details joined. The title is made again from the
    combined counts by the module's own code, and so are derived counts
    and, where the module's rule reads only counts and the capture's RoCE
    packets, the severity (retransmission, mirror_loss,
    non_rdma_on_compute); the detail is the largest report's and says it
    was merged. The totals flow records carry are put back (data and CNP
    packets of dscp_mismatch and its severity and of pcp_mismatch, data
    packets and CE marks of ecn_not_acted), and the fabric loss of
    mirror_loss.
  - what stays approximate, each said when its finding is present:
    congestion's peak CNP rate (the highest of the reports' own peaks: time
    bins cannot be added from JSON; over all captures it may be up to their
    sum); go-back-N's mean recovery time (the highest report's mean);
    ecn_not_acted's undecided CE marks when some reports had no such
    finding, and its ce_marked when such a report has CE marks on flows
    that carry CNPs too (a flow record does not say which packets were
    marked: they count as on the others), and congestion's ce_marked for
    such flow records of an earlier rocedump (without cnps_ce); capture_health's ICRC share for
    reports of an earlier rocedump without icrc_checked (estimated from
    their flow records), and the capture's roce_truncated for reports of an
    earlier rocedump without it (from their flow records: it may fall
    short); PFC paused time (it runs to the end of each capture), storms
    (found within one report only) and severity (a share of a report's own
    capture); storage_endpoints (an address seen by several mirrors counts
    once per report); the services in the title of other TCP/UDP (those of
    all reports, added up, when a report's title or evidence left some
    out: five services a title, ten conversations its evidence); and kinds
    a newer rocedump made.
  - a flow in more than one report (two mirrors saw the same QP) is listed
    once per report, the findings that cite it count it once per report
    (said, naming them), and its PSN state is not recomputed: the merge
    cannot tell the same packets seen twice from different ones.
    When the reports share flows or list the same TCP/UDP conversation,
    their conversations (SSH, bootstrap, storage) count once per report:
    said too.
  - frame evidence of a flow names its file only when its report had one
    or was made by a rocedump whose flow records name their files
    (first_file, last_file).
  - a connection whose two directions are in different reports is two
    unpaired flows (said when no report holds both directions of a host
    pair), and a capture split in time cuts flows in two.
  - without a topology, a report takes for compute links the addresses
    that carried RoCE in its own capture: give report --topology too.
  - a report made without a topology merged with one: its findings that are
    not recomputed were judged without it (its nodes are named by the
    merge's topology); a report made with another topology is not detected.

Each of these that applies is said in the merged report's capture problems,
prefixed "merge:". When in doubt, run rocedump report over all the captures
at once.

Exit codes: 0 no finding at or above --fail-on, 1 findings at or above it,
2 usage error or a file that is not a rocedump JSON report.`,
		Example: `  for r in 0 1 2 3 4 5 6 7; do rocedump report --format json -o rail$r.json rail$r.pcap; done
  rocedump merge --topology pod.yaml rail*.json > fabric.json
  rocedump merge -o ticket.md rail0.json rail1.json`,
		Args: needArgs("report", "REPORT.json is a JSON report of rocedump report --format json, or - for standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Reports = args
			opts.FormatFromOutput = !cmd.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			// Interrupted, the run leaves no temporary -o file behind.
			defer removeTempsOnSignal()()
			return mergeRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Topology, "topology", "", "topology `FILE` (YAML), as given to report")
	f.StringArrayVar(&opts.RailSubnets, "rail-subnet", nil, "map a compute subnet to a rail, `CIDR=RAIL` (repeatable), as given to report")
	f.StringVar(&opts.Format, "format", "json", "output format: "+strings.Join(reportFormats, ", ")+formatFromOutputHelp)
	f.StringVarP(&opts.Output, "output", "o", "", "write the merged report to `FILE` instead of standard output (replaced only once the report is complete; not one of the reports)")
	f.StringVar(&opts.FailOn, "fail-on", "critical", "exit 1 when a finding is at or above `SEVERITY`: warning, critical, or never")
	return cmd
}

func mergeRun(opts *MergeOptions) error {
	ro := &ReportOptions{IO: opts.IO, Topology: opts.Topology, RailSubnets: opts.RailSubnets, Format: opts.Format,
		Output: opts.Output, FailOn: opts.FailOn, FormatFromOutput: opts.FormatFromOutput}
	topo, failOn, never, err := checkOutputFlags(ro)
	if err != nil {
		return err
	}
	if err := checkOutputNotInput(opts.Output, opts.Reports); err != nil {
		return err
	}
	if i := slices.Index(opts.Reports, "-"); i >= 0 && slices.Contains(opts.Reports[i+1:], "-") {
		// The second read found it empty: "-: not a rocedump report: EOF".
		return usageErrorf(`standard input ("-") is given twice: it can be read only once`)
	}
	var srcs []reports.MergeSource
	for _, path := range opts.Reports {
		rep, err := readReportFile(opts, path)
		if err != nil {
			return usageErrorf("%s: %v", path, err)
		}
		srcs = append(srcs, reports.MergeSource{Name: path, Report: rep})
	}
	rep, err := reports.Merge(srcs, reports.MergeOptions{Tool: "rocedump " + Version, Topology: topo})
	if err != nil {
		return usageErrorf("%v", err)
	}
	if err := writeReport(ro, rep); err != nil {
		return err
	}
	for _, p := range rep.Capture.Problems {
		if strings.HasPrefix(p, "merge: ") {
			fmt.Fprintf(opts.IO.ErrOut, "rocedump: warning: %s\n", render.Visible(p)) // names from the JSON
		}
	}
	fmt.Fprintf(opts.IO.ErrOut, "rocedump: merged %s: %s\n", reports.Plural(len(srcs), "report"), findingsLine(rep))
	if n := rep.AtOrAbove(failOn); !never && n > 0 {
		return failOnError(n, failOn)
	}
	return nil
}

// readReportFile reads one JSON report; "-" is standard input.
func readReportFile(opts *MergeOptions, path string) (*reports.Report, error) {
	var r io.Reader = opts.IO.In
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("is a directory; %s (name them: DIR/*.json)", mergeWants)
		}
		r = f
	}
	br := bufio.NewReader(r)
	head, _ := br.Peek(len(flowRecordStart))
	if what := notReport(head); what != "" {
		return nil, fmt.Errorf("%s; %s", what, mergeWants)
	}
	return reports.ReadJSON(br)
}

// mergeWants says what merge reads, for the errors about what it does not.
const mergeWants = `merge reads the JSON reports that "rocedump report --format json" writes`

// notReport says what a file that starts with head is when it is plainly
// not a JSON report (a capture, gzip data, another output of rocedump),
// or "" when it may be one: the mistakes people make with merge, said in
// words rather than as the JSON decoder's "invalid character".
func notReport(head []byte) string {
	switch {
	case len(head) == 0:
		return ""
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return "is gzip-compressed: decompress it first"
	case len(head) >= 4 && isCaptureMagic(binary.LittleEndian.Uint32(head)):
		return "is a capture, not a JSON report"
	case bytes.HasPrefix(head, []byte(flowRecordStart)):
		return "is JSON lines of flow records (rocedump flows --format jsonl writes them), not a report"
	}
	switch c := bytes.TrimLeft(head, " \t\r\n"); {
	case len(c) == 0, c[0] == '{':
		return ""
	case c[0] == '[':
		return "is a JSON array (rocedump flows --format json writes one), not a report"
	default:
		return "is not JSON (a text, Markdown or HTML report?)"
	}
}

// flowRecordStart is how each line of "rocedump flows --format jsonl"
// starts: a flow record, its id first.
const flowRecordStart = `{"id":`

// isCaptureMagic says whether m, the first four bytes of a file read as a
// little-endian number, is the magic of a pcap (either byte order, micro-
// or nanosecond) or of a pcapng Section Header Block.
func isCaptureMagic(m uint32) bool {
	switch m {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1, 0x0a0d0d0a:
		return true
	}
	return false
}
