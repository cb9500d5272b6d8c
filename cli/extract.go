package cli

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
)

// ExtractOptions are the inputs of `rocedump extract`.
type ExtractOptions struct {
	IO IOStreams

	Captures  []string
	Output    string
	FlowIDs   []int
	QPNs      []string
	Pairs     []string
	NoPartner bool
}

// NewCmdExtract builds `rocedump extract`. runF replaces extractRun in tests.
func NewCmdExtract(ios IOStreams, runF func(*ExtractOptions) error) *cobra.Command {
	opts := &ExtractOptions{IO: ios}
	cmd := &cobra.Command{
		Use:   "extract -o OUT.pcap [--flow N | --qpn QPN | --pair A,B]... CAPTURE...",
		Short: "Write the packets of chosen flows to a new capture for a ticket",
		Long: `Write the packets of chosen QP flows to a new capture file that Wireshark
opens, with the original frames (mirror encapsulation and all) and
timestamps: the file to attach to an incident ticket.

Choose flows by the number that "rocedump flows" prints (--flow, on the
same captures), by destination QP (--qpn), or by address pair (--pair A,B:
both directions between A and B). Each chosen flow brings its partner (the
flow with its ACKs, NAKs, READ responses and CNPs) unless --no-partner is
given. Several selectors add up.

The output is pcap (nanosecond timestamps) unless OUT ends in .pcapng, which
is needed when the chosen frames come from interfaces of different link
types, and keeps each input interface (name, description, timestamp
resolution, snap length) as one output interface; an OUT ending in .gz
(x.pcap.gz, x.pcapng.gz) is gzip-compressed.
"-o -" writes to standard output. OUT is written to a temporary file next
to it and renamed to OUT only when every packet is written, so a failed
run leaves no broken OUT; OUT may not be one of the captures.

CAPTURE is a pcap or pcapng file (gzip or not) or a directory of them (files
in it that are not captures are skipped with a warning). Standard input and
pipes are not accepted: extract reads its input twice, once to number the
flows as "rocedump flows" does and once to copy their packets.`,
		Example: `  rocedump flows mirror.pcap            # note the flow number, say 7
  rocedump extract --flow 7 -o qp-7.pcap mirror.pcap
  rocedump extract --qpn 0x1a2b,0x1a2c -o qps.pcap /captures/incident-4711/
  rocedump extract --pair 10.0.3.17,10.0.5.17 -o pair.pcapng mirror.pcapng`,
		Args: needArgs("capture", "CAPTURE is a pcap or pcapng file (gzip-compressed or not) or a directory of them, not standard input"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Captures = args
			if runF != nil {
				return runF(opts)
			}
			// Interrupted, the run leaves no temporary -o file behind.
			defer removeTempsOnSignal()()
			return extractRun(opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "write the packets to `FILE` (.pcap or .pcapng, gzip-compressed when it ends in .gz; - for stdout), replaced only once complete; not one of the captures")
	f.IntSliceVar(&opts.FlowIDs, "flow", nil, "flow `NUMBER`s as printed by rocedump flows")
	f.StringSliceVar(&opts.QPNs, "qpn", nil, "destination `QPN`s (decimal or 0x hex)")
	f.StringSliceVar(&opts.Pairs, "pair", nil, "address `PAIR`s A,B (repeat the flag for several pairs)")
	f.BoolVar(&opts.NoPartner, "no-partner", false, "do not add each chosen flow's partner flow")
	return cmd
}

// flowChoice is the set of flows to extract, by the flows' identity in a
// table built over the same input.
type flowChoice struct {
	ids   map[int]bool
	qpns  map[uint32]bool
	pairs map[[2]netip.Addr]bool
}

func parseFlowChoice(o *ExtractOptions) (*flowChoice, error) {
	c := &flowChoice{ids: map[int]bool{}, qpns: map[uint32]bool{}, pairs: map[[2]netip.Addr]bool{}}
	for _, id := range o.FlowIDs {
		if id < 1 {
			return nil, usageErrorf("--flow %d: flow numbers start at 1", id)
		}
		c.ids[id] = true
	}
	for _, q := range o.QPNs {
		v, err := strconv.ParseUint(strings.TrimSpace(q), 0, 32)
		if err != nil || v > 0xFFFFFF {
			return nil, usageErrorf("--qpn %q: want a 24-bit QP number such as 0x11 or 17", q)
		}
		c.qpns[uint32(v)] = true
	}
	for i := 0; i < len(o.Pairs); i++ {
		// StringSlice splits "A,B" into two values: take them two by two.
		if i+1 >= len(o.Pairs) {
			return nil, usageErrorf("--pair %q: want two addresses, A,B", o.Pairs[i])
		}
		a, err1 := netip.ParseAddr(strings.TrimSpace(o.Pairs[i]))
		b, err2 := netip.ParseAddr(strings.TrimSpace(o.Pairs[i+1]))
		if err1 != nil || err2 != nil {
			return nil, usageErrorf("--pair %s,%s: want two IP addresses", o.Pairs[i], o.Pairs[i+1])
		}
		c.pairs[[2]netip.Addr{a, b}], c.pairs[[2]netip.Addr{b, a}] = true, true
		i++
	}
	if len(c.ids)+len(c.qpns)+len(c.pairs) == 0 {
		return nil, usageErrorf("choose flows with --flow, --qpn or --pair")
	}
	return c, nil
}

// checkRereadable refuses a capture named on the command line that is
// not a regular file: a named pipe, or the /dev/fd/N of a shell's
// <(zcat ...), gives its bytes once, and the second pass found it empty
// after the first had read it all ("writing OUT: /dev/fd/63: empty file").
func checkRereadable(files []string) error {
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && !st.Mode().IsRegular() {
			return usageErrorf("extract reads its input twice: %s is not a regular file (a pipe?): save the capture to a file first", f)
		}
	}
	return nil
}

func (c *flowChoice) match(f *flows.Flow) bool {
	return c.ids[f.ID] || c.qpns[f.Key.DestQP] || c.pairs[[2]netip.Addr{f.Key.Src, f.Key.Dst}]
}

func extractRun(opts *ExtractOptions) error {
	if opts.Output == "" {
		return usageErrorf("give the output file with -o")
	}
	choice, err := parseFlowChoice(opts)
	if err != nil {
		return err
	}
	// Both passes read the same files: expanded once.
	files, err := expandCaptures(opts.Captures, opts.IO.ErrOut)
	if err != nil {
		return err
	}
	if slices.Contains(files, "-") {
		return usageErrorf("extract reads its input twice: give a file, not standard input")
	}
	if err := checkRereadable(files); err != nil {
		return err
	}
	if err := checkOutputNotInput(opts.Output, files); err != nil {
		return err
	}
	if err := probeOutput(opts.Output); err != nil {
		return err
	}
	// Pass 1: build the flow table to learn which flows (and epochs) are chosen.
	table := flows.NewTable(flows.Config{})
	st, err := analyze(analyzeOptions{Files: files, Progress: opts.IO.ErrOut, Sinks: []packetSink{table}})
	if err != nil {
		return err
	}
	table.Finish()
	chosen := map[int]bool{}
	for _, f := range table.Flows() {
		if choice.match(f) {
			chosen[f.ID] = true
			if f.Partner != nil && !opts.NoPartner {
				chosen[f.Partner.ID] = true
			}
		}
	}
	for id := range choice.ids {
		if id > table.Len() {
			return usageErrorf("--flow %d: the captures hold %d flows", id, table.Len())
		}
	}
	if len(chosen) == 0 {
		return usageErrorf("no flow matches the selection")
	}

	// The output replaces a file there only once every packet is written
	// (see outputFile).
	file, err := createOutput(opts.Output, opts.IO.Out)
	if err != nil {
		return usageErrorf("%v", err)
	}
	defer file.discard()
	name := strings.ToLower(opts.Output)
	var sink io.Writer = file
	var gz *gzip.Writer
	if base, ok := strings.CutSuffix(name, ".gz"); ok {
		name, gz = base, gzip.NewWriter(file)
		sink = gz
	}
	bw := bufio.NewWriterSize(sink, 1<<20)
	out := newFrameWriter(bw, strings.HasSuffix(name, ".pcapng"))

	// Pass 2: a table built the same way puts each packet in the same flow.
	replay := flows.NewTable(flows.Config{})
	var written int
	var werr error
	// The IPv4 datagrams whose first fragment was written: their later
	// fragments go with it, so that the output can be reassembled.
	frags := map[ipv4FragKey]bool{}
	_, err = analyze(analyzeOptions{Files: files, Sinks: []packetSink{replay},
		Opened: func(m *capture.Merger) { out.in = m },
		Each: func(rec *capture.Record, file int, p *packet.Packet) {
			if werr != nil {
				return
			}
			var chosenRoCE bool
			if p.Kind == packet.KindRoCE && p.HasBTH {
				f := replay.Current(flows.Key{Src: p.Src, Dst: p.Dst, DestQP: p.BTH.DestQP})
				chosenRoCE = f != nil && chosen[f.ID]
			}
			write := chosenRoCE
			if k, first, last, ok := ipv4Fragment(rec.LinkType, rec.Data); ok {
				switch {
				case first && chosenRoCE:
					frags[k] = true
				case first:
					delete(frags, k) // another datagram of the same ID
				default:
					write = frags[k]
					if last {
						delete(frags, k)
					}
				}
			}
			if write {
				if werr = out.write(rec, file); werr == nil {
					written++
				}
			}
		}})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && gz != nil {
		err = gz.Close()
	}
	if err == nil {
		err = file.commit()
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", opts.Output, err)
	}
	// The problems of the input (skipped link types, cut-off files), as
	// flows and report give them: pass 2 had the same.
	printProblems(opts.IO.ErrOut, st)
	to := opts.Output
	if to == "-" {
		to = "standard output" // "to -" read like a word left out
	}
	fmt.Fprintf(opts.IO.ErrOut, "rocedump: wrote %s of %s to %s\n", reports.Plural(written, "packet"), reports.Plural(len(chosen), "flow"), to)
	return nil
}

// ipv4FragKey names an IPv4 datagram among its fragments (RFC 791 §3.2).
type ipv4FragKey struct {
	src, dst [4]byte
	proto    uint8
	id       uint16
}

// ipv4Fragment reports whether the outermost IP datagram of a frame of
// link type lt (Ethernet with its VLAN tags, Linux cooked, raw IP) is an
// IPv4 fragment, which datagram, and whether it is its first fragment
// (offset 0) or its last (MF clear). A mirror's GRE datagrams sent without
// DF are fragmented so, and so is a RoCE datagram sent without it.
func ipv4Fragment(lt capture.LinkType, b []byte) (k ipv4FragKey, first, last, ok bool) {
	be := binary.BigEndian
	var off int
	switch lt {
	case capture.LinkTypeEthernet:
		off = 12
		for n := 0; n <= 8 && len(b) >= off+2; n++ {
			et := be.Uint16(b[off:])
			if et != 0x8100 && et != 0x88a8 && et != 0x9100 {
				break
			}
			off += 4
		}
		if len(b) < off+2 || be.Uint16(b[off:]) != 0x0800 {
			return k, false, false, false
		}
		off += 2
	case capture.LinkTypeLinuxSLL:
		if len(b) < 16 || be.Uint16(b[14:]) != 0x0800 {
			return k, false, false, false
		}
		off = 16
	case capture.LinkTypeLinuxSLL2:
		if len(b) < 20 || be.Uint16(b) != 0x0800 {
			return k, false, false, false
		}
		off = 20
	case capture.LinkTypeRaw, capture.LinkTypeIPv4:
	default:
		return k, false, false, false
	}
	ip := b[off:]
	if len(ip) < 20 || ip[0]>>4 != 4 {
		return k, false, false, false
	}
	const moreFragments, offsetMask = 0x2000, 0x1fff
	frag := be.Uint16(ip[6:])
	if frag&(moreFragments|offsetMask) == 0 {
		return k, false, false, false
	}
	k = ipv4FragKey{src: [4]byte(ip[12:16]), dst: [4]byte(ip[16:20]), proto: ip[9], id: be.Uint16(ip[4:])}
	return k, frag&offsetMask == 0, frag&moreFragments == 0, true
}

// frameWriter writes records to pcap (one link type) or pcapng (any).
// Into pcapng, each input interface a frame comes from (of its file) is
// one output interface, with its name, description, timestamp resolution,
// snap length and FCS length.
type frameWriter struct {
	w      io.Writer
	ng     bool
	pcap   *capture.PcapWriter
	pcapLT capture.LinkType
	png    *capture.PcapngWriter
	in     *capture.Merger // the input, to look up a frame's interface; nil: by link type
	ifaces map[inIface]int // input interface to output interface
}

// inIface is an interface of an input file: the file's index and the
// interface's among all of the file's (see capture.Reader.InterfaceOf).
type inIface struct{ file, idx int }

func newFrameWriter(w io.Writer, pcapng bool) *frameWriter {
	return &frameWriter{w: w, ng: pcapng, ifaces: map[inIface]int{}}
}

// outIface returns the output interface of rec, from file, adding it the
// first time; false if rec's input interface is not known.
func (fw *frameWriter) outIface(rec *capture.Record, file int) (int, bool, error) {
	if fw.in == nil {
		return 0, false, nil
	}
	idx, ifc, ok := fw.in.InterfaceOf(file, rec)
	if !ok || ifc.LinkType != rec.LinkType {
		return 0, false, nil
	}
	key := inIface{file, idx}
	if id, seen := fw.ifaces[key]; seen {
		return id, true, nil
	}
	id, err := fw.png.AddInterface(ifc)
	if err != nil {
		return 0, false, err
	}
	fw.ifaces[key] = id
	return id, true, nil
}

func (fw *frameWriter) write(rec *capture.Record, file int) error {
	ts := rec.Timestamp
	if ts.IsZero() {
		// A pcapng Simple Packet Block has no time, and neither file
		// format can say so: the epoch, as editcap writes it, rather
		// than failing the extract.
		ts = time.Unix(0, 0)
	}
	if fw.ng {
		if fw.png == nil {
			var err error
			if fw.png, err = capture.NewPcapngWriter(fw.w); err != nil {
				return err
			}
		}
		id, ok, err := fw.outIface(rec, file)
		if err != nil {
			return err
		}
		if !ok {
			return fw.png.WritePacket(ts, rec.LinkType, rec.Data, rec.OrigLen)
		}
		return fw.png.WriteInterfacePacket(id, ts, rec.Data, rec.OrigLen)
	}
	if fw.pcap == nil {
		var err error
		if fw.pcap, err = capture.NewPcapWriter(fw.w, rec.LinkType, 0); err != nil {
			return err
		}
		fw.pcapLT = rec.LinkType
	}
	if rec.LinkType != fw.pcapLT {
		return fmt.Errorf("frames of link types %v and %v cannot share a pcap file; name the output .pcapng", fw.pcapLT, rec.LinkType)
	}
	return fw.pcap.WritePacket(ts, rec.Data, rec.OrigLen)
}
