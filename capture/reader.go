package capture

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
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
type Reader struct {
	name   string
	file   io.Closer    // closed by Close; nil for caller-supplied readers and stdin
	gz     *gzip.Reader // nil unless the input is gzip-compressed
	br     *bufio.Reader
	format Format
	order  binary.ByteOrder // of the pcap header or the current pcapng section
	err    error            // sticky
	n      int              // frames delivered
	off    int64            // bytes consumed from the (decompressed) stream
	recOff int64            // offset of the record or block being read, for errors
	buf    []byte           // copy buffer for records larger than br

	maxCapLen int         // pcap: cap on incl_len
	snapLen   int         // pcap header snaplen, or of the first pcapng interface
	ifaces    []Interface // pcap: one; pcapng: those of the current section
	linkTypes []LinkType  // distinct, in order of declaration
	sections  int         // pcapng sections seen
}

// Open opens the capture file at path ("-" reads standard input, named
// "stdin" in errors). The format is detected from the magic bytes, never
// from the name. Close the Reader to close the file.
func Open(path string) (*Reader, error) { return openSize(path, bufSize) }

// openSize is Open with a given read buffer size.
func openSize(path string, size int) (*Reader, error) {
	if path == "-" {
		return newReaderSize(os.Stdin, "stdin", size)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReaderSize(f, path, size)
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
	return r, nil
}

// openGzip puts a gzip decompressor between the file and the read buffer.
func (r *Reader) openGzip(size int) error {
	const gzipHeaderLen = 10
	p, _ := r.br.Peek(gzipHeaderLen)
	have := len(p)
	zr, err := gzip.NewReader(r.br)
	if err != nil {
		if isTruncation(err) {
			return &CutOffError{Name: r.name, Have: have, Need: max(gzipHeaderLen, have+1), Cause: err}
		}
		return &FileError{Name: r.name, Reason: gzipReason(err), Err: ErrNotCapture, Cause: err}
	}
	r.gz = zr
	r.format.Gzip = true
	r.br = bufio.NewReaderSize(zr, size)
	return nil
}

// Next reads the next frame into rec. It returns io.EOF at the clean end of
// the capture; every other error wraps one of the package's sentinels (or is
// an I/O error inside a *RecordError). rec.Data is valid until the next call.
// In steady state Next allocates nothing.
func (r *Reader) Next(rec *Record) error {
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
		r.err = err
	}
	return err
}

// Close releases the decompressor and closes the file opened by Open.
// Next returns an error after Close.
func (r *Reader) Close() error {
	r.err = fmt.Errorf("%s: %w", r.name, os.ErrClosed)
	r.closeGzip()
	if r.file == nil {
		return nil
	}
	f := r.file
	r.file = nil
	return f.Close()
}

func (r *Reader) closeGzip() {
	if r.gz != nil {
		r.gz.Close()
		r.gz = nil
	}
}

// Format returns the file's format.
func (r *Reader) Format() Format { return r.format }

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

// addInterface records an interface of the current section.
func (r *Reader) addInterface(ifc Interface) {
	if r.sections <= 1 && len(r.ifaces) == 0 {
		r.snapLen = ifc.SnapLen
	}
	r.ifaces = append(r.ifaces, ifc)
	if !slices.Contains(r.linkTypes, ifc.LinkType) {
		r.linkTypes = append(r.linkTypes, ifc.LinkType)
	}
}

// read returns the next n bytes of the stream and consumes them. Up to the
// buffer size they alias the read buffer; larger ones are copied into r.buf,
// which grows only as data actually arrives. num is the frame number for
// errors.
func (r *Reader) read(n, num int) ([]byte, error) {
	if n <= r.br.Size() {
		p, err := r.br.Peek(n)
		if len(p) < n {
			return nil, r.readErr(err, num, len(p), n)
		}
		r.br.Discard(n) // cannot fail: n bytes are buffered
		r.off += int64(n)
		return p, nil
	}
	r.buf = r.buf[:0]
	for len(r.buf) < n {
		chunk := min(n-len(r.buf), growStep)
		r.buf = slices.Grow(r.buf, chunk)
		m, err := io.ReadFull(r.br, r.buf[len(r.buf):len(r.buf)+chunk])
		r.buf = r.buf[:len(r.buf)+m]
		if err != nil {
			return nil, r.readErr(err, num, len(r.buf), n)
		}
	}
	r.off += int64(n)
	return r.buf, nil
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
