package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Skipped is a file of a directory argument that ExpandPaths did not take
// because it is not a capture.
type Skipped struct {
	Dir  string // the directory, as given
	Name string // the file's name in it
	Why  string // what it is, when there is more to say than "not a capture": "empty", "dangling symlink", "zstd-compressed; decompress it first"

	// SameAs, when set, is the path of a capture taken before this one
	// that is the same file (os.SameFile: given twice, or as a file and
	// within a directory, or through a link): it is read once, since
	// reading it twice would count every frame twice. Dir and Name are
	// then the repeat's ("" and the argument for a file argument).
	SameAs string

	// CopyOf, when set, is the path of a capture in the same directory of
	// which this file is a gzip-compressed copy (NAME.gz beside NAME, as
	// `gzip -k` leaves them, holding the same bytes): it is left out, for
	// the same reason.
	CopyOf string
}

// ExpandPaths turns the capture arguments of a command into file paths: a
// file stays as it is, "-" is standard input (once: it can be read only
// once), and a directory becomes the captures in it (not hidden, not
// recursive), sorted by name.
//
// In a directory, a symlink counts as the file it points to, and a file is
// a capture when its first bytes are the magic of pcap or pcapng, or of
// gzip with a pcap or pcapng inside: the notes, truth files and reports
// people keep next to their captures are left out and returned in skipped,
// in order, with dangling symlinks. A file that cannot be opened is kept,
// so that opening it says what is wrong. A file named as an argument is
// never judged here: if it is not a capture, opening it says so. A file
// reached a second time (see Skipped.SameAs), or a gzip-compressed copy of
// a capture beside it in the same directory (Skipped.CopyOf), is left out
// too.
func ExpandPaths(args []string) (paths []string, skipped []Skipped, err error) {
	var taken takenFiles
	stdin := false
	for _, a := range args {
		if a == "-" {
			if stdin {
				return nil, nil, errors.New(`standard input ("-") is given twice: it can be read only once`)
			}
			stdin = true
			paths = append(paths, a)
			continue
		}
		st, err := os.Stat(a)
		if err != nil {
			return nil, nil, err
		}
		if !st.IsDir() {
			if same := taken.add(a, st); same != "" {
				skipped = append(skipped, Skipped{Name: a, SameAs: same})
			} else {
				paths = append(paths, a)
			}
			continue
		}
		var found int
		var subdirs []string
		if paths, skipped, found, subdirs, err = expandDir(a, paths, skipped, &taken); err != nil {
			return nil, nil, err
		}
		if found == 0 {
			return nil, nil, noCaptureError(a, subdirs, skipped)
		}
	}
	return paths, skipped, nil
}

// noCaptureError is the error for a directory argument without a capture
// in it. Captures are often kept one subdirectory per mirror or rail
// (incident/rail0/, incident/rail1/), which a directory argument does not
// read: the error then names the subdirectories to give instead.
//
// Without subdirectories, it names the files of dir that were left out
// (skipped holds them, after those of earlier arguments) when one of them
// is a capture that could not be read, such as an empty one or one cut off
// in its file header: "holds no capture files" alone, beside a *.pcap,
// left the reader to guess why.
func noCaptureError(dir string, subdirs []string, skipped []Skipped) error {
	if len(subdirs) == 0 {
		const show = 3
		var names []string
		said := false
		for _, s := range skipped {
			if s.Dir != dir || s.SameAs != "" || s.CopyOf != "" {
				continue
			}
			said = said || s.Why != "" && s.Why != "dangling symlink"
			if len(names) == show {
				names = append(names, "...")
				break
			}
			n := s.Name
			if s.Why != "" {
				n += " (" + s.Why + ")"
			}
			names = append(names, n)
		}
		if said {
			return fmt.Errorf("%s: directory holds no capture files; left out: %s", dir, strings.Join(names, ", "))
		}
		return fmt.Errorf("%s: directory holds no capture files", dir)
	}
	const show = 3
	names := make([]string, 0, show+1)
	for _, d := range subdirs[:min(len(subdirs), show)] {
		names = append(names, filepath.Join(dir, d))
	}
	if len(subdirs) > show {
		names = append(names, "...")
	}
	return fmt.Errorf("%s: directory holds no capture files; its subdirectories are not read: give them (%s)", dir, strings.Join(names, " "))
}

// expandDir appends the captures of directory dir to paths and the files
// it leaves out to skipped, and returns how many captures it found (those
// taken before included) and the names of its subdirectories (not
// hidden). Subdirectories and special files (pipes, devices) are passed
// over without a word, as they always were: a directory is not read
// recursively, and opening a pipe to look at it could block.
func expandDir(dir string, paths []string, skipped []Skipped, taken *takenFiles) (_ []string, _ []Skipped, found int, subdirs []string, _ error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, 0, nil, err
	}
	first := len(paths)
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		if e.IsDir() {
			subdirs = append(subdirs, name)
			continue
		}
		if !e.Type().IsRegular() && e.Type()&os.ModeSymlink == 0 {
			continue
		}
		st, err := os.Stat(p) // a symlink's target
		switch {
		case err != nil && e.Type()&os.ModeSymlink != 0:
			skipped = append(skipped, Skipped{Dir: dir, Name: name, Why: "dangling symlink"})
			continue
		case err != nil:
			paths = append(paths, p) // opening it says what is wrong
			found++
			continue
		case st.IsDir(): // a symlink to a directory
			subdirs = append(subdirs, name)
			continue
		case !st.Mode().IsRegular():
			continue
		}
		if ok, why := looksLikeCapture(p); !ok {
			skipped = append(skipped, Skipped{Dir: dir, Name: name, Why: why})
			continue
		}
		found++
		if same := taken.add(p, st); same != "" {
			skipped = append(skipped, Skipped{Dir: dir, Name: name, SameAs: same})
			continue
		}
		paths = append(paths, p)
	}
	paths, skipped = dropGzipCopies(dir, paths, first, skipped)
	return paths, skipped, found, subdirs, nil
}

// dropGzipCopies moves the captures paths[first:] of directory dir that
// are gzip-compressed copies of another of them (NAME.gz of NAME) from
// paths to skipped.
func dropGzipCopies(dir string, paths []string, first int, skipped []Skipped) ([]string, []Skipped) {
	inDir := paths[first:]
	plain := map[string]bool{}
	for _, p := range inDir {
		plain[p] = true
	}
	kept := paths[:first]
	for _, p := range inDir {
		if orig, ok := strings.CutSuffix(p, ".gz"); ok && plain[orig] && isGzipCopy(p, orig) {
			skipped = append(skipped, Skipped{Dir: dir, Name: filepath.Base(p), CopyOf: orig})
			continue
		}
		kept = append(kept, p)
	}
	return kept, skipped
}

// gzipCopyCheck is how many bytes isGzipCopy compares from the start.
const gzipCopyCheck = 64 << 10

// isGzipCopy says whether the gzip file gz holds the bytes of the file
// orig: its trailer gives orig's size (modulo 2^32, RFC 1952 §2.3.1 ISIZE,
// of its last member) and it starts with orig's first gzipCopyCheck bytes.
// Two captures of one mirror that differ are told apart by their first
// records' times long before that; a file that cannot be read is no copy.
func isGzipCopy(gz, orig string) bool {
	o, err := os.Open(orig)
	if err != nil {
		return false
	}
	defer o.Close()
	g, err := os.Open(gz)
	if err != nil {
		return false
	}
	defer g.Close()
	ost, err1 := o.Stat()
	gst, err2 := g.Stat()
	if err1 != nil || err2 != nil || gst.Size() < 18 { // a gzip header and trailer
		return false
	}
	var isize [4]byte
	if _, err := g.ReadAt(isize[:], gst.Size()-4); err != nil || binary.LittleEndian.Uint32(isize[:]) != uint32(ost.Size()) {
		return false
	}
	zr, err := gzip.NewReader(g)
	if err != nil {
		return false
	}
	a, b := make([]byte, gzipCopyCheck), make([]byte, gzipCopyCheck)
	na, _ := io.ReadFull(o, a)
	nb, _ := io.ReadFull(zr, b)
	return na == nb && bytes.Equal(a[:na], b[:nb])
}

// takenFiles are the files ExpandPaths has taken, to recognise one
// reached again.
type takenFiles struct {
	byID  map[fileID]string // by device and inode, where the system has them
	other []takenFile       // elsewhere: compared one by one (os.SameFile)
}

type takenFile struct {
	path string
	st   os.FileInfo
}

// add takes the file at path, of FileInfo st, and returns "", or the path
// under which the same file was taken before (and then does not take it).
func (t *takenFiles) add(path string, st os.FileInfo) (sameAs string) {
	if id, ok := fileIDOf(st); ok {
		if p, seen := t.byID[id]; seen {
			return p
		}
		if t.byID == nil {
			t.byID = map[fileID]string{}
		}
		t.byID[id] = path
		return ""
	}
	for _, f := range t.other {
		if os.SameFile(f.st, st) {
			return f.path
		}
	}
	t.other = append(t.other, takenFile{path, st})
	return ""
}

// looksLikeCapture reads the first bytes of the file at path and says
// whether they are those of a capture Open reads: the magic of pcap or
// pcapng, plain or gzip-compressed. If not, why says what the file is when
// that is worth saying (empty, or a format Open recognises but does not
// read, a gzip stream too damaged to show its first bytes). A file that
// cannot be opened or read at all counts as a capture, so that the error
// surfaces when it is opened for reading.
func looksLikeCapture(path string) (ok bool, why string) {
	f, err := os.Open(path)
	if err != nil {
		return true, ""
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64)
	head, err := br.Peek(4)
	if err != nil && err != io.EOF {
		return true, ""
	}
	m, found := magicOf(head)
	switch {
	case len(head) == 0:
		return false, "empty"
	case !found:
		return false, ""
	case m.other != "":
		return false, m.other
	case m.kind != kindGzip:
		if cutInHeader(path) {
			return false, "cut off in its file header"
		}
		return true, ""
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return false, "gzip-compressed, but damaged"
	}
	defer zr.Close()
	var inner [4]byte
	n, err := io.ReadFull(zr, inner[:])
	if m, found = magicOf(inner[:n]); found && m.other == "" && m.kind != kindGzip {
		if cutInHeader(path) {
			return false, "gzip-compressed, cut off in its file header"
		}
		return true, ""
	}
	switch {
	case n == 0 && err == io.EOF:
		return false, "gzip-compressed, but empty"
	case n < len(inner) && err != io.ErrUnexpectedEOF:
		return false, "gzip-compressed, but damaged"
	}
	return false, ""
}

// cutInHeader says whether the capture at path ends inside its file header
// (a pcapng: its Section Header Block). It holds no frame, as an empty file
// does, and is left out as one is: reading it would stop the whole run on
// a stub next to the captures (a copy cut short, a capture killed as it
// began), not be analysed up to its cut as a capture cut off in a record is.
func cutInHeader(path string) bool {
	r, err := openSize(path, minBufSize)
	if err == nil {
		r.Close()
		return false
	}
	var cut *CutOffError
	return errors.As(err, &cut) && cut.Record == 0
}

// magicOf finds the file signature p starts with (p holds up to the
// first four bytes of a file).
func magicOf(p []byte) (magic, bool) {
	for _, m := range magicFor() {
		if len(p) >= len(m.sig) && bytes.Equal(p[:len(m.sig)], m.sig) {
			return m, true
		}
	}
	return magic{}, false
}
