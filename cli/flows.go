package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// FlowsOptions are the inputs of `rocedump flows`.
type FlowsOptions struct {
	IO IOStreams

	Captures []string
	Format   string
	Output   string
	// FormatFromOutput: --format was not given, so the extension of -o
	// FILE picks the format (see pickFlowsFormat).
	FormatFromOutput bool
	Sort             string
	Top              int
	Workers          int
}

// NewCmdFlows builds `rocedump flows`. runF replaces flowsRun in tests.
func NewCmdFlows(ios IOStreams, runF func(*FlowsOptions) error) *cobra.Command {
	opts := &FlowsOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "flows [flags] CAPTURE...",
		Short: "List the Queue-Pair flows of captures, biggest first",
		Long: `List every QP flow in one or more captures: who sent to whom, on which
destination QP, how much and how fast, and in what state its PSNs are.

A flow is the packets from one IP address to another for one destination QP
number. An RC connection is two flows, one each way; the PARTNER column is
the destination QP of the flow that carries this one's ACKs and READ
responses, found from the RDMA CM exchange when the capture has it, else
from the ACK PSNs ("none": no partner found; "-": UD/UC, which have none).
A QPN reused for a new connection starts a new epoch ("ep1", "ep2").

Columns: RETX packets resent at a PSN the flow already carried (go-back-N or
timeout); GAPS forward PSN jumps (packets the mirror did not see, or lost
before it); NAKS NAKs and RNR NAKs this flow carries; CNPS congestion
notifications to this flow's destination QP; CE packets marked ECN
Congestion Experienced. Bytes are IP lengths, right on truncated captures.

CAPTURE is a pcap or pcapng file (gzip or not), a directory of them, or -
for standard input. Several captures are merged in time order. In a
directory, files that are not captures (notes, reports) are skipped with a
warning. -o FILE writes the flows to FILE instead of standard output (in the
format its extension names when --format is not given); it may not be one of
the captures, and it is written to a temporary file next to it and renamed
to FILE once complete, so a failed run leaves no broken FILE.`,
		Example: `  rocedump flows testdata/pcaps/real/linlinw5_rdma_cm.pcap
  rocedump flows --sort retx --top 20 /captures/incident-4711/
  rocedump flows --format markdown mirror.pcap.gz >> ticket.md
  rocedump flows -o flows.csv --sort retx /captures/incident-4711/
  rocedump flows --format json mirror.pcapng | jq '.[] | select(.cnps > 0)'
  rocedump flows --format jsonl rail3.pcap > flows/rail3.jsonl   # one flow per line, for DuckDB/Spark/ClickHouse`,
		Args: needArgs("capture", captureArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Captures = args
			opts.FormatFromOutput = !cmd.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			// Interrupted, the run leaves no temporary -o file behind.
			// Without one it keeps the signals' default action, as
			// before -o (rocebench runs flows in its own process).
			if opts.Output != "" && opts.Output != "-" {
				defer removeTempsOnSignal()()
			}
			return flowsRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Format, "format", "table", "output format: "+strings.Join(flowtable.Formats, ", ")+" (jsonl: JSON Lines, one flow per line)"+flowsFormatFromOutputHelp)
	f.StringVarP(&opts.Output, "output", "o", "", "write the flows to `FILE` instead of standard output (replaced only once complete; not one of the captures)")
	f.StringVar(&opts.Sort, "sort", "bytes", "order flows by `KEY`, biggest first: "+strings.Join(flowtable.SortKeys, ", ")+" (id, or its aliases first and time: in order of first packet)")
	f.IntVar(&opts.Top, "top", 0, "show only the first `N` flows after sorting (0: all); the totals line still counts all")
	addWorkersFlag(f, &opts.Workers)
	return cmd
}

// flowsFormatFromOutputHelp ends the usage of --format of flows.
const flowsFormatFromOutputHelp = "; without it, the extension of -o FILE picks one (.txt table, .md or .markdown, .csv, .json, .jsonl or .ndjson)"

// pickFlowsFormat is pickFormat for flows: it sets opts.Format from the
// extension of opts.Output when --format was not given, so that
// `-o flows.csv` writes CSV, not a table in a file named .csv. Another
// extension keeps the default, the table.
func pickFlowsFormat(opts *FlowsOptions) {
	if f := formatOfOutput(opts.Output, opts.FormatFromOutput, flowsFormatOfExt); f != "" {
		opts.Format = f
	}
}

// flowsFormatOfExt is the flows format each -o extension names.
var flowsFormatOfExt = map[string]string{
	".txt": "table",
	".md":  "markdown", ".markdown": "markdown",
	".csv":   "csv",
	".json":  "json",
	".jsonl": flowtable.FormatJSONL, ".ndjson": flowtable.FormatJSONL,
}

func flowsRun(opts *FlowsOptions) error {
	pickFlowsFormat(opts)
	switch opts.Format {
	case "table", "markdown", "csv", "json", flowtable.FormatJSONL:
	default:
		return usageErrorf("--format %q: want one of %s", opts.Format, strings.Join(flowtable.Formats, ", "))
	}
	if err := firstError(
		checkWorkers(opts.IO.ErrOut, opts.Workers),
		checkFlag("--top", opts.Top, 0, noMaxInt, "0 (all) or more"),
	); err != nil {
		return err
	}
	// Check the sort key before reading anything.
	if err := flowtable.Sort(nil, opts.Sort); err != nil {
		return usageErrorf("--sort: %v", err)
	}
	// A directory or a missing one named by -o is said before the
	// capture is read, not after.
	if err := probeOutput(opts.Output); err != nil {
		return err
	}
	files, err := expandCaptures(opts.Captures, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	if err := checkOutputNotInput(opts.Output, files); err != nil {
		return err
	}
	shards := &tableShards{}
	st, err := analyze(analyzeOptions{Files: files, Progress: opts.IO.ErrOut, Shard: shards.shard, Workers: opts.Workers, RelayCost: flowsRelayCost})
	if err != nil {
		return err
	}
	table := shards.merged()
	defer holdPassMemory()()
	sorted := append([]*flows.Flow(nil), table.Flows()...)
	flowtable.Sort(sorted, opts.Sort)
	// The records are made one at a time as they are written, never all
	// at once: memory follows the flow table.
	all := flowtable.FlowsOf(sorted).WithFiles(st.Files)
	shown := all
	if opts.Top > 0 {
		shown = all.Head(opts.Top)
	}
	// A file there is replaced only once every flow is written (see
	// outputFile).
	file, err := createOutput(opts.Output, opts.IO.Out)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer file.discard()
	out := bufio.NewWriterSize(file, 64<<10)
	err = flowtable.Write(out, opts.Format, shown, all)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		err = file.commit()
	}
	if err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	printProblems(opts.IO.ErrOut, st)
	fmt.Fprintf(opts.IO.ErrOut, "rocedump: %s, %s read, %d RoCE, %d malformed, %s, %d ICRC bad\n",
		reports.Plural(all.Len(), "flow"), reports.Plural(st.Packets, "packet"), st.RoCE, st.Malformed,
		reports.TruncatedCount(st.Truncated, st.RoCETruncated), st.ICRCBad)
	return nil
}
