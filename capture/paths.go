package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
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
// never judged here: if it is not a capture, opening it says so.
func ExpandPaths(args []string) (paths []string, skipped []Skipped, err error) {
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
			paths = append(paths, a)
			continue
		}
		n := len(paths)
		if paths, skipped, err = expandDir(a, paths, skipped); err != nil {
			return nil, nil, err
		}
		if len(paths) == n {
			return nil, nil, fmt.Errorf("%s: directory holds no capture files", a)
		}
	}
	return paths, skipped, nil
}

// expandDir appends the captures of directory dir to paths and the files
// it leaves out to skipped. Subdirectories and special files (pipes,
// devices) are passed over without a word, as they always were: a
// directory is not read recursively, and opening a pipe to look at it
// could block.
func expandDir(dir string, paths []string, skipped []Skipped) ([]string, []Skipped, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := filepath.Join(dir, name)
		mode := e.Type()
		if mode&os.ModeSymlink != 0 {
			st, err := os.Stat(p)
			if err != nil {
				skipped = append(skipped, Skipped{Dir: dir, Name: name, Why: "dangling symlink"})
				continue
			}
			mode = st.Mode()
		}
		if !mode.IsRegular() {
			continue
		}
		if ok, why := looksLikeCapture(p); !ok {
			skipped = append(skipped, Skipped{Dir: dir, Name: name, Why: why})
			continue
		}
		paths = append(paths, p)
	}
	return paths, skipped, nil
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
