package cli

import (
	"io"
	"slices"
	"sync/atomic"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
)

// One reader for every worker. A pass on several workers (see analyze)
// reads its input once, on worker 0: the relay. It takes the frames from
// the capture.Merger in batches, reads each frame's flow key at fixed
// offsets (packet.PeekRoCEv2IPv4QP) and finds the worker whose share the
// frame is (a flows.Split of the host pairs). It analyses its own frames
// straight out of the Merger's buffer, as one worker alone does, and
// copies each other worker's frames into that worker's block of the
// current round; a round ends before a batch that one of its blocks could
// not take, and goes to every other worker. A worker so sees its frames as
// the one-worker pass does, in order and with the same FrameRef.Seq. Of
// the other frames a worker needs to know only this much:
//
//   - a frame the relay cannot route (not RoCEv2 over IPv4 at fixed
//     offsets: IPv6, other tunnels, non-RoCE traffic, cut frames) goes to
//     every worker, which decodes it and keeps it if it is its own (shard
//     0 keeps every non-RoCE frame), as when each worker read the input;
//   - the capture's first frame goes to every worker, as a frame another
//     worker keeps (frameAnalyzer.skip) to all but its owner: a
//     reports.Collector starts its timeline at the first frame of the
//     capture, kept or not;
//   - of the rest, only the latest time counts (a Collector keeps the
//     latest time of the frames it skips, Collector.Skip): a round carries
//     the latest time of every frame read before it ended, which a worker
//     skips after the round's frames, and the relay skips the latest time
//     of each batch after its own frames of it.
//
// Reading and peeking cost the relay ~35 ns a frame, and copying another
// worker's frame a few more, which the split makes up for: the relay's
// share of the host pairs is smaller than the others' by what reading
// costs it (relayShare, relayCost), so that the workers finish together.
// A worker reads only its own frames (and the few every worker gets),
// copied for it in a block. Before, a dispatcher goroutine copied every
// frame into a block that every worker scanned, which cost ~49 ns a frame
// over one worker's pass (BENCHMARKS.md).
//
// Standard input, which can be read only once, and gzip-compressed input,
// which is costly to read, are read once for any number of workers like
// any other input.

// Round sizes: a worker's block holds up to blockFrames/(n-1) frames and
// blockBytes/(n-1) bytes of frame data (n workers), so that a round holds
// about as many frames whatever n (a round ends before the batch whose
// frames for some worker its block cannot take); roundsInFlight rounds in
// all (one being filled, the others queued or being analysed) bound what
// the relay can be ahead of the slowest worker. The tests make rounds
// small to cross many round boundaries.
var (
	blockFrames    = 4096
	blockBytes     = 512 << 10
	roundsInFlight = 4
)

// relayCost is what the relay's reading, peeking and copying cost,
// relative to analysing a frame (decoding it, adding it to the flow table
// and the report), as it balanced the two workers of `rocedump report` on
// two cores on the benchmark's capture of 63,488 flows. Session 21
// measured each side's own CPU time (each goroutine locked to its thread,
// the thread's rusage, in a debug build) on 10 M packets: the relay's
// work beyond analysing its share came to 0.39 of analysing every frame
// (20 runs at 0.28-0.52, sd 0.06), and the two sides' CPU times crossed
// between 0.36 (relay +0.1 s) and 0.44 (worker +0.1-0.4 s). Session 8's
// 0.28 was tuned by the waits when analysis cost more a frame; the
// one-worker and two-worker passes have since got cheaper, the relay's
// reading not (BENCHMARKS.md, session 21).
const relayCost = 0.40

// flowsRelayCost is relayCost for `rocedump flows`, whose analysis is
// cheaper (no report): measured as relayCost, the relay's own work came to
// 0.47 of analysing every frame (median of 20 runs at 0.40-0.64; 0.48, sd
// 0.03, in the last 8, alternating 0.40 and 0.50), the two sides' CPU
// times within 0.05 s at 0.50 and the relay 0.06-0.16 s behind at 0.40
// (0.40 before session 21).
const flowsRelayCost = 0.48

// relayShare is the share of the host pairs the relay keeps with n
// workers when its reading costs c (relayCost) of analysing a frame: each
// of the others gets (1+c)/n and the relay that less c, so that all have
// as much to do. From about 1/c workers on the relay only reads.
func relayShare(n int, c float64) float64 {
	return max(0, (1+c)/float64(n)-c)
}

// everyWorker is the owner of a frame the relay could not route.
const everyWorker = -1

// relayBlock is the frames of one round for one worker: recs[i] (its Data
// copied into buf), with keys[i] (what the relay peeked: keyNone for a
// frame every worker decodes, keyOtherShard for the capture's first frame
// when another worker keeps it), files[i] (its input file number) and
// seqs[i] (its FrameRef.Seq), for i below n. The arrays have room for
// maxFrames frames, or a batch more (see holds), and are written by index.
type relayBlock struct {
	recs      []capture.Record
	keys      []frameKey
	files     []int32
	seqs      []uint64
	n         int
	buf       []byte
	maxFrames int
}

func newRelayBlock(frames, bytes int) *relayBlock {
	room := max(frames, batchFrames)
	return &relayBlock{
		recs:      make([]capture.Record, room),
		keys:      make([]frameKey, room),
		files:     make([]int32, room),
		seqs:      make([]uint64, room),
		buf:       make([]byte, 0, bytes),
		maxFrames: frames,
	}
}

// holds says whether b can take frames more frames of bytes bytes in all
// without growing. An empty block always can: its buffer grows for
// a batch larger than it.
func (b *relayBlock) holds(frames, bytes int) bool {
	return b.n == 0 || b.n+frames <= b.maxFrames && len(b.buf)+bytes <= cap(b.buf)
}

// put appends a copy of rec to b, with a copy of *k. The key comes by
// pointer: passed by value, it was stored on the stack 8 bytes at a time
// and loaded back 16 at once, which the processor cannot forward from
// store to load (see frameKey.set; perf put a fifth of the relay's samples
// on that load).
func (b *relayBlock) put(rec *capture.Record, k *frameKey, file int, seq uint64) {
	off := len(b.buf)
	b.buf = append(b.buf, rec.Data...)
	i := b.n
	b.recs[i] = *rec
	b.recs[i].Data = b.buf[off:len(b.buf):len(b.buf)]
	b.keys[i], b.files[i], b.seqs[i] = *k, int32(file), seq
	b.n++
}

// putList appends to b copies of the frames recs[i] that list names (in
// order), with keys[i], of input file number file and FrameRef.Seq seq+i,
// their data bytes bytes in all. It is put for a batch's frames of a
// worker, with the block's slices and the buffer's length kept in
// registers and the room for the data made once: ~25 instructions a
// copied frame fewer than put a frame at a time (BENCHMARKS.md, session
// 21).
func (b *relayBlock) putList(recs []capture.Record, keys []frameKey, list []int32, bytes, file int, seq uint64) {
	n, m := b.n, b.n+len(list)
	dr, dk, df, ds := b.recs[n:m], b.keys[n:m], b.files[n:m], b.seqs[n:m]
	off := len(b.buf)
	buf := slices.Grow(b.buf, bytes)[:off+bytes]
	for j, i := range list {
		rec := &recs[i]
		end := off + len(rec.Data)
		d := buf[off:end:end]
		copy(d, rec.Data)
		dr[j] = *rec
		dr[j].Data = d
		dk[j], df[j], ds[j] = keys[i], int32(file), seq+uint64(i)
		off = end
	}
	b.buf, b.n = buf[:off], m
}

// reset empties b. The records keep their Data, which point into buf:
// nothing that would not be kept alive anyway.
func (b *relayBlock) reset() {
	b.n, b.buf = 0, b.buf[:0]
}

// addTo adds b's frames to fa.
func (b *relayBlock) addTo(fa *frameAnalyzer) {
	fa.addBlock(b.recs[:b.n], b.keys[:b.n], b.files[:b.n], b.seqs[:b.n])
}

// round is what the relay hands the other workers at once: blocks[w] for
// worker w ≥ 1 (blocks[0] is unused: the relay analyses its own frames as
// it reads them).
type round struct {
	blocks []*relayBlock
	last   time.Time    // the latest time of the frames read before the round ended
	lastNs int64        // last as flows.TimeNanos
	read   bool         // whether any frame had been read then (last is one's)
	unread atomic.Int32 // workers yet to analyse the round
	// flows[w] is the number of flows worker w's shard held once it had
	// analysed its block of the round (for the relay: before the batch
	// the round ended before); see seriesShard.
	flows []int
}

// holds says whether the block of every shard j ≥ 1 of rd can take
// frames[j+1] frames of bytes[j+1] bytes, and every block also frames[0]
// and bytes[0] more (the frames of a batch for every worker; see
// relayBlock.holds).
func (rd *round) holds(frames, bytes []int) bool {
	for j, b := range rd.blocks {
		if j > 0 && !b.holds(frames[0]+frames[j+1], bytes[0]+bytes[j+1]) {
			return false
		}
	}
	return true
}

func newRound(workers, frames, bytes int) *round {
	r := &round{blocks: make([]*relayBlock, workers), flows: make([]int, workers)}
	for w := 1; w < workers; w++ {
		r.blocks[w] = newRelayBlock(frames, bytes)
	}
	return r
}

// relay is worker 0 of a pass on several workers: it reads the input once,
// analyses its own share and hands the other workers theirs in rounds.
type relay struct {
	m        *timedInput
	split    flows.Split
	progress *progress
	out      []chan *round // to worker w ≥ 1, in order; closed at the end
	free     chan *round   // rounds every other worker has analysed
	cur      *round        // being filled
	seq      uint64        // frames read
	last     time.Time     // the latest time of the frames read
	lastNs   int64         // last as flows.TimeNanos
	read     bool          // whether any frame has been read
	mergeBuf []int32       // see merge
	clock    *clockWatch   // nil: not watched
	// relayFlows is the relay's flow count that the current round
	// records (see round.flows).
	relayFlows int
	// flowsBefore is the number of flows, over every shard, that appeared
	// before a frame every worker has analysed the frames up to (see
	// seriesShard).
	flowsBefore atomic.Int64
}

func newRelay(m *timedInput, split flows.Split, pr *progress) *relay {
	n := split.Shards()
	frames := max(blockFrames/(n-1), 1)
	bytes := max(blockBytes/(n-1), 1)
	// At least two: one being filled while another is analysed.
	inFlight := max(roundsInFlight, 2)
	r := &relay{m: m, split: split, progress: pr, free: make(chan *round, inFlight)}
	for range inFlight {
		r.free <- newRound(n, frames, bytes)
	}
	r.out = make([]chan *round, n)
	for w := 1; w < n; w++ {
		r.out[w] = make(chan *round, inFlight)
	}
	r.cur = <-r.free
	return r
}

// relayBatch is the most frames the relay reads at once (at most
// batchFrames); the tests make it small, with the blocks.
var relayBatch = batchFrames

// run reads every frame, analyses the relay's own (fa is worker 0's
// analyzer, sink its shard's sink) and hands the others out; at the end it
// sends the last round and closes the workers' channels.
//
// A batch goes whole into one round, so that a round holds every frame
// of every worker's share up to the batch that ended it. Its frames are
// sorted by owner into lists first (the owner changes from frame to frame
// at random: a branch on it would be mispredicted every other frame).
func (r *relay) run(fa *frameAnalyzer, sink packetSink) {
	series, _ := sink.(seriesShard)
	closed := false
	n := len(r.out)
	var recs [batchFrames]capture.Record
	// lists[o+1] lists the frames of owner o (everyWorker is -1).
	lists := make([][batchFrames]int32, n+1)
	count := make([]int, n+1)
	size := make([]int, n+1) // bytes of frame data of each list
	for {
		if series != nil && !closed && r.flowsBefore.Load() >= reports.SeriesFlows {
			series.CloseSeries()
			closed = true
		}
		k, file, err := r.m.NextBatch(recs[:min(relayBatch, batchFrames)])
		if err == io.EOF {
			break
		}
		base := r.seq
		r.read = true
		if r.clock != nil {
			r.clock.see(recs[:k], file)
		}
		keys := fa.keys[:k]
		clear(count)
		clear(size)
		owner0 := 0 // the owner of the batch's first frame, plus one
		for i := range k {
			rec := &recs[i]
			// Compared by flows.TimeNanos, not Record.TimeNanos: a
			// pcapng timestamp may lie past what nanoseconds hold.
			if ns := flows.TimeNanos(rec.Timestamp, rec.TimeNanos); flows.Later(ns, rec.Timestamp, r.lastNs, r.last) || base == 0 && i == 0 {
				r.last, r.lastNs = rec.Timestamp, ns
			}
			src, dst, qp, ok, hasQP := packet.PeekRoCEv2IPv4QP(rec.LinkType, rec.Data)
			keys[i].set(src, dst, qp, ok, hasQP)
			o := 0 // everyWorker+1
			if ok {
				o = r.split.OfIPv4(src, dst) + 1
			}
			lists[o][count[o]] = int32(i)
			count[o]++
			size[o] += len(rec.Data)
			if i == 0 {
				owner0 = o
			}
		}
		if series != nil {
			r.relayFlows = series.FlowCount()
		}
		// The capture's first frame goes to every worker: as a frame
		// another worker keeps to all but its owner.
		first := base == 0
		if first && owner0 != 1 && owner0 != 0 {
			fa.seq = 0
			fa.addPeeked(&recs[0], file, &frameKey{state: keyOtherShard})
		}
		pick := lists[1][:count[1]]
		if count[0] > 0 {
			pick = r.merge(lists[0][:count[0]], pick)
		}
		fa.addPicked(recs[:k], keys, pick, file, base)
		fa.skip(r.last, r.lastNs)
		if !r.cur.holds(count, size) {
			r.send()
		}
		for w := 1; w < n; w++ {
			b := r.cur.blocks[w]
			if first && owner0 != w+1 && owner0 != 0 {
				b.put(&recs[0], &frameKey{state: keyOtherShard}, file, 0)
			}
			list, bytes := lists[w+1][:count[w+1]], size[w+1]
			if count[0] > 0 {
				list, bytes = r.merge(lists[0][:count[0]], list), bytes+size[0]
			}
			b.putList(recs[:k], keys, list, bytes, file, base)
		}
		r.seq += uint64(k)
		r.progress.tick(r.seq)
	}
	r.send()
	for _, c := range r.out[1:] {
		close(c)
	}
	r.progress.done()
}

// merge returns the frame indexes of a and b, both in order, in order
// (in a buffer of r's, valid until the next call).
func (r *relay) merge(a, b []int32) []int32 {
	m := r.mergeBuf[:0]
	for len(a) > 0 && len(b) > 0 {
		if a[0] < b[0] {
			m, a = append(m, a[0]), a[1:]
		} else {
			m, b = append(m, b[0]), b[1:]
		}
	}
	m = append(append(m, a...), b...)
	r.mergeBuf = m
	return m
}

// send ends the current round: it goes to every other worker, and the
// relay takes a free one (waiting while the slowest worker is
// roundsInFlight rounds behind).
func (r *relay) send() {
	rd := r.cur
	rd.last, rd.lastNs, rd.read = r.last, r.lastNs, r.read
	rd.flows[0] = r.relayFlows
	rd.unread.Store(int32(len(r.out) - 1))
	for _, c := range r.out[1:] {
		c <- rd
	}
	r.cur = <-r.free
	for _, b := range r.cur.blocks[1:] {
		b.reset()
	}
}

// seriesShard is the sink of a shard that keeps a throughput series for
// each of the pass's first flows (reports.Collector). Each keeps them for
// its own first reports.SeriesFlows flows, since it cannot tell which of
// them come first in the whole pass; once every worker has analysed its
// frames up to a point before which that many flows appeared over all
// shards, no flow a worker has yet to see can be among the first, and the
// worker closes its shard's series (reports.Collector.CloseSeries). With
// n workers the series then cost ~reports.SeriesFlows rows plus those of
// the flows that appear in the few rounds in flight, instead of n ×
// reports.SeriesFlows. Such a point is where a round ended (before a
// batch): once a worker has analysed the round it has analysed all its
// frames before that batch, and round.flows[0] is the relay's count
// before the batch.
type seriesShard interface {
	FlowCount() int
	CloseSeries()
}

// work analyses the rounds of worker w ≥ 1, whose shard's sink is sink,
// until the relay is done.
func (r *relay) work(w int, fa *frameAnalyzer, sink packetSink) {
	series, _ := sink.(seriesShard)
	closed := false
	for rd := range r.out[w] {
		if series != nil && !closed && r.flowsBefore.Load() >= reports.SeriesFlows {
			series.CloseSeries()
			closed = true
		}
		rd.blocks[w].addTo(fa)
		if rd.read {
			fa.skip(rd.last, rd.lastNs)
		}
		if series != nil {
			rd.flows[w] = series.FlowCount()
		}
		if rd.unread.Add(-1) == 0 {
			r.countFlows(rd)
			r.free <- rd
		}
	}
}

// countFlows notes the flows of every shard up to the end of rd, which
// every worker has analysed (rounds are done in order).
func (r *relay) countFlows(rd *round) {
	n := 0
	for _, c := range rd.flows {
		n += c
	}
	for {
		old := r.flowsBefore.Load()
		if int64(n) <= old || r.flowsBefore.CompareAndSwap(old, int64(n)) {
			return
		}
	}
}
