package flows

import (
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

// Key identifies a QP flow: packets from Src to Dst for destination QP DestQP.
type Key struct {
	Src, Dst netip.Addr
	DestQP   uint32
}

// Reverse is the key of the flow carrying the other direction of a
// connection, given the QPN at this flow's source.
func (k Key) Reverse(srcQP uint32) Key { return Key{Src: k.Dst, Dst: k.Src, DestQP: srcQP} }

// Compare orders keys by source, destination, then QPN.
func (k Key) Compare(o Key) int {
	if c := k.Src.Compare(o.Src); c != 0 {
		return c
	}
	if c := k.Dst.Compare(o.Dst); c != 0 {
		return c
	}
	switch {
	case k.DestQP < o.DestQP:
		return -1
	case k.DestQP > o.DestQP:
		return 1
	}
	return 0
}

// FrameRef names one frame: the index of its file among the inputs, its
// 1-based number in that file, and its capture time. Seq is the frame's
// 0-based position in the whole (merged) input of an analysis pass: the
// order in which the pass saw it, which is what puts back together the
// results of workers that each took a share of the flows.
type FrameRef struct {
	File  int
	Frame int
	Time  time.Time
	Seq   uint64
}

// FrameAt is a FrameRef with its time in nanoseconds as TimeNanos gives
// it: what the per-packet path takes (Table.AddFrame), which orders, bins
// and compares frames by the integer instead of the time.Time, several
// times cheaper on every packet. The flows keep FrameRefs.
type FrameAt struct {
	FrameRef
	Nanos int64
	// hint, if hintSeq is Seq, is the frame's flow as a look-ahead found
	// it (SetHint): the table takes it instead of looking the key up again.
	hint    Hint
	hintSeq uint64
}

// SetHint tells the table the flow that PrefetchFlow found for the frame of
// FrameRef.Seq seq, before the frame's turn: adding that frame then skips
// the key's lookup when the hint still holds (the table has not started a
// new epoch of a key since, see Hint). It is for a caller that sets a's
// fields frame by frame and knows the frame's Seq before it sets them: a
// hint set for another Seq is ignored, so a stale one does no harm.
func (a *FrameAt) SetHint(h Hint, seq uint64) { a.hint, a.hintSeq = h, seq }

// At is r with Nanos from r.Time.
func At(r FrameRef) FrameAt { return FrameAt{FrameRef: r, Nanos: TimeNanos(r.Time, r.Time.UnixNano())} }

// The range of seconds for which TimeNanos is t.UnixNano(): every
// nanosecond of these seconds fits in an int64.
const (
	minNanosSec = math.MinInt64/1_000_000_000 + 1
	maxNanosSec = math.MaxInt64/1_000_000_000 - 1
)

// TimeNanos returns t in Unix nanoseconds, t.UnixNano(), for times from
// 1678 to 2262, and for times outside those years (the zero Time among
// them, or a pcapng timestamp past what nanoseconds hold) math.MinInt64
// before and math.MaxInt64 after: unlike UnixNano, which wraps there, it
// never orders two times the wrong way round, though it may make two
// times equal (see Later). unixNano is t.UnixNano() when the caller has
// it at hand (capture.Record.TimeNanos), which spares computing it again.
func TimeNanos(t time.Time, unixNano int64) int64 {
	switch s := t.Unix(); {
	case s < minNanosSec:
		return math.MinInt64
	case s > maxNanosSec:
		return math.MaxInt64
	}
	return unixNano
}

// Later says whether the time t, of TimeNanos ns, is after last, of
// TimeNanos lastNs: t.After(last), decided by the integers but for the
// two times TimeNanos makes equal outside the years it holds.
func Later(ns int64, t time.Time, lastNs int64, last time.Time) bool {
	if ns != lastNs {
		return ns > lastNs
	}
	return (ns == math.MinInt64 || ns == math.MaxInt64) && t.After(last)
}

// Earlier is Later for t.Before(first).
func Earlier(ns int64, t time.Time, firstNs int64, first time.Time) bool {
	if ns != firstNs {
		return ns < firstNs
	}
	return (ns == math.MinInt64 || ns == math.MaxInt64) && t.Before(first)
}

// PairMethod says how a flow's partner was found.
type PairMethod uint8

// Pairing methods.
const (
	PairNone PairMethod = iota // no partner found
	PairCM                     // named by an RDMA CM REQ/REP exchange in the capture
	PairPSN                    // the partner's ACK or READ response PSNs fall in this flow's request PSNs
)

// String returns "none", "cm" or "psn".
func (m PairMethod) String() string {
	switch m {
	case PairCM:
		return "cm"
	case PairPSN:
		return "psn"
	}
	return "none"
}

// CMInfo is what an RDMA CM exchange said about a flow's connection. A
// snap length that cut the REQ or REP can leave the service ID or the
// starting PSN out (HasServiceID, HasStartPSN false, the value zero); the
// QPNs and communication IDs that tie the exchange to its flows are always
// there.
type CMInfo struct {
	ServiceID    uint64
	HasServiceID bool   // the REQ's ServiceID was captured
	IPService    bool   // ServiceID is an IP CM service (Annex A11)
	PortSpace    uint8  // IP CM port space (0x06 TCP, ...)
	Port         uint16 // IP CM service port (4420 NVMe-oF, 3260 iSER, 20049 NFS/RDMA, 5445 SMB Direct)
	StartPSN     uint32 // starting PSN of this flow's requests, from the REQ or REP
	HasStartPSN  bool   // StartPSN was captured
	SrcQP        uint32 // QPN at this flow's source
	CommID       uint32 // local communication ID of the side that sends this flow
	Frame        FrameRef
}

// Flow is one QP flow: see the package doc for the meaning of each counter.
//
// The fields are laid out for the per-packet path (BENCHMARKS.md,
// "Proposals" 2, within one struct since the exported counters stay
// fields): a Flow is 960 bytes, 15 cache lines, and a packet touches the
// first ones: lines 0-2 for every packet (the counters every packet
// updates, and what it reads to count its opcode, DSCP and port), line 3
// for a request (its PSN state, which the partner's responses read too,
// and the stamps that tell its mirror copies), lines 4-5 for a response.
// The rest (identity, first frame, rare counters, state behind pointers:
// see flowCold) is touched rarely. An odd number of lines spreads the
// flows of a slab over the cache's sets; a power of two would put their
// hot lines in a few. TestFlowLayout checks the layout. Exported fields
// hold their values whenever Add is not running.
type Flow struct {
	// Every packet: cache lines 0 and 1.

	Packets      uint64 // every packet, CNPs and bad-ICRC frames included
	WireBytes    uint64 // sum of IP total lengths: right on truncated captures
	PayloadBytes uint64 // sum of RDMA payload lengths (no headers, pad or ICRC; CNPs carry none)
	Last         FrameRef

	ECN [4]uint64 // packets per ECN codepoint: not-ECT, ECT(1), ECT(0), CE

	binIndex  int64  // current 1 ms rate bin (Unix ms)
	binBytes  uint64 // wire bytes in the current bin
	Truncated uint64 // frames cut by the snap length

	// Every packet: cache line 2 (read; written on a new value).

	opInline   [opcodeInline]uint64 // packed (opcode + 1, count) of the opcodes after the first; 0 is free
	dscpInline [valueInline]uint64  // packed (value + 1, count) of the DSCP values after the first

	// Messages counts request messages once each: the first copy of each
	// SEND/WRITE LAST or ONLY, RDMA READ request (not a re-issue) and
	// atomic. READ responses are not counted: a READ counts on the flow of
	// its request.
	Messages uint64

	LastPSN   uint32        // see FirstPSN
	opFirst   uint16        // first opcode + 1 (uncounted: see sortedOpcodes); 0 before the first packet
	dscpFirst uint16        // first DSCP value + 1 (uncounted); 0 before the first packet
	ports     portSet       // 6 bytes
	pmtu      uint16        // path MTU of the source QP, once a packet showed it; 0 before
	Transport bth.Transport // of the first packet that is not a CNP; TransportCNP for a flow of CNPs only
	HasPSN    bool          // the flow had a packet that is not a CNP (FirstPSN, LastPSN)
	cmPending bool          // a CM exchange for Key arrived after this flow began (see Table.startsEpoch)
	readResp  bool          // the flow carried a READ response (ReadResponses is not empty)
	lastOp    bth.Opcode    // opcode of the last ACK or atomic ACK counted, to recognise its mirror copy
	hasCM     bool          // CM is set (Table.newFlow): read by every response (Table.requester), CM's own line by few
	naksHeld  bool          // a NAK or RNR NAK this flow carried, with no single requester known, is pending on the flows it may answer (Table.settleNAKs)
	readOpen  bool          // the highest READ response so far was a FIRST or MIDDLE: its READ had more to come (rereads)

	// Requests: cache line 3 (with the first half of Requests), which
	// fits also reads for every response the partner carries.

	retx     *retxState // NAK, episode and gap state; nil until the first
	respLink *Flow      // the flow whose responses last answered this one's requests, online
	reqW     stamps     // when the requests' PSNs were first captured (mirror copies); reqW.last: the last request's capture time

	// Requests: PSN state of the requests this flow carries.
	Requests PSNStats

	// Responses (ACKs, NAKs, READ and atomic responses): lines 4 and 5.

	resp    respTracker // PSNs of the ACKs and responses this flow carries
	pairOne *Flow       // the only candidate partner pair holds, once found (see pairEvidence)

	// Every packet, for its caller (reports.Collector keys its per-flow
	// state on it): in line 5, which the look-ahead loads (hotFlowLines).
	ID int // 1-based, in the order flows first appear in the capture

	// Rare: the rest of the flow.

	cold      *flowCold     // rare counter values and READ state; nil until needed
	pair      *pairEvidence // candidate partners its responses allow, once it carries one
	reqLink   *Flow         // CM: the flow whose requests this one's responses answer
	hostNext  *Flow         // the next flow with the same source and destination (Table.byHosts)
	peakBytes uint64        // most wire bytes in any 1 ms bin before the current one

	Key   Key
	Epoch int    // 0 for the first connection seen on Key, 1 for the next, ...
	SrcQP uint32 // QPN at the source, when known (DETH, CM, or the partner's key); HasSrcQP says so

	// FirstPSN and LastPSN are the PSNs of the first and the last packet
	// of the flow that is not a CNP (a CNP carries no meaningful PSN),
	// requests and responses alike, but for the datagrams of a UD flow's
	// other source QPs (OtherSenders), whose PSNs are their own; HasPSN
	// says the flow had such a packet.
	FirstPSN uint32

	PKey     uint16 // P_Key of the first packet
	VLAN     uint16 // VLAN of the first packet, when tagged
	HasVLAN  bool
	HasSrcQP bool
	PairedBy PairMethod

	First FrameRef

	CNPs    uint64 // CNPs this flow carries (addressed to DestQP)
	ECNCE   uint64 // packets whose IP ECN field is CE (congestion experienced)
	FECN    uint64 // packets with the BTH FECN bit
	BECN    uint64 // packets with the BTH BECN bit (CNPs set it)
	ICRCBad uint64 // whole frames whose ICRC did not verify (counted as any other packet too)

	// ReadResponses: PSN state of the RDMA READ responses this flow carries.
	ReadResponses PSNStats

	NAKs     [5]uint64 // NAKs this flow carries, indexed by bth.NAKCode (psn_seq_err ... invalid_rd_request)
	NAKOther uint64    // NAKs with a reserved code
	RNRNAKs  uint64    // RNR NAKs this flow carries

	Partner *Flow   // the flow carrying this one's ACKs and READ responses (and the reverse), nil if none
	CM      *CMInfo // the CM exchange that set up this flow's connection, if captured

	// Retx: resend episodes, re-issued READs and the mirror or fabric
	// loss of the requests this flow carries.
	Retx RetxStats
}

// flowCold is the state of a flow that few packets touch, allocated at its
// first use: opcode, DSCP and UDP port values beyond those the Flow keeps
// inline, RNR timer counts, the last two RDMA READ requests (and the one
// whose first responses the capture lacks), and what tells a resend from a
// mirror's copy (see mirror.go).
type flowCold struct {
	opcodes      []OpcodeCount            // opcodes beyond Flow.opInline's
	dscp         []ValueCount             // DSCP values beyond Flow.dscpInline's
	ports        []uint16                 // ports beyond portSet's inline ones
	rnrTimers    []ValueCount             // RNR NAKs per timer value
	lastRead     readState                // the last RDMA READ request, to recognise a re-issue
	prevRead     readState                // the READ request before lastRead, for the READ responses' gaps (skipOthers)
	missedRead   readState                // the READ whose first responses the last gap of its READ responses skipped, for its copy (Flow.readCopyDue)
	resent       [2]resendRun             // the last run of resends of the requests and of the READ responses
	resentBefore [2][runsBefore]resendRun // the runs before each, the latest first (Flow.noteResent)
	reissue      pendingPSN               // a re-issued READ the partner sent: the READ response it asks for again
	lostRead     pendingPSN               // a READ request re-issued from a READ response the capture lacks (Table.reissuesLost)
	lastLost     lostReissue              // the last such re-issue, for its copy
	copies       uint64                   // MirrorDuplicates
	otherSenders uint64                   // OtherSenders
	spaceCopies  [3]uint64                // of copies, the sequenced ones by space (xRequests...): a parallel file's view starts from them (xfile.go)
	spaceCopied  *[3]psnRing              // and their PSNs, when the table has parallel files (xfile.go)
	cnps         *cnpRing                 // the latest CNPs, for their copies (cnp.go)
	cnpsCE       uint64                   // CNPsCE
	lag          int64                    // the last copy of the flow's last request: its time after the request, ns (Flow.readCopyDue)
	files        *fileSeqs                // the flow's sequences per file, once it came from parallel files (xfile.go)
}

// MirrorDuplicates is the number of packets of this flow that the mirror
// delivered a second time (see the package doc, "Mirror copies"): they
// are in no other counter.
func (f *Flow) MirrorDuplicates() uint64 {
	if f.cold == nil {
		return 0
	}
	return f.cold.copies
}

// OtherSenders is the number of datagrams a UD flow carried from source
// QPs other than its own (SrcQP: its first datagram's DETH, or the RDMA
// CM exchange that named the flow before it carried any), as several
// processes of one host sending to one destination QP do (otherSender).
// Each sender numbers its datagrams in a PSN sequence of its own, so
// they are in no PSN space of the flow: Requests, its PSNs, gaps and
// epochs are the flow's own source QP's, and Requests.Packets does not
// count them. They count in Packets, bytes and Messages, and they are
// requests (SEND), as the flow's own datagrams are.
func (f *Flow) OtherSenders() uint64 {
	if f.cold == nil {
		return 0
	}
	return f.cold.otherSenders
}

// SetMirrorDuplicates sets what MirrorDuplicates returns, for a Flow made
// from a flow record (reports.Merge) rather than by a Table.
func (f *Flow) SetMirrorDuplicates(n uint64) {
	if n != 0 || f.cold != nil {
		f.coldState().copies = n
	}
}

// CNPsCE is the number of this flow's CNPs whose IP ECN field is CE:
// counted in ECNCE too, so that ECNCE - CNPsCE are the other packets a
// switch marked (the congestion finding's ce_marked, over the packets
// that are not CNPs).
func (f *Flow) CNPsCE() uint64 {
	if f.cold == nil {
		return 0
	}
	return f.cold.cnpsCE
}

// SetCNPsCE sets what CNPsCE returns, for a Flow made from a flow record
// (reports.Merge) rather than by a Table.
func (f *Flow) SetCNPsCE(n uint64) {
	if n != 0 || f.cold != nil {
		f.coldState().cnpsCE = n
	}
}

func (f *Flow) coldState() *flowCold {
	if f.cold == nil {
		f.cold = new(flowCold)
	}
	return f.cold
}

// unixTime is a capture time in 12 bytes instead of time.Time's 24: Unix
// seconds and nanoseconds, exact for any time a capture holds.
type unixTime struct {
	sec  int64
	nsec int32
}

func toUnixTime(t time.Time) unixTime { return unixTime{t.Unix(), int32(t.Nanosecond())} }

func (u unixTime) time() time.Time { return time.Unix(u.sec, int64(u.nsec)) }

// PSNStats is the sequence state of one PSN space of a flow.
type PSNStats struct {
	Packets  uint64 // sequenced packets
	FirstPSN uint32 // PSN of the first sequenced packet
	LastPSN  uint32 // PSN of the last sequenced packet
	HighPSN  uint32 // highest PSN seen (24-bit serial order)

	seq  sequencer              // the PSNs expected next
	gaps *[maxOpenGaps]psnRange // open gaps (seq.nGaps of them); nil until the first

	Retransmitted uint64 // packets behind the highest PSN at a PSN already carried (or not remembered as skipped), and re-issued READs
	PSNGaps       uint64 // forward jumps past the expected PSNs
	MissingPSNs   uint64 // PSNs skipped by gaps and not seen since (as far as the last 8 open gaps tell)
	OutOfOrder    uint64 // packets behind the highest PSN filling a PSN skipped by an open gap
}

// Duration is the time from the first to the last packet; 0 when the
// capture's clock went back between them (the last packet, in capture
// order, has the earlier time), rather than a negative duration and rate.
func (f *Flow) Duration() time.Duration { return max(0, f.Last.Time.Sub(f.First.Time)) }

// MeanBitsPerSecond is the mean wire rate over the flow's duration; 0 for a
// flow of one packet.
func (f *Flow) MeanBitsPerSecond() float64 {
	d := f.Duration()
	if d <= 0 {
		return 0
	}
	return float64(f.WireBytes) * 8 / d.Seconds()
}

// PeakBitsPerSecond is the highest wire rate over any 1 ms bin.
func (f *Flow) PeakBitsPerSecond() float64 {
	peak := max(f.peakBytes, f.binBytes)
	return float64(peak) * 8 * 1000
}

// Opcodes returns the packets per opcode, ordered by opcode.
func (f *Flow) Opcodes() []OpcodeCount { return f.sortedOpcodes() }

// DSCP returns the packets per DSCP value, ordered by DSCP.
func (f *Flow) DSCP() []ValueCount { return f.sortedDSCP() }

// RNRTimers returns the RNR NAKs per RNR timer value (IBTA Table 45).
func (f *Flow) RNRTimers() []ValueCount {
	if f.cold == nil {
		return nil
	}
	return sortedValues(nil, f.cold.rnrTimers)
}

// SrcPorts returns the UDP source ports seen, sorted, and whether more than
// the remembered maximum were seen.
func (f *Flow) SrcPorts() (ports []uint16, more bool) {
	ports = f.ports.list(f.cold)
	slices.Sort(ports)
	return ports, f.ports.more
}

// NAKTotal is the number of NAKs of any code this flow carries.
func (f *Flow) NAKTotal() uint64 {
	n := f.NAKOther
	for _, c := range f.NAKs {
		n += c
	}
	return n
}

// Retransmitted is the number of retransmitted packets, requests and READ
// responses together.
func (f *Flow) Retransmitted() uint64 {
	return f.Requests.Retransmitted + f.ReadResponses.Retransmitted
}

// PSNGaps is the number of PSN gaps, requests and READ responses together.
func (f *Flow) PSNGaps() uint64 { return f.Requests.PSNGaps + f.ReadResponses.PSNGaps }

// RetxAndGaps returns Retransmitted and PSNGaps of a flow a Table keeps,
// for code that asks after every packet (reports.Collector): it reads the
// READ responses' state, which lies in the cold part of the Flow, only on
// a flow that carried one, which saves a cache miss per packet.
func (f *Flow) RetxAndGaps() (retx, gaps uint64) {
	retx, gaps = f.Requests.Retransmitted, f.Requests.PSNGaps
	if f.readResp {
		retx += f.ReadResponses.Retransmitted
		gaps += f.ReadResponses.PSNGaps
	}
	return retx, gaps
}

// PartnerQPN is the partner flow's destination QPN (this flow's source QP),
// and whether there is a partner.
func (f *Flow) PartnerQPN() (uint32, bool) {
	if f.Partner == nil {
		return 0, false
	}
	return f.Partner.Key.DestQP, true
}

// respTracker follows the PSNs of the responses a flow carries (ACKs, NAKs,
// READ and ATOMIC responses): they name PSNs of the partner's requests.
// Their positions (respPos) only go forward, so the highest says both the
// highest response PSN and the highest PSN acknowledged (ackedHigh).
type respTracker struct {
	count   uint32   // responses, wrapping: pairing looks again at doubling counts, and after 2^32 at none
	top     uint32   // highest response position (respPos)
	w       marks    // marks of top, for the copies of responses (see mirror.go)
	slot    uint32   // slot of capture time of the last response (slotOf, low 32 bits)
	started bool     // a response was seen (top is set)
	lastSyn uint8    // AETH syndrome and MSN (low 16 bits) of the last ACK or atomic ACK, for its copy
	lastMSN uint16   //
	ackedAt FrameRef // the response that first acknowledged ackedHigh
}

// high is the highest response PSN.
func (r *respTracker) high() uint32 { return r.top >> 1 }

// acked says whether a response acknowledged a PSN (ackedHigh is set):
// every response does, a NAK the PSNs before its own.
func (r *respTracker) acked() bool { return r.started }

// ackedHigh is the highest PSN acknowledged: a response's PSN, the one
// before it for a NAK or RNR NAK (IBTA vol 1 §9.7.5.2).
func (r *respTracker) ackedHigh() uint32 { return posThrough(r.top) }

// posThrough is the PSN a response at position pos acknowledges through.
func posThrough(pos uint32) uint32 { return (pos - 1) & posMask >> 1 }

// turns says whether a response in slot is the first or the first of
// another slot than the last response's: then turn.
func (r *respTracker) turns(slot uint32) bool { return slot != r.slot || !r.started }

// turn starts the marks at the first response, at pos and frame at, or a
// new slot.
func (r *respTracker) turn(pos, slot uint32, at *FrameRef) {
	if !r.started {
		r.started, r.top, r.ackedAt = true, pos, *at
		r.w.begin(pos, posMask)
	} else {
		r.w.turn(r.top, slot == r.slot+1)
	}
	r.slot = slot
}

// advance makes pos, of a response at frame at, the highest when it is
// past it, and at the response that first acknowledged ackedHigh when
// that moves too.
func (r *respTracker) advance(pos uint32, at *FrameRef) {
	if d := (pos - r.top) & posMask; d == 0 || d >= posHalf { // posDiff(pos, r.top) <= 0
		return
	}
	if posThrough(pos) != posThrough(r.top) {
		r.ackedAt = *at
	}
	r.top = pos
}

// respPos is a response's position among the responses of a flow: its
// PSN, then a NAK or RNR NAK before an ACK or READ or atomic response at
// that PSN (the NAK acknowledges the PSNs before it, the others their
// own), in 25 bits. A responder's responses go forward in this order.
// A response whose AETH the snap length cut (aethCut) may be a NAK, so it
// takes a NAK's place: it acknowledges only the PSNs before its own.
func respPos(h *bth.BTH) uint32 {
	pos := h.PSN<<1 | 1
	if h.Ext&bth.HasAETH != 0 {
		if k := h.AETH.Kind(); k == bth.AckKindNAK || k == bth.AckKindRNRNAK {
			pos &^= 1
		}
	} else if aethCut(h) {
		pos &^= 1
	}
	return pos & posMask
}

// aethCut says whether h's opcode carries an AETH (IBTA vol 1 §9.3.5:
// ACKNOWLEDGE, ATOMIC ACKNOWLEDGE, READ response FIRST, LAST and ONLY)
// that the snap length cut: the syndrome that tells an ACK from a NAK is
// unknown. One compare for a packet whose headers were captured.
func aethCut(h *bth.BTH) bool {
	return h.Truncated && h.Opcode.Headers()&bth.HasAETH != 0
}

// posMask and posHalf are psnMask and psnHalf for positions.
const (
	posMask = 1<<25 - 1
	posHalf = 1 << 24
)

// posDiff is psnDiff for positions.
func posDiff(a, b uint32) int32 {
	d := (a - b) & posMask
	if d >= posHalf {
		return int32(d) - 1<<25
	}
	return int32(d)
}

// otherSender says whether h, a request to UD flow f, comes from another
// source QP (its DETH) than the flow's first: several UD QPs of one host
// may send to one destination QP (one per process of an MPI job over
// UCX's UD transport, say), and each numbers its datagrams in a PSN
// sequence of its own (the PSN is the sending QP's, IBTA vol 1 ch. 9). A
// flow's PSN sequence, last PSN, gaps and epochs follow its first source
// QP; the others' datagrams count in its packets, bytes and messages only.
// For an RC or UC flow it is one compare.
func (f *Flow) otherSender(h *bth.BTH) bool {
	return f.Transport == bth.TransportUD && f.HasSrcQP && h.Ext&bth.HasDETH != 0 && h.DETH.SrcQP != f.SrcQP
}
