package cli

import (
	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// Looking ahead. On a mirror of many busy QPs consecutive packets belong to
// different flows, and the per-flow state a packet touches (the flow
// table's index slot and flow, the report's series row) is a handful of
// cache misses: with tens of thousands of flows that state does not fit in the
// cache, and each miss waits for main memory in turn. addBatch takes the
// frames a capture.Reader hands out together (Reader.NextBatch), reads
// every frame's flow key at fixed offsets (packet.PeekRoCEv2IPv4QP), and
// asks the sinks to start loading a frame's index slot slotAhead frames
// before its turn and its flow flowAhead frames before: by the time the
// frame is decoded and added, its lines are on their way or there. The
// hints change nothing, so the results are those of add frame by frame
// (TestLookAheadChangesNothing checks the output). They cost ~45 ns a
// frame, which pays only when the flows' state does not fit in the cache:
// the sink says when (flows.Table.LookAheadPays), and until then the
// frames are added one by one.

// lookAhead says when a pass looks ahead: lookAheadAuto in the program;
// the tests compare lookAheadAlways with lookAheadNever (frames read and
// added one at a time), which the small captures they use would otherwise
// not tell apart.
var lookAhead = lookAheadAuto

const (
	lookAheadAuto   = iota // when the sink says it pays (LookAheadPays)
	lookAheadAlways        // whenever a sink takes hints
	lookAheadNever         // read and add frame by frame (batches of one)
)

// batchFrames is the most frames one addBatch takes.
const batchFrames = 64

// How many frames ahead the index slot and the flow of a frame are
// prefetched: the slot must have arrived when the flow's lookup reads it,
// and the flow's lines should arrive before the frame's turn. On the
// benchmark capture 8 and 4 did as well as 4 and 2 or 16 and 8 (within
// the host's noise), and better than looking one stage further, at the
// flow a response answers (BENCHMARKS.md).
const (
	slotAhead = 8
	flowAhead = 4
)

// flowPrefetcher is a sink that can start loading a flow's state ahead of
// its packets (flows.Table, reports.Collector). Addresses are IPv4, as
// packet.PeekRoCEv2IPv4 reads them.
type flowPrefetcher interface {
	PrefetchSlot(src, dst, qp uint32)
	PrefetchFlow(src, dst, qp uint32) flows.Hint
	LookAheadPays(share float64) bool
}

// slotPrefetcher is the part of a flowPrefetcher the look-ahead calls
// first. A report's sink, reports.Collector, forwards it to its flow
// table, which the pass calls directly instead: one call fewer a frame,
// -19.0 M instructions of the one-core pass on 2 M packets (BENCHMARKS.md,
// session 21). It stays an interface call, the one the compiler's profile
// (default.pgo) turns into a direct call to flows.Table.PrefetchSlot.
type slotPrefetcher interface {
	PrefetchSlot(src, dst, qp uint32)
}

// keyState says what peek learnt of a frame.
type keyState uint8

const (
	keyNone       keyState = iota // not a RoCEv2 frame over IPv4 at fixed offsets, or not peeked
	keyHosts                      // a RoCEv2 frame over IPv4 whose BTH is cut
	keyFlow                       // as keyHosts, with the BTH's destination QP: the flow key
	keyOtherShard                 // a frame another worker keeps (see relay)
)

// frameKey is what peek read of a frame, and what the look-ahead found of
// its flow (hint, see flows.Hint).
type frameKey struct {
	src, dst, qp uint32
	state        keyState
	hint         flows.Hint
}

// set makes k the frameKey of what packet.PeekRoCEv2IPv4QP returned, with
// no hint. It writes k's fields one by one: a frameKey returned by value
// and copied into a key of the batch was loaded 16 bytes at a time right
// after being stored 8 bytes at a time, which the processor cannot
// forward from store to load (perf put half of the batch loop's own
// samples on that copy).
func (k *frameKey) set(src, dst, qp uint32, ok, hasQP bool) {
	k.hint = flows.Hint{}
	switch {
	case !ok:
		k.src, k.dst, k.qp, k.state = 0, 0, 0, keyNone
	case !hasQP:
		k.src, k.dst, k.qp, k.state = src, dst, 0, keyHosts
	default:
		k.src, k.dst, k.qp, k.state = src, dst, qp, keyFlow
	}
}

// addBatch is add for frames that are valid together, all of input file
// number file, calling each (if not nil) after every frame the worker
// keeps, as add's caller does.
func (a *frameAnalyzer) addBatch(recs []capture.Record, file int, each func(rec *capture.Record, file int, p *packet.Packet)) {
	if !a.looksAhead() {
		for i := range recs {
			if p := a.add(&recs[i], file); p != nil && each != nil {
				each(&recs[i], file, p)
			}
		}
		return
	}
	for len(recs) > 0 {
		n := min(len(recs), batchFrames)
		keys := a.keys[:n]
		for i := range keys {
			rec := &recs[i]
			// The peek: the flow key of a RoCEv2 frame over IPv4 at
			// fixed offsets. Here rather than in a method of its own,
			// whose call cost ~12 instructions a frame (BENCHMARKS.md,
			// session 21).
			src, dst, qp, ok, hasQP := packet.PeekRoCEv2IPv4QP(rec.LinkType, rec.Data)
			keys[i].set(src, dst, qp, ok, hasQP)
		}
		a.addBatchAhead(recs[:n], keys, file, a.seq, each)
		recs = recs[n:]
	}
}

// looksAhead says whether the pass looks ahead now.
func (a *frameAnalyzer) looksAhead() bool {
	return a.prefetcher != nil && (lookAhead == lookAheadAlways || lookAhead == lookAheadAuto && a.prefetcher.LookAheadPays(a.share))
}

// addPicked adds the frames of a batch that pick lists (indexes into
// recs, in order), frame recs[i] with keys[i] (peek read them), of input
// file number file and FrameRef.Seq seq+i: the relay's own frames of a
// batch it read (see relay). It looks ahead when it pays (looksAhead).
func (a *frameAnalyzer) addPicked(recs []capture.Record, keys []frameKey, pick []int32, file int, seq uint64) {
	if !a.looksAhead() {
		for _, i := range pick {
			a.seq = seq + uint64(i)
			a.addPeeked(&recs[i], file, &keys[i])
		}
		return
	}
	a.addPickedAhead(recs, keys, pick, file, seq)
}

// addPickedAhead is addPicked looking ahead, indexing the batch through
// pick directly, as addBatchAhead does every frame of a batch: the
// general loop the two shared before (a run of frames with an index, file
// and sequence choice a frame) cost the two-worker pass ~20 instructions
// a frame more (BENCHMARKS.md, session 21).
func (a *frameAnalyzer) addPickedAhead(recs []capture.Record, keys []frameKey, pick []int32, file int, seq uint64) {
	n := len(pick)
	for _, i := range pick[:min(slotAhead, n)] {
		a.prefetchSlot(&keys[i])
	}
	for _, i := range pick[:min(flowAhead, n)] {
		a.prefetchFlow(&keys[i])
	}
	for j, i := range pick {
		if k := j + slotAhead; k < n {
			a.prefetchSlot(&keys[pick[k]])
		}
		if k := j + flowAhead; k < n {
			a.prefetchFlow(&keys[pick[k]])
		}
		a.seq = seq + uint64(i)
		a.at.SetHint(keys[i].hint, a.seq)
		a.addPeeked(&recs[i], file, &keys[i])
	}
}

// addBlock adds the frames of a relay's block for this worker: recs[i]
// with keys[i] (what the relay peeked), of input file number files[i] and
// FrameRef.Seq seqs[i]. It looks ahead when it pays (looksAhead).
func (a *frameAnalyzer) addBlock(recs []capture.Record, keys []frameKey, files []int32, seqs []uint64) {
	if !a.looksAhead() {
		for i := range recs {
			a.seq = seqs[i]
			a.addPeeked(&recs[i], int(files[i]), &keys[i])
		}
		return
	}
	a.addBlockAhead(recs, keys, files, seqs)
}

// addBlockAhead is addBlock looking ahead, indexing the block directly
// (see addPickedAhead).
func (a *frameAnalyzer) addBlockAhead(recs []capture.Record, keys []frameKey, files []int32, seqs []uint64) {
	n := len(recs)
	keys, files, seqs = keys[:n], files[:n], seqs[:n]
	for j := range min(slotAhead, n) {
		a.prefetchSlot(&keys[j])
	}
	for j := range min(flowAhead, n) {
		a.prefetchFlow(&keys[j])
	}
	for i := range recs {
		if k := i + slotAhead; k < n {
			a.prefetchSlot(&keys[k])
		}
		if k := i + flowAhead; k < n {
			a.prefetchFlow(&keys[k])
		}
		a.seq = seqs[i]
		a.at.SetHint(keys[i].hint, a.seq)
		a.addPeeked(&recs[i], int(files[i]), &keys[i])
	}
}

// addBatchAhead adds every frame of a batch looking ahead (one worker
// reading one file or a merge), frame recs[i] with keys[i] of input file
// file and FrameRef.Seq seq+i, prefetching each frame's state ahead of its
// turn, and calls each (if not nil) after every frame the worker keeps.
// Indexing the batch directly, without the index, file and sequence
// choices a frame of the general loop before it, cut the pass by 38
// instructions a frame (BENCHMARKS.md, session 20).
func (a *frameAnalyzer) addBatchAhead(recs []capture.Record, keys []frameKey, file int, seq uint64, each func(rec *capture.Record, file int, p *packet.Packet)) {
	n := len(recs)
	keys = keys[:n]
	for j := range min(slotAhead, n) {
		a.prefetchSlot(&keys[j])
	}
	for j := range min(flowAhead, n) {
		a.prefetchFlow(&keys[j])
	}
	// The frames with a frame slotAhead after them, then the rest: a loop
	// of each, without the checks a frame of one loop had for both
	// prefetches (BENCHMARKS.md, session 23).
	i := 0
	for ; i < n-slotAhead; i++ {
		a.prefetchSlot(&keys[i+slotAhead])
		a.prefetchFlow(&keys[i+flowAhead])
		a.seq = seq + uint64(i)
		a.at.SetHint(keys[i].hint, a.seq)
		if p := a.addPeeked(&recs[i], file, &keys[i]); p != nil && each != nil {
			each(&recs[i], file, p)
		}
	}
	for ; i < n; i++ {
		if k := i + flowAhead; k < n {
			a.prefetchFlow(&keys[k])
		}
		a.seq = seq + uint64(i)
		a.at.SetHint(keys[i].hint, a.seq)
		if p := a.addPeeked(&recs[i], file, &keys[i]); p != nil && each != nil {
			each(&recs[i], file, p)
		}
	}
}

func (a *frameAnalyzer) prefetchSlot(k *frameKey) {
	if k.state == keyFlow {
		a.slots.PrefetchSlot(k.src, k.dst, k.qp)
	}
}

func (a *frameAnalyzer) prefetchFlow(k *frameKey) {
	if k.state == keyFlow {
		k.hint = a.prefetcher.PrefetchFlow(k.src, k.dst, k.qp)
	}
}
