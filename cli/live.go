package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/reports"
)

// LiveOptions are the inputs of `rocedump live`.
type LiveOptions struct {
	IO IOStreams
	// Report holds the flags live shares with `rocedump report`: the
	// format, output, --fail-on, topology and expectations of the report
	// printed at the end.
	Report ReportOptions

	Interface string
	SnapLen   int
	Promisc   bool
	BufferMiB int
	Filter    string
	Immediate bool

	Interval time.Duration // live view refresh; 0: no live view
	Duration time.Duration // stop after this long; 0: no limit
	Count    int           // stop after this many packets; 0: no limit
	Top      int           // flows on the live view

	Write      string  // -w: pcap file to write
	FileSizeMB float64 // -C: rotate past this many MB (1 MB = 1,000,000 bytes)
	RotateSecs int     // -G: rotate every this many seconds
	FileCount  int     // -W: keep at most this many files, in a ring

	// Context ends the capture when it is done: NewCmdLive sets it to one
	// that Ctrl-C (SIGINT) and SIGTERM cancel.
	Context context.Context

	// Test hooks: open replaces capture.OpenLive; started is called once
	// the capture is open and being read.
	open    func(capture.LiveConfig) (liveSource, error)
	started func()
}

// NewCmdLive builds `rocedump live`. runF replaces liveRun in tests.
func NewCmdLive(ios IOStreams, runF func(*LiveOptions) error) *cobra.Command {
	opts := &LiveOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "live -i IFACE [-w FILE [-C MB] [-G SECONDS] [-W COUNT]] [--duration D | -c N] [report flags]",
		Short: "Capture on a mirror port, watch flows and findings live, then report",
		Long: `Capture RoCE traffic live from an interface (a switch port mirror, SPAN or
an ERSPAN collector) with libpcap, show what is happening every --interval,
and print the full report (as "rocedump report" would, in any of its formats)
when the capture ends: after --duration, after -c packets, or on Ctrl-C or
SIGTERM. Every packet the kernel had buffered before the stop is analysed
and written; a second Ctrl-C quits at once, without a report.

The live view shows packets and bit rate, the frames malformed, cut by
the snap length (truncated, with the RoCE ones among them) and of bad
ICRC, the busiest QP flows, CNP and ECN-CE rates, retransmissions, the
findings so far and the kernel and interface drop counters. It is
redrawn in place on a terminal (stdout, or stderr when stdout is
redirected); elsewhere it is one line per interval on stderr. --interval
0 turns it off.

Capture settings:
  --snaplen 128 keeps every RoCE header of plain, VLAN-tagged and ERSPAN
  over IPv4 mirrors (payload sizes come from the UDP length); use 256 for
  ERSPAN over IPv6 (a 40-byte outer IPv6 header, ERSPAN III with its
  platform subheader, an inner IPv6 header: about 190 bytes of headers).
  The default --filter keeps RoCEv2 (udp dst port 4791), RoCEv1 (ether
  proto 0x8915), GRE/ERSPAN (ip proto 47, ip6 proto 47), VXLAN (udp dst
  port 4789), PFC (ether proto 0x8808), the storage ports (tcp 4420, 8009,
  3260, 2049, 445, udp 2049) and SSH (tcp 22), untagged, 802.1Q-tagged and
  QinQ: what every report module reads but part of non_rdma_on_compute's,
  which sees SSH but not NCCL's bootstrap or other TCP and UDP between
  compute addresses (their ports vary). --filter '' keeps everything.
  Immediate mode is off: the kernel hands packets over in blocks when a
  block fills or every 100 ms, which costs far fewer wake-ups, and so fewer
  drops, at high packet rates than handing over each packet. --immediate
  turns it on (for a trickle of packets on a quiet link).

Writing (-w) keeps the original frames, as captured (cut to --snaplen), and
their timestamps, in nanosecond pcap files that every rocedump command
reads; "rocedump report" on them gives the same report as the live one
(but for the drop counters and the interface going down), unless a -W
ring went round and reused its files: they then hold only the last COUNT
files, and live says so.
Rotation works like tcpdump's: -C MB starts a new file once the current one
has grown past MB megabytes (1 MB = 1,000,000 bytes), -G SECONDS once it is
SECONDS old, -W COUNT keeps at most COUNT files. Files are named FILE,
FILE1, FILE2, ... without -W, and FILE0 ... FILE<COUNT-1> (zero-padded to
the digits of COUNT-1) with it, reused in a ring. Unlike tcpdump, FILE is
not expanded with strftime, -G numbers its files too, and -G with -W keeps
a ring rather than exiting.

Drops: the kernel (buffer full) and interface drop counters go into the
report's capture section; any drop makes a critical capture_health finding,
since a PSN gap may then be the capture's loss rather than the fabric's.
Raise -B, keep the snap length small, or narrow the filter; loss findings
say when drops make them unreliable. An interface that goes down (taken
down, or its link lost) is shown on the live view, and each time it was
down is a capture problem and a capture_health warning: nothing was
captured then, and no drop counter counts it.

Needs root or CAP_NET_RAW (and CAP_NET_ADMIN for promiscuous mode):
  sudo setcap cap_net_raw,cap_net_admin=eip $(which rocedump)
and a build with cgo and libpcap.

Exit codes: 0 no finding at or above --fail-on, 1 findings at or above it,
2 usage error, no such interface, no permission, or a capture or -w write
that failed (the report of what was captured is still printed).`,
		Example: `  sudo rocedump live -i ens1f1 --duration 60s --topology pod.yaml
  sudo rocedump live -i ens1f1 -w /captures/incident.pcap -C 1000 -W 10 --format markdown -o ticket.md
  sudo rocedump live -i erspan0 --snaplen 256 -c 1000000 --format json > report.json
  rocedump report /captures/incident.pcap*    # the same report, offline`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			parent := cmd.Context()
			if parent == nil {
				parent = context.Background()
			}
			ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
			defer stop()
			// The first signal stops the capture; the next one ends the
			// process, removing a report's temporary -o file first.
			second := make(chan func(), 1)
			go func() {
				<-ctx.Done()
				second <- removeTempsOnSignal()
				stop()
			}()
			defer func() {
				stop() // ends ctx, if no signal did
				(<-second)()
			}()
			opts.Context = ctx
			if !cmd.Flags().Changed("filter") {
				opts.Filter = capture.DefaultLiveFilter()
			}
			opts.Report.FormatFromOutput = !cmd.Flags().Changed("format")
			if runF != nil {
				return runF(opts)
			}
			return liveRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Interface, "interface", "i", "", "capture on `IFACE` (\"any\" for every interface)")
	f.IntVarP(&opts.SnapLen, "snaplen", "s", capture.DefaultLiveSnapLen, "bytes kept of each frame, 0 for whole frames (256 for ERSPAN over IPv6)")
	f.BoolVar(&opts.Promisc, "promisc", true, "promiscuous mode (a mirror port needs it); --promisc=false to turn off")
	f.IntVarP(&opts.BufferMiB, "buffer-size", "B", capture.DefaultLiveBufferSize>>20, "kernel capture buffer in `MiB`")
	f.StringVarP(&opts.Filter, "filter", "f", "", "BPF capture filter `EXPR` (pcap-filter(7)) instead of the default (RoCE, mirrors, PFC, storage, SSH); '' keeps everything")
	f.BoolVar(&opts.Immediate, "immediate", false, "hand each packet over at once (more drops at high rates)")
	f.DurationVar(&opts.Interval, "interval", time.Second, "refresh the live view every `D`; 0 turns it off")
	f.DurationVar(&opts.Duration, "duration", 0, "stop after `D` (e.g. 30s, 5m); 0: until Ctrl-C")
	f.IntVarP(&opts.Count, "count", "c", 0, "stop after `N` packets; 0: no limit")
	f.IntVar(&opts.Top, "top", 10, "flows on the live view")
	f.StringVarP(&opts.Write, "write", "w", "", "write the captured frames to pcap `FILE` as they come")
	f.Float64VarP(&opts.FileSizeMB, "file-size", "C", 0, "with -w: start a new file once the current one is over `MB` megabytes")
	f.IntVarP(&opts.RotateSecs, "rotate-seconds", "G", 0, "with -w: start a new file every `SECONDS`")
	f.IntVarP(&opts.FileCount, "file-count", "W", 0, "with -w and -C or -G: keep at most `COUNT` files, in a ring")
	addReportFlags(f, &opts.Report)
	return cmd
}

// Bounds of live's rotation flags: a file size or an interval past them
// overflows the writer's int64 bytes or nanoseconds.
const (
	maxFileSizeMB  = 1e9 // 1 PB
	maxRotateSecs  = int(noMaxDuration / time.Second)
	maxLiveSnapLen = 262144
)

// checkLiveOptions validates the capture flags.
func checkLiveOptions(o *LiveOptions) error {
	if o.Interface == "" {
		return usageErrorf("-i IFACE is required (the interface to capture on)")
	}
	if err := firstError(
		checkFlag("--snaplen", o.SnapLen, 0, maxLiveSnapLen, "0 (whole frames) to 262144"),
		checkFlag("--buffer-size", o.BufferMiB, 1, 1<<14, "1 to 16384 MiB"),
		checkFlag("--interval", o.Interval, 0, noMaxDuration, "0 (no live view) or a duration above 0"),
		checkFlag("--duration", o.Duration, 0, noMaxDuration, "0 (until Ctrl-C) or a duration above 0"),
		checkFlag("-c", o.Count, 0, noMaxInt, "0 (no limit) or more"),
		checkFlag("--top", o.Top, 0, noMaxInt, "0 or more"),
		checkFlag("-C", o.FileSizeMB, 0, maxFileSizeMB, "0 (no size limit) to 1e9 MB"),
		checkFlag("-G", o.RotateSecs, 0, maxRotateSecs, "0 (no time limit) or more seconds"),
		checkFlag("-W", o.FileCount, 0, noMaxInt, "0 (no ring) or more"),
	); err != nil {
		return err
	}
	switch {
	case o.Write == "" && (o.FileSizeMB > 0 || o.RotateSecs > 0 || o.FileCount > 0):
		return usageErrorf("-C, -G and -W need -w FILE")
	case o.Write == "-":
		return usageErrorf("-w -: write the packets to a file; standard output carries the report")
	case o.FileCount > 0 && o.FileSizeMB == 0 && o.RotateSecs == 0:
		return usageErrorf("-W needs -C or -G: without rotation there is only one file")
	case o.Write != "" && reportOverwritesCapture(o):
		return usageErrorf("-o %s is a file -w %s writes: the report would replace the capture", o.Report.Output, o.Write)
	}
	return nil
}

// reportOverwritesCapture says whether -o names a file that -w writes:
// the same path under another spelling (./f, an absolute path, a
// directory or file symlink), or, with rotation (-C, -G), one of the
// numbered files FILE1, FILE2, ... or FILE0 ... of the ring. The report
// is written at the end, over the capture of the incident it is about.
func reportOverwritesCapture(o *LiveOptions) bool {
	if o.Report.Output == "" || o.Report.Output == "-" {
		return false
	}
	w, out := resolvedPath(o.Write), resolvedPath(o.Report.Output)
	if w == out {
		return true
	}
	if o.FileSizeMB == 0 && o.RotateSecs == 0 {
		return false
	}
	seq, ok := strings.CutPrefix(out, w)
	return ok && seq != "" && strings.Trim(seq, "0123456789") == ""
}

// resolvedPath is the absolute path p names once symlinks are followed
// (of its directory only, when p does not exist yet), as the files are
// opened: -w by os.Create, -o by createOutput.
func resolvedPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	} else if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(d, filepath.Base(p))
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

func liveRun(opts *LiveOptions) error {
	if err := checkLiveOptions(opts); err != nil {
		return err
	}
	opts.Report.IO = opts.IO
	topo, failOn, never, err := checkReportOptions(&opts.Report)
	if err != nil {
		return err
	}
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	open := opts.open
	if open == nil {
		open = openLiveHandle
	}
	src, err := open(capture.LiveConfig{
		Interface:  opts.Interface,
		SnapLen:    opts.SnapLen,
		Promisc:    opts.Promisc,
		BufferSize: opts.BufferMiB << 20,
		Filter:     opts.Filter,
		Immediate:  opts.Immediate,
	})
	if err != nil {
		return liveOpenError(err)
	}
	if lt := src.LinkType(); !packet.Supported(lt) {
		src.Close()
		return usageErrorf("%s: %v", opts.Interface, &packet.LinkTypeError{LinkType: lt})
	}
	var w *capture.RotatingWriter
	if opts.Write != "" {
		w, err = capture.NewRotatingWriter(capture.RotateConfig{
			Path:     opts.Write,
			LinkType: src.LinkType(),
			SnapLen:  src.SnapLen(),
			FileSize: int64(opts.FileSizeMB * 1e6),
			Interval: time.Duration(opts.RotateSecs) * time.Second,
			Count:    opts.FileCount,
		})
		if err != nil {
			src.Close()
			return usageErrorf("-w: %v", err)
		}
	}

	s := newLiveSession(opts, src, w, topo)
	screen := newLiveScreen(opts.IO)
	s.run(ctx, screen)
	rep := s.finish()
	screen.done(opts.Interval > 0 && (opts.Report.Output == "" || opts.Report.Output == "-") && screen.w == opts.IO.Out)

	if err := writeReport(&opts.Report, rep); err != nil {
		return err
	}
	printProblems(opts.IO.ErrOut, s.st)
	e := opts.IO.ErrOut
	fmt.Fprintf(e, "rocedump: captured %s on %s in %s; dropped %d in the kernel, %d at the interface\n",
		reports.Plural(s.st.Packets, "packet"), opts.Interface, time.Since(s.start).Round(time.Millisecond), s.stats.KernelDrops, s.stats.InterfaceDrops)
	if w != nil {
		printWritten(e, w.Files(), s.writeErr)
	}
	n := rep.AtOrAbove(failOn)
	fmt.Fprintf(e, "rocedump: %s\n", findingsLine(rep))
	switch {
	case s.writeErr != nil:
		return &exitError{code: ExitUsage, err: fmt.Errorf("writing %s: %w", opts.Write, s.writeErr)}
	case s.captureErr != nil:
		return &exitError{code: ExitUsage, err: fmt.Errorf("the capture on %s failed: %w", opts.Interface, s.captureErr)}
	case !never && n > 0:
		return failOnError(n, failOn)
	}
	return nil
}

// openLiveHandle opens a libpcap capture.
func openLiveHandle(cfg capture.LiveConfig) (liveSource, error) {
	h, err := capture.OpenLive(cfg)
	if err != nil {
		return nil, err
	}
	return h, nil
}

// liveOpenError turns a failure to open the capture into the message and
// exit code (2) the user sees.
func liveOpenError(err error) error {
	var le *capture.LiveError
	if !errors.As(err, &le) {
		return usageErrorf("%v", err)
	}
	switch {
	case errors.Is(err, capture.ErrLivePermission):
		return usageErrorf("rocedump live needs root or CAP_NET_RAW: sudo setcap cap_net_raw,cap_net_admin=eip $(which rocedump) (%s: %s)", le.Interface, le.Reason)
	case errors.Is(err, capture.ErrNoSuchInterface):
		have := "none found"
		if len(le.Available) > 0 {
			have = strings.Join(le.Available, ", ")
		}
		return usageErrorf("no interface %q; the interfaces are: %s", le.Interface, have)
	case errors.Is(err, capture.ErrNoLiveCapture):
		return usageErrorf("%v", capture.ErrNoLiveCapture)
	case errors.Is(err, capture.ErrLiveFilter):
		return usageErrorf("--filter: %s", le.Reason)
	}
	return usageErrorf("%s: %s", le.Interface, le.Reason)
}

// printWritten says which -w files were written, and, when a ring (-W)
// went round, that the files no longer hold everything the report
// counts. After a write error (reported with the exit code) the file being
// written is not among them: only the files the rotation had closed
// before it, if any.
func printWritten(e io.Writer, files []string, writeErr error) {
	if writeErr == nil {
		fmt.Fprintf(e, "rocedump: wrote %s\n", liveFilesLine(files))
		if n := len(uniqueFiles(files)); n < len(files) {
			fmt.Fprintf(e, "rocedump: warning: the -W ring reused its files: they hold the last %d of the %d files written, "+
				"so \"rocedump report\" on them covers less than this report\n", n, len(files))
		}
		return
	}
	if len(files) == 0 {
		return
	}
	failed := files[len(files)-1]
	var done []string
	for _, f := range files {
		if f != failed { // a ring (-W) may have reused its name
			done = append(done, f)
		}
	}
	if len(done) > 0 {
		fmt.Fprintf(e, "rocedump: wrote %s before writing %s failed\n", liveFilesLine(done), failed)
	}
}

// liveFilesLine names the files written: all of them, or the first and
// last few of a long list. A name reused in a ring counts once.
func liveFilesLine(files []string) string {
	uniq := uniqueFiles(files)
	if len(uniq) <= 4 {
		return strings.Join(uniq, ", ")
	}
	return fmt.Sprintf("%d files: %s, %s, ..., %s", len(uniq), uniq[0], uniq[1], uniq[len(uniq)-1])
}

// uniqueFiles is files with each name once, where it first comes.
func uniqueFiles(files []string) []string {
	var uniq []string
	seen := map[string]bool{}
	for _, f := range files {
		if !seen[f] {
			seen[f] = true
			uniq = append(uniq, f)
		}
	}
	return uniq
}
