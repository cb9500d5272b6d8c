package cli

import (
	"bufio"
	"fmt"
	"math"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/render"
	"github.com/rocedump/rocedump/topology"
)

// ReportOptions are the inputs of `rocedump report`.
type ReportOptions struct {
	IO IOStreams

	Captures    []string
	Topology    string
	RailSubnets []string
	Format      string
	Output      string
	FailOn      string
	// FormatFromOutput: --format was not given, so the extension of -o
	// FILE picks the format (see pickFormat).
	FormatFromOutput bool
	DataDSCP         uint8
	CNPDSCP          uint8
	DataPCP          uint8
	CNPPCP           uint8
	ECNWindow        time.Duration
	Workers          int
}

// reportFormats are the formats of `report` (and of `live` at its end).
var reportFormats = []string{"text", "markdown", "json", "html"}

// NewCmdReport builds `rocedump report`. runF replaces reportRun in tests.
func NewCmdReport(ios IOStreams, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "report CAPTURE... [--topology FILE] [--format text|markdown|json|html] [-o FILE] [--fail-on warning|critical]",
		Short: "Find what went wrong: loss, congestion, cross-rail, storage on compute",
		Long: `Analyse captures and report findings with evidence, ranked critical first:
the report to attach to an incident ticket.

Findings (the "kind" of each):
  retransmission        go-back-N after NAKs, timeout resends, RNR NAKs, other NAKs
  mirror_loss           PSN gaps the responder ACKed past: the mirror, not the
                        fabric, lost them (loss analysis then needs care)
  reordering            packets out of PSN order with nothing lost (how far):
                        adaptive routing by design, else ECMP or the mirror
  congestion            CNPs per QP and source, FECN/BECN
  ecn_not_acted         CE marks with no CNP back; RoCE that is not ECN-capable
  dscp_mismatch         RoCE data or CNPs on an unexpected DSCP (--data-dscp,
                        --cnp-dscp)
  pcp_mismatch          VLAN-tagged RoCE data or CNPs on an unexpected 802.1Q
                        priority (--data-pcp, --cnp-pcp)
  pfc                   PFC pause frames per priority, pause storms
  cross_rail            compute traffic between different rails (needs the
                        topology: GPU n of every node belongs to rail n)
  rdma_on_management    RoCE to or from management or BMC addresses (needs the
                        topology): a QP on the wrong address, or a
                        mis-configured interface
  storage_on_compute    NVMe-oF, iSER, NFS/RDMA, SMB Direct, NVMe/TCP (4420,
                        discovery 8009), iSCSI, NFS, SMB or storage NICs on a
                        compute capture
  non_rdma_on_compute   SSH, NCCL bootstrap and other TCP/UDP on compute links
  fan_out               QPs per HCA and per node (with a topology, of its
                        compute HCAs and nodes only)
  capture_health        truncation, ICRC errors, malformed frames, cut-off files,
                        drops, mirror copies, connections seen one way, files
                        that hold the same packets, responses captured before
                        their requests: what the capture can and cannot show

CAPTURE is a pcap or pcapng file (gzip or not), a directory of them, or -
for standard input; several are merged in time order. In a directory,
files that are not captures (notes, earlier reports) are skipped with a
warning. -o FILE may not be one of the captures; it is written to a
temporary file next to it and renamed to FILE once complete, so a failed
run leaves no broken report.

The topology file (--topology) says which IP is which identity of each node
(compute HCA and its rail, storage, management, BMC); see
testdata/topology/README.md. Without one, --rail-subnet CIDR=RAIL maps
compute subnets to rails.

Exit codes: 0 no finding at or above --fail-on, 1 findings at or above it,
2 usage or input error.`,
		Example: `  rocedump report --topology testdata/topology/dgx-pod.yaml testdata/pcaps/gen/clean_allreduce.pcap
  rocedump report -o ticket.md mirror.pcap.gz
  rocedump report --format html -o incident.html --topology pod.yaml /captures/incident-4711/
  rocedump report --rail-subnet 10.0.0.0/16=0 --rail-subnet 10.1.0.0/16=1 --fail-on warning mirror.pcap`,
		Args: needArgs("capture", captureArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Captures = args
			opts.FormatFromOutput = !cmd.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			// Interrupted, the run leaves no temporary -o file behind.
			defer removeTempsOnSignal()()
			return reportRun(opts)
		},
	}
	f := cmd.Flags()
	addReportFlags(f, opts)
	addWorkersFlag(f, &opts.Workers)
	return cmd
}

// addReportFlags adds the flags that `report` and `live` share.
func addReportFlags(f flagSet, opts *ReportOptions) {
	f.StringVar(&opts.Topology, "topology", "", "topology `FILE` (YAML) naming each IP's node, role and rail")
	f.StringArrayVar(&opts.RailSubnets, "rail-subnet", nil, "map a compute subnet to a rail, `CIDR=RAIL` (repeatable)")
	f.StringVar(&opts.Format, "format", "text", "report format: "+strings.Join(reportFormats, ", ")+formatFromOutputHelp)
	f.StringVarP(&opts.Output, "output", "o", "", "write the report to `FILE` instead of standard output (replaced only once the report is complete)")
	f.StringVar(&opts.FailOn, "fail-on", "critical", "exit 1 when a finding is at or above `SEVERITY`: warning, critical, or never")
	f.Uint8Var(&opts.DataDSCP, "data-dscp", 26, "DSCP that RoCE data should carry")
	f.Uint8Var(&opts.CNPDSCP, "cnp-dscp", 48, "DSCP that CNPs should carry")
	f.Uint8Var(&opts.DataPCP, "data-pcp", 3, "802.1Q priority (PCP) that VLAN-tagged RoCE data should carry")
	f.Uint8Var(&opts.CNPPCP, "cnp-pcp", 6, "802.1Q priority (PCP) that VLAN-tagged CNPs should carry")
	f.DurationVar(&opts.ECNWindow, "ecn-window", time.Millisecond, "how soon (`D`, above 0) a CNP must follow a CE mark for ECN to count as acted on")
	// A value pflag cannot parse (300, -1) gets the same answer as one
	// checkAnalysisFlags refuses (64), not "a whole number, 0 or more".
	for _, name := range []string{"data-dscp", "cnp-dscp"} {
		_ = f.SetAnnotation(name, wantAnnotation, []string{"a DSCP, 0 to 63"})
	}
	for _, name := range []string{"data-pcp", "cnp-pcp"} {
		_ = f.SetAnnotation(name, wantAnnotation, []string{"an 802.1Q priority, 0 to 7"})
	}
}

// flagSet is the part of pflag.FlagSet the report flags use.
type flagSet interface {
	StringVar(p *string, name, value, usage string)
	StringVarP(p *string, name, shorthand, value, usage string)
	StringArrayVar(p *[]string, name string, value []string, usage string)
	Uint8Var(p *uint8, name string, value uint8, usage string)
	DurationVar(p *time.Duration, name string, value time.Duration, usage string)
	SetAnnotation(name, key string, values []string) error
}

// checkReportOptions validates the shared flags and loads the topology.
func checkReportOptions(opts *ReportOptions) (*topology.Topology, reports.Severity, bool, error) {
	if err := checkAnalysisFlags(opts); err != nil {
		return nil, 0, false, err
	}
	return checkOutputFlags(opts)
}

// checkAnalysisFlags validates the flags that set what the analysis
// expects: --workers, --data-dscp, --cnp-dscp, --data-pcp, --cnp-pcp and
// --ecn-window.
func checkAnalysisFlags(opts *ReportOptions) error {
	return firstError(
		checkWorkers(opts.IO.ErrOut, opts.Workers),
		checkFlag("--data-dscp", int(opts.DataDSCP), 0, 63, "a DSCP, 0 to 63"),
		checkFlag("--cnp-dscp", int(opts.CNPDSCP), 0, 63, "a DSCP, 0 to 63"),
		checkFlag("--data-pcp", int(opts.DataPCP), 0, 7, "an 802.1Q priority, 0 to 7"),
		checkFlag("--cnp-pcp", int(opts.CNPPCP), 0, 7, "an 802.1Q priority, 0 to 7"),
		checkFlag("--ecn-window", opts.ECNWindow, time.Nanosecond, noMaxDuration, "a duration above 0, such as 1ms or 500us"),
	)
}

// config is what the analysis expects, from the flags: every value as
// given, 0 included (DSCP 0 is best effort and priority 0 the default
// priority, not "the default").
func (opts *ReportOptions) config() reports.Config {
	return reports.Config{DataDSCP: opts.DataDSCP, CNPDSCP: opts.CNPDSCP, ExplicitDSCP: true,
		DataPCP: opts.DataPCP, CNPPCP: opts.CNPPCP, ExplicitPCP: true, ECNWindow: opts.ECNWindow}
}

// formatFromOutputHelp ends the usage of --format of report, merge and
// live.
const formatFromOutputHelp = "; without it, the extension of -o FILE picks one (.html or .htm, .md or .markdown, .json, .txt)"

// pickFormat sets opts.Format from the extension of opts.Output when
// --format was not given (opts.FormatFromOutput): `-o ticket.md` is
// Markdown, as the name says, not the default text under a .md name.
// Another extension, or none, keeps the default.
func pickFormat(opts *ReportOptions) {
	if f := formatOfOutput(opts.Output, opts.FormatFromOutput, reportFormatOfExt); f != "" {
		opts.Format = f
	}
}

// reportFormatOfExt is the report format each -o extension names.
var reportFormatOfExt = map[string]string{
	".html": "html", ".htm": "html",
	".md": "markdown", ".markdown": "markdown",
	".json": "json",
	".txt":  "text",
}

// formatOfOutput is the format that the extension of the output file
// names in ofExt (lower-case extensions with their dot), for a command
// whose --format was not given (fromOutput); "" when it was, for standard
// output, or for an extension ofExt does not hold.
func formatOfOutput(output string, fromOutput bool, ofExt map[string]string) string {
	if !fromOutput || output == "" || output == "-" {
		return ""
	}
	return ofExt[strings.ToLower(filepath.Ext(output))]
}

// checkOutputFlags validates the flags of the report's output (--format,
// or the extension of -o: see pickFormat; --fail-on; -o: see probeOutput)
// and loads the topology (--topology, --rail-subnet).
func checkOutputFlags(opts *ReportOptions) (*topology.Topology, reports.Severity, bool, error) {
	pickFormat(opts)
	switch opts.Format {
	case "text", "markdown", "json", "html":
	default:
		return nil, 0, false, usageErrorf("--format %q: want one of %s", opts.Format, strings.Join(reportFormats, ", "))
	}
	failOn, never := reports.Critical, false
	if opts.FailOn == "never" {
		never = true
	} else if s, err := reports.ParseSeverity(opts.FailOn); err != nil || s == reports.Info {
		return nil, 0, false, usageErrorf("--fail-on %q: want warning, critical or never", opts.FailOn)
	} else {
		failOn = s
	}
	var topo *topology.Topology
	if opts.Topology != "" {
		// The report written over the topology file would lose it.
		if err := checkOutputNotInput(opts.Output, []string{opts.Topology}); err != nil {
			return nil, 0, false, err
		}
		t, err := topology.Load(opts.Topology)
		if err != nil {
			return nil, 0, false, usageErrorf("%v", err)
		}
		topo = t
	}
	for _, spec := range railSubnetSpecs(opts.RailSubnets) {
		if topo == nil {
			topo = topology.New()
		}
		if err := topo.AddRailSubnet(spec); err != nil {
			return nil, 0, false, usageErrorf("--rail-subnet: %v", err)
		}
	}
	if err := probeOutput(opts.Output); err != nil {
		return nil, 0, false, err
	}
	return topo, failOn, never, nil
}

// railSubnetSpecs splits the --rail-subnet values on commas
// ("10.0.0.0/24=0,10.0.1.0/24=1" is two). The flag is a string array, not
// pflag's CSV string slice, so that an empty value (--rail-subnet "$UNSET")
// is a spec AddRailSubnet refuses rather than no spec at all, which ran
// the report without the topology asked for; and a quote is part of a
// spec, not CSV syntax with an error that named no spec.
func railSubnetSpecs(values []string) []string {
	var specs []string
	for _, v := range values {
		specs = append(specs, strings.Split(v, ",")...)
	}
	return specs
}

func reportRun(opts *ReportOptions) error {
	topo, failOn, never, err := checkReportOptions(opts)
	if err != nil {
		return err
	}
	cfg := opts.config()
	files, err := expandCaptures(opts.Captures, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	if err := checkOutputNotInput(opts.Output, files); err != nil {
		return err
	}
	shards := &collectorShards{cfg: cfg}
	st, err := analyze(analyzeOptions{Files: files, Progress: opts.IO.ErrOut, Shard: shards.shard, Workers: opts.Workers})
	if err != nil {
		return err
	}
	coll := shards.merged()
	table := coll.Table
	defer holdPassMemory()()
	rep := reports.Run(&reports.Input{
		Capture:  st.info(),
		Flows:    table.Flows(),
		Collect:  coll,
		Topology: topo,
		Config:   cfg,
	}, "rocedump "+Version)
	if err := writeReport(opts, rep); err != nil {
		return err
	}
	printProblems(opts.IO.ErrOut, st)
	fmt.Fprintf(opts.IO.ErrOut, "rocedump: %s\n", findingsLine(rep))
	if n := rep.AtOrAbove(failOn); !never && n > 0 {
		return failOnError(n, failOn)
	}
	return nil
}

// findingsLine is the summary that report, live and merge end with:
// "14 flows, 4 findings (2 critical, 1 warning, 1 info)".
func findingsLine(rep *reports.Report) string {
	return fmt.Sprintf("%s, %s (%d critical, %d warning, %d info)", reports.Plural(rep.Summary.Flows, "flow"),
		reports.Plural(len(rep.Findings), "finding"), rep.Summary.Critical, rep.Summary.Warning, rep.Summary.Info)
}

// failOnError is exit 1 for n findings at or above --fail-on.
func failOnError(n int, failOn reports.Severity) error {
	return &exitError{code: ExitFindings, err: fmt.Errorf("%s at or above %s (--fail-on)", reports.Plural(n, "finding"), failOn)}
}

// writeReport renders rep in opts.Format to opts.Output (see outputFile:
// a file there is replaced only once the whole report is written) or
// stdout.
func writeReport(opts *ReportOptions, rep *reports.Report) error {
	out, err := createOutput(opts.Output, opts.IO.Out)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer out.discard()
	bw := bufio.NewWriter(out)
	switch opts.Format {
	case "text":
		err = render.WriteText(bw, rep)
	case "markdown":
		err = render.WriteMarkdown(bw, rep)
	case "json":
		err = render.WriteJSON(bw, rep)
	case "html":
		err = render.WriteHTML(bw, rep)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = out.commit()
	}
	if err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// holdPassMemory sets a soft memory limit, after the packet pass, a little
// above the memory the process holds then (what the runtime has mapped:
// the heap with its slack, stacks, metadata), and returns the function
// that lifts it.
//
// Why: after the pass, the live heap is the flow table (about all the
// memory the pass needed) and what comes next, the report modules and the
// output, allocates garbage in proportion to the flows. Under the default
// GOGC the heap may grow to twice the live heap of the last collection
// before the next one, so on a big capture such garbage would add to the
// peak though nothing new is kept. With the limit the collector runs
// instead when the output reaches the pass's footprint and a margin, so
// the peak stays near the pass's: memory follows the flows, as the pass's
// does.
//
// The margin matters: the pass collects rarely (passGCPercent), so the
// heap it leaves is mostly live, and the report keeps a few more
// megabytes live on top of it. A limit at the footprint itself (as
// before session 14, which took the live heap from the last collection,
// often one early in the pass) left the collector no room: on the
// benchmark's 63,488 flows it ran 7 times back to back during the output,
// each a mark of the whole flow table, for a few megabytes of garbage.
// The limit is now the footprint or the heap in use (live or not yet
// found dead), whichever is more, plus an eighth and 8 MB
// (TestHoldPassMemoryRoom): the output of the benchmark's capture then ran
// with one collection, and the peak at 111,104 flows grew by about 6 MB,
// as with no limit at all. It is soft, and not set when GOMEMLIMIT (or a
// caller) already set one.
func holdPassMemory() (lift func()) {
	if prev := debug.SetMemoryLimit(-1); prev != math.MaxInt64 {
		return func() {}
	}
	debug.SetMemoryLimit(passMemoryLimit())
	return func() { debug.SetMemoryLimit(math.MaxInt64) }
}

// passMemoryLimit is the limit holdPassMemory sets: see there.
func passMemoryLimit() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return math.MaxInt64
	}
	held := max(s[0].Value.Uint64(), s[1].Value.Uint64())
	return int64(held + held/8 + 8<<20)
}

// info converts the pass's statistics for the report.
func (st *captureStats) info() reports.CaptureInfo {
	st.settleLast()
	ci := reports.CaptureInfo{
		Files:         st.Files,
		Packets:       st.Packets,
		RoCE:          st.RoCE,
		Malformed:     st.Malformed,
		Truncated:     st.Truncated,
		RoCETruncated: st.RoCETruncated,
		ICRCBad:       st.ICRCBad,
		ICRCChecked:   st.RoCE - st.Unchecked,
		Unsupported:   st.Unsupported,
		First:         st.First.UTC(),
		Last:          st.Last.UTC(),
		DurationS:     st.Last.Sub(st.First).Seconds(),
		CutOff:        st.CutOff,
		Problems:      st.Problems,
	}
	if ci.Problems == nil {
		ci.Problems = []string{}
	}
	return ci
}
