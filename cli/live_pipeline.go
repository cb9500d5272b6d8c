package cli

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
)

// frameAnalyzer is the per-frame step of every analysis pass, over files
// (analyze) and live (rocedump live): decode the frame, count it in the
// capture statistics, and feed it to the sinks. Both passes go through
// this one step, which is what makes a live report equal to the offline
// report of the files it wrote.
type frameAnalyzer struct {
	st *captureStats
	// The sinks: nil, the one sink, or a sinkList of them. A pass has
	// one sink (but in tests); calling it alone, not in a loop over a
	// slice, cut the one-core pass by ~13 instructions a frame
	// (BENCHMARKS.md, session 23): the loop kept its index, its slice and
	// the frame's pointers on the stack across the call.
	sink    packetSink
	dec     packet.Decoder
	pkt     packet.Packet
	skipped map[skippedFrom]bool // link types rocedump does not decode, and the files that have them
	at      flows.FrameAt        // the frame being added, for the sinks
	seq     uint64               // frames seen, kept or not: the next frame's FrameRef.Seq

	// st.First as flows.TimeNanos, which the frames' times are compared by
	// (flows.Earlier, flows.Later; st.lastNs is st.Last's). firstNs is
	// math.MinInt64 while st.First is zero (TimeNanos of the zero Time).
	firstNs int64
	// The frames whose times TimeNanos holds from st.First's on (not
	// before, not past it) are those of nanoseconds ns with
	// uint64(ns-spanLo) < spanWide, none while st.First is zero: such a
	// frame leaves st.First as it is, and is the latest when ns is above
	// st.lastNs (see noteSpan).
	spanLo   int64
	spanWide uint64

	// A worker of a sharded pass (see analyze and relay) keeps only the
	// frames of shard of split: those the relay routed to it by their IPv4
	// addresses, and of the frames it could not route (every worker gets
	// them) the packets of the flows split gives it and, on shard 0, every
	// frame that is no flow's. It counts only those in st, and tells the
	// skippers among its sinks the time of the other frames
	// (keyOtherShard).
	shard    int
	split    flows.Split
	share    float64 // split.Share(shard)
	skippers []frameSkipper

	// nanosFit says that the frames being added have times whose
	// Record.TimeNanos is flows.TimeNanos of their time (see
	// capture.Reader.TimesFitNanos): worker.run sets it for every batch.
	nanosFit bool

	// Looking ahead (see addBatch): the first sink that takes hints (the
	// one holding the flow table), and the keys of the frames of the
	// batch.
	prefetcher flowPrefetcher
	slots      slotPrefetcher // prefetcher's PrefetchSlot, or its flow table's
	keys       [batchFrames]frameKey
}

// frameSkipper is a sink that needs to know the time of the frames another
// worker keeps (reports.Collector: the capture's first and last time).
type frameSkipper interface {
	SkipAt(t time.Time, nanos int64) // nanos as flows.TimeNanos gives it
}

func newFrameAnalyzer(st *captureStats, sinks []packetSink) *frameAnalyzer {
	return newShardAnalyzer(st, sinks, 0, flows.NewSplit(1, 1))
}

// newShardAnalyzer is the frameAnalyzer of worker shard of split.
func newShardAnalyzer(st *captureStats, sinks []packetSink, shard int, split flows.Split) *frameAnalyzer {
	a := &frameAnalyzer{st: st, skipped: map[skippedFrom]bool{}, shard: shard, split: split, share: split.Share(shard)}
	a.firstNs, st.lastNs = flows.TimeNanos(st.First, 0), flows.TimeNanos(st.Last, 0)
	st.lastAt = st.lastNs
	a.setSpan()
	switch len(sinks) {
	case 0:
	case 1:
		a.sink = sinks[0]
	default:
		a.sink = sinkList(sinks)
	}
	for _, s := range sinks {
		if k, ok := s.(frameSkipper); ok {
			a.skippers = append(a.skippers, k)
		}
		if p, ok := s.(flowPrefetcher); ok && a.prefetcher == nil {
			a.prefetcher, a.slots = p, p
			if c, ok := p.(*reports.Collector); ok {
				a.slots = c.Table // what Collector.PrefetchSlot calls
			}
		}
		if r, ok := s.(payloadReader); ok {
			r.ReadPayloadsFrom(&a.dec)
		}
	}
	return a
}

// add decodes and accounts one frame of input file number file (an index
// into st.Files). It returns the decoded packet, valid until the next
// call, or nil when the frame's link type is one rocedump does not decode
// or another worker keeps the frame. It allocates nothing.
func (a *frameAnalyzer) add(rec *capture.Record, file int) *packet.Packet {
	var k frameKey // not peeked: decoded to find its share
	return a.addPeeked(rec, file, &k)
}

// addPeeked is add for a frame whose key peek has read, or not (a zero
// frameKey: the frame is decoded to find its share).
//
// Of the capture's span it keeps only the latest frame's time as an
// integer (st.lastNs) for the common frame; the rest is noteSpan's.
func (a *frameAnalyzer) addPeeked(rec *capture.Record, file int, k *frameKey) *packet.Packet {
	st, pkt := a.st, &a.pkt
	seq := a.seq
	a.seq++
	ts := rec.Timestamp
	ns := a.timeNanos(rec)
	if k.state == keyOtherShard {
		a.skip(ts, ns)
		return nil
	}
	peeked := k.state != keyNone
	// The sinks read the frame's FrameRef through a pointer (see
	// flows.Table.AddFrame), written field by field here, well before they
	// load it.
	at := &a.at
	at.File, at.Frame, at.Time, at.Seq, at.Nanos = file, rec.Number, ts, seq, ns
	err := a.dec.DecodeRecord(rec, pkt)
	if a.split.Shards() > 1 && !peeked {
		owner := 0
		if err == nil && pkt.Kind == packet.KindRoCE && pkt.HasBTH {
			owner = a.split.Of(pkt)
		}
		if owner != a.shard {
			a.skip(rec.Timestamp, ns)
			return nil
		}
	}
	st.Packets++
	if uint64(ns-a.spanLo) < a.spanWide { // the common frame: see noteSpan
		st.lastNs = max(st.lastNs, ns)
	} else {
		a.noteSpan(rec.Timestamp, ns)
	}
	// (one line, for the offsets default.pgo knows this function's lines by)
	if err != nil {
		st.Unsupported++
		a.skipped[skippedFrom{rec.LinkType, file}] = true
		return nil
	}
	if pkt.Truncated {
		st.countTruncated(pkt)
	}
	switch pkt.Kind {
	case packet.KindRoCE:
		st.RoCE++
		if pkt.ICRC != bth.ICRCOK {
			st.countICRC(pkt.ICRC)
		}
	case packet.KindMalformed:
		st.Malformed++
	}
	if s := a.sink; s != nil { // see sink
		s.AddFrame(pkt, at)
	}
	return pkt
}

// sinkList is the sink of a frameAnalyzer of several sinks: each in turn.
type sinkList []packetSink

func (l sinkList) AddFrame(p *packet.Packet, at *flows.FrameAt) {
	for _, s := range l {
		s.AddFrame(p, at)
	}
}

// timeNanos is flows.TimeNanos of rec's time: rec.TimeNanos as it is when
// the input says it fits (nanosFit).
func (a *frameAnalyzer) timeNanos(rec *capture.Record) int64 {
	if a.nanosFit {
		return rec.TimeNanos
	}
	return flows.TimeNanos(rec.Timestamp, rec.TimeNanos)
}

// noteSpan is addPeeked's update of st.First and st.Last for a frame of
// time ts, of flows.TimeNanos ns, that the common case (spanLo, spanWide)
// does not take: the first, one without a time, one at or before st.First,
// and one TimeNanos cannot hold. A frame without a time (the zero Time of
// a pcapng Simple Packet Block) says nothing about the capture's span:
// kept as st.First, it would read as "no frame yet" and the next frame
// would replace it.
func (a *frameAnalyzer) noteSpan(ts time.Time, ns int64) {
	st := a.st
	if (a.firstNs == math.MinInt64 && st.First.IsZero() || flows.Earlier(ns, ts, a.firstNs, st.First)) && !ts.IsZero() {
		st.First, a.firstNs = ts, ns
		a.setSpan()
	}
	// st.Last is behind st.lastNs only for a time TimeNanos holds, which
	// Later then compares alone.
	if flows.Later(ns, ts, st.lastNs, st.Last) {
		st.Last, st.lastNs, st.lastAt = ts, ns, ns
	}
}

// setSpan sets spanLo and spanWide for st.First: the frames from
// firstNs (past math.MinInt64, the time of frames without one) to those
// before math.MaxInt64. Such a frame's time t is after or at st.First, so
// flows.Earlier is false, and flows.Later is t past st.lastNs.
func (a *frameAnalyzer) setSpan() {
	a.spanLo, a.spanWide = math.MaxInt64, 0
	if !a.st.First.IsZero() {
		a.spanLo = max(a.firstNs, math.MinInt64+1)
		a.spanWide = uint64(math.MaxInt64 - a.spanLo)
	}
}

// skip tells the skippers the time of a frame another worker keeps, t of
// flows.TimeNanos ns.
func (a *frameAnalyzer) skip(t time.Time, ns int64) {
	for _, s := range a.skippers {
		s.SkipAt(t, ns)
	}
}

// mergeWorkers adds the counts of other workers' analyzers of the same
// pass (each counted the frames it kept) to a's.
func (a *frameAnalyzer) mergeWorkers(others []*frameAnalyzer) {
	st := a.st
	st.settleLast()
	for _, o := range others {
		os := o.st
		os.settleLast()
		st.Packets += os.Packets
		st.RoCE += os.RoCE
		st.Malformed += os.Malformed
		st.Truncated += os.Truncated
		st.RoCETruncated += os.RoCETruncated
		st.ICRCBad += os.ICRCBad
		st.Unchecked += os.Unchecked
		st.Unsupported += os.Unsupported
		if !os.First.IsZero() && (st.First.IsZero() || os.First.Before(st.First)) {
			st.First = os.First
		}
		if os.Last.After(st.Last) {
			st.Last = os.Last
		}
		for k := range o.skipped {
			a.skipped[k] = true
		}
	}
}

// skippedFrom is a link type rocedump does not decode and the input file
// that has frames of it (an index into captureStats.Files).
type skippedFrom struct {
	lt   capture.LinkType
	file int
}

// skippedIn returns the link types of the frames skipped, lowest first,
// and the files that have them, in the order of st.Files.
func (a *frameAnalyzer) skippedIn() ([]capture.LinkType, []string) {
	var lts []capture.LinkType
	var idx []int
	for k := range a.skipped {
		if !slices.Contains(lts, k.lt) {
			lts = append(lts, k.lt)
		}
		if k.file >= 0 && k.file < len(a.st.Files) && !slices.Contains(idx, k.file) {
			idx = append(idx, k.file)
		}
	}
	slices.Sort(lts)
	slices.Sort(idx)
	files := make([]string, len(idx))
	for i, f := range idx {
		files[i] = a.st.Files[f]
	}
	return lts, files
}

// alsoOfLinkTypes names the link types of skipped frames after the one an
// error names: "; also of link type ERF (197), LINKTYPE_147", or "".
func alsoOfLinkTypes(lts []capture.LinkType) string {
	if len(lts) == 0 {
		return ""
	}
	names := make([]string, len(lts))
	for i, lt := range lts {
		names[i] = lt.String()
	}
	return "; also of link type " + strings.Join(names, ", ")
}

// maxNamedFiles is the most files a message on skipped frames names.
const maxNamedFiles = 5

// inFiles names the files that hold skipped frames, when several captures
// are analysed together: "; in a.pcap, b.pcapng", the first maxNamedFiles
// and how many more.
func inFiles(files []string) string {
	if len(files) == 0 {
		return ""
	}
	s := "; in " + strings.Join(files[:min(len(files), maxNamedFiles)], ", ")
	if n := len(files) - maxNamedFiles; n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	return s
}

// finish notes the frames of link types rocedump does not decode: a
// problem when other frames were read, an input error (exit 2) when every
// frame was of such a type.
func (a *frameAnalyzer) finish() error {
	st := a.st
	if st.Unsupported == 0 {
		return nil
	}
	// In order, so that the message is the same from run to run.
	lts, files := a.skippedIn()
	msg := fmt.Sprintf("%s%s: %v", reports.SkippedFramesNote, reports.Plural(st.Unsupported, "frame"), &packet.LinkTypeError{LinkType: lts[0]})
	msg += alsoOfLinkTypes(lts[1:]) + inFiles(files)
	if st.Unsupported == st.Packets {
		return &exitError{code: ExitUsage, err: errors.New(msg)}
	}
	st.Problems = append(st.Problems, msg)
	return nil
}
