package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/filter"
	"github.com/rocedump/rocedump/reports"
)

// ReadOptions are the inputs of `rocedump read`.
type ReadOptions struct {
	IO IOStreams

	Files      []string
	Verbose    bool
	Count      int
	Filter     string
	QPNs       []string
	Opcodes    []string
	Format     string
	TimeFormat string
	Workers    int
}

// NewCmdRead builds `rocedump read`. runF replaces readRun in tests.
func NewCmdRead(ios IOStreams, runF func(*ReadOptions) error) *cobra.Command {
	opts := &ReadOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "read [flags] CAPTURE... [-- FILTER EXPRESSION]",
		Short: "Print every RoCE packet of a capture, one line each (like tcpdump)",
		Long: `Print every RoCE packet in one or more captures, one line per packet, like
tcpdump: time, addresses, transport and opcode, destination QP, PSN, the key
extended-header fields, and lengths. Frames that arrive on UDP port 4791 but
do not hold a valid InfiniBand transport header are printed as malformed.

CAPTURE is a pcap or pcapng file, optionally gzip-compressed (the format is
detected from the magic bytes, not the name), a directory of them, or - for
standard input. Several captures are printed one after the other, each line
prefixed with its file. In a directory, files that are not captures (notes,
reports) are skipped with a warning.
Switch-mirror wrappers (ERSPAN I/II/III, GRE, VXLAN, 802.1Q/QinQ) are
stripped; frames cut by the mirror's snap length are decoded as far as they
go and marked truncated. The RDMA payload length is taken from the UDP
length, so it is right on truncated frames too.

A capture filter in pcap-filter(7) syntax (the language of tcpdump) can be
given with --filter or after "--"; it is applied to the frame as captured,
so on an ERSPAN capture "host" matches the outer (collector) addresses. As
in tcpdump it must apply to the link type of each file: inbound, outbound
and ifindex (SLL2) to Linux cooked captures, ether to Ethernet.
--qpn and --opcode select packets after decoding.

A summary goes to stderr at the end: packets read, RoCE packets, malformed
frames, truncated frames (RoCE or not, and how many of them are RoCE when
some are not: 433 truncated (429 RoCE)) and ICRC-bad frames. Frames of a
link type rocedump does not decode (ERF, say) are skipped with a warning
and the other files are read; when no frame at all could be decoded, the
exit code is 2.`,
		Example: `  # every RoCE packet of a capture
  rocedump read testdata/pcaps/real/linlinw5_rdma_write_bw.pcap

  # only the ACKs and NAKs of destination QP 0x11, with every header field
  rocedump read -v --qpn 0x11 --opcode ack,nak capture.pcapng

  # CNPs seen on one mirror session, as JSON lines for jq
  rocedump read --format json --opcode cnp mirror.pcap.gz -- 'ip proto 47'

  # the first 20 packets to or from one HCA
  rocedump read -c 20 capture.pcap --filter 'host 10.0.3.17'`,
		Args: needArgs("capture", captureArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n >= 0 {
				opts.Files = args[:n]
				if expr := strings.Join(args[n:], " "); expr != "" {
					if opts.Filter != "" {
						return usageErrorf("give the filter either with --filter or after --, not both")
					}
					opts.Filter = expr
				}
			} else {
				opts.Files = args
			}
			if len(opts.Files) == 0 {
				return usageErrorf("no capture file given")
			}
			// -v and --time shape the text lines only: with JSON they
			// were ignored without a word, and a script asking for
			// epoch times got RFC 3339 strings.
			if opts.Format == "json" {
				if opts.Verbose {
					return usageErrorf("-v is for --format text: --format json writes the same fields with or without it")
				}
				if cmd.Flags().Changed("time") {
					return usageErrorf("--time %s is for --format text: the time of --format json is always RFC 3339 in UTC, with nanoseconds", opts.TimeFormat)
				}
			}
			// An empty value ("--qpn ''", from an empty shell variable)
			// leaves the list empty, which would select every packet.
			for _, name := range []string{"qpn", "opcode"} {
				if v, _ := cmd.Flags().GetStringSlice(name); cmd.Flags().Changed(name) && len(v) == 0 {
					return usageErrorf("--%s: empty; give one or more %ss, or leave the flag out for all packets", name, strings.ToUpper(name))
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return readRun(opts)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "print every header field of each packet")
	f.IntVarP(&opts.Count, "count", "c", 0, "stop after printing `N` packets (0: all)")
	f.StringVarP(&opts.Filter, "filter", "f", "", "capture filter `EXPR` in pcap-filter(7) syntax, applied to the frame as captured")
	f.StringSliceVar(&opts.QPNs, "qpn", nil, "only packets to these destination `QPN`s (decimal or 0x hex; comma-separated or repeated)")
	f.StringSliceVar(&opts.Opcodes, "opcode", nil, "only these `OPCODE`s: a number (0x81), a name (RC_ACKNOWLEDGE, RDMA_WRITE_FIRST) or a class: send, write, read, atomic, ack, nak, rnr, cnp, cm (RDMA CM messages, not the other MADs on QP1)")
	f.StringVar(&opts.Format, "format", "text", "output format: text or json (one JSON object per packet, its time in RFC 3339; -v and --time are for text)")
	f.IntVar(&opts.Workers, "workers", 0, "format the packets on `N` goroutines while one reads the input, and print them in order "+
		"(0: one per CPU; at most 256; one with --count or --time rel; the output is the same for any N)")
	f.StringVar(&opts.TimeFormat, "time", "time", "timestamp style: time (time of day, UTC), date (date and time, UTC), "+
		"rel (seconds since the first frame read that has a time, printed or not, as tshark's frame.time_relative; with several captures, the first frame of the first), epoch")
	return cmd
}

// readStats are the counters of the summary line, and the frames of a
// link type rocedump does not decode (unsupported, in packets too).
type readStats struct {
	packets, roce, malformed, truncated, icrcBad, shown, unsupported int
	roceTruncated                                                    int // RoCE frames among truncated
}

// add adds o's counts to s.
func (s *readStats) add(o *readStats) {
	s.packets += o.packets
	s.roce += o.roce
	s.malformed += o.malformed
	s.truncated += o.truncated
	s.roceTruncated += o.roceTruncated
	s.icrcBad += o.icrcBad
	s.shown += o.shown
	s.unsupported += o.unsupported
}

// summary is the summary line: "120 packets read, 104 RoCE, 0 malformed,
// 0 truncated, 0 ICRC bad" ("1 packet read"; "5 truncated (2 RoCE)" when
// frames that are not RoCE were cut too: reports.TruncatedCount).
func (s *readStats) summary() string {
	return fmt.Sprintf("%s read, %d RoCE, %d malformed, %s, %d ICRC bad",
		countNoun(s.packets, "packet"), s.roce, s.malformed, reports.TruncatedCount(uint64(s.truncated), uint64(s.roceTruncated)), s.icrcBad)
}

// filterGivenAsFiles says what went wrong when the capture arguments end
// in a filter expression, as tcpdump takes it ("rocedump read mirror.pcap
// udp port 4791"): the first word that is not a file begins an
// expression that compiles. The error was "stat udp: no such file or
// directory".
func filterGivenAsFiles(files []string) error {
	for i, f := range files {
		if _, err := os.Stat(f); f == "-" || !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		expr := strings.Join(files[i:], " ")
		if newFilterCache(expr).check() != nil {
			return nil // not a filter: the missing file is the error
		}
		return usageErrorf("%s: no such file; a capture filter goes after -- or in --filter: rocedump read %s -- '%s'",
			f, strings.Join(files[:i], " "), expr)
	}
	return nil
}

// countNoun writes n and the noun, plural unless n is 1: "1 frame",
// "2 frames".
func countNoun(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// errStop ends the read loop early once -c packets were printed.
var errStop = errors.New("count reached")

func readRun(opts *ReadOptions) error {
	sel, err := newPacketSelector(opts.QPNs, opts.Opcodes)
	if err != nil {
		return err
	}
	filters := newFilterCache(opts.Filter)
	if err := filters.check(); err != nil {
		return err
	}
	if err := filterGivenAsFiles(opts.Files); err != nil {
		return err
	}
	files, err := expandCaptures(opts.Files, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	printer, err := newPacketPrinter(opts.Format, opts.TimeFormat, opts.Verbose, len(files) > 1)
	if err != nil {
		return err
	}
	if err := firstError(
		checkFlag("--count", opts.Count, 0, noMaxInt, "0 (all) or more"),
		checkWorkers(opts.IO.ErrOut, opts.Workers),
	); err != nil {
		return err
	}

	out := bufio.NewWriterSize(opts.IO.Out, 256<<10)
	var stats readStats
	h := &packetHandler{opts: opts, filters: filters, out: out, stats: &stats,
		frames: frameFormatter{sel: sel, printer: printer, stats: &stats}}
	if n := readWorkers(opts); n > 1 {
		h.pipe = newReadPipeline(n, out, func() frameFormatter {
			// The options were checked with the first printer.
			p, _ := newPacketPrinter(opts.Format, opts.TimeFormat, opts.Verbose, len(files) > 1)
			return frameFormatter{sel: sel, printer: p}
		})
		defer h.pipe.close()
	}
	var problems []fileProblem
	var runErr error
	for _, path := range files {
		probs, err := readFile(path, h)
		problems = append(problems, probs...)
		if errors.Is(err, errStop) {
			break
		}
		if err != nil {
			runErr = err
			break
		}
	}
	if err := out.Flush(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing output: %w", err)
	}
	if err := reportProblems(opts.IO.ErrOut, problems, &stats); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		// As flows and report: a fatal error is the last line, with no
		// summary of a run it cut short.
		return runErr
	}
	fmt.Fprintf(opts.IO.ErrOut, "rocedump: %s\n", stats.summary())
	return nil
}

// reportProblems prints the problems of the files read as warnings. As
// flows and report do, frames of link types rocedump does not decode are
// a warning while other frames were read, and an input error (exit 2)
// when every frame was of such a type: then the files' link-type problems
// are the error, not warnings.
func reportProblems(w io.Writer, problems []fileProblem, stats *readStats) error {
	none := stats.unsupported > 0 && stats.unsupported == stats.packets
	var undecodable []string
	for _, p := range problems {
		if none && p.unsupported {
			undecodable = append(undecodable, p.err.Error())
			continue
		}
		fmt.Fprintf(w, "rocedump: warning: %s\n", p.err)
	}
	if none {
		return &exitError{code: ExitUsage, err: errors.New(strings.Join(undecodable, "; "))}
	}
	return nil
}

// readWorkers is the number of goroutines that format the frames (see
// readPipeline): --workers, or one per CPU; one with --count or --time
// rel.
func readWorkers(opts *ReadOptions) int {
	if opts.Count > 0 || opts.TimeFormat == "rel" {
		return 1
	}
	if opts.Workers > 0 {
		return min(opts.Workers, maxWorkers)
	}
	return min(runtime.GOMAXPROCS(0), maxWorkers)
}

// fileProblem is a problem with one input file that does not end the run:
// a cut-off file or a bad record, which end that file but keep what was
// read before them, data after its gzip stream, ignored, or frames of a link type rocedump does not decode,
// which are skipped (unsupported).
type fileProblem struct {
	err         error
	unsupported bool
}

// packetHandler does the per-frame work of read: filter, decode, count,
// select and print, frame by frame on the caller's goroutine, or handing
// the frames to a readPipeline that formats them on several and prints
// them in order. It allocates nothing per frame (TestReadAllocs).
type packetHandler struct {
	opts    *ReadOptions
	filters *filterCache
	out     *bufio.Writer
	stats   *readStats
	frames  frameFormatter // the frames' work, when pipe is nil
	buf     []byte         // a frame's lines, when pipe is nil
	pipe    *readPipeline  // if not nil, does the frames' work
}

// flush writes out every frame handled so far.
func (h *packetHandler) flush() error {
	if h.pipe != nil {
		h.pipe.flush(h.stats)
	}
	if err := h.out.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// streamingInput says whether the capture at path ("-" for standard
// input) is a pipe, a terminal or another input that is not a regular
// file: one that may be written while it is read.
func streamingInput(path string) bool {
	var st os.FileInfo
	var err error
	if path == "-" {
		st, err = os.Stdin.Stat()
	} else {
		st, err = os.Stat(path)
	}
	return err == nil && !st.Mode().IsRegular()
}

// handle processes one record. It returns errStop once -c packets were
// printed, or a usage error for a filter that does not apply to the
// record's link type (filterCache.get).
func (h *packetHandler) handle(rec *capture.Record) error {
	f, err := h.filters.get(rec.LinkType)
	if err != nil {
		h.stats.packets++ // read, though not shown
		return err
	}
	if h.pipe != nil {
		h.pipe.add(rec, f)
		return nil
	}
	var shown bool
	h.buf, shown = h.frames.appendFrame(h.buf[:0], rec, f)
	if !shown {
		return nil
	}
	h.out.Write(h.buf)
	h.stats.shown++
	if h.opts.Count > 0 && h.stats.shown >= h.opts.Count {
		return errStop
	}
	return nil
}

// frameFormatter is the work of read on one frame of a link type it
// decodes: filter, decode, count it in stats, select and print it.
type frameFormatter struct {
	sel     *packetSelector
	printer *packetPrinter
	stats   *readStats
	dec     packet.Decoder
	pkt     packet.Packet
}

// appendFrame counts rec, and if it passes the capture filter f (nil: no
// filter) and the selection, appends its lines to b and says so.
func (ff *frameFormatter) appendFrame(b []byte, rec *capture.Record, f *filter.Filter) ([]byte, bool) {
	ff.stats.packets++
	if f != nil && !f.MatchLen(rec.Data, rec.OrigLen) {
		return b, false
	}
	pkt := &ff.pkt
	if err := ff.dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, pkt); err != nil {
		return b, false // callers check packet.Supported first
	}
	if pkt.Truncated {
		ff.stats.truncated++
	}
	switch pkt.Kind {
	case packet.KindRoCE:
		ff.stats.roce++
		if pkt.Truncated {
			ff.stats.roceTruncated++
		}
		if pkt.ICRC == bth.ICRCBad {
			ff.stats.icrcBad++
		}
	case packet.KindMalformed:
		ff.stats.malformed++
	default:
		return b, false
	}
	if !ff.sel.match(pkt) {
		return b, false
	}
	return ff.printer.appendLine(b, rec, pkt), true
}

// readFile reads one capture through h and returns its problems: the
// frames of link types rocedump does not decode, which are skipped and
// counted (readRun decides whether the run can go on without them), and
// a cut or bad record that ended the file, or the data after its gzip
// stream, ignored. err ends the run: a file that cannot be opened or read
// at all, errStop, or a filter that does not compile.
func readFile(path string, h *packetHandler) (problems []fileProblem, err error) {
	r, err := capture.Open(path)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	defer r.Close()
	// The filter must apply to every link type the file declares, as
	// tcpdump checks it for the file it opens; an interface declared later
	// in a pcapng file is checked at its first frame (handle).
	for _, lt := range r.LinkTypes() {
		if !packet.Supported(lt) {
			continue // skipped and reported below
		}
		if _, err := h.filters.get(lt); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}

	var (
		rec       capture.Record
		supported int
		skipped   = map[capture.LinkType]int{}
		end       error // what ended the file early, or the data after its gzip stream
	)
	h.frames.printer.startFile(path)
	if h.pipe != nil {
		h.pipe.startFile(path)
		defer h.pipe.flush(h.stats)
	}
	streaming := streamingInput(path)
	for {
		if streaming && r.Buffered() == 0 {
			// The next record may be a while coming (tcpdump -U -w - |
			// rocedump read -): what was read so far is printed first.
			if err := h.flush(); err != nil {
				return problems, err
			}
		}
		err := r.Next(&rec)
		if err == io.EOF {
			end = r.Trailing() // data after a gzip stream, or nil
			break
		}
		if err != nil {
			if supported == 0 && len(skipped) == 0 && !errors.Is(err, capture.ErrCutOff) && !errors.Is(err, capture.ErrBadRecord) {
				return nil, &exitError{code: ExitUsage, err: err}
			}
			end = err
			break
		}
		h.frames.printer.setZero(rec.Timestamp)
		if !packet.Supported(rec.LinkType) {
			h.stats.packets++
			h.stats.unsupported++
			skipped[rec.LinkType]++
			continue
		}
		supported++
		if err := h.handle(&rec); err != nil {
			if errors.Is(err, errStop) {
				return problems, err
			}
			return problems, fmt.Errorf("%s: %w", path, err) // the filter and this file's link type
		}
	}
	if len(skipped) > 0 {
		problems = append(problems, fileProblem{err: skippedFrames(path, skipped), unsupported: true})
	}
	if errors.Is(end, capture.ErrTrailingData) {
		end = fmt.Errorf("%s%w", reports.TrailingDataNote, end) // as the reports say it (problemText)
	}
	if end != nil {
		problems = append(problems, fileProblem{err: end})
	}
	return problems, nil
}

// skippedFrames says how many frames of path were of link types rocedump
// does not decode (counted in skipped), naming those, lowest first.
func skippedFrames(path string, skipped map[capture.LinkType]int) error {
	n := 0
	lts := make([]capture.LinkType, 0, len(skipped))
	for lt, c := range skipped {
		lts = append(lts, lt)
		n += c
	}
	slices.Sort(lts)
	return fmt.Errorf("%s: skipped %s: %w%s", path, countNoun(n, "frame"), &packet.LinkTypeError{LinkType: lts[0]}, alsoOfLinkTypes(lts[1:]))
}

// filterCache compiles the capture filter once per link type, when a file
// declares it (readFile; a pcapng interface declared after the first frame,
// at its first frame): some primitives apply to some link types only
// ("inbound" and "ifindex" to Linux cooked captures, "ether" to Ethernet),
// and tcpdump too compiles for the link type of the file it opens. A pcapng
// file may mix interfaces of different link types.
type filterCache struct {
	expr     string
	compiled map[capture.LinkType]*filter.Filter
}

func newFilterCache(expr string) *filterCache {
	return &filterCache{expr: strings.TrimSpace(expr), compiled: map[capture.LinkType]*filter.Filter{}}
}

// filterLinkTypes are the link types packet.Decode reads, one of each kind
// of link header: check tries the expression on these.
var filterLinkTypes = []capture.LinkType{
	capture.LinkTypeEthernet, capture.LinkTypeLinuxSLL, capture.LinkTypeLinuxSLL2,
	capture.LinkTypeRaw, capture.LinkTypeIPv4, capture.LinkTypeIPv6,
	capture.LinkTypeNull, capture.LinkTypeLoop,
}

// check compiles the expression for every link type rocedump reads, before
// any file is opened: an expression that is wrong whatever the frames
// (bad syntax, a bad value) or that applies to no link type is a usage
// error at once. One that applies to some link types only is checked
// again on the frames of each link type the input holds (get).
func (c *filterCache) check() error {
	if c.expr == "" {
		return nil
	}
	var errs []error
	for _, lt := range filterLinkTypes {
		_, err := c.get(lt)
		if err == nil {
			return nil
		}
		if !errors.Is(err, filter.ErrLinkType) {
			return err // the same for every link type
		}
		errs = append(errs, err)
	}
	return usageErrorf("filter %q applies to no link type rocedump reads: %v", c.expr, linkTypeErrors(errs))
}

// linkTypeErrors says what stops each token the link type errors are
// about, once per token: the first link type's message.
func linkTypeErrors(errs []error) string {
	var msgs []string
	seen := map[int]bool{}
	for _, err := range errs {
		var fe *filter.Error
		if !errors.As(err, &fe) {
			msgs = append(msgs, err.Error())
			continue
		}
		if !seen[fe.Pos] {
			seen[fe.Pos] = true
			msgs = append(msgs, fmt.Sprintf("%q (position %d): %s", fe.Token, fe.Pos, fe.Msg))
		}
	}
	return strings.Join(msgs, "; ")
}

// get returns the filter for frames of link type lt (nil: no filter), or a
// usage error if the expression does not apply to that link type.
func (c *filterCache) get(lt capture.LinkType) (*filter.Filter, error) {
	if c.expr == "" {
		return nil, nil
	}
	if f, ok := c.compiled[lt]; ok {
		return f, nil
	}
	f, err := filter.Compile(c.expr, uint32(filterLinkType(lt)))
	if err != nil {
		return nil, usageErrorf("%w", err)
	}
	c.compiled[lt] = f
	return f, nil
}

// filterLinkType is the link type the filter is compiled for: the frame's,
// except that the BSD values of raw IP (DLT_RAW is 12, 14 on OpenBSD),
// which packet.Decode reads as raw IP, are LINKTYPE_RAW, as libpcap reads
// them too.
func filterLinkType(lt capture.LinkType) capture.LinkType {
	if lt == 12 || lt == 14 {
		return capture.LinkTypeRaw
	}
	return lt
}
