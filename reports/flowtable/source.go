package flowtable

import (
	"iter"
	"slices"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/internal/timetext"
)

// Source is a list of flow records to write: records already made
// (RecordsOf), or flows converted one at a time as they are read
// (FlowsOf), so that a table or report of a hundred thousand flows never
// holds more than one record at a time. Either way the records read the
// same.
type Source struct {
	recs      []Record
	flows     []*flows.Flow
	fromFlows bool
	files     []string // the input files the flows' frames are in (WithFiles)
}

// RecordsOf is a Source over records already made.
func RecordsOf(rs []Record) Source { return Source{recs: rs} }

// FlowsOf is a Source over flows, in the order given: each record is made
// when it is read.
func FlowsOf(fs []*flows.Flow) Source { return Source{flows: fs, fromFlows: true} }

// WithFiles is s naming the input files its flows' frames are in, by
// their index (flows.FrameRef.File): the records' first_file, last_file
// and cm.file. A Source over records has them already and ignores it.
func (s Source) WithFiles(files []string) Source {
	s.files = files
	return s
}

// record is NewRecord(f) with the Source's file names.
func (s Source) record(f *flows.Flow) Record {
	b := Builder{exact: true, files: s.files}
	return *b.Record(f)
}

// Len is the number of records.
func (s Source) Len() int {
	if s.fromFlows {
		return len(s.flows)
	}
	return len(s.recs)
}

// Head is the first n records (all of them when there are fewer).
func (s Source) Head(n int) Source {
	return s.Slice(0, max(0, min(n, s.Len())))
}

// Slice is records lo to hi-1, which must be in range as for a Go slice.
// A Source over flows can be split this way so that its parts are made
// at the same time, each by its own Builder (see EncodeRecords).
func (s Source) Slice(lo, hi int) Source {
	if s.fromFlows {
		s.flows = s.flows[lo:hi]
	} else {
		s.recs = s.recs[lo:hi] // nil stays nil
	}
	return s
}

// All yields every record, in order. A Source over flows makes them in one
// reused Record (maps included), valid until the next step: copy what must
// outlive it. A Source over records yields pointers into its list, which
// must not be modified.
func (s Source) All() iter.Seq[*Record] {
	return s.each(false)
}

// Rows is All for what Row, TotalsRow and the CSV read: a Source over flows
// leaves the maps, the UDP source ports and CM of its records nil, which
// saves making them.
func (s Source) Rows() iter.Seq[*Record] {
	return s.each(true)
}

func (s Source) each(rowOnly bool) iter.Seq[*Record] {
	m := makeRecord
	if rowOnly {
		m = makeRow
	}
	return func(yield func(*Record) bool) { s.build(&Builder{files: s.files}, m, yield) }
}

// What Source.build makes of each flow.
const (
	makeRecord = iota // Builder.Record
	makeRow           // Builder.Row
	makeLists         // Builder.recordLists
)

// build yields every record in order, until yield returns false: for a
// Source over flows, made in b's Record as mode says (makeRecord,
// makeRow or makeLists).
func (s Source) build(b *Builder, mode int, yield func(*Record) bool) {
	if !s.fromFlows {
		for i := range s.recs {
			if !yield(&s.recs[i]) {
				return
			}
		}
		return
	}
	b.files = s.files
	for _, f := range s.flows {
		var r *Record
		switch mode {
		case makeRow:
			r = b.Row(f)
		case makeLists:
			r = b.recordLists(f)
		default:
			r = b.Record(f)
		}
		if !yield(r) {
			return
		}
	}
}

// Records returns every record at once: the list of a Source over records,
// or new records of its flows.
func (s Source) Records() []Record {
	if s.fromFlows {
		out := make([]Record, len(s.flows))
		for i, f := range s.flows {
			out[i] = s.record(f)
		}
		return out
	}
	return s.recs
}

// Totals is TotalsRow over every record of the Source. Over flows it reads
// the numbers straight from them, making no record.
func (s Source) Totals() []string {
	var t Totals
	if s.fromFlows {
		for _, f := range s.flows {
			t.AddFlow(f)
		}
	} else {
		for i := range s.recs {
			t.Add(&s.recs[i])
		}
	}
	return t.Row()
}

// TopByBytes returns the first k records of the Source sorted by bytes,
// biggest first, ties by flow ID and then by their order in the Source (a
// stable sort): new records (copies, for a Source over records), made for
// those k flows only.
func (s Source) TopByBytes(k int) []Record {
	n := s.Len()
	if k <= 0 || n == 0 {
		return []Record{}
	}
	// top is kept sorted, best first; a later element never beats an
	// earlier one with the same bytes and ID.
	type item struct {
		bytes uint64
		id    int
		idx   int
	}
	top := make([]item, 0, min(k, n))
	for i := range n {
		var it item
		if s.fromFlows {
			it = item{s.flows[i].WireBytes, s.flows[i].ID, i}
		} else {
			it = item{s.recs[i].Bytes, s.recs[i].ID, i}
		}
		// worse reports whether a ranks after it.
		worse := func(a item) bool { return a.bytes < it.bytes || a.bytes == it.bytes && a.id > it.id }
		if len(top) == k && !worse(top[k-1]) {
			continue
		}
		j := len(top)
		for j > 0 && worse(top[j-1]) {
			j--
		}
		if len(top) < k {
			top = append(top, item{})
		}
		copy(top[j+1:], top[j:len(top)-1])
		top[j] = it
	}
	out := make([]Record, len(top))
	for i, it := range top {
		if s.fromFlows {
			out[i] = s.record(s.flows[it.idx])
		} else {
			out[i] = s.recs[it.idx]
		}
	}
	return out
}

// Pick returns the records whose flow ID want accepts, by ID (the last
// record of an ID when several share it): new records made for those
// flows only.
func (s Source) Pick(want func(id int) bool) map[int]Record {
	out := map[int]Record{}
	if s.fromFlows {
		for _, f := range s.flows {
			if want(f.ID) {
				out[f.ID] = s.record(f)
			}
		}
		return out
	}
	for _, r := range s.recs {
		if want(r.ID) {
			out[r.ID] = r
		}
	}
	return out
}

// Builder converts flows into one reused Record, to write records one at a
// time without allocating their maps each time. The Record it returns is
// overwritten by its next call, its maps and UDP source ports included.
type Builder struct {
	r     Record
	opt   optionals
	names addrNames
	files []string // the input files, by flows.FrameRef.File (Source.WithFiles)
	exact bool     // make the Record's strings and lists for it alone (NewRecord)
	// plainAddrs says the Record's addresses need no escaping in JSON:
	// they have no zone, the only part of an address's text that can
	// hold any character.
	plainAddrs bool

	rnr, ops, dscp, ecn map[string]uint64

	// Reused between records: the flow's counters as flows lists them,
	// the UDP source ports, the text of times (timeText), and the
	// Record's counter maps in key order.
	opList  []flows.OpcodeCount
	valList []flows.ValueCount
	ports   []uint16
	text    []byte
	counts  recordCounts
	// The text of the second of the last first and last times: the
	// flows of a capture start (and end) mostly in the second of the
	// flow before.
	firstTimes, lastTimes timetext.Stamp // zero: RFC3339Nano
}

// Record converts f: NewRecord(f), in the Builder's Record.
func (b *Builder) Record(f *flows.Flow) *Record {
	if b.ops == nil {
		b.rnr, b.ops, b.dscp, b.ecn = map[string]uint64{}, map[string]uint64{}, map[string]uint64{}, map[string]uint64{}
	} else {
		clear(b.rnr)
		clear(b.ops)
		clear(b.dscp)
		clear(b.ecn)
	}
	b.r.RNRTimers, b.r.Opcodes, b.r.DSCP, b.r.ECN = b.rnr, b.ops, b.dscp, b.ecn
	b.fillRecord(f, true)
	b.counts.valid = true
	return &b.r
}

// recordLists converts f as Record does but leaves the Record's four
// counter maps nil: their members are only in the Builder's lists, which
// the JSONEncoder writes in their place (JSONEncoder.built). For records
// only encoded (EncodeRecords): filling and clearing the maps was ~1,100
// instructions a record.
func (b *Builder) recordLists(f *flows.Flow) *Record {
	b.fillRecord(f, false)
	b.counts.valid = true
	return &b.r
}

// Row converts what Row, TotalsRow and the CSV read of f (see Rows): the
// maps, the UDP source ports and CM are left nil.
func (b *Builder) Row(f *flows.Flow) *Record {
	b.fillRow(f)
	return &b.r
}

// Totals sums records into the totals line of the tables (TotalsRow): add
// every flow, not only those shown, then call Row.
type Totals struct {
	n                                int
	pk, by, retx, gaps, nk, cnps, ce uint64
	first, last                      string
}

// Add counts one record.
func (t *Totals) Add(r *Record) {
	t.n++
	t.pk, t.by, t.retx, t.gaps = t.pk+r.Packets, t.by+r.Bytes, t.retx+r.RetransmittedPackets, t.gaps+r.PSNGaps
	t.nk, t.cnps, t.ce = t.nk+NAKTotal(*r), t.cnps+r.CNPs, t.ce+r.ECNCE
	if t.first == "" || r.First < t.first { // fixed-width RFC 3339: strings sort as times
		t.first = r.First
	}
	if r.Last > t.last {
		t.last = r.Last
	}
}

// AddFlow counts one flow as Add counts its record, without making it.
func (t *Totals) AddFlow(f *flows.Flow) {
	var r Record
	fillCounters(&r, f)
	t.n++
	t.pk, t.by, t.retx, t.gaps = t.pk+r.Packets, t.by+r.Bytes, t.retx+r.RetransmittedPackets, t.gaps+r.PSNGaps
	t.nk, t.cnps, t.ce = t.nk+NAKTotal(r), t.cnps+r.CNPs, t.ce+r.ECNCE
	var buf [64]byte
	first := timetext.AppendRFC3339Nano(buf[:0], f.First.Time)
	if t.first == "" || string(first) < t.first {
		t.first = string(first)
	}
	last := timetext.AppendRFC3339Nano(buf[:0], f.Last.Time)
	if string(last) > t.last {
		t.last = string(last)
	}
}

// Row is the totals line.
func (t *Totals) Row() []string {
	return totalsRow(t.n, t.pk, t.by, t.retx, t.gaps, t.nk, t.cnps, t.ce, t.first, t.last)
}

// sortedKeys returns the keys of m in keys' storage, sorted.
func sortedKeys(keys []string, m map[string]uint64) []string {
	keys = keys[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
