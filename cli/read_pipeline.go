package cli

import (
	"bufio"
	"sync"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/filter"
)

// Printing on every core. Writing a packet's line costs several times
// reading and decoding it (~380 of ~460 ns a packet for --format json on
// the benchmark capture), so with more than one CPU `rocedump read` reads
// the input on its own goroutine, copies the frames into chunks and hands
// each chunk to one of --workers formatters (each with its own decoder and
// printer), and a writer prints the chunks' lines in input order: the
// output and the summary are those of one goroutine, byte for byte
// (TestReadWorkersSameOutput). With --count, which must stop right after
// the N'th line printed, and --time rel, whose zero (the first frame read)
// is kept by the one printer, read runs on one goroutine.

// Chunk sizes: a chunk holds up to readChunkFrames frames and
// readChunkBytes bytes of frame data (a larger frame gets a chunk of its
// own). The tests make them small to cross many chunk boundaries.
var (
	readChunkFrames = 1024
	readChunkBytes  = 256 << 10
)

// readChunk is frames of one input file in order, recs[i] (its Data copied
// into data) with the capture filter of its link type filters[i], and once
// a formatter has done them, their lines and counts.
type readChunk struct {
	recs    []capture.Record
	filters []*filter.Filter
	n       int
	data    []byte
	file    string // the file's name, for the lines' prefix

	out   []byte
	stats readStats
	done  chan struct{} // a formatter has done the chunk
}

// readPipeline formats frames on several goroutines and writes their
// lines in order (see above). add and flush are called from one
// goroutine; close ends the goroutines.
type readPipeline struct {
	work    chan *readChunk // to the formatters
	order   chan *readChunk // to the writer, in input order
	free    chan *readChunk
	cur     *readChunk // being filled; nil when none is
	file    string
	pending sync.WaitGroup // chunks sent and not yet written
	total   readStats      // counts of the chunks written since the last flush (the writer's)
	ended   sync.WaitGroup // the goroutines
}

// newReadPipeline starts workers formatters, each with the frameFormatter
// newFormatter makes, and the writer, which writes to out.
func newReadPipeline(workers int, out *bufio.Writer, newFormatter func() frameFormatter) *readPipeline {
	chunks := 2*workers + 2
	p := &readPipeline{
		work:  make(chan *readChunk, chunks),
		order: make(chan *readChunk, chunks),
		free:  make(chan *readChunk, chunks),
	}
	for range chunks {
		p.free <- &readChunk{
			recs:    make([]capture.Record, readChunkFrames),
			filters: make([]*filter.Filter, readChunkFrames),
			data:    make([]byte, 0, readChunkBytes),
			done:    make(chan struct{}, 1),
		}
	}
	p.ended.Add(workers + 1)
	for range workers {
		ff := newFormatter()
		go func() {
			defer p.ended.Done()
			for c := range p.work {
				c.format(&ff)
			}
		}()
	}
	go func() {
		defer p.ended.Done()
		for c := range p.order {
			<-c.done
			out.Write(c.out)
			p.total.add(&c.stats)
			c.n, c.data, c.out, c.stats = 0, c.data[:0], c.out[:0], readStats{}
			p.free <- c
			p.pending.Done()
		}
	}()
	return p
}

// format does the chunk's frames with ff.
func (c *readChunk) format(ff *frameFormatter) {
	ff.stats = &c.stats
	ff.printer.startFile(c.file)
	b := c.out[:0]
	for i := range c.n {
		b, _ = ff.appendFrame(b, &c.recs[i], c.filters[i])
	}
	c.out = b
	c.done <- struct{}{}
}

// startFile names the file of the frames added next.
func (p *readPipeline) startFile(name string) {
	if p.cur != nil && p.cur.file != name {
		p.send()
	}
	p.file = name
}

// add copies rec, which passes f (nil: no filter) or not, into the current
// chunk.
func (p *readPipeline) add(rec *capture.Record, f *filter.Filter) {
	c := p.cur
	if c != nil && (c.n == len(c.recs) || len(c.data)+len(rec.Data) > cap(c.data)) {
		p.send()
		c = nil
	}
	if c == nil {
		c = <-p.free
		c.file = p.file
		p.cur = c
	}
	// An empty chunk's data may grow for a frame larger than it: no
	// record points into it yet.
	off := len(c.data)
	c.data = append(c.data, rec.Data...)
	c.recs[c.n] = *rec
	c.recs[c.n].Data = c.data[off:len(c.data):len(c.data)]
	c.filters[c.n] = f
	c.n++
}

// send hands the current chunk to the formatters and the writer.
func (p *readPipeline) send() {
	p.pending.Add(1)
	p.order <- p.cur // never blocks: the channels hold every chunk
	p.work <- p.cur
	p.cur = nil
}

// flush sends what was added, waits until it is written, and adds its
// counts to stats.
func (p *readPipeline) flush(stats *readStats) {
	if p.cur != nil {
		p.send()
	}
	p.pending.Wait()
	stats.add(&p.total)
	p.total = readStats{}
}

// close ends the goroutines, once flushed.
func (p *readPipeline) close() {
	close(p.work)
	close(p.order)
	p.ended.Wait()
}
