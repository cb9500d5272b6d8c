package capture

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// kindGzip marks a gzip stream in sniff's result; it is not a Kind a
// Format ever holds.
const kindGzip Kind = 255

// magic is a recognised file signature.
type magic struct {
	sig   []byte
	kind  Kind
	order binary.ByteOrder // pcap: byte order the magic implies
	nano  bool             // pcap: nanosecond timestamps
	other string           // a format we recognise but do not read
}

// magicFor returns the file signatures this package recognises, longest
// match first where they share a prefix.
func magicFor() []magic {
	return []magic{
		{sig: []byte{0xd4, 0xc3, 0xb2, 0xa1}, kind: KindPcap, order: binary.LittleEndian},
		{sig: []byte{0xa1, 0xb2, 0xc3, 0xd4}, kind: KindPcap, order: binary.BigEndian},
		{sig: []byte{0x4d, 0x3c, 0xb2, 0xa1}, kind: KindPcap, order: binary.LittleEndian, nano: true},
		{sig: []byte{0xa1, 0xb2, 0x3c, 0x4d}, kind: KindPcap, order: binary.BigEndian, nano: true},
		{sig: []byte{0x0a, 0x0d, 0x0d, 0x0a}, kind: KindPcapNG},
		{sig: []byte{0x1f, 0x8b}, kind: kindGzip},
		{sig: []byte{0x34, 0xcd, 0xb2, 0xa1}, other: "a modified (Kuznetzov) pcap file is not supported: convert it with editcap -F pcap"},
		{sig: []byte{0xa1, 0xb2, 0xcd, 0x34}, other: "a modified (Kuznetzov) pcap file is not supported: convert it with editcap -F pcap"},
		{sig: []byte{0x28, 0xb5, 0x2f, 0xfd}, other: "zstd-compressed; decompress it first"},
		{sig: []byte{0xfd, 0x37, 0x7a, 0x58}, other: "xz-compressed; decompress it first"},
		{sig: []byte{0x42, 0x5a, 0x68}, other: "bzip2-compressed; decompress it first"},
		{sig: []byte{0x04, 0x22, 0x4d, 0x18}, other: "lz4-compressed; decompress it first"},
	}
}

// sniff looks at the first bytes of the stream, without consuming them, and
// says what they are.
func (r *Reader) sniff() (magic, error) {
	p, err := r.peek(4)
	switch {
	case len(p) == 0 && err == io.EOF:
		return magic{}, &FileError{Name: r.name, Reason: r.inGzip("empty file"), Err: ErrEmpty}
	case len(p) == 0, len(p) < 4 && err != io.EOF && !isTruncation(err):
		// Cut off (inside gzip), corrupt gzip data, or an I/O error.
		return magic{}, r.readErr(err, 0, len(p), 4)
	}
	prefix := false
	for _, m := range magicFor() {
		if r.gz != nil && m.kind == kindGzip {
			continue // a gzip inside gzip is not a capture
		}
		switch {
		case len(p) >= len(m.sig) && bytes.Equal(p[:len(m.sig)], m.sig):
			if m.other != "" {
				return magic{}, &FileError{Name: r.name, Reason: r.inGzip(m.other), Err: ErrUnsupported}
			}
			return m, nil
		case len(p) < len(m.sig) && bytes.Equal(p, m.sig[:len(p)]) && m.other == "":
			prefix = true
		}
	}
	if prefix {
		// The start of a capture (or gzip) signature, and then the end.
		return magic{}, &CutOffError{Name: r.name, Have: len(p), Need: 4, Cause: io.ErrUnexpectedEOF}
	}
	return magic{}, &FileError{
		Name:   r.name,
		Reason: r.inGzip(fmt.Sprintf("not a pcap or pcapng file (starts with % x)", p)),
		Err:    ErrNotCapture,
	}
}

// inGzip qualifies a reason about the content of a gzip-compressed file.
func (r *Reader) inGzip(reason string) string {
	if r.gz == nil {
		return reason
	}
	return "gzip-compressed, but inside: " + reason
}

// isTruncation reports whether err means the input ended too soon.
func isTruncation(err error) bool {
	return err == io.EOF || err == io.ErrUnexpectedEOF
}

// isGzipCorrupt reports whether err comes from damaged gzip data.
func isGzipCorrupt(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.As(err, &ce)
}

// gzipReason describes a gzip error, making sure it says "gzip".
func gzipReason(err error) string {
	s := err.Error()
	if strings.HasPrefix(s, "gzip: ") {
		return s
	}
	return "gzip: " + s
}
