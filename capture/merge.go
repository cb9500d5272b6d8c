package capture

import (
	"errors"
	"io"
	"slices"
	"time"
)

// mergeBufSize is the read buffer of each file of a merge with many files,
// so that memory stays bounded by the number of files open at once.
const mergeBufSize = 128 << 10

// Merger reads several captures as one, in capture-time order: the next
// record is always the earliest head of the files still open (ties go to the
// earlier file, then the earlier frame), so captures from several mirrors, or
// the rotated files of one, are analysed as one time line. A file that ends
// with an error (cut off, bad record) is closed and its error kept in
// Problems; the others go on.
type Merger struct {
	readers  []*Reader
	heads    []Record
	h        mergeHeap
	last     int     // index of the reader whose head was returned last, or -1
	sole     *Reader // readers[last] once it is the only file left, else nil
	problems []error
}

// OpenMerged opens every path. An error opening any of them (missing file,
// not a capture) is returned at once, naming the file, and nothing is left
// open. So is an error at a file's first record that is not a cut or a bad
// record (see firstRecord): the file cannot be read at all.
func OpenMerged(paths []string) (*Merger, error) {
	size := bufSize
	if len(paths) > 4 {
		size = mergeBufSize
	}
	m := &Merger{last: -1}
	for _, p := range paths {
		r, err := openSize(p, size)
		if err != nil {
			m.Close()
			return nil, err
		}
		m.readers = append(m.readers, r)
	}
	m.heads = make([]Record, len(m.readers))
	for i := range m.readers {
		if err := m.firstRecord(i); err != nil {
			m.Close()
			return nil, err
		}
	}
	m.h.init()
	return m, nil
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
		m.h.items = append(m.h.items, mergeItem{mergeKey(&m.heads[i]), i, m.heads[i].Number})
	case errors.Is(err, ErrCutOff) || errors.Is(err, ErrBadRecord):
		m.problems = append(m.problems, err)
	case err != io.EOF:
		return err
	}
	return nil
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
			if next := (mergeItem{mergeKey(&recs[n]), file, recs[n].Number}); !next.less(m.h.items[0]) {
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

// endSole retires the last file, which ended with err.
func (m *Merger) endSole(err error) (int, error) {
	if err != io.EOF {
		m.problems = append(m.problems, err)
	}
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
			m.h.push(mergeItem{mergeKey(&m.heads[i]), i, m.heads[i].Number})
		} else if err != io.EOF {
			m.problems = append(m.problems, err)
		}
	}
	if len(m.h.items) == 0 {
		return -1, io.EOF
	}
	it := m.h.pop()
	*rec = m.heads[it.file]
	m.last = it.file
	return it.file, nil
}

// Problems are the errors that ended files early, in the order they
// happened: wrap ErrCutOff or ErrBadRecord.
func (m *Merger) Problems() []error { return slices.Clone(m.problems) }

// Readers are the open files, in the order given.
func (m *Merger) Readers() []*Reader { return m.readers }

// Close closes every file.
func (m *Merger) Close() error {
	var first error
	for _, r := range m.readers {
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
	file  int
	frame int
}

// mergeHeap is a binary min-heap of heads ordered by time, then file,
// then frame number. It is typed (not container/heap) so that a push or
// pop boxes nothing: the merge allocates nothing per record.
type mergeHeap struct{ items []mergeItem }

func (a mergeItem) less(b mergeItem) bool {
	if a.ts != b.ts {
		return a.ts < b.ts
	}
	if a.file != b.file {
		return a.file < b.file
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
