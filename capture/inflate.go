package capture

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// Decompressing on a goroutine of its own. A gzip-compressed capture is
// read at the speed of the decompressor: inflating the benchmark's 96-byte
// frames costs ~450 ns a frame on one core (zcat too: 0.91 s for 2 M of
// them), more than analysing them. When
// the program may use more than one CPU, an inflater runs the decompressor
// ahead of the Reader on a goroutine of its own and hands it the inflated
// bytes in chunks, so that the two overlap instead of taking turns. The
// bytes, their order and the error after the last of them are the
// decompressor's: a Reader over an inflater delivers what it would have
// read from the decompressor itself (TestInflaterSameRecords).

// inflateAhead says whether a Reader opened now decompresses on its own
// goroutine: when there is a CPU to spare for it. The tests set it to
// check both ways.
var inflateAhead = func() bool { return runtime.GOMAXPROCS(0) > 1 }

// inflateChunks is how many chunks an inflater keeps: one the Reader is
// reading, one being filled and the others ready, ahead of the Reader.
const inflateChunks = 4

// inflater reads src ahead of its caller on a goroutine of its own, in
// chunks; it is the io.Reader of what src returns. Stop ends the goroutine
// (at its next chunk: a read of src in progress is not interrupted), which
// then calls done (src's Close). An inflater is read from one goroutine.
type inflater struct {
	full chan inflated // read chunks, in order
	free chan []byte   // chunk buffers the caller has read
	stop chan struct{} // closed by Stop
	once sync.Once

	cur []byte // the unread part of the current chunk
	buf []byte // the current chunk's buffer, to give back
	err error  // what ended src, once the caller has its last chunk

	// fill is the least a chunk holds before it is handed over (but for
	// the last): a whole chunk from a file, any bytes at all from a
	// stream, whose next bytes may be a while coming (a capture still
	// being written to a pipe).
	fill int
}

// inflated is a chunk of src's bytes and the error src returned after
// them, if any (the last chunk).
type inflated struct {
	p   []byte
	err error
}

// startInflater starts reading src in chunks of size bytes, each handed
// over full, or as soon as it holds anything if stream is set.
func startInflater(src io.Reader, size int, stream bool, done func()) *inflater {
	a := &inflater{
		full: make(chan inflated, inflateChunks),
		free: make(chan []byte, inflateChunks),
		stop: make(chan struct{}),
		fill: size,
	}
	if stream {
		a.fill = 1
	}
	for range inflateChunks {
		a.free <- make([]byte, size)
	}
	go a.run(src, done)
	return a
}

// run fills chunks from src until src fails (io.EOF included) or the
// inflater is stopped.
func (a *inflater) run(src io.Reader, done func()) {
	defer done()
	for {
		var buf []byte
		select {
		case <-a.stop: // first, when a free buffer is also there
			return
		default:
		}
		select {
		case buf = <-a.free:
		case <-a.stop:
			return
		}
		n, err := readAtLeast(src, buf, a.fill)
		select {
		case a.full <- inflated{buf[:n], err}:
		case <-a.stop:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read implements io.Reader: the bytes of src in order, then src's error.
func (a *inflater) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for len(a.cur) == 0 {
		if a.err != nil {
			return 0, a.err
		}
		if a.buf != nil {
			a.free <- a.buf[:cap(a.buf)] // never blocks: free holds every buffer at most
			a.buf = nil
		}
		c := <-a.full
		a.buf, a.cur, a.err = c.p, c.p, c.err
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

// Stop ends the goroutine; Read must not be called after it. It does not
// wait for the goroutine, which may be in a read of src that only the end
// of src's input (or the file's Close) ends.
func (a *inflater) Stop() { a.once.Do(func() { close(a.stop) }) }

// gzipMembers reads the members of a gzip stream one after the other, as
// gzip.Reader's multistream mode does, but ends, as gzip(1) does, at data
// after a member that does not start like another member: gzip ignores
// it with a warning ("decompression OK, trailing garbage ignored"; zeros
// padding a file to a tape or disk block, what a copy left behind),
// where the multistream mode took it for a damaged member and failed the
// file there. It returns io.EOF at that data and notes it in trailing.
type gzipMembers struct {
	zr  *gzip.Reader
	src *bufio.Reader // the compressed input, looked at between members
	in  *countReader  // what src reads, counting bytes for trailing's offset

	// trailing, once Read has returned io.EOF, describes the data that
	// follows the last member, if any: a *FileError wrapping
	// ErrTrailingData.
	trailing error
	name     string
}

// newGzipMembers starts reading the first member of src, named name in
// errors.
func newGzipMembers(src io.Reader, name string) (*gzipMembers, error) {
	in := &countReader{r: src}
	g := &gzipMembers{src: bufio.NewReaderSize(in, 4096), in: in, name: name}
	zr, err := gzip.NewReader(g.src)
	if err != nil {
		return nil, err
	}
	zr.Multistream(false)
	g.zr = zr
	return g, nil
}

// Read implements io.Reader: the decompressed bytes of every member.
func (g *gzipMembers) Read(p []byte) (n int, err error) {
	if len(p) == 0 {
		return 0, nil
	}
	for n == 0 && err == nil {
		if n, err = g.zr.Read(p); err == io.EOF {
			err = g.next()
		}
	}
	return n, err
}

// next starts the member that follows the one that ended. It returns
// io.EOF at the end of the input, or at data that does not start with
// the gzip magic (1f 8b); data that does is read as a member, and a
// damaged or cut one fails as in the multistream mode.
func (g *gzipMembers) next() error {
	head, err := g.src.Peek(4)
	switch {
	case len(head) == 0 && err == io.EOF:
		return io.EOF
	case len(head) == 0:
		return err
	case head[0] != 0x1f || len(head) > 1 && head[1] != 0x8b:
		at := g.in.n - int64(g.src.Buffered())
		g.trailing = &FileError{Name: g.name, Err: ErrTrailingData,
			Reason: fmt.Sprintf("data after the end of the gzip stream, at byte %d (% x), is not another gzip member", at, head)}
		return io.EOF
	}
	if err := g.zr.Reset(g.src); err != nil {
		return err
	}
	g.zr.Multistream(false)
	return nil
}

// Close releases the decompressor.
func (g *gzipMembers) Close() error { return g.zr.Close() }

// countReader counts the bytes read from r.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
