package reports

import (
	"net/netip"
	"slices"
	"time"

	"github.com/rocedump/rocedump/flows"
)

// ECN reaction, per host direction A→B.
//
// A CE-marked RoCE packet from A to B is acted on when B sends A a CNP
// within Config.ECNWindow after it, or sent one at most cnpRateLimit before
// it (the NIC rate-limits CNPs, so a mark right after a CNP is covered by
// it, or by up to the lead its flow's responses showed, when they came
// before the requests they answer: the two directions come from files
// whose clocks disagree, and B's CNP sorts as early as B's ACKs, before
// the mark it answers; flows.Flow.EarlyResponses). It is not acted on
// when the window passes with no such CNP. When the
// capture ends inside a mark's window, the mark is not acted on if B had
// already sent A other packets after it (B was answering, but with no
// CNP), and is left undecided otherwise: CEMarked may exceed Acted +
// NotActed by those.
//
// State is bounded per direction: marks waiting for a CNP are kept in at
// most ecnBuckets buckets of marks less than ECNWindow/16 apart, each
// decided as a whole. With marks spread finer than that over a whole
// window the decision is exact to within ECNWindow/16; for the generated
// scenarios it is exact.
const (
	cnpRateLimit = 50 * time.Microsecond
	ecnBuckets   = 32
)

type dirKey struct{ src, dst netip.Addr }

// ceBucket is a run of CE marks waiting for a CNP.
type ceBucket struct {
	first, last flows.FrameRef
	n           uint64
}

type ecnDir struct {
	out     ECNReaction
	ring    [ecnBuckets]ceBucket
	head, n int // oldest bucket, buckets in use
	lastCNP time.Time
	hasCNP  bool
	firstNA flows.FrameRef
	lastNA  flows.FrameRef
}

type ecnState struct {
	window, quantum time.Duration
	byDir           map[dirKey]*ecnDir
	list            []*ecnDir
}

func (s *ecnState) init(window time.Duration) {
	s.window, s.quantum = window, window/16
	s.byDir = map[dirKey]*ecnDir{}
}

// mark notes a CE-marked packet from src to dst; lead is how far before
// their requests its flow's responses were captured at most (0 if never).
func (s *ecnState) mark(src, dst netip.Addr, at *flows.FrameRef, lead time.Duration) {
	k := dirKey{src, dst}
	d := s.byDir[k]
	if d == nil {
		d = &ecnDir{out: ECNReaction{Src: src, Dst: dst}}
		s.byDir[k] = d
	}
	if d.out.CEMarked == 0 {
		// The direction's first mark: reactions lists it from now on
		// (a CNP before it may have made d, to cover it).
		s.list = append(s.list, d)
	}
	d.out.CEMarked++
	if d.hasCNP && at.Time.Sub(d.lastCNP) <= cnpRateLimit+lead {
		d.out.Acted++
		return
	}
	s.expire(d, at.Time)
	if d.n > 0 {
		b := &d.ring[(d.head+d.n-1)%ecnBuckets]
		if at.Time.Sub(b.first.Time) < s.quantum || d.n == ecnBuckets {
			b.last = *at
			b.n++
			return
		}
	}
	d.ring[(d.head+d.n)%ecnBuckets] = ceBucket{first: *at, last: *at, n: 1}
	d.n++
}

// cnp notes a CNP answering marks on src→dst packets (it went dst→src).
func (s *ecnState) cnp(src, dst netip.Addr, at *flows.FrameRef) {
	k := dirKey{src, dst}
	d := s.byDir[k]
	if d == nil {
		// No mark seen yet (marked after the mirror point, or before
		// the capture began): the CNP still covers a mark that comes
		// within cnpRateLimit after it, as the NIC sends no CNP for
		// that one. Listed by reactions only once it has a mark.
		d = &ecnDir{out: ECNReaction{Src: src, Dst: dst}}
		s.byDir[k] = d
	}
	s.expire(d, at.Time)
	for d.n > 0 {
		d.out.Acted += d.ring[d.head].n
		d.pop()
	}
	d.lastCNP, d.hasCNP = at.Time, true
}

// expire decides the buckets whose window closed before now.
func (s *ecnState) expire(d *ecnDir, now time.Time) {
	for d.n > 0 && d.ring[d.head].last.Time.Add(s.window).Before(now) {
		d.notActed(&d.ring[d.head])
		d.pop()
	}
}

func (d *ecnDir) pop() {
	d.ring[d.head] = ceBucket{}
	d.head = (d.head + 1) % ecnBuckets
	d.n--
}

func (d *ecnDir) notActed(b *ceBucket) {
	if d.out.NotActed == 0 {
		d.firstNA = b.first
	}
	d.out.NotActed += b.n
	d.lastNA = b.last
}

// finish decides the marks still waiting when the capture ended at end;
// fl are the flows, for the last packet each host sent the other. A
// direction A→B whose reverse B→A carries no RoCE packet in the capture
// (a mirror of one direction: a SPAN of a port's ingress or egress only, a
// tap of one fibre) cannot show the CNPs B sent A, so none of its marks
// is not acted on: they stay undecided (ECNReaction.NoReverse).
func (s *ecnState) finish(end time.Time, fl []*flows.Flow) {
	if len(s.list) == 0 {
		return
	}
	back := map[dirKey]time.Time{}
	for _, f := range fl {
		k := dirKey{f.Key.Src, f.Key.Dst}
		if t, ok := back[k]; !ok || f.Last.Time.After(t) {
			back[k] = f.Last.Time
		}
	}
	for _, d := range s.list {
		s.expire(d, end)
		reply, ok := back[dirKey{d.out.Dst, d.out.Src}]
		if !ok {
			d.out.NoReverse = true
			d.out.NotActed = 0
		}
		for d.n > 0 {
			if b := &d.ring[d.head]; ok && reply.After(b.last.Time) {
				d.notActed(b)
			}
			d.pop()
		}
	}
}

// reactions returns every direction's counts, by source then destination.
func (s *ecnState) reactions() []ECNReaction {
	out := make([]ECNReaction, 0, len(s.list))
	for _, d := range s.list {
		r := d.out
		if r.NotActed > 0 {
			first, last := d.firstNA, d.lastNA
			r.FirstNotActed, r.LastNotActed = &first, &last
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b ECNReaction) int {
		if c := a.Src.Compare(b.Src); c != 0 {
			return c
		}
		return a.Dst.Compare(b.Dst)
	})
	return out
}
