package capture

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
	"unsafe"
)

// Sizes and caps.
const (
	// bufSize is the read buffer. Records up to this size are handed out
	// straight from it, without a copy.
	bufSize = 1 << 20
	// minBufSize keeps every fixed-size header peekable.
	minBufSize = 64
	// maxRecordLen caps any record or block, whatever its length field says.
	maxRecordLen = 16 << 20
	// defaultMaxCapLen is the pcap per-record cap when the snap length is
	// smaller or 0 (libpcap's MAXIMUM_SNAPLEN).
	defaultMaxCapLen = 262144
	// growStep bounds how far the copy buffer grows ahead of data actually
	// read, so a lying length field costs at most this much memory.
	growStep = 1 << 20
)

// Reader reads frames from a pcap or pcapng capture, plain or
// gzip-compressed. Create it with Open or NewReader and call Next until it
// returns an error. Errors are sticky: once Next has returned one, it
// returns the same one again.
//
// A Reader takes one of two paths through its input:
//
//   - the block path, for a regular file opened with Open and for the
//     decompressed bytes of any gzip-compressed input: the input is read
//     in blocks of 256 KiB (see blockSize; a read, not a memory mapping,
//     so that a file truncated while it is read cannot crash the
//     process), and Next parses a record that lies whole in the block
//     with direct loads and hands out its data as a sub-slice of the
//     block;
//   - the streaming path, for everything else (NewReader, standard input,
//     pipes, when not gzip-compressed): a bufio.Reader over the source.
//
// A gzip decompressor reads the compressed input on either path and, when
// the program may use more than one CPU, runs on its own goroutine (see
// inflater).
//
// Both deliver the same records and the same errors for the same bytes. A
// record the block path's hot loop cannot take whole (one that crosses the
// end of the block, one larger than the block, any malformed record, any
// pcapng block but a well-formed Enhanced Packet Block) goes through the
// same generic parsing code as on the streaming path.
type Reader struct {
	// What Next's hot paths read, together at the start: the block (its
	// window first) and copies of header fields, set with the file header
	// (pcap) or with every Section Header Block (bigEndian, pcapng), so
	// that Next reads them without an interface call or a lookup.
	blk       block       // the block path's input (and the source of gz when the file is gzip-compressed)
	fast      fastPath    // the hot path Next tries first; fastNone on the streaming path and once err is set
	bigEndian bool        // r.order is binary.BigEndian
	linkType  LinkType    // pcap: the link type of the file header
	maxCap    uint32      // pcap: maxCapLen
	fracScale int64       // pcap: nanoseconds per unit of ts_frac (1000 or 1)
	n         int         // frames delivered
	ifaces    []Interface // pcap: one; pcapng: those of the current section

	name string
	file io.Closer    // closed by Close; nil for caller-supplied readers and stdin
	gz   *gzipMembers // nil unless the input is gzip-compressed
	// inflate, if not nil, runs gz on its own goroutine (see inflater):
	// the Reader reads gz only through it.
	inflate *inflater
	br      *bufio.Reader // the streaming path's buffer; nil on the block path
	format  Format
	order   binary.ByteOrder // of the pcap header or the current pcapng section
	err     error            // sticky
	off     int64            // streaming path: bytes consumed from the stream
	recOff  int64            // offset of the record or block being read, for errors
	buf     []byte           // copy buffer for records larger than the read buffer

	maxCapLen int        // pcap: cap on incl_len
	snapLen   int        // pcap header snaplen, or of the first pcapng interface
	linkTypes []LinkType // distinct, in order of declaration
	sections  int        // pcapng sections seen
	trailing  error      // pcap: zeros after the last record (see zeroTail), for Trailing
	untimed   bool       // a record without a time (a pcapng Simple Packet Block) was read

	// allIfaces are the interfaces of every section so far, in order, and
	// sectionStarts where each section with interfaces starts (see
	// InterfaceOf), sectionNum the Number of the current section's first
	// record. At most maxKeptInterfaces are kept, so that a file of
	// nothing but sections and interfaces cannot grow them with its size:
	// from keptUntil on (a record Number, when not 0) none is known.
	allIfaces     []Interface
	sectionStarts []sectionStart
	sectionNum    int
	keptUntil     int
}

// maxKeptInterfaces bounds the interfaces a Reader keeps for InterfaceOf
// over every section of a file: far more than any capture declares.
const maxKeptInterfaces = 4096

// sectionStart is where a pcapng section starts: the Number its first
// record would take, and the index in allIfaces of its first interface.
type sectionStart struct{ num, base int }

// fastPath says which hot path Next tries before the generic code.
type fastPath uint8

const (
	fastNone   fastPath = iota // streaming path: the generic code only
	fastPcap                   // block path, pcap records
	fastPcapng                 // block path, pcapng Enhanced Packet Blocks
)

// Open opens the capture file at path ("-" reads standard input, named
// "stdin" in errors). The format is detected from the magic bytes, never
// from the name. A regular file that is not gzip-compressed is read on the
// block path (see Reader). Close the Reader to close the file.
func Open(path string) (*Reader, error) { return openSize(path, bufSize) }

// openSize is Open with a given read buffer size; a regular file is read in
// blocks of at most blockSize.
func openSize(path string, size int) (*Reader, error) {
	if path == "-" {
		return newReaderSize(os.Stdin, "stdin", size)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var r *Reader
	if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() {
		r, err = newBlockReader(f, path, min(size, blockSize))
	} else {
		r, err = newReaderSize(f, path, size)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads a capture from src; name is used in errors. It reads the
// file header (and, for pcapng, every block up to the first packet) before
// it returns. Close does not close src.
func NewReader(src io.Reader, name string) (*Reader, error) {
	return newReaderSize(src, name, bufSize)
}

// newReaderSize is NewReader with a given buffer size; tests use small
// sizes to exercise the copy path.
func newReaderSize(src io.Reader, name string, size int) (*Reader, error) {
	size = max(size, minBufSize)
	r := &Reader{name: name, br: bufio.NewReaderSize(src, size)}
	return r.start(size)
}

// newBlockReader reads src on the block path, in blocks of size bytes. Open
// uses it for regular files; tests use it on any source, with small sizes
// to exercise refills and the copy path.
func newBlockReader(src io.Reader, name string, size int) (*Reader, error) {
	size = max(size, minBufSize)
	r := &Reader{name: name, blk: newBlock(src, size)}
	return r.start(size)
}

// start reads the file header (or, for pcapng, every block up to the first
// packet), after a gzip decompressor if the input needs one, and chooses the
// hot path.
func (r *Reader) start(size int) (*Reader, error) {
	m, err := r.sniff()
	if err != nil {
		return nil, err
	}
	if m.kind == kindGzip {
		if err := r.openGzip(size); err != nil {
			return nil, err
		}
		if m, err = r.sniff(); err != nil {
			return nil, err
		}
	}
	switch m.kind {
	case KindPcap:
		err = r.readPcapHeader(m)
	case KindPcapNG:
		err = r.readPcapngHeader()
	}
	if err != nil {
		r.closeGzip()
		return nil, err
	}
	if r.br == nil && r.err == nil {
		r.fast = fastPcap
		if m.kind == KindPcapNG {
			r.fast = fastPcapng
		}
	}
	return r, nil
}

// openGzip puts a gzip decompressor between the input and the Reader,
// which then reads the decompressed bytes on the block path (whatever it
// read the compressed ones with): the decompressor reads the compressed
// input (the block of a regular file, the streaming buffer of anything
// else), and the Reader's block reads the decompressor, or an inflater
// running it ahead on its own goroutine (inflateAhead).
func (r *Reader) openGzip(size int) error {
	const gzipHeaderLen = 10
	p, _ := r.peek(gzipHeaderLen)
	have := len(p)
	var raw io.Reader = r.br
	stream := r.br != nil // not a regular file (see Open)
	if r.br == nil {
		// The block moves out of r: the decompressor reads it.
		blk := new(block)
		*blk = r.blk
		raw = blk
	}
	zr, err := newGzipMembers(raw, r.name)
	if err != nil {
		if isTruncation(err) {
			return &CutOffError{Name: r.name, Have: have, Need: max(gzipHeaderLen, have+1), Cause: err}
		}
		return &FileError{Name: r.name, Reason: gzipReason(err), Err: ErrNotCapture, Cause: err}
	}
	r.gz = zr
	r.format.Gzip = true
	var src io.Reader = zr
	if inflateAhead() {
		r.inflate = startInflater(zr, min(size, blockSize), stream, func() { zr.Close() })
		src = r.inflate
	}
	r.blk, r.br = newBlock(src, min(size, blockSize)), nil
	return nil
}

// Next reads the next frame into rec. It returns io.EOF at the clean end of
// the capture; every other error wraps one of the package's sentinels (or is
// an I/O error inside a *RecordError). rec.Data aliases the Reader's buffer
// and is valid until the next call to Next or Close. On an error rec is left
// as it was. In steady state Next allocates nothing.
func (r *Reader) Next(rec *Record) error {
	if r.nextInBlock(rec) {
		return nil
	}
	return r.next(rec)
}

// NextBatch reads up to len(recs) frames into recs[:n], all of which stay
// valid together until the next call to Next, NextBatch or Close: a
// caller can look ahead at the frames it will process next (to start
// loading the state they will touch, see cli's frameAnalyzer). It returns
// n ≥ 1 and a nil error, or 0 and the error Next would have returned.
// The block path hands out the frames that lie whole in its window (the
// rest of the batch comes with the next call); every other path, and the
// frames the hot loop leaves to the generic code, come one per call. In
// steady state NextBatch allocates nothing.
func (r *Reader) NextBatch(recs []Record) (n int, err error) {
	if r.fast == fastPcap {
		n = r.pcapBatch(recs)
	} else {
		for n < len(recs) && r.nextInBlock(&recs[n]) {
			n++
		}
	}
	if n > 0 || len(recs) == 0 {
		return n, nil
	}
	if err := r.next(&recs[0]); err != nil {
		return 0, err
	}
	return 1, nil
}

// nextInBlock is the block path's hot loop: it takes a record whose header
// and data lie whole in the block, with a plausible length, without moving
// the block, and says whether it did. Anything else is left to the generic
// code (next), which refills the block and reports what is wrong; nothing
// is consumed before that decision.
func (r *Reader) nextInBlock(rec *Record) bool {
	if r.fast == fastPcap {
		return r.pcapBatch(unsafe.Slice(rec, 1)) == 1 // rec as a batch of one
	}
	return r.fast == fastPcapng && r.nextEPB(rec)
}

// pcapBatch is nextInBlock for up to len(recs) pcap records: it returns
// how many it took. The block's window and the frame count stay in
// locals across the records, where nextInBlock, called per record, had
// the compiler load and store them again around each record's stores
// (which might alias them).
func (r *Reader) pcapBatch(recs []Record) int {
	b := &r.blk
	// p is what the block holds from the next record on: cut as each
	// record is taken, where slicing the block at an offset again on
	// every record cost ~10 instructions a record more (BENCHMARKS.md,
	// session 23).
	p, num := b.buf[b.lo:b.hi], r.n
	n := 0
	for ; n < len(recs); n++ {
		if len(p) < pcapRecordHeaderLen {
			break
		}
		h := (*[pcapRecordHeaderLen]byte)(p)
		var sec, frac, incl, orig uint32
		if r.bigEndian {
			sec, frac = binary.BigEndian.Uint32(h[0:]), binary.BigEndian.Uint32(h[4:])
			incl, orig = binary.BigEndian.Uint32(h[8:]), binary.BigEndian.Uint32(h[12:])
		} else {
			sec, frac = binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint32(h[4:])
			incl, orig = binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint32(h[12:])
		}
		if incl > r.maxCap || uint64(incl) > uint64(len(p)-pcapRecordHeaderLen) || sec-1 >= pcapJoinedSec-1 {
			break
		}
		end := pcapRecordHeaderLen + int(incl)
		num++
		nsec := int64(frac) * r.fracScale
		recs[n].set(time.Unix(int64(sec), nsec).UTC(), int64(sec)*1e9+nsec,
			int(incl), max(int(orig), int(incl)), r.linkType, 0, num, p[pcapRecordHeaderLen:end:end])
		p = p[end:]
	}
	b.lo, r.n = b.hi-len(p), num
	return n
}

// next is Next's generic code, shared by both paths: every record of the
// streaming path, and those the block path's hot loop leaves.
func (r *Reader) next(rec *Record) error {
	if r.err != nil {
		return r.err
	}
	var err error
	if r.format.Kind == KindPcap {
		err = r.nextPcap(rec)
	} else {
		err = r.nextPcapng(rec)
	}
	if err != nil {
		r.fail(err)
	}
	return err
}

// fail makes err sticky: Next returns it from now on, without trying a hot
// path.
func (r *Reader) fail(err error) {
	r.err = err
	r.fast = fastNone
}

// Close releases the decompressor and closes the file opened by Open.
// Next returns an error after Close.
func (r *Reader) Close() error {
	r.fail(fmt.Errorf("%s: %w", r.name, os.ErrClosed))
	r.closeGzip()
	if r.file == nil {
		return nil
	}
	f := r.file
	r.file = nil
	return f.Close()
}

func (r *Reader) closeGzip() {
	switch {
	case r.inflate != nil:
		r.inflate.Stop() // its goroutine closes gz
		r.inflate, r.gz = nil, nil
	case r.gz != nil:
		r.gz.Close()
		r.gz = nil
	}
}

// Trailing returns, once Next has returned io.EOF, what a gzip-compressed
// file holds after its last member that is not another member (zeros
// padding it, what a copy left behind): a *FileError wrapping
// ErrTrailingData, saying where that data starts. Like gzip, which warns
// of it ("trailing garbage ignored"), the Reader ignores it: the capture
// was read to its end. So does it zeros that fill a pcap from a record
// boundary to its end (see zeroTail). Trailing returns nil for every other
// file, and before the end.
func (r *Reader) Trailing() error {
	switch {
	case r.err != io.EOF:
		return nil
	case r.trailing != nil:
		return r.trailing
	case r.gz == nil:
		return nil
	}
	return r.gz.trailing
}

// Format returns the file's format.
func (r *Reader) Format() Format { return r.format }

// TimesFitNanos says whether every record the Reader gives has a time of
// the years 1678 to 2262, whose Record.TimeNanos, Timestamp.UnixNano(),
// does not wrap: true for pcap, whose times are 32-bit seconds from 1970
// (to 2106) and a fraction under 4,295 s. A pass that orders and bins
// frames by their nanoseconds may then take TimeNanos as it is, without
// checking the Timestamp's year on every frame (the range check of
// flows.TimeNanos, ~15 instructions a frame; BENCHMARKS.md, session
// 23). A pcapng's times are 64-bit: it says false.
func (r *Reader) TimesFitNanos() bool { return r.format.Kind == KindPcap }

// SnapLen returns the snap length of the pcap header, or of the first
// interface of the first pcapng section; 0 means no limit (or no interface).
func (r *Reader) SnapLen() int { return r.snapLen }

// LinkTypes returns the distinct link types declared so far, in order of
// declaration. For pcap that is the header's; for pcapng those of every
// Interface Description Block read so far (NewReader reads up to the first
// packet, so usually all of them).
func (r *Reader) LinkTypes() []LinkType { return slices.Clone(r.linkTypes) }

// Interfaces returns the interfaces of the current pcapng section (pcap: the
// one described by the file header), indexed by Record.Interface.
func (r *Reader) Interfaces() []Interface { return slices.Clone(r.ifaces) }

// Name returns the name given to Open or NewReader ("stdin" for "-").
func (r *Reader) Name() string { return r.name }

// InterfaceOf returns the interface that rec, read from r, came from, and
// its index among the interfaces of every section of the file (which tells
// the interfaces of different sections apart, unlike rec.Interface). It
// says false if rec's interface is not known to r. rec may have been read
// any time before: interfaces, once declared, stay known.
func (r *Reader) InterfaceOf(rec *Record) (int, Interface, bool) {
	base, end := 0, len(r.allIfaces)
	for i := len(r.sectionStarts) - 1; i >= 0; i-- {
		if s := r.sectionStarts[i]; rec.Number >= s.num {
			base = s.base
			if i+1 < len(r.sectionStarts) {
				end = r.sectionStarts[i+1].base
			}
			break
		}
	}
	idx := base + rec.Interface
	if rec.Interface < 0 || idx >= end || r.keptUntil != 0 && rec.Number >= r.keptUntil {
		return 0, Interface{}, false
	}
	return idx, r.allIfaces[idx], true
}

// addInterface records an interface of the current section.
func (r *Reader) addInterface(ifc Interface) {
	if r.sections <= 1 && len(r.ifaces) == 0 {
		r.snapLen = ifc.SnapLen
	}
	switch {
	case r.keptUntil != 0:
	case len(r.allIfaces) == maxKeptInterfaces:
		r.keptUntil = max(r.sectionNum, 1) // this section's records on: see InterfaceOf
	default:
		if len(r.ifaces) == 0 {
			r.sectionStarts = append(r.sectionStarts, sectionStart{num: r.sectionNum, base: len(r.allIfaces)})
		}
		r.allIfaces = append(r.allIfaces, ifc)
	}
	r.ifaces = append(r.ifaces, ifc)
	if !slices.Contains(r.linkTypes, ifc.LinkType) {
		r.linkTypes = append(r.linkTypes, ifc.LinkType)
	}
}

// peek returns the next n bytes of the input without consuming them, with
// bufio.Reader.Peek's semantics on either path.
func (r *Reader) peek(n int) ([]byte, error) {
	if r.br != nil {
		return r.br.Peek(n)
	}
	return r.blk.peek(n)
}

// discard consumes up to n bytes of the input, with bufio.Reader.Discard's
// semantics on either path. It does not move r.off: its callers do.
func (r *Reader) discard(n int) (int, error) {
	if r.br != nil {
		return r.br.Discard(n)
	}
	return r.blk.discard(n)
}

// Buffered returns how many bytes the Reader has read from its input and
// not yet used: at 0, the next Next may wait for the input (a pipe from a
// capture still running), so a program printing records as it reads them
// flushes its output then.
func (r *Reader) Buffered() int {
	if r.br != nil {
		return r.br.Buffered()
	}
	return r.blk.hi - r.blk.lo
}

// source returns the input as an io.Reader (past the bytes consumed).
func (r *Reader) source() io.Reader {
	if r.br != nil {
		return r.br
	}
	return &r.blk
}

// bufferSize is the largest record read returns without a copy.
func (r *Reader) bufferSize() int {
	if r.br != nil {
		return r.br.Size()
	}
	return r.blk.size()
}

// pos returns the offset of the next unread byte of the (decompressed)
// stream: r.off on the streaming path, the block's own count on the block
// path (whose hot loop does not keep r.off).
func (r *Reader) pos() int64 {
	if r.br != nil {
		return r.off
	}
	return r.blk.pos()
}

// read returns the next n bytes of the stream and consumes them. Up to the
// buffer size they alias the read buffer; larger ones are copied into r.buf,
// which grows only as data actually arrives. num is the frame number for
// errors.
func (r *Reader) read(n, num int) ([]byte, error) {
	if n <= r.bufferSize() {
		p, err := r.peek(n)
		if len(p) < n {
			return nil, r.readErr(err, num, len(p), n)
		}
		r.discard(n) // cannot fail: n bytes are buffered
		r.off += int64(n)
		return p[:n:n], nil
	}
	r.buf = r.buf[:0]
	src := r.source()
	for len(r.buf) < n {
		chunk := min(n-len(r.buf), growStep)
		r.buf = slices.Grow(r.buf, chunk)
		m, err := io.ReadFull(src, r.buf[len(r.buf):len(r.buf)+chunk])
		r.buf = r.buf[:len(r.buf)+m]
		if err != nil {
			return nil, r.readErr(err, num, len(r.buf), n)
		}
	}
	r.off += int64(n)
	return r.buf[:n:n], nil
}

// readErr turns an error from the read buffer, met after have of need bytes
// of the record starting at r.recOff, into the package's error: a
// *CutOffError if the input ended, an ErrBadRecord if gzip data is corrupt,
// else an I/O error. num 0 means the file header.
func (r *Reader) readErr(err error, num, have, need int) error {
	if isTruncation(err) {
		return &CutOffError{Name: r.name, Record: num, Offset: r.recOff, Have: have, Need: need, Cause: err}
	}
	reason, sentinel := err.Error(), error(nil)
	if r.gz != nil && isGzipCorrupt(err) {
		reason, sentinel = gzipReason(err), ErrBadRecord
	}
	if num == 0 {
		return &FileError{Name: r.name, Reason: reason, Err: sentinel, Cause: err}
	}
	return &RecordError{Name: r.name, Record: num, Offset: r.recOff, Reason: reason, Err: sentinel, Cause: err}
}

// badRecord returns an error wrapping ErrBadRecord for frame num (a
// *FileError for num 0, the file header).
func (r *Reader) badRecord(num int, format string, args ...any) error {
	return r.recordErr(num, ErrBadRecord, format, args...)
}

// recordErr returns a *RecordError wrapping sentinel for frame num, or a
// *FileError when num is 0 (the file header).
func (r *Reader) recordErr(num int, sentinel error, format string, args ...any) error {
	reason := fmt.Sprintf(format, args...)
	if num == 0 {
		return &FileError{Name: r.name, Reason: reason, Err: sentinel}
	}
	return &RecordError{Name: r.name, Record: num, Offset: r.recOff, Reason: reason, Err: sentinel}
}
