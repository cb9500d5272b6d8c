package cli

import (
	"io"
	"sync/atomic"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports"
)

// One reader for every worker. A pass on several workers (see analyze)
// reads its input once: a dispatcher goroutine takes the frames from the
// capture.Merger, copies them into a block, reads each frame's flow key at
// fixed offsets (packet.PeekRoCEv2IPv4QP) and marks the worker whose shard
// it is (flows.ShardOfIPv4). Every worker gets every block, analyses the
// frames marked for it in order, and so sees its frames as the one-worker
// pass does, with the same FrameRef.Seq. Of the other frames a worker
// needs to know only this much:
//
//   - a frame the dispatcher cannot route (not RoCEv2 over IPv4 at fixed
//     offsets: IPv6, other tunnels, non-RoCE traffic, cut frames) is marked
//     for every worker, which decodes it and keeps it if it is its own
//     (shard 0 keeps every non-RoCE frame), as when each worker read the
//     input;
//   - the capture's first frame is a frame another worker keeps to every
//     other worker (frameAnalyzer.skip): a reports.Collector starts its
//     timeline at the first frame of the capture, kept or not;
//   - of the rest, only the latest time counts (a Collector keeps the
//     latest time of the frames it skips, Collector.Skip), and a worker
//     ends each block by skipping the block's latest time, which leaves it
//     with the latest time of all frames, as before.
//
// The dispatcher costs ~30 ns a frame more than the reading and peeking
// that one worker alone does (the copy, the marks, the hand-offs); reading
// and peeking in every worker cost ~35 ns a frame for each worker, and
// each worker copied the whole file from the kernel (BENCHMARKS.md).
// Standard input, which can be read only once, and gzip-compressed input,
// which is costly to read, are read once for any number of workers.

// Block sizes: blockFrames frames or blockBytes of frame data, whichever
// comes first, and blocksInFlight blocks in all (one being filled, the
// others queued or being analysed). The tests make blocks small to cross
// many block boundaries.
var (
	blockFrames    = 4096
	blockBytes     = 512 << 10
	blocksInFlight = 4
)

// block is a run of consecutive frames of the input that the dispatcher
// hands every worker: recs[i] (its Data copied into buf), with keys[i]
// (what the dispatcher peeked: keyNone for a frame every worker decodes),
// owner[i] (the worker whose share it is, or everyWorker) and files[i]
// (its input file number). recs[i] is frame seq+i of the whole input
// (FrameRef.Seq). keys, owner and files have room for a whole block and
// are written by index: the dispatcher's per-frame work is a few stores.
type block struct {
	recs   []capture.Record
	keys   []frameKey
	owner  []int32
	files  []int32
	buf    []byte
	seq    uint64
	last   time.Time    // the latest time of the block's frames
	unread atomic.Int32 // workers yet to analyse the block
	// flows[w] is the number of flows worker w's shard held once it had
	// analysed the block (see seriesShard).
	flows []int
}

// everyWorker is the owner of a frame the dispatcher could not route.
const everyWorker = -1

func newBlock(workers int) *block {
	return &block{
		recs:  make([]capture.Record, 0, blockFrames),
		keys:  make([]frameKey, blockFrames),
		owner: make([]int32, blockFrames),
		files: make([]int32, blockFrames),
		buf:   make([]byte, 0, blockBytes),
		flows: make([]int, workers),
	}
}

// reset empties b for the frames from seq on. The records keep their Data,
// which point into buf or the Merger's buffer: nothing that would not be
// kept alive anyway.
func (b *block) reset(seq uint64) {
	b.recs, b.buf = b.recs[:0], b.buf[:0]
	b.seq, b.last = seq, time.Time{}
}

// holds says whether the data of frame i, read into recs, can be copied
// into buf without growing it (the first frame of a block always can).
func (b *block) holds(i int) bool {
	return i == 0 || len(b.buf)+len(b.recs[i].Data) <= cap(b.buf)
}

// mine lists, into list, the frames of b that worker w analyses.
func (b *block) mine(w int, list []int32) []int32 {
	list = list[:0]
	for i, o := range b.owner[:len(b.recs)] {
		if o == int32(w) || o == everyWorker {
			list = append(list, int32(i))
		}
	}
	return list
}

// dispatcher reads the input of a pass once and hands its frames out to
// the workers in blocks.
type dispatcher struct {
	m        *capture.Merger
	progress *progress
	out      []chan *block // to worker w, in order; closed at the end
	free     chan *block   // blocks every worker has analysed
	seq      uint64        // frames read
	// flowsBefore is the number of flows, over every shard, that appeared
	// in the blocks every worker has analysed (see seriesShard).
	flowsBefore atomic.Int64
}

func newDispatcher(m *capture.Merger, workers int, pr *progress) *dispatcher {
	// A block that fills up mid-batch takes the next before it is sent:
	// at least two.
	inFlight := max(blocksInFlight, 2)
	d := &dispatcher{m: m, progress: pr, free: make(chan *block, inFlight)}
	for range inFlight {
		d.free <- newBlock(workers)
	}
	for range workers {
		d.out = append(d.out, make(chan *block, inFlight))
	}
	return d
}

// run reads every frame and hands it out, then closes the workers'
// channels. The Merger reads records straight into the block, whose
// frames are then copied out of the Merger's buffer.
func (d *dispatcher) run() {
	b := d.take()
	for {
		if len(b.recs) == cap(b.recs) {
			d.send(b)
			b = d.take()
		}
		start := len(b.recs)
		k, file, err := d.m.NextBatch(b.recs[start:min(start+batchFrames, cap(b.recs))])
		if err == io.EOF {
			break
		}
		b.recs = b.recs[:start+k]
		for i := start; i < len(b.recs); {
			if !b.holds(i) {
				// The rest of the batch goes into the next block.
				next := d.take()
				next.recs = append(next.recs, b.recs[i:]...)
				b.recs = b.recs[:i]
				d.send(b)
				b, i = next, 0
			}
			d.place(b, i, file)
			i++
		}
		d.progress.tick(d.seq)
	}
	if len(b.recs) > 0 {
		d.send(b)
	}
	for _, c := range d.out {
		close(c)
	}
	d.progress.done()
}

// take returns a free block, emptied for the frames from the next one on.
func (d *dispatcher) take() *block {
	b := <-d.free
	b.reset(d.seq)
	return b
}

// place copies frame i of b, read into its recs, out of the Merger's
// buffer, and notes its key, its owner (the worker whose share it is, or
// every worker when the dispatcher cannot tell) and its file.
func (d *dispatcher) place(b *block, i, file int) {
	d.seq++
	rec := &b.recs[i]
	off := len(b.buf)
	b.buf = append(b.buf, rec.Data...)
	rec.Data = b.buf[off:len(b.buf):len(b.buf)]
	if i == 0 || rec.Timestamp.After(b.last) {
		b.last = rec.Timestamp
	}
	src, dst, qp, ok, hasQP := packet.PeekRoCEv2IPv4QP(rec.LinkType, rec.Data)
	b.keys[i] = peekedKey(src, dst, qp, ok, hasQP)
	b.files[i] = int32(file)
	b.owner[i] = everyWorker
	if ok {
		b.owner[i] = int32(flows.ShardOfIPv4(src, dst, len(d.out)))
	}
}

// send hands b to every worker.
func (d *dispatcher) send(b *block) {
	b.unread.Store(int32(len(d.out)))
	for _, c := range d.out {
		c <- b
	}
}

// seriesShard is the sink of a shard that keeps a throughput series for
// each of the pass's first flows (reports.Collector). Each keeps them for
// its own first reports.SeriesFlows flows, since it cannot tell which of
// them come first in the whole pass; once the blocks every worker has
// analysed hold that many flows over all shards, no flow a worker has yet
// to see can be among the first, and the worker closes its shard's series
// (reports.Collector.CloseSeries). With n workers the series then cost
// ~reports.SeriesFlows rows plus those of the flows that appear in the
// few blocks in flight, instead of n × reports.SeriesFlows.
type seriesShard interface {
	FlowCount() int
	CloseSeries()
}

// work analyses the blocks of worker w, whose shard's sink is sink, until
// the dispatcher is done.
func (d *dispatcher) work(w int, fa *frameAnalyzer, sink packetSink) {
	series, _ := sink.(seriesShard)
	closed := false
	mine := make([]int32, 0, blockFrames)
	for b := range d.out[w] {
		if series != nil && !closed && d.flowsBefore.Load() >= reports.SeriesFlows {
			series.CloseSeries()
			closed = true
		}
		mine = b.mine(w, mine)
		fa.addBlock(b, mine)
		if series != nil {
			b.flows[w] = series.FlowCount()
		}
		if b.unread.Add(-1) == 0 {
			d.countFlows(b)
			d.free <- b
		}
	}
}

// countFlows notes the flows of every shard up to the end of b, which
// every worker has analysed (blocks are done in order).
func (d *dispatcher) countFlows(b *block) {
	n := 0
	for _, c := range b.flows {
		n += c
	}
	for {
		old := d.flowsBefore.Load()
		if int64(n) <= old || d.flowsBefore.CompareAndSwap(old, int64(n)) {
			return
		}
	}
}

// addBlock analyses the frames mine of a block, in order.
func (a *frameAnalyzer) addBlock(b *block, mine []int32) {
	if b.seq == 0 && len(b.recs) > 0 && (len(mine) == 0 || mine[0] != 0) {
		// The capture's first frame, which another worker keeps.
		a.seq = 0
		a.addPeeked(&b.recs[0], int(b.files[0]), &frameKey{state: keyOtherShard})
	}
	run := frameRun{recs: b.recs, keys: b.keys, files: b.files, seq: b.seq, pick: mine}
	if a.looksAhead() {
		a.addLookingAhead(&run, nil)
	} else {
		for _, i := range mine {
			a.seq = b.seq + uint64(i)
			a.addPeeked(&b.recs[i], int(b.files[i]), &b.keys[i])
		}
	}
	if len(b.recs) > 0 {
		a.skip(b.last)
	}
}
