package capture

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error a Reader returns, apart from io.EOF at the
// clean end of a capture and plain I/O errors, wraps one of these, so callers
// test with errors.Is.
var (
	// ErrCutOff: the file ends in the middle of a record or header. Every
	// whole record before the cut has been delivered.
	ErrCutOff = errors.New("file cut off")
	// ErrBadRecord: a record or block is malformed (an implausible length,
	// a trailing length that does not match, a bad option). Reading stops
	// there: the stream cannot be resynchronised.
	ErrBadRecord = errors.New("bad record")
	// ErrNotCapture: the input is neither pcap nor pcapng.
	ErrNotCapture = errors.New("not a pcap or pcapng file")
	// ErrEmpty: the input holds no bytes at all.
	ErrEmpty = errors.New("empty file")
	// ErrUnsupported: the input is a capture, but in a variant this package
	// does not read (another compression, a pcap version other than 2.x, a
	// timestamp resolution that does not fit in 64 bits).
	ErrUnsupported = errors.New("unsupported capture format")
	// ErrChanged: a file of a merge changed between the look OpenMerged
	// took at it and its reading (see Merger): deleted, truncated or
	// replaced. None of its frames were read.
	ErrChanged = errors.New("file changed while it was read")
	// ErrTrailingData: a gzip-compressed file goes on after its last
	// member with data that is not another member, which gzip ignores
	// with a warning, and so does a Reader (see Reader.Trailing). It
	// says something about the file, not that reading stopped early.
	ErrTrailingData = errors.New("trailing data after the gzip stream")
)

// FileError reports a problem with the capture as a whole, found while
// reading its file header: an empty file, one that is not a capture, an
// unsupported format, a malformed header, or an I/O error.
type FileError struct {
	Name   string // file name as given to Open or NewReader
	Reason string // what is wrong, e.g. "not a pcap or pcapng file (starts with 48 65 6c 6c)"
	Err    error  // the sentinel: ErrEmpty, ErrNotCapture, ErrUnsupported, ErrBadRecord, ErrChanged or ErrTrailingData; nil for I/O errors
	Cause  error  // the underlying error (I/O, gzip), if any
}

func (e *FileError) Error() string { return e.Name + ": " + e.Reason }

// Unwrap returns the sentinel and the underlying cause, if any.
func (e *FileError) Unwrap() []error { return nonNil(e.Err, e.Cause) }

// RecordError reports a malformed record or block. Record is the 1-based
// number of the frame being read (one more than the frames delivered so far,
// also when the bad block is not a packet block).
type RecordError struct {
	Name   string // file name
	Record int    // 1-based frame number being read
	Offset int64  // byte offset of the record or block in the (decompressed) stream
	Reason string // e.g. "captured length 4294967295 is implausible"
	Err    error  // the sentinel, usually ErrBadRecord or ErrUnsupported; nil for I/O errors
	Cause  error  // the underlying error (I/O, gzip), if any
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%s: record %d: %s", e.Name, e.Record, e.Reason)
}

// Unwrap returns the sentinel and the underlying cause, if any.
func (e *RecordError) Unwrap() []error { return nonNil(e.Err, e.Cause) }

// CutOffError reports a file that ends in the middle of a record (or of the
// file header, when Record is 0). It wraps ErrCutOff.
type CutOffError struct {
	Name   string // file name
	Record int    // 1-based frame number being read; 0 for the file header
	Offset int64  // byte offset of the cut record in the (decompressed) stream
	Have   int    // bytes of the record present
	Need   int    // bytes the record (or the part of it being read) needs
	Cause  error  // io.EOF, io.ErrUnexpectedEOF, or gzip's truncation error
}

func (e *CutOffError) Error() string {
	if e.Record == 0 {
		return fmt.Sprintf("%s: file cut off in file header (have %d of %d bytes)", e.Name, e.Have, e.Need)
	}
	return fmt.Sprintf("%s: file cut off in record %d (have %d of %d bytes)", e.Name, e.Record, e.Have, e.Need)
}

// Unwrap returns ErrCutOff.
func (e *CutOffError) Unwrap() error { return ErrCutOff }

func nonNil(errs ...error) []error {
	out := errs[:0]
	for _, err := range errs {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}
