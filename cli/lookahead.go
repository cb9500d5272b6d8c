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

// peek reads the flow key of a RoCEv2 frame over IPv4 at fixed offsets
// into k.
func (a *frameAnalyzer) peek(rec *capture.Record, k *frameKey) {
	src, dst, qp, ok, hasQP := packet.PeekRoCEv2IPv4QP(rec.LinkType, rec.Data)
	k.set(src, dst, qp, ok, hasQP)
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
			a.peek(&recs[i], &keys[i])
		}
		a.addLookingAhead(&frameRun{recs: recs[:n], keys: keys, file: file, seq: a.seq}, each)
		recs = recs[n:]
	}
}

// looksAhead says whether the pass looks ahead now.
func (a *frameAnalyzer) looksAhead() bool {
	return a.prefetcher != nil && (lookAhead == lookAheadAlways || lookAhead == lookAheadAuto && a.prefetcher.LookAheadPays(a.share))
}

// frameRun is frames of the input whose keys peek has read, in order:
// recs[i] with keys[i], of input file number files[i] (file when files
// is nil), frame seqs[i] of the input (FrameRef.Seq; seq+i when seqs is
// nil). Only the frames that pick lists (indexes, in order) are added, or
// every frame when pick is nil.
type frameRun struct {
	recs  []capture.Record
	keys  []frameKey
	files []int32
	file  int
	seqs  []uint64
	seq   uint64
	pick  []int32
}

// len is the number of frames to add.
func (r *frameRun) len() int {
	if r.pick != nil {
		return len(r.pick)
	}
	return len(r.recs)
}

// index is the index in recs of the j'th frame to add.
func (r *frameRun) index(j int) int {
	if r.pick != nil {
		return int(r.pick[j])
	}
	return j
}

// fileOf is the input file number of frame i.
func (r *frameRun) fileOf(i int) int {
	if r.files != nil {
		return int(r.files[i])
	}
	return r.file
}

// seqOf is the FrameRef.Seq of frame i.
func (r *frameRun) seqOf(i int) uint64 {
	if r.seqs != nil {
		return r.seqs[i]
	}
	return r.seq + uint64(i)
}

// addRun adds the frames of r, looking ahead when it pays (looksAhead).
func (a *frameAnalyzer) addRun(r *frameRun) {
	if a.looksAhead() {
		a.addLookingAhead(r, nil)
		return
	}
	for j := range r.len() {
		i := r.index(j)
		a.seq = r.seqOf(i)
		a.addPeeked(&r.recs[i], r.fileOf(i), &r.keys[i])
	}
}

// addLookingAhead adds the frames of r, prefetching each frame's state
// ahead of its turn, and calls each (if not nil) after every frame the
// worker keeps.
func (a *frameAnalyzer) addLookingAhead(r *frameRun, each func(rec *capture.Record, file int, p *packet.Packet)) {
	if r.pick == nil && r.files == nil && r.seqs == nil {
		a.addBatchAhead(r.recs, r.keys, r.file, r.seq, each)
		return
	}
	n := r.len()
	for j := range min(slotAhead, n) {
		a.prefetchSlot(&r.keys[r.index(j)])
	}
	for j := range min(flowAhead, n) {
		a.prefetchFlow(&r.keys[r.index(j)])
	}
	for j := range n {
		if k := j + slotAhead; k < n {
			a.prefetchSlot(&r.keys[r.index(k)])
		}
		if k := j + flowAhead; k < n {
			a.prefetchFlow(&r.keys[r.index(k)])
		}
		i := r.index(j)
		file := r.fileOf(i)
		a.seq = r.seqOf(i)
		a.at.SetHint(r.keys[i].hint, a.seq)
		if p := a.addPeeked(&r.recs[i], file, &r.keys[i]); p != nil && each != nil {
			each(&r.recs[i], file, p)
		}
	}
}

// addBatchAhead is addLookingAhead for a run of every frame of a batch
// (a frameRun without pick, files or seqs: one worker reading one file or
// a merge), frame recs[i] with keys[i] of input file file and FrameRef.Seq
// seq+i. Indexing the batch directly, without frameRun's three choices a
// frame and the values the loop kept for them, cut the pass by 38
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
	for i := range recs {
		if k := i + slotAhead; k < n {
			a.prefetchSlot(&keys[k])
		}
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
		a.prefetcher.PrefetchSlot(k.src, k.dst, k.qp)
	}
}

func (a *frameAnalyzer) prefetchFlow(k *frameKey) {
	if k.state == keyFlow {
		k.hint = a.prefetcher.PrefetchFlow(k.src, k.dst, k.qp)
	}
}
