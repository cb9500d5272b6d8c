package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// outputFile is where a command writes what -o names (report, merge,
// extract, and live's report). A file is written as a temporary file in
// its directory and renamed over the output only once everything was
// written (commit); a run that fails removes it (discard). Why: a failed
// run must never leave an empty or half-written output, nor truncate a
// file that was there before it - least of all one it was about to read.
// The temporary file's name starts with a dot, so a run over the
// directory never takes it for a capture.
//
// "" and "-" are standard output, written as it goes. An output that
// exists and is not a regular file (/dev/null, a pipe) is written in
// place, since renaming over it would replace it. A crash of the machine
// is not covered: that would cost an fsync of every output.
type outputFile struct {
	w   io.Writer // what Write writes to
	f   *os.File  // the file being written; nil for standard output and once committed or discarded
	tmp string    // f's name when it is to be renamed to dst
	dst string    // the output file (a symlink's target)
}

// createOutput opens the output named by path, with stdout for "" and
// "-". Errors are the user's to fix (a directory, a path that does not
// exist, no permission): callers report them as usage errors.
func createOutput(path string, stdout io.Writer) (*outputFile, error) {
	if path == "" || path == "-" {
		return &outputFile{w: stdout}, nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return createTempOutput(path, 0)
	case err != nil:
		return nil, outputError(path, err)
	case st.IsDir():
		return nil, fmt.Errorf("-o %s: is a directory", path)
	case !st.Mode().IsRegular():
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, outputError(path, err)
		}
		return &outputFile{w: f, f: f}, nil
	}
	// Replacing a file needs no write permission on it, but writing it
	// in place (as os.Create did) did: ask for it the same way, without
	// touching the file.
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil, outputError(path, err)
	}
	f.Close()
	dst, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, outputError(path, err)
	}
	return createTempOutput(dst, st.Mode().Perm())
}

// outputError names the -o path in err, an error of the file system
// about it: "stat x.pcap/out.txt: not a directory" or "open out.txt:
// permission denied" did not say the output was meant, and read as if an
// input were wrong.
func outputError(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("-o %s: %w", path, err)
}

// probeOutput makes sure the output path names can be written before the
// work that fills it: a report over a large capture, or a live capture of
// --duration, found a missing directory or a directory named by -o only
// at the end, and the report was lost. It creates and removes the
// temporary file createOutput would write. An existing file that is not
// regular (/dev/null, a pipe) is left alone: opening a pipe waits for its
// reader, and closing it would end the reader's input.
func probeOutput(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil
	}
	o, err := createOutput(path, nil)
	if err != nil {
		return usageErrorf("%v", err)
	}
	o.discard()
	return nil
}

// createTempOutput creates the temporary file that becomes dst, with
// dst's permissions perm when it replaces a file (0: a new file's, as
// os.Create gives them).
func createTempOutput(dst string, perm fs.FileMode) (*outputFile, error) {
	dir, base := filepath.Split(dst)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// The error names the temporary file: name the output.
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("-o %s: %w", dst, err)
		}
		o := &outputFile{w: f, f: f, tmp: tmp, dst: dst}
		pendingTemps.add(tmp)
		if perm != 0 {
			if err := f.Chmod(perm); err != nil {
				o.discard()
				return nil, err
			}
		}
		return o, nil
	}
	return nil, fmt.Errorf("-o %s: cannot create a temporary file next to it", dst)
}

// Write writes to the output.
func (o *outputFile) Write(p []byte) (int, error) { return o.w.Write(p) }

// commit closes the output and, for a temporary file, renames it over
// the output. After commit, discard does nothing.
func (o *outputFile) commit() error {
	f := o.f
	if f == nil {
		return nil
	}
	o.f = nil
	err := f.Close()
	if o.tmp == "" {
		return err
	}
	if err == nil {
		err = os.Rename(o.tmp, o.dst)
	}
	if err != nil {
		os.Remove(o.tmp)
		if pendingTemps.ended() {
			// A signal removed the temporary file (removeTempsOnSignal)
			// and is ending the process: no error to report.
			waitForSignalEnd()
		}
	}
	pendingTemps.remove(o.tmp)
	return err
}

// waitForSignalEnd blocks while endBySignal ends the process. Tests
// replace it.
var waitForSignalEnd = func() { select {} }

// discard closes an output that was not committed and removes its
// temporary file: the output is left as it was.
func (o *outputFile) discard() {
	if o.f == nil {
		return
	}
	o.f.Close()
	o.f = nil
	if o.tmp != "" {
		os.Remove(o.tmp)
		pendingTemps.remove(o.tmp)
	}
}

// pendingTemps are the temporary files of the outputs being written: what
// removeTempsOnSignal removes when the process is told to end.
var pendingTemps tempFiles

// tempFiles is a set of file names, safe for concurrent use.
type tempFiles struct {
	mu    sync.Mutex
	names map[string]struct{}
	end   bool // removeAll ran: a signal is ending the process
}

func (t *tempFiles) add(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.names == nil {
		t.names = make(map[string]struct{})
	}
	t.names[name] = struct{}{}
}

func (t *tempFiles) remove(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.names, name)
}

// ended says whether removeAll ran.
func (t *tempFiles) ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.end
}

// removeAll removes every file of the set from the disk and the set, as
// the process is ending by a signal.
func (t *tempFiles) removeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.end = true
	for name := range t.names {
		os.Remove(name)
		delete(t.names, name)
	}
}

// endSignals are the signals that end a run early: Ctrl-C, kill, and the
// terminal going away.
var endSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// removeTempsOnSignal makes a signal that ends the process (endSignals)
// remove the temporary files of the outputs being written first, so that
// an interrupted report, merge, extract or live leaves no hidden
// .FILE.*.tmp behind (an extract of a large capture writes its temporary
// file for as long as it reads); the process then ends as the signal
// would have ended it (a shell sees exit status 128 + the signal's
// number). Signals the process was started with ignored (nohup, a
// background job) stay ignored. stop undoes it.
func removeTempsOnSignal() (stop func()) {
	var sigs []os.Signal
	for _, s := range endSignals {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	c := make(chan os.Signal, 1)
	if len(sigs) > 0 {
		signal.Notify(c, sigs...)
	}
	done := make(chan struct{})
	go func() {
		select {
		case s := <-c:
			pendingTemps.removeAll()
			endBySignal(s)
		case <-done:
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(c)
			close(done)
		})
	}
}

// endBySignal ends the process as signal s does by default: it puts the
// default action back and sends s to itself; where that does not end it
// (a platform that cannot signal itself), it exits with 128 + the signal's
// number, the status a shell reports for it.
func endBySignal(s os.Signal) {
	signal.Reset(s)
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(s) == nil {
		time.Sleep(time.Second) // the signal ends the process meanwhile
	}
	code := 128 + 2 // SIGINT's number on every platform rocedump runs on
	if n, ok := s.(syscall.Signal); ok {
		code = 128 + int(n)
	}
	os.Exit(code)
}

// checkOutputNotInput refuses an output that is one of the input files
// (os.SameFile: another name for it, a symlink or a hard link, counts
// too; inputs are files, directories expanded). Writing it would replace
// the input with the output, and extract, which reads its input twice,
// would read back what it is writing.
func checkOutputNotInput(output string, inputs []string) error {
	if output == "" || output == "-" {
		return nil
	}
	out, err := os.Stat(output)
	if err != nil || !out.Mode().IsRegular() {
		return nil // a new file, or one createOutput has something to say about
	}
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
			if in == output {
				return usageErrorf("-o %s is one of the inputs: write the output to another file", output)
			}
			return usageErrorf("-o %s is one of the inputs (as %s): write the output to another file", output, in)
		}
	}
	return nil
}
