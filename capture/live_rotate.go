package capture

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// RotateConfig says where a RotatingWriter writes and when it starts a new
// file, as tcpdump's -w, -C, -G and -W do.
type RotateConfig struct {
	Path     string
	LinkType LinkType
	SnapLen  int // of the file header; frames longer than this are cut
	// FileSize (-C): before writing a frame, start a new file if the
	// current one has grown past this many bytes; 0: no limit. As in
	// tcpdump, a file ends up at most one frame larger than FileSize.
	FileSize int64
	// Interval (-G): before writing a frame, start a new file if the
	// current one was opened this long ago or more; 0: never.
	Interval time.Duration
	// Count (-W): keep at most this many files, reusing their names in a
	// ring (the oldest is overwritten); 0: no limit. Needs FileSize or
	// Interval.
	Count int
	// Now is the clock Interval is measured on; nil means time.Now.
	Now func() time.Time
}

// RotatingWriter writes frames to a pcap file (nanosecond, the writer's
// link type and snap length) and moves on to a new file by size or age.
//
// File names follow tcpdump without strftime expansion: with no Count,
// Path, then Path1, Path2, ...; with a Count, Path0 ... Path<Count-1>
// with the number zero-padded to the digits of Count-1 (Path00 to Path99
// for a Count of 100), cycling. Every file is a complete pcap file on its
// own, so a set of them is read as one capture by any command that merges
// files in time order.
type RotatingWriter struct {
	cfg    RotateConfig
	f      *os.File
	bw     *bufio.Writer
	pw     *PcapWriter
	size   int64     // bytes written to the current file, header included
	opened time.Time // when the current file was opened, on cfg.Now
	frames int       // frames in the current file
	files  []string  // every file opened, in order
	err    error     // sticky

	closed   bool
	closeErr error // what Close returned
}

// rotateBufSize is the write buffer of each file.
const rotateBufSize = 256 << 10

// NewRotatingWriter creates the first file.
func NewRotatingWriter(cfg RotateConfig) (*RotatingWriter, error) {
	switch {
	case cfg.Path == "":
		return nil, errors.New("capture: rotating writer: no file name")
	case cfg.FileSize < 0 || cfg.Interval < 0 || cfg.Count < 0:
		return nil, errors.New("capture: rotating writer: negative size, interval or count")
	case cfg.Count > 0 && cfg.FileSize == 0 && cfg.Interval == 0:
		return nil, errors.New("capture: rotating writer: a file count needs a file size or an interval")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	w := &RotatingWriter{cfg: cfg}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// RotatedName returns the name of the file number seq (0 for the first
// file a writer opens) for a path and file count, as RotatingWriter names
// them.
func RotatedName(path string, seq, count int) string {
	if count <= 0 {
		if seq == 0 {
			return path
		}
		return path + strconv.Itoa(seq)
	}
	digits := len(strconv.Itoa(count - 1))
	if count == 1 {
		digits = 0 // tcpdump: no padding, "FILE0"
	}
	return fmt.Sprintf("%s%0*d", path, digits, seq%count)
}

// open starts file number len(w.files).
func (w *RotatingWriter) open() error {
	name := RotatedName(w.cfg.Path, len(w.files), w.cfg.Count)
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, rotateBufSize)
	pw, err := NewPcapWriter(bw, w.cfg.LinkType, w.cfg.SnapLen)
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.bw, w.pw = f, bw, pw
	w.size, w.frames, w.opened = pcapFileHeaderLen, 0, w.cfg.Now()
	w.files = append(w.files, name)
	return nil
}

// closeFile flushes and closes the current file.
func (w *RotatingWriter) closeFile() error {
	if w.f == nil {
		return nil
	}
	err := w.bw.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f, w.bw, w.pw = nil, nil, nil
	return err
}

// rotateDue says whether the next frame goes to a new file. An empty file
// is never left behind: a file that is due by age but holds no frame yet
// takes the frame, and its age starts again.
func (w *RotatingWriter) rotateDue() bool {
	bySize := w.cfg.FileSize > 0 && w.size > w.cfg.FileSize
	byAge := false
	if w.cfg.Interval > 0 {
		now := w.cfg.Now()
		if now.Sub(w.opened) >= w.cfg.Interval {
			if w.frames == 0 {
				w.opened = now
			} else {
				byAge = true
			}
		}
	}
	return w.frames > 0 && (bySize || byAge)
}

// WritePacket writes one frame, first moving to a new file if one is due.
// It returns where the frame went: the index of its file in Files and its
// 1-based number in that file. Errors are sticky.
func (w *RotatingWriter) WritePacket(ts time.Time, data []byte, origLen int) (file, frame int, err error) {
	if w.err != nil {
		return 0, 0, w.err
	}
	if w.rotateDue() {
		if err := w.closeFile(); err != nil {
			w.err = err
			return 0, 0, err
		}
		if err := w.open(); err != nil {
			w.err = err
			return 0, 0, err
		}
	}
	if err := w.pw.WritePacket(ts, data, origLen); err != nil {
		w.err = err
		return 0, 0, err
	}
	n := len(data)
	if w.cfg.SnapLen > 0 {
		n = min(n, w.cfg.SnapLen)
	}
	w.size += int64(pcapRecordHeaderLen + n)
	w.frames++
	return len(w.files) - 1, w.frames, nil
}

// Flush writes what is buffered to the current file.
func (w *RotatingWriter) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.bw != nil {
		if err := w.bw.Flush(); err != nil {
			w.err = err
		}
	}
	return w.err
}

// Close flushes and closes the current file and returns the first error
// the writer met, if any. Writing after Close fails.
func (w *RotatingWriter) Close() error {
	if w.closed {
		return w.closeErr
	}
	w.closed = true
	err := w.closeFile()
	if w.err != nil {
		err = w.err
	} else {
		w.err = errRotatingClosed
	}
	w.closeErr = err
	return err
}

// errRotatingClosed is returned by writes after Close.
var errRotatingClosed = errors.New("capture: rotating writer: closed")

// Files returns every file opened, in order. With a Count, a name comes
// back once per use of it; the file holds only the last use.
func (w *RotatingWriter) Files() []string { return append([]string(nil), w.files...) }
