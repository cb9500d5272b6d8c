package flows

import (
	"time"

	"github.com/rocedump/rocedump/decode/packet"
)

// Copies across files: captures taken in parallel of one traffic (one
// per host, or two mirror ports) and analysed together hold a packet
// once in each file that saw it, each at its own clock's time. Host
// clocks disagree by hundreds of microseconds to milliseconds, more than
// a mirror's copy lags (MirrorWindow), so the second capture of a packet
// would count as a resend. See the package doc, "Copies across files".

// MaxFileOffset is how far apart the clocks of two parallel files may be
// for a packet in one to be taken for the other's copy: a packet new to
// its file whose PSN the other file last went past more than this long
// before is a resend.
const MaxFileOffset = 100 * time.Millisecond

// maxFileSeqs is how many files a flow follows the sequences of; a
// flow's packets from further files are taken as the rules for one file
// take them.
const maxFileSeqs = 8

// ParallelFiles says which capture files overlap in time
// (capture.Merger.Parallel): files a and b, as FrameRef.File numbers
// them, both of which have given the table a frame.
type ParallelFiles interface {
	Parallel(a, b int) bool
}

// SetParallelFiles tells the table which of its input files were taken in
// parallel (nil: none, the default): the packets of a flow captured in
// two of them are counted once (see "Copies across files").
func (t *Table) SetParallelFiles(p ParallelFiles) { t.par = p }

// CopyAcrossFiles says whether the last copy Table.AddFlowDelta reported
// (copied) was another file's capture of a packet rather than a mirror's
// copy (Flow.FileCopies).
func (t *Table) CopyAcrossFiles() bool { return t.copyAcross }

// FileCopies is the number of packets of this flow captured again in a
// parallel file (see "Copies across files"): like MirrorDuplicates,
// they are in no other counter.
func (f *Flow) FileCopies() uint64 {
	if f.cold == nil || f.cold.files == nil {
		return 0
	}
	return f.cold.files.copies
}

// FileOffset is what a flow's copies across files showed of the offset
// between two files' clocks: how long after a packet's capture in file
// First (as FrameRef.File numbers them) its copy in file Second was
// captured, the least and the most, over the copies of the newest packet
// First had (the time between the two capture points is in it, and the
// second capture may come later still when a burst is captured).
type FileOffset struct {
	First, Second int
	Min, Max      time.Duration
}

// FileOffsets returns the flow's FileOffset for each pair of files its
// copies across files showed one for, in the order first seen.
func (f *Flow) FileOffsets() []FileOffset {
	if f.cold == nil || f.cold.files == nil {
		return nil
	}
	return f.cold.files.offsets
}

// Spaces a fileSeq follows.
const (
	xRequests = iota
	xReadResponses
	xResponses
)

// fileSpace is what one file showed of one of a flow's sequences: the
// highest PSN (position, for responses) and when it got there, and the
// packets it carried again that were no copies (its own resends).
type fileSpace struct {
	hi      uint32
	ok      bool
	at      int64
	resends uint64
	fills   uint64  // packets it carried that filled a gap of the flow, or their copies
	copies  uint64  // the mirror's copies it carried (of packets it carried before)
	copied  psnRing // the PSNs of those copies
	filled  psnRing // the PSNs of its packets that filled a gap across files (filledAcross): on its own clock in the flow's times
	exact   bool    // at is the time of the packet that reached hi
}

// psnRing is PSNs (positions) of a space a file carried (mirror copies,
// packets that filled a gap across files): the last 64 up to the highest.
type psnRing struct {
	hi   uint32
	bits uint64 // bit i: hi - i
	ok   bool
}

// spaceDiff is a-b in space sp.
func spaceDiff(sp int, a, b uint32) int32 {
	if sp == xResponses {
		return posDiff(a, b)
	}
	return psnDiff(a, b)
}

// note adds psn of space sp.
func (r *psnRing) note(sp int, psn uint32) {
	switch d := spaceDiff(sp, psn, r.hi); {
	case !r.ok || d >= 64:
		r.hi, r.bits, r.ok = psn, 1, true
	case d > 0:
		r.hi, r.bits = psn, r.bits<<d|1
	case d > -64:
		r.bits |= 1 << -d
	}
}

// has says whether the ring holds psn of space sp, and known whether it
// follows that far back (the last 64 up to its highest).
func (r *psnRing) has(sp int, psn uint32) (has, known bool) {
	if !r.ok {
		return false, true
	}
	d := spaceDiff(sp, r.hi, psn)
	if d >= 64 {
		return false, false
	}
	return d >= 0 && r.bits&(1<<d) != 0, true
}

// copiedFirst says whether y, a parallel file's view of a space, shows a
// mirror's copy of psn that own, another file's, has not shown: a copy
// at psn in own's file is y's captured again. Where the rings do not
// follow that far back, or both hold psn (a copy of a resend too), the
// file that showed more copies did.
func copiedFirst(sp int, psn uint32, y, own *fileSpace) bool {
	yHas, yKnown := y.copied.has(sp, psn)
	oHas, oKnown := own.copied.has(sp, psn)
	if !yKnown || !oKnown || yHas && oHas {
		return y.copies > own.copies
	}
	return yHas
}

// noteCopied notes a mirror's copy at psn of space sp, for the first
// file's view should the flow come from a parallel file later
// (startFiles).
func (c *flowCold) noteCopied(sp int, psn uint32) {
	if c.files != nil {
		return // the files count their own (countCopy)
	}
	if c.spaceCopied == nil {
		c.spaceCopied = new([3]psnRing)
	}
	c.spaceCopied[sp].note(sp, psn)
}

// fileSeq is one file's view of a flow.
type fileSeq struct {
	file  int
	sp    [3]fileSpace
	cnps  uint64 // the CNPs of the flow it carried (no copies)
	cnpAt int64  // when it carried the last
	// The responses (not READ responses) it carried, by runs of
	// positions (respRun), the last maxRespRuns; and, of the runs of
	// another file, the one its own responses taken for that file's
	// captured again last fell in, and how many did (respLacked).
	runs    [maxRespRuns]respRun
	nRuns   int
	usedIn  respRun
	usedOf  int
	used    uint32
	usedSet bool
}

// maxRespRuns is how many runs of its responses a file's view keeps.
const maxRespRuns = 8

// respRun is n responses a file carried at positions after lo (any,
// unless loOK) up to hi.
type respRun struct {
	lo, hi uint32
	loOK   bool
	n      uint32
}

// noteRun adds n responses the file carried after position lo (loOK)
// up to hi.
func (s *fileSeq) noteRun(lo uint32, loOK bool, hi, n uint32) {
	if s.nRuns > 0 && s.runs[s.nRuns-1].hi == hi {
		s.runs[s.nRuns-1].n += n
		return
	}
	if s.nRuns == maxRespRuns {
		copy(s.runs[:], s.runs[1:])
		s.nRuns--
	}
	s.runs[s.nRuns] = respRun{lo: lo, hi: hi, loOK: loOK, n: n}
	s.nRuns++
}

// respLacked says whether a response at pos, new to s's file, behind the
// highest of the flow, which o's file carried a response at or past, is
// one o's file lacked: s's file has carried more responses within the
// run of o's that pos falls in than o's did. It counts it as one of
// those if not. (Responses have no sequence: coalesced ACKs skip
// positions, so only the counts tell a response a file dropped.)
func (s *fileSeq) respLacked(o *fileSeq, pos uint32) bool {
	for k := range o.nRuns {
		r := o.runs[k]
		if posDiff(pos, r.hi) > 0 || r.loOK && posDiff(pos, r.lo) <= 0 {
			continue
		}
		if !s.usedSet || s.usedOf != o.file || s.usedIn != r {
			s.usedIn, s.usedOf, s.used, s.usedSet = r, o.file, 0, true
		}
		s.used++
		return s.used > r.n
	}
	return false
}

// respCount is the flow's responses but READ responses.
func respCount(f *Flow) uint32 { return f.resp.count - uint32(f.ReadResponses.Packets) }

// fileSeqs follows a flow's sequences per file, from the first packet of
// it in a second file on. The packets in order of the file the flow's
// last packet came from skip it (Table.addFlow): their advance is given
// to that file at the next packet that looks (sync).
type fileSeqs struct {
	files   []fileSeq
	sync    [3]uint32 // the flow's highest PSNs (position) when last looked
	syncOK  [3]bool
	resps   uint32 // respCount when last looked
	copies  uint64
	offsets []FileOffset
	filling fillAcross
}

// fillAcross is a packet acrossFiles found new to its file yet in one of
// the flow's gaps, as its flow was before Flow.add sequenced it: a
// packet the file that opened the gap lacked (its capture dropped it),
// which the one capture holds in order (filledAcross).
type fillAcross struct {
	ok      bool
	sp      int
	psn     uint32
	span    int32  // a READ request's most response PSNs after its own
	lastPSN uint32 // Flow.LastPSN
	last    uint32 // the space's LastPSN
	reqAt   int64  // Flow.reqW.last
	gaps    uint8  // the space's open gaps
}

// flowHigh returns f's highest PSN (position) of space sp and whether it
// has one.
func flowHigh(f *Flow, sp int) (uint32, bool) {
	switch sp {
	case xRequests:
		// A READ re-issued at a later PSN leaves HighPSN (Flow.rereads).
		s := &f.Requests
		if psnDiff(s.LastPSN, s.HighPSN) > 0 {
			return s.LastPSN, s.started()
		}
		return s.HighPSN, s.started()
	case xReadResponses:
		return f.ReadResponses.HighPSN, f.ReadResponses.started()
	}
	return f.resp.top, f.resp.started
}

// ahead says whether a is past b in space sp.
func ahead(sp int, a, b uint32) bool {
	if sp == xResponses {
		return posDiff(a, b) > 0
	}
	return psnDiff(a, b) > 0
}

// seq returns the state of file i, made if need be; nil when the flow
// follows maxFileSeqs files already.
func (x *fileSeqs) seq(i int) *fileSeq {
	for k := range x.files {
		if x.files[k].file == i {
			return &x.files[k]
		}
	}
	if len(x.files) == maxFileSeqs {
		return nil
	}
	x.files = append(x.files, fileSeq{file: i})
	return &x.files[len(x.files)-1]
}

// syncFiles gives the advance of f's sequences since it last looked to
// the file of f's last packet: every packet since came from it (a packet
// from another file looks, and a packet only changes f.Last when it is
// no copy).
func (x *fileSeqs) syncFiles(f *Flow) {
	at := TimeNanos(f.Last.Time, f.Last.Time.UnixNano())
	last := x.seq(f.Last.File)
	if n := respCount(f); n != x.resps && last != nil && f.resp.started {
		r := &last.sp[xResponses]
		hi := f.resp.top
		if r.ok && !ahead(xResponses, hi, r.hi) {
			hi = r.hi // responses behind it only
		}
		last.noteRun(r.hi, r.ok, hi, n-x.resps)
		x.resps = n
	}
	for sp := range 3 {
		hi, ok := flowHigh(f, sp)
		if !ok || x.syncOK[sp] && hi == x.sync[sp] {
			continue
		}
		if last != nil {
			if s := &last.sp[sp]; !s.ok || ahead(sp, hi, s.hi) {
				// The time hi was reached is known for the requests
				// when the last of them reached it (reqW.last); else
				// f's last packet's is later, and exact says not.
				s.hi, s.ok, s.at, s.exact = hi, true, at, false
				if sp == xRequests && f.Requests.LastPSN == hi {
					s.at, s.exact = f.reqW.last, true
				}
			}
		}
		x.sync[sp], x.syncOK[sp] = hi, true
	}
}

// fileVerdict is what acrossFiles says of a packet.
type fileVerdict uint8

const (
	fileUndecided fileVerdict = iota // the rules for one file decide
	fileFirst                        // new to the flow, or it fills a gap: no copy
	fileCopy                         // another parallel file's packet, captured again
	fileOwn                          // its file carried it before: a mirror's copy or a resend (resentAcross)
)

// acrossFiles looks at a packet of f from file at.File when f's packets
// came from more than one file (or this one is the first from another),
// sp being its space and psn its PSN (position), behind says it is at or
// behind f's highest. A packet new to its file, which a parallel file
// carried, less than MaxFileOffset before, is that file's copy.
func (t *Table) acrossFiles(f *Flow, p *packet.Packet, c opBits, sp int, psn uint32, behind bool, at *FrameAt) fileVerdict {
	x := t.startFiles(f, at)
	if x == nil {
		return fileUndecided // rotated files of one capture
	}
	x.syncFiles(f)
	x.filling.ok = false
	s := x.seq(at.File)
	if s == nil {
		return fileUndecided
	}
	own := &s.sp[sp]
	prevHi, prevOK := own.hi, own.ok
	fresh := !own.ok || ahead(sp, psn, own.hi)
	if fresh {
		own.hi, own.ok, own.at, own.exact = psn, true, at.Nanos, true
	}
	fills := sp == xRequests && f.Requests.inGap(psn) || sp == xReadResponses && f.ReadResponses.inGap(psn)
	switch {
	case !behind && fresh && sp == xRequests && t.carries(x, sp, psn, at):
		// Ahead of the flow's highest, yet a parallel file carried it:
		// a READ re-issued at a later PSN (Flow.rereads), captured again.
		return fileCopy
	case !behind:
		return fileFirst
	case fills && fresh:
		// New to its file: the file that opened the gap lacked it.
		x.fillingAcross(f, p, c, sp, psn)
		own.filled.note(sp, psn)
		return fileFirst
	case fills:
		own.fills++
		return fileFirst
	case !fresh:
		// A packet that filled a gap in a parallel file, which this
		// file lacked too: that file's packet again.
		for k := range x.files {
			o := &x.files[k]
			if y := &o.sp[sp]; o.file != at.File && y.fills > own.fills && !ahead(sp, psn, y.hi) && t.par.Parallel(o.file, at.File) {
				own.fills++
				return fileCopy
			}
		}
		return fileOwn
	}
	if o, y := t.carriedElsewhere(x, sp, psn, at); y != nil {
		if sp == xResponses && s.respLacked(o, psn) {
			return fileFirst // o's file dropped it
		}
		if sp == xResponses {
			s.noteRun(prevHi, prevOK, psn, 1)
		}
		if psn == y.hi && y.exact {
			x.noteOffset(o.file, at.File, time.Duration(at.Nanos-y.at))
		}
		return fileCopy
	}
	return fileUndecided
}

// fillingAcross notes the packet p, of opcode class c, at psn of space sp
// of f, as f is before Flow.add sequences it, for filledAcross.
func (x *fileSeqs) fillingAcross(f *Flow, p *packet.Packet, c opBits, sp int, psn uint32) {
	s := f.spaceStats(sp)
	x.filling = fillAcross{ok: true, sp: sp, psn: psn, lastPSN: f.LastPSN, last: s.LastPSN, reqAt: f.reqW.last, gaps: s.seq.nGaps}
	if c&opReadRequest != 0 {
		_, x.filling.span = readSpan(&p.BTH, uint32(f.pmtu))
	}
}

// spaceStats returns f's PSNStats of space sp (xRequests or
// xReadResponses).
func (f *Flow) spaceStats(sp int) *PSNStats {
	if sp == xReadResponses {
		return &f.ReadResponses
	}
	return &f.Requests
}

// filledAcross says whether the packet Flow.add just sequenced out of
// order at psn of space sp is the one acrossFiles noted (fillingAcross): a
// packet that one parallel file lacked and another holds, which the file
// that lacked it showed a gap for, the other file's capture of it coming
// later. The one capture holds it in order: it undoes what the gap and
// its fill counted (the gap, the fill out of order, the last PSNs, the
// PSNs' loss, decided or not), and Flow.add's caller does nothing more
// with it.
func (f *Flow) filledAcross(sp int, psn uint32) bool {
	x := f.coldFiles()
	if x == nil || !x.filling.ok || x.filling.sp != sp || x.filling.psn != psn {
		return false
	}
	fl := x.filling
	x.filling.ok = false
	s := f.spaceStats(sp)
	s.OutOfOrder--
	f.LastPSN, s.LastPSN = fl.lastPSN, fl.last
	// A READ request's responses take the PSNs after it, as many as its
	// length makes: in order, the request after it may come that far.
	n := int32(0)
	for q := psn; n < fl.span; n++ {
		if q = psnAdd(q, 1); !s.fill(q) {
			break
		}
		s.MissingPSNs--
	}
	// A gap gone is one the one capture never had; a gap split in two
	// is two it had.
	switch n := s.seq.nGaps; {
	case n < fl.gaps && s.PSNGaps >= uint64(fl.gaps-n):
		s.PSNGaps -= uint64(fl.gaps - n)
	case n > fl.gaps:
		s.PSNGaps += uint64(n - fl.gaps)
	}
	if sp == xRequests {
		f.reqW.last = fl.reqAt
		f.unlose(psn, n, s.seq.nGaps < fl.gaps)
	}
	return true
}

// unlose takes psn, and the n PSNs after it, out of f's request loss:
// those the loss has not decided yet leave it; one it decided (mirror
// loss, when the responder acknowledged it before the other file's packet
// came; fabric loss, when a NAK asked for it) is taken out of the PSNs
// lost and of its event, and its gap out of the gaps lost when gone says
// the packet filled the whole gap.
func (f *Flow) unlose(psn uint32, n int32, gone bool) {
	s := f.retx
	if s == nil {
		return
	}
	var gaps *uint64
	for q, i := psn, int32(0); i <= n; q, i = psnAdd(q, 1), i+1 {
		if k := s.loss.find(q); k >= 0 {
			s.loss.cut(k, q)
			continue
		}
		for k := len(s.events) - 1; k >= 0; k-- {
			e := &s.events[k]
			if e.Kind != EventMirrorLoss && e.Kind != EventFabricLoss || psnDiff(q, e.PSN) < 0 || psnDiff(q, e.PSN) >= int32(e.Count) {
				continue
			}
			lost := &f.Retx.FabricLostPSNs
			gaps = &f.Retx.FabricGaps
			if e.Kind == EventMirrorLoss {
				lost, gaps = &f.Retx.MirrorLostPSNs, &f.Retx.MirrorGaps
			}
			if *lost > 0 {
				*lost--
			}
			if e.Count--; q == e.PSN {
				e.PSN = psnAdd(q, 1)
			}
			if e.Count == 0 {
				s.dropEvent(k)
			}
			break
		}
	}
	if gone && gaps != nil && *gaps > 0 {
		*gaps--
	}
}

// dropEvent removes event k, which no longer says anything.
func (s *retxState) dropEvent(k int) {
	s.events = append(s.events[:k], s.events[k+1:]...)
	switch {
	case s.ep.event == k:
		s.ep.event = -1
	case s.ep.event > k:
		s.ep.event--
	}
	if s.heldEvents > k {
		s.heldEvents--
	}
}

// startFiles returns f's per-file state, made if at's file is parallel
// to the file of f's last packet; nil if none.
func (t *Table) startFiles(f *Flow, at *FrameAt) *fileSeqs {
	c := f.coldState()
	if c.files != nil || !t.par.Parallel(f.Last.File, at.File) {
		return c.files
	}
	x := &fileSeqs{}
	c.files = x
	// The flow's resends, gaps filled, mirror copies and CNPs so far are
	// its first file's.
	if s := x.seq(f.Last.File); s != nil {
		s.sp[xRequests].resends, s.sp[xRequests].fills = f.Requests.Retransmitted, f.Requests.OutOfOrder
		s.sp[xReadResponses].resends, s.sp[xReadResponses].fills = f.ReadResponses.Retransmitted, f.ReadResponses.OutOfOrder
		for sp := range 3 {
			s.sp[sp].copies = c.spaceCopies[sp]
			if c.spaceCopied != nil {
				s.sp[sp].copied = c.spaceCopied[sp]
			}
		}
		s.cnps, s.cnpAt = f.CNPs, TimeNanos(f.Last.Time, f.Last.Time.UnixNano())
	}
	return x
}

// cnpAcross decides a CNP p of f from file at.File once f's packets came
// from parallel files (decided false otherwise): a CNP carries no
// sequence, but each file holds the CNPs it captured in their order, so a
// CNP of a file that has counted fewer of f's CNPs than a parallel file,
// which counted its last less than MaxFileOffset before, is that file's
// CNP captured again; else a mirror's copy of a CNP its file holds
// (cnpCopied, on the clock of the flow's first file), else a CNP.
func (t *Table) cnpAcross(f *Flow, p *packet.Packet, at *FrameAt) (copied, decided bool) {
	x := t.startFiles(f, at)
	if x == nil {
		return false, false
	}
	s := x.seq(at.File)
	if s == nil {
		return false, false
	}
	for k := range x.files {
		o := &x.files[k]
		if o.file != at.File && t.par.Parallel(o.file, at.File) && o.cnps > s.cnps && at.Nanos-o.cnpAt < int64(MaxFileOffset) {
			s.cnps++
			return t.copiedAcross(f), true
		}
	}
	if t.cnpCopied(f, p, at.Nanos-x.shiftOf(at.File)) {
		return true, true
	}
	s.cnps++
	s.cnpAt = at.Nanos
	return false, true
}

// carriedElsewhere returns a file parallel to at.File that carried psn in
// space sp, less than MaxFileOffset before at, and its state there; nil
// if none.
func (t *Table) carriedElsewhere(x *fileSeqs, sp int, psn uint32, at *FrameAt) (*fileSeq, *fileSpace) {
	for k := range x.files {
		o := &x.files[k]
		if o.file == at.File || !t.par.Parallel(o.file, at.File) {
			continue
		}
		if y := &o.sp[sp]; y.ok && !ahead(sp, psn, y.hi) && at.Nanos-y.at < int64(MaxFileOffset) {
			return o, y
		}
	}
	return nil, nil
}

// carries says whether carriedElsewhere finds a file.
func (t *Table) carries(x *fileSeqs, sp int, psn uint32, at *FrameAt) bool {
	_, y := t.carriedElsewhere(x, sp, psn, at)
	return y != nil
}

// noteOffset notes d from a packet's capture in file first to its copy's
// in file second.
func (x *fileSeqs) noteOffset(first, second int, d time.Duration) {
	for i := range x.offsets {
		if o := &x.offsets[i]; o.First == first && o.Second == second {
			o.Min, o.Max = min(o.Min, d), max(o.Max, d)
			return
		}
	}
	if len(x.offsets) < maxFileSeqs {
		x.offsets = append(x.offsets, FileOffset{First: first, Second: second, Min: d, Max: d})
	}
}

// resentAcross says whether a packet of space sp at psn, which its file
// carried before, is a parallel file's resend captured again: that file
// showed more resends than this one has, and carried psn. It counts it
// among its file's resends if so; resent counts the others that are no
// copies.
func (t *Table) resentAcross(f *Flow, sp int, psn uint32, at *FrameAt) bool {
	return sp != xResponses && t.shownMoreAcross(f, sp, psn, at, func(s *fileSpace) *uint64 { return &s.resends })
}

// shownMoreAcross says whether a parallel file that carried psn (of space
// sp) showed more of what count counts (its resends, the mirror's copies)
// than the file of a packet at psn captured again there, and counts the
// packet in its file's count if so: it is that file's one captured again.
func (t *Table) shownMoreAcross(f *Flow, sp int, psn uint32, at *FrameAt, count func(*fileSpace) *uint64) bool {
	x := f.cold.files
	s := x.seq(at.File)
	if s == nil {
		return false
	}
	own := count(&s.sp[sp])
	for k := range x.files {
		o := &x.files[k]
		if o.file == at.File || !t.par.Parallel(o.file, at.File) {
			continue
		}
		if y := &o.sp[sp]; y.ok && *count(y) > *own && !ahead(sp, psn, y.hi) {
			*own++
			return true
		}
	}
	return false
}

// resent counts a resend of space sp in file i.
func (x *fileSeqs) resent(sp, i int) {
	if s := x.seq(i); s != nil && sp != xResponses {
		s.sp[sp].resends++
	}
}

// fileSpaceOf returns the space of a packet of opcode class c and its PSN
// (position) there, and whether it has one.
func fileSpaceOf(p *packet.Packet, c opBits) (int, uint32, bool) {
	switch {
	case c&opRequest != 0:
		return xRequests, p.BTH.PSN, true
	case c&opReadResponse != 0:
		return xReadResponses, p.BTH.PSN, true
	case c&opResponse != 0:
		return xResponses, respPos(&p.BTH), true
	}
	return 0, 0, false
}

// fileCopyDue says whether p, of opcode class c, which would begin a new
// connection on f's key (Table.startsEpoch: a PSN far behind after f went
// idle, or f's first PSN again), is new to its file while a parallel file
// carried its PSN on f: that file's copy, captured later by a clock
// behind, not a connection begun again. Or its file carried its PSN and
// f's packets less than EpochIdle before (Table.copied took them for
// another file's copies, so f.Last, on another file's clock, says idle):
// f has not gone idle on its file's clock.
func (t *Table) fileCopyDue(f *Flow, p *packet.Packet, c opBits, at *FrameAt) bool {
	if t.par == nil || f.Packets == 0 {
		return false
	}
	sp, psn, ok := fileSpaceOf(p, c)
	if !ok {
		return false
	}
	x := f.coldFiles()
	if x == nil {
		if at.File == f.Last.File || !t.par.Parallel(f.Last.File, at.File) {
			return false
		}
		hi, ok := flowHigh(f, sp)
		return ok && !ahead(sp, psn, hi)
	}
	x.syncFiles(f)
	for k := range x.files {
		if s := &x.files[k]; s.file == at.File && s.sp[sp].ok && !ahead(sp, psn, s.sp[sp].hi) {
			// Its file carried psn: not new to it. f went idle on the
			// clock of f's last packet, but if its own file carried f's
			// packets less than EpochIdle before (copies of another
			// file's, which leave f.Last), f is not idle on this file's
			// clock: its mirror's copy or resend, no connection begun
			// again. Nor is a parallel file's resend or mirror copy
			// captured again (resentAcross, mirrorCopiedAcross).
			return at.Nanos-s.lastAt() < int64(t.cfg.EpochIdle) || t.showsMore(x, s, sp, psn)
		}
	}
	for k := range x.files {
		o := &x.files[k]
		if o.file != at.File && t.par.Parallel(o.file, at.File) && o.sp[sp].ok && !ahead(sp, psn, o.sp[sp].hi) &&
			at.Nanos-o.sp[sp].at < int64(MaxFileOffset) {
			return true
		}
	}
	return false
}

// showsMore says whether a file parallel to s's that carried psn (of
// space sp) showed more resends or mirror copies there than s: a packet
// of s's file at psn may be that file's, captured again (shownMoreAcross,
// which counts it).
func (t *Table) showsMore(x *fileSeqs, s *fileSeq, sp int, psn uint32) bool {
	own := &s.sp[sp]
	for k := range x.files {
		o := &x.files[k]
		if o.file == s.file || !t.par.Parallel(o.file, s.file) {
			continue
		}
		if y := &o.sp[sp]; y.ok && !ahead(sp, psn, y.hi) && (sp != xResponses && y.resends > own.resends || copiedFirst(sp, psn, y, own)) {
			return true
		}
	}
	return false
}

// lastAt is when the file last reached the highest of one of f's
// sequences, or carried a CNP of f: its latest packet of f that it
// knows the time of, on its own clock.
func (s *fileSeq) lastAt() int64 {
	last := s.cnpAt
	for k := range s.sp {
		if s.sp[k].ok {
			last = max(last, s.sp[k].at)
		}
	}
	return last
}

// mirrorCopiedAcross says whether a packet of space sp at psn, which its
// file carried before, is a parallel file's mirror copy captured again:
// that file showed a copy of psn this one has not (copiedFirst). It
// counts it among its file's copies if so.
func (t *Table) mirrorCopiedAcross(f *Flow, sp int, psn uint32, at *FrameAt) bool {
	x := f.cold.files
	s := x.seq(at.File)
	if s == nil {
		return false
	}
	own := &s.sp[sp]
	for k := range x.files {
		o := &x.files[k]
		if o.file == at.File || !t.par.Parallel(o.file, at.File) {
			continue
		}
		if y := &o.sp[sp]; y.ok && !ahead(sp, psn, y.hi) && copiedFirst(sp, psn, y, own) {
			own.copies++
			own.copied.note(sp, psn)
			return true
		}
	}
	return false
}

// countCopy counts a mirror's copy at psn of space sp in the file, if
// followed.
func (s *fileSeq) countCopy(sp int, psn uint32) {
	if s != nil {
		s.sp[sp].copies++
		s.sp[sp].copied.note(sp, psn)
	}
}

// shiftFor is shiftOf(i) for a packet of file i at psn of space sp,
// which its file carried before: 0 if that was a packet that filled a gap
// across files, whose times in the flow are its file's own.
func (x *fileSeqs) shiftFor(i, sp int, psn uint32) int64 {
	if s := x.seq(i); s != nil {
		if h, _ := s.sp[sp].filled.has(sp, psn); h {
			return 0
		}
	}
	return x.shiftOf(i)
}

// shiftOf is how far file i's clock is ahead of the clock of the
// file that carried the flow's packets first, as the copies across files
// showed it (the least time from a packet in one to its copy in the
// other): 0 if they showed none.
func (x *fileSeqs) shiftOf(i int) int64 {
	for _, o := range x.offsets {
		if o.Second == i && o.First != i {
			return int64(o.Min)
		}
	}
	return 0
}
