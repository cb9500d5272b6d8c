package capture

import (
	"cmp"
	"errors"
	"hash/maphash"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// mergeBufSize is the read buffer of each file of a merge with many files,
// so that memory stays bounded by the number of files open at once.
const mergeBufSize = 128 << 10

// keepOpen is the most files a merge opens once and keeps open, as it
// always did. A merge of more (a directory of rotated captures: hundreds
// or thousands of files) parks every file it can (see park) until its
// first record is the earliest head, so that the files open at once, and
// their buffers, are those that overlap in time: one or two for the
// rotated files of one mirror, one per mirror for several. The figure
// leaves merges of a few files (mirrors, rails, the same capture given
// twice) exactly as they were, well under any file-descriptor limit.
var keepOpen = 16

// firstLookSize is the read buffer a merge of more than keepOpen files
// opens each file with to read its first record: most of a larger buffer
// would be read twice, then and when the file is reopened.
const firstLookSize = 16 << 10

// Merger reads several captures as one, in capture-time order: the next
// record is always the earliest head of the files still open (ties go to the
// file whose first record came first, then to the file given first, then to
// the earlier frame), so captures from several mirrors, or the rotated files
// of one, are analysed as one time line. The rotated files of one mirror
// given out of order (cap.pcap10 sorts before cap.pcap2) share a timestamp
// at their boundary, where the end of one file must still come before the
// start of the next. A file that ends
// with an error (cut off, bad record) is closed and its error kept in
// Problems; the others go on.
type Merger struct {
	// readers are the files open, in the order given; nil for one that
	// is done or parked. A parked file's head (its first record, without
	// its data) is in heads and on the heap: it is reopened when it is
	// popped (reopen).
	readers  []*Reader
	heads    []Record
	h        mergeHeap
	last     int     // index of the reader whose head was returned last, or -1
	sole     *Reader // readers[last] once it is the only file left, else nil
	problems []error

	paths []string     // as given, to reopen parked files
	size  int          // the read buffer of a file (re)opened for good
	sums  []uint64     // a parked file's first record's data, hashed; nil unless files are parked
	seed  maphash.Seed // of sums
	rank  []int32      // a file's place in the order of first records (time, then file): its ties' order

	// begun says a file's first record was returned; parallel holds, for
	// each file, the files still being read when its first record was
	// (see Parallel). Written before the file's first record is
	// returned, read only for files whose records were.
	begun    []bool
	parallel [][]int32
}

// OpenMerged opens every path. An error opening any of them (missing file,
// not a capture) is returned at once, naming the file, and nothing is left
// open. So is an error at a file's first record that is not a cut or a bad
// record (see firstRecord): the file cannot be read at all.
//
// With more than keepOpen files, each is closed again once its first
// record is read (see park), and reopened when that record comes up.
func OpenMerged(paths []string) (*Merger, error) {
	m := &Merger{last: -1, paths: paths, size: bufSize,
		readers: make([]*Reader, len(paths)), heads: make([]Record, len(paths)),
		begun: make([]bool, len(paths)), parallel: make([][]int32, len(paths))}
	if len(paths) > 4 {
		m.size = mergeBufSize
	}
	size, lazy := m.size, len(paths) > keepOpen
	if lazy {
		size = firstLookSize
		m.sums, m.seed = make([]uint64, len(paths)), maphash.MakeSeed()
	}
	// After a file whose first record fails, the others are only opened:
	// an error opening one comes first, as when every file was opened
	// before any was read.
	var firstErr error
	for i, p := range paths {
		r, err := openSize(p, size)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.readers[i] = r
		if firstErr == nil {
			firstErr = m.firstRecord(i)
		}
		if lazy {
			m.park(i)
		}
	}
	if firstErr != nil {
		m.Close()
		return nil, firstErr
	}
	m.rankFiles()
	m.h.init()
	return m, nil
}

// rankFiles orders the files by their first record (then as given): of two
// heads at the same time, the one of the file that began first comes
// first. The heap holds each file's first record now.
func (m *Merger) rankFiles() {
	m.rank = make([]int32, len(m.readers))
	firsts := slices.Clone(m.h.items)
	slices.SortFunc(firsts, func(a, b mergeItem) int {
		if a.ts != b.ts {
			return cmp.Compare(a.ts, b.ts)
		}
		return cmp.Compare(a.file, b.file)
	})
	for r, it := range firsts {
		m.rank[it.file] = int32(r)
	}
	for i := range m.h.items {
		m.h.items[i].rank = m.rank[m.h.items[i].file]
	}
}

// firstRecord reads reader i's first record into heads[i] and pushes it on
// the heap, or retires the reader at its end. A file cut off or with a bad
// record is analysed up to there, as a later record's error would leave
// it (Problems); any other error, such as a pcapng interface whose
// timestamp resolution is unsupported, is returned: nothing of the file
// can be read, which a reader of one file (rocedump read) reports as an
// input error.
func (m *Merger) firstRecord(i int) error {
	err := m.readers[i].Next(&m.heads[i])
	switch {
	case err == nil:
		m.h.items = append(m.h.items, mergeItem{mergeKey(&m.heads[i]), 0, int32(i), m.heads[i].Number})
	case errors.Is(err, ErrCutOff) || errors.Is(err, ErrBadRecord) || err == io.EOF:
		m.retire(i, err)
	default:
		return err
	}
	return nil
}

// park closes file i, whose head is its first record, until that record
// is the earliest head (reopen): a parked file holds no descriptor and no
// buffer, only its head and a hash of the head's data, to tell that the
// file has not changed in between. Standard input and other files that
// are not regular (a pipe given by name) cannot be read twice: they stay
// open.
func (m *Merger) park(i int) {
	r := m.readers[i]
	if r == nil || !isRegular(r) {
		return
	}
	m.sums[i] = maphash.Bytes(m.seed, m.heads[i].Data)
	m.heads[i].Data = nil
	r.Close()
	m.readers[i] = nil
}

// isRegular says whether r reads a regular file it opened.
func isRegular(r *Reader) bool {
	f, ok := r.file.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode().IsRegular()
}

// reopen opens parked file i again, its first record now the earliest
// head, and reads that record again into heads[i]. A file that cannot be
// opened or read to that record, or whose first record is no longer the
// one read at OpenMerged (deleted, truncated, rotated away or replaced
// meanwhile), is not read at all: its ErrChanged error goes to Problems
// and reopen says false. A file that has grown since (one still being
// written) is read to where it ends then, as a file kept open would be.
func (m *Merger) reopen(i int) bool {
	was := m.heads[i]
	r, err := openSize(m.paths[i], m.size)
	if err == nil {
		if err = r.Next(&m.heads[i]); err == nil && !m.sameHead(i, &was) {
			err = errors.New("its first frame is not the one read before")
		}
		if err != nil {
			r.Close()
		}
	}
	if err != nil {
		m.heads[i] = Record{}
		m.problems = append(m.problems, changedError(m.paths[i], err))
		return false
	}
	m.readers[i] = r
	return true
}

// changedError is the problem of a parked file at path that could not be
// read again: err says why, without the path it names.
func changedError(path string, err error) error {
	why := strings.TrimPrefix(strings.TrimPrefix(err.Error(), "open "), path+": ")
	return &FileError{Name: path, Err: ErrChanged, Cause: err,
		Reason: "changed since it was opened (" + why + "): none of its frames were read"}
}

// sameHead says whether heads[i] is the record was, whose data hashed to
// sums[i].
func (m *Merger) sameHead(i int, was *Record) bool {
	h := &m.heads[i]
	return h.TimeNanos == was.TimeNanos && h.Timestamp.Equal(was.Timestamp) && h.CapLen == was.CapLen &&
		h.OrigLen == was.OrigLen && h.LinkType == was.LinkType && h.Interface == was.Interface &&
		h.Number == was.Number && maphash.Bytes(m.seed, h.Data) == m.sums[i]
}

// retire closes file i, which ended with err (io.EOF at its clean end),
// and notes a problem that ended it in Problems, or, at the clean end,
// data after a gzip stream (see Reader.Trailing).
func (m *Merger) retire(i int, err error) {
	if err == io.EOF {
		err = m.readers[i].Trailing()
	}
	if err != nil {
		m.problems = append(m.problems, err)
	}
	m.readers[i].Close()
	m.readers[i] = nil
	// The head's data is the file's read buffer: let it go with the
	// file, or a merge of thousands of files keeps every file's buffer
	// to its end.
	m.heads[i].Data = nil
}

// Next fills rec with the earliest record not yet returned and says which
// file (index into the paths given to OpenMerged) it came from. rec.Data is
// valid until the next call. It returns io.EOF when every file is done.
//
// Once a single file is left (from the second record on, for a merge of one
// file) there is nothing to order: its records are read straight into rec,
// and the merge costs a call and a comparison per record.
func (m *Merger) Next(rec *Record) (file int, err error) {
	if r := m.sole; r != nil {
		if err = r.Next(rec); err == nil {
			return m.last, nil
		}
		return m.endSole(err)
	}
	return m.merge(rec)
}

// NextBatch is Next for up to len(recs) records at a time, all valid
// together until the next call (see Reader.NextBatch), and all from file.
// While one file is left the batch comes from it. While several are, it
// is the earliest head and the records after it in the same file that come
// before every other file's head and lie in that file's read block: a run
// of one file, as the rotated files of one capture give.
func (m *Merger) NextBatch(recs []Record) (n, file int, err error) {
	if len(recs) == 0 {
		return 0, -1, nil
	}
	if r := m.sole; r != nil {
		if n, err = r.NextBatch(recs); err == nil {
			return n, m.last, nil
		}
		file, err = m.endSole(err)
		return 0, file, err
	}
	if file, err = m.merge(&recs[0]); err != nil {
		return 0, file, err
	}
	r := m.readers[file]
	for n = 1; n < len(recs) && r.nextInBlock(&recs[n]); n++ {
		if len(m.h.items) > 0 {
			if next := (mergeItem{mergeKey(&recs[n]), m.rank[file], int32(file), recs[n].Number}); !next.less(m.h.items[0]) {
				// Another file's head comes first: this record is
				// file's head now, read and valid like the batch's.
				m.heads[file] = recs[n]
				m.h.push(next)
				m.last = -1
				return n, file, nil
			}
		}
	}
	return n, file, nil
}

// TimesFitNanos is Reader.TimesFitNanos for file (as NextBatch numbers
// it): false when it is not open.
func (m *Merger) TimesFitNanos(file int) bool {
	return file >= 0 && file < len(m.readers) && m.readers[file] != nil && m.readers[file].TimesFitNanos()
}

// Untimed says whether file (as NextBatch numbers it) may have given a
// record without a time (a pcapng Simple Packet Block, whose Timestamp is
// the zero Time): it has, since it was last opened, or it is not open.
// A pass that gives such records a time need look at the records of a
// batch only then.
func (m *Merger) Untimed(file int) bool {
	if file < 0 || file >= len(m.readers) || m.readers[file] == nil {
		return true
	}
	return m.readers[file].untimed
}

// endSole retires the last file, which ended with err.
func (m *Merger) endSole(err error) (int, error) {
	m.retire(m.last, err)
	m.sole = nil
	m.last = -1
	return -1, io.EOF
}

// merge is Next while more than one file is left: it advances the file
// whose head was returned last and returns the earliest head.
func (m *Merger) merge(rec *Record) (file int, err error) {
	if i := m.last; i >= 0 {
		if len(m.h.items) == 0 {
			// File i is the only one left.
			m.sole = m.readers[i]
			return m.Next(rec)
		}
		m.last = -1
		if err := m.readers[i].Next(&m.heads[i]); err == nil {
			m.h.push(mergeItem{mergeKey(&m.heads[i]), m.rank[i], int32(i), m.heads[i].Number})
		} else {
			m.retire(i, err)
		}
	}
	var it mergeItem
	for {
		if len(m.h.items) == 0 {
			return -1, io.EOF
		}
		if it = m.h.pop(); m.readers[it.file] != nil || m.reopen(int(it.file)) {
			break
		}
	}
	*rec = m.heads[it.file]
	m.last = int(it.file)
	if !m.begun[it.file] {
		m.begin(it.file)
	}
	return m.last, nil
}

// begin notes that file i's first record is being returned: the files
// begun and not done yet overlap it in time (Parallel).
func (m *Merger) begin(i int32) {
	m.begun[i] = true
	for j, r := range m.readers {
		if int32(j) != i && r != nil && m.begun[j] {
			m.parallel[i] = append(m.parallel[i], int32(j))
		}
	}
}

// Parallel says whether files a and b (as Next numbers them), both of
// which have given a record, overlap in time: the one that began later
// began before the other ended. Captures of one traffic taken in
// parallel (one per host, two mirror ports) overlap; the rotated files of
// one capture follow each other (the last record of one comes before the
// first of the next, or at the same time), and do not. Once both have
// given a record the answer does not change, so a reader of the records
// (on any goroutine the records were handed to) may ask.
func (m *Merger) Parallel(a, b int) bool {
	if a == b || a < 0 || b < 0 || a >= len(m.rank) || b >= len(m.rank) {
		return false
	}
	if m.rank[a] < m.rank[b] {
		a, b = b, a
	}
	return slices.Contains(m.parallel[a], int32(b))
}

// InterfaceOf returns the interface of a record that Next or NextBatch
// gave from file, and its index among the interfaces of that file (every
// section's: see Reader.InterfaceOf), as long as the file is still open
// (so for the records of the last call at least). It says false if it
// cannot tell.
func (m *Merger) InterfaceOf(file int, rec *Record) (int, Interface, bool) {
	if file < 0 || file >= len(m.readers) || m.readers[file] == nil {
		return 0, Interface{}, false
	}
	return m.readers[file].InterfaceOf(rec)
}

// Problems are the errors that ended files early, in the order they
// happened: wrap ErrCutOff, ErrBadRecord, or ErrChanged for a parked file
// that could not be read again (see reopen); or ErrTrailingData, for a
// gzip-compressed file read to its end but followed by other data (see
// Reader.Trailing), which did not end it early.
func (m *Merger) Problems() []error { return slices.Clone(m.problems) }

// Readers are the files open now, in the order given: nil for a file
// that is done, or parked (see OpenMerged) until its first record comes
// up.
func (m *Merger) Readers() []*Reader { return m.readers }

// Close closes every file still open.
func (m *Merger) Close() error {
	var first error
	for _, r := range m.readers {
		if r == nil {
			continue
		}
		if err := r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// zeroTimeNanos is what the zero Time's UnixNano returns (a wrapped,
// hugely negative value): the key records without a time have always been
// merged by.
var zeroTimeNanos = time.Time{}.UnixNano()

// mergeKey is the time a head is ordered by: Timestamp.UnixNano(), which
// TimeNanos holds, except for records without a time (TimeNanos 0 and a
// zero Timestamp), which keep the zero Time's key.
func mergeKey(rec *Record) int64 {
	if rec.TimeNanos == 0 && rec.Timestamp.IsZero() {
		return zeroTimeNanos
	}
	return rec.TimeNanos
}

type mergeItem struct {
	ts    int64
	rank  int32 // of file, see Merger.rank
	file  int32
	frame int
}

// mergeHeap is a binary min-heap of heads ordered by time, then file
// rank, then frame number. It is typed (not container/heap) so that a push or
// pop boxes nothing: the merge allocates nothing per record.
type mergeHeap struct{ items []mergeItem }

func (a mergeItem) less(b mergeItem) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.frame < b.frame
}

func (h *mergeHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(it mergeItem) {
	h.items = append(h.items, it)
	for i := len(h.items) - 1; i > 0; {
		p := (i - 1) / 2
		if !h.items[i].less(h.items[p]) {
			break
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		i = p
	}
}

func (h *mergeHeap) pop() mergeItem {
	top := h.items[0]
	n := len(h.items) - 1
	h.items[0] = h.items[n]
	h.items = h.items[:n]
	h.down(0)
	return top
}

func (h *mergeHeap) down(i int) {
	n := len(h.items)
	for {
		l, small := 2*i+1, i
		if l < n && h.items[l].less(h.items[small]) {
			small = l
		}
		if r := l + 1; r < n && h.items[r].less(h.items[small]) {
			small = r
		}
		if small == i {
			return
		}
		h.items[i], h.items[small] = h.items[small], h.items[i]
		i = small
	}
}
