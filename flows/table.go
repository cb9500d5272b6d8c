package flows

import (
	"net/netip"
	"time"
	"unsafe"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// Config tunes how flows are split into connection epochs.
type Config struct {
	// EpochJump is how far (in PSNs, either way) a packet's PSN must be
	// from the flow's PSNs to be taken for a new connection on a reused
	// QPN rather than for a retransmission or a gap. Default 1<<16.
	EpochJump uint32
	// EpochIdle is how long the flow must have been idle before such a
	// jump, so that a burst of loss is never taken for a new connection.
	// Default 1 ms.
	EpochIdle time.Duration
}

func (c Config) withDefaults() Config {
	if c.EpochJump == 0 {
		c.EpochJump = 1 << 16
	}
	if c.EpochIdle == 0 {
		c.EpochIdle = time.Millisecond
	}
	return c
}

// Table accumulates packets into flows. Feed it packets in capture time
// order with Add, call Finish once, then read Flows. A Table is not safe
// for concurrent use.
type Table struct {
	cfg    Config
	index  flowIndex           // the current epoch of each key
	chunks []*[chunkFlows]Flow // the flows, in ID order: a slab (see flowAt)
	spare  []*[chunkFlows]Flow // chunks allocated ahead, in a group (see newChunk)
	flows  []*Flow             // every flow, in ID order

	// last is a one-entry cache: consecutive packets of one flow (the
	// common case on a busy QP) skip the index.
	lastKey  packedKey
	lastFlow *Flow
	// gen is the table's generation (see Hint): a new one whenever a key
	// starts a new epoch.
	gen uint32
	// respReach is how far past a flow's highest response PSN a response
	// may be and still surely start no epoch (responseInOrder): one more
	// than the configured EpochJump, and short of half the PSN circle.
	respReach uint32

	byHosts map[hostPair]hostList // every flow, by source and destination address

	cm       map[cmKey]*cmExchange // CM exchanges by requester side and comm ID
	cmByFlow map[Key]*cmSide       // CM info waiting for (or given to) the flow with this key
	finished bool
	// epochEnds holds, for a flow whose key began a new epoch after
	// it, what its responder had acknowledged then (finishLoss).
	epochEnds map[*Flow]*epochEnd

	// merged says the table is MergeShards': its flows live in the
	// shards' slabs, and index holds positions in flows.
	merged bool

	// ce holds the CE rings of the flows, by index, up to the last flow
	// that carried CE (see ce.go); copyMarked says the last copy
	// Table.copied took made its packet CE-marked (CopyMarkedCE).
	ce         []ceRings
	copyMarked bool

	// par says which input files were taken in parallel, nil if none
	// (SetParallelFiles); copyAcross says the last copy Table.copied
	// took was a parallel file's (CopyAcrossFiles).
	par        ParallelFiles
	copyAcross bool

	// keptResponses counts the responses the flows keep for requesters
	// not yet known (early.go), up to maxKeptResponses.
	keptResponses int

	// cnpHosts is, per source and destination address, what their CNPs'
	// IPv4 IDs have shown (cnp.go).
	cnpHosts map[hostPair]*cnpHost
}

// chunkFlows is the number of flows in one slab chunk: flows are allocated
// 128 at a time (one allocation, no per-object header or size-class
// waste: 128 flows of 960 bytes are exactly 15 pages of 8 KiB), and flow i
// is found from its index without a pointer per flow.
const (
	chunkShift = 7
	chunkFlows = 1 << chunkShift
)

// hugeGroupChunks is how many chunks a table of more than that many
// allocates at once, as one 3.75 MiB object that holds at least one whole
// 2 MiB huge page (see newChunk).
const hugeGroupChunks = 32

// newChunk adds the slab's next chunk. With many flows every packet's flow
// is a miss to memory whose address translation misses too (63,488 flows
// of 960 bytes span some 15,000 pages of 4 KiB), so once the table holds
// hugeGroupChunks chunks (4,096 flows) it allocates the next ones that
// many at a time and offers their memory to transparent huge pages, which
// the Go heap does not ask for. On the benchmark's capture (28 of its ~60
// MB of flows then in huge pages) `rocedump report` took 5% less CPU time
// (BENCHMARKS.md, session 7). A smaller table, such as each of the tables
// of a pass split over many workers, keeps to single chunks: it would
// take a 2 MiB page, and the garbage collector would scan the whole
// group, for a few flows.
func (t *Table) newChunk() {
	if len(t.spare) == 0 && len(t.chunks) >= hugeGroupChunks {
		g := new([hugeGroupChunks][chunkFlows]Flow)
		adviseHugePages(unsafe.Pointer(g), unsafe.Sizeof(*g))
		for i := range g {
			t.spare = append(t.spare, &g[i])
		}
	}
	if len(t.spare) > 0 {
		t.chunks = append(t.chunks, t.spare[0])
		t.spare = t.spare[1:]
		return
	}
	t.chunks = append(t.chunks, new([chunkFlows]Flow))
}

// flowAt returns the flow with index i (ID i+1).
func (t *Table) flowAt(i int32) *Flow { return &t.chunks[i>>chunkShift][i&(chunkFlows-1)] }

// hostList links the flows from one address to another in ID order,
// through Flow.hostNext.
type hostList struct{ first, last *Flow }

// NewTable returns an empty flow table.
func NewTable(cfg Config) *Table {
	cfg = cfg.withDefaults()
	return &Table{
		gen:       nextGen(),
		cfg:       cfg,
		respReach: min(cfg.EpochJump, psnHalf-2) + 1,
		byHosts:   map[hostPair]hostList{},
		cm:        map[cmKey]*cmExchange{},
		cmByFlow:  map[Key]*cmSide{},
	}
}

// Add accounts one decoded packet. Only RoCE packets whose BTH was captured
// are flows' business; other packets are ignored.
func (t *Table) Add(p *packet.Packet, at FrameRef) {
	a := At(at)
	t.addFlow(p, &a, false)
}

// AddFrame is Add for a caller that keeps the packet's FrameAt in memory
// (an analysis pass, once per frame): the table reads *at during the call
// only. Passing the FrameAt (56 bytes then, 72 with its hint) by pointer
// spares every function of the per-packet path a copy of it, which costs
// more than its size says: each copy loaded 16 bytes at a time what its
// caller had just stored 8 bytes at a time, which the processor cannot
// forward from store to load, and perf found the per-packet functions
// waiting there. `rocedump report` on one core took 5% less CPU time with
// 48 flows, 4% with 8,192 and 1.5% with 63,488 (builds without the
// profile; BENCHMARKS.md, session 7).
func (t *Table) AddFrame(p *packet.Packet, at *FrameAt) { t.addFlow(p, at, false) }

// AddFlow is Add that also returns the flow p was accounted to (the current
// epoch of its key, perhaps new with p), or nil if p is not a flow's
// business: callers that observe the flow too need no second lookup.
func (t *Table) AddFlow(p *packet.Packet, at FrameRef) *Flow {
	a := At(at)
	f, _, _, _ := t.addFlow(p, &a, false)
	return f
}

// AddFlowDelta is AddFlow that also returns what p added to the flow's
// Retransmitted and PSNGaps: a caller that bins them over time (the
// report's timeline) needs no per-flow memory of the counts its previous
// packet left. A flow new with p starts from zero. copied says p is a
// mirror's copy of a packet of f (see the package doc, "Mirror copies"):
// f counted it only in MirrorDuplicates, and so should the caller. Like
// AddFrame, it reads *at during the call only.
func (t *Table) AddFlowDelta(p *packet.Packet, at *FrameAt) (f *Flow, retx, gaps uint64, copied bool) {
	return t.addFlow(p, at, true)
}

// addFlow is AddFlow, and AddFlowDelta when delta is set.
func (t *Table) addFlow(p *packet.Packet, at *FrameAt, delta bool) (f *Flow, retx, gaps uint64, copied bool) {
	if p.Kind != packet.KindRoCE || !p.HasBTH {
		return nil, 0, 0, false
	}
	if p.HasCM {
		t.noteCM(p, &at.FrameRef)
	}
	// The one-entry cache (lastKey, lastFlow) changes only with a lookup
	// or a new flow: a hinted frame, most frames of a pass that looks
	// ahead, leaves it alone, and it still names a key's current flow
	// (only newFlow makes another flow current, and it sets the cache).
	if f = t.hinted(at); f == nil {
		pk := packKey(p.Src, p.Dst, p.BTH.DestQP)
		if f = t.lastFlow; f == nil || !pk.ok || pk != t.lastKey {
			f = t.lookup(pk, p.Src, p.Dst, p.BTH.DestQP)
			t.lastKey, t.lastFlow = pk, f
		}
	}
	c := opClass[p.BTH.Opcode]
	inOrder := f != nil && f.requestInOrder(p.BTH.PSN, c)
	if f == nil || !inOrder && !f.responseInOrder(p.BTH.PSN, c, t.respReach) && t.startsEpoch(f, p, c, at) {
		pk := packKey(p.Src, p.Dst, p.BTH.DestQP)
		f = t.newFlow(pk, f, p, at)
		t.lastKey, t.lastFlow = pk, f
	}
	// A mirror's copy (see mirror.go): a packet in order fails the first
	// compare.
	switch h := &p.BTH; {
	case c&opRequest != 0:
		if (f.Requests.behind(h.PSN, c) || at.File != f.Last.File) && t.copied(f, p, c, at) {
			return f, 0, 0, true
		}
	case c&opReadResponse != 0:
		if (f.ReadResponses.behind(h.PSN, c) || at.File != f.Last.File) && t.copied(f, p, c, at) {
			return f, 0, 0, true
		}
	case c&(opResponse|opCNP) != 0:
		if (c&opCNP != 0 || posAtOrBehind(respPos(h), f.resp.top) || at.File != f.Last.File) && t.copied(f, p, c, at) {
			return f, 0, 0, true
		}
	}
	// Most requests of a mirror are plain (see addPlain): their counts
	// move no Retransmitted or PSNGaps, they carry no CE (noteCE) and are
	// no responses, so nothing below applies.
	if inOrder && f.addPlain(p, c, at) {
		return f, 0, 0, false
	}
	// Only the requests and READ responses f.add sequences change the
	// counts: the other packets (ACKs, CNPs) leave them, and their lines,
	// alone.
	delta = delta && c&(opRequest|opReadRequest|opReadResponse) != 0
	if delta {
		retx, gaps = f.RetxAndGaps()
	}
	if t.noteCE(f, p, c, f.add(p, c, at)) {
		t.noteReissue(f, p.BTH.PSN)
	}
	if delta {
		r, g := f.RetxAndGaps()
		retx, gaps = r-retx, g-gaps
	}
	if c&opResponse != 0 && connected(f.Transport) {
		// notePair's first test, here: most responses find the evidence
		// standing (its only candidate fits) and skip the call.
		if q := f.pairOne; q == nil || !fits(q, p.BTH.PSN) && !fitsAhead(q, p.BTH.PSN) {
			t.notePair(f, p.BTH.PSN, at.Time, c&opReadResponse != 0)
		}
		t.noteResponse(f, &p.BTH, &at.FrameRef)
	}
	return f, retx, gaps, false
}

// lookup returns the current flow of a key, nil if none; pk is its packed
// form.
func (t *Table) lookup(pk packedKey, src, dst netip.Addr, qp uint32) *Flow {
	var i int32
	if pk.ok {
		i = t.index.get(pk, nil)
	} else {
		k := Key{Src: src, Dst: dst, DestQP: qp}
		i = t.index.get(pk, &k)
	}
	if i < 0 {
		return nil
	}
	if t.merged {
		return t.flows[i]
	}
	return t.flowAt(i)
}

// newFlow starts a flow for p's key (pk packed); prev is the key's previous
// epoch, if any.
func (t *Table) newFlow(pk packedKey, prev *Flow, p *packet.Packet, at *FrameAt) *Flow {
	if t.merged {
		panic("flows: Add on a table MergeShards returned")
	}
	k := Key{Src: p.Src, Dst: p.Dst, DestQP: p.BTH.DestQP}
	i := len(t.flows)
	if i&(chunkFlows-1) == 0 {
		t.newChunk()
	}
	f := t.flowAt(int32(i))
	f.ID = i + 1
	f.Key = k
	f.Transport = p.BTH.Opcode.Transport()
	f.PKey = p.BTH.PKey
	f.HasVLAN, f.VLAN = p.HasVLAN, p.VLAN
	f.First = at.FrameRef
	f.binIndex = msBin(at.Nanos)
	if prev != nil {
		t.gen = nextGen() // the key's hints are stale
		f.Epoch = prev.Epoch + 1
		t.noteEpochEnd(prev, f)
	}
	if len(t.cmByFlow) != 0 {
		if side := t.cmByFlow[k]; side != nil && side.flow == nil {
			side.flow = f
			f.CM, f.hasCM = &side.info, true
			f.SrcQP, f.HasSrcQP = side.info.SrcQP, true
		}
	}
	t.index.put(pk, &k, int32(i))
	t.flows = append(t.flows, f)
	hp := hostPair{k.Src, k.Dst}
	l := t.byHosts[hp]
	if l.first == nil {
		l.first = f
	} else {
		l.last.hostNext = f
	}
	l.last = f
	t.byHosts[hp] = l
	return f
}

// startsEpoch says whether p begins a new connection on f's key: a CM
// exchange for the key arrived after f began, or f had gone idle and p's
// PSN is far from its PSN space: more than EpochJump behind the highest PSN
// or ahead of the PSNs expected next.
//
// addFlow asks it only of a packet that requestInOrder does not clear.
func (t *Table) startsEpoch(f *Flow, p *packet.Packet, c opBits, at *FrameAt) bool {
	if f.cmPending {
		// noteCM marks the current flow of a key it names: only such a
		// flow needs the map.
		if side := t.cmByFlow[f.Key]; side != nil && side.flow == nil {
			return true
		}
	}
	if c&opCNP != 0 {
		return false
	}
	// The PSN test first: it is cheaper than time.Time.Sub, and almost
	// always false.
	var jumps bool
	switch {
	case c&opRequest != 0:
		s := &f.Requests
		jumps = s.started() && (far(p.BTH.PSN, s.HighPSN, s.seq.expHi, t.cfg.EpochJump) || restarts(f, p.BTH.PSN))
	case c&opReadResponse != 0:
		// Far from the READ responses and from the other responses
		// too: they answer the partner's requests in one PSN space,
		// and its RDMA WRITEs between two READs (and their ACKs) move
		// it on, so a READ response far past the last one may follow
		// the last ACK. f.resp follows every response.
		s, r := &f.ReadResponses, &f.resp
		jumps = s.started() && far(p.BTH.PSN, s.HighPSN, s.seq.expHi, t.cfg.EpochJump) &&
			far(p.BTH.PSN, r.high(), psnAdd(r.high(), 1), t.cfg.EpochJump)
	case c&opResponse != 0:
		r := &f.resp
		jumps = r.started && far(p.BTH.PSN, r.high(), psnAdd(r.high(), 1), t.cfg.EpochJump)
		if !jumps && r.started && psnDiff(p.BTH.PSN, r.high()) < 0 && at.Time.Sub(f.Last.Time) >= t.cfg.EpochIdle {
			return t.answersRestart(f, p.BTH.PSN) && !t.fileCopyDue(f, p, c, at)
		}
	}
	if !jumps || at.Time.Sub(f.Last.Time) < t.cfg.EpochIdle {
		return false
	}
	// Another UD sender's PSNs are its own (otherSender).
	return (c&opRequest == 0 || !f.otherSender(&p.BTH)) && !t.fileCopyDue(f, p, c, at)
}

// requestInOrder says whether a packet of class c at psn is a request of
// f's at the very PSN its requests expect next (Requests.seq.expHi), not
// behind the highest request PSN and past the first one on the PSN circle,
// and f has no CM exchange pending: such a request starts no epoch
// (startsEpoch finds it neither far from the requests nor a restart, which
// needs a PSN at or behind the first). It inlines, so that addFlow skips
// the call to startsEpoch for most packets of a mirror: 80% of those of the
// benchmark's capture (BENCHMARKS.md, session 20).
func (f *Flow) requestInOrder(psn uint32, c opBits) bool {
	s := &f.Requests
	return c&opRequest != 0 && !f.cmPending && s.Packets != 0 && psn == s.seq.expHi &&
		(psn-s.HighPSN)&psnMask < psnHalf && (psn-s.FirstPSN-1)&psnMask < psnHalf-1
}

// responseInOrder says whether a packet of class c at psn is a response of
// f's (ACK, NAK, READ or atomic response) past the flow's highest response
// PSN by 1 to reach PSNs (Table.respReach), and f has no CM exchange
// pending: such a response starts no epoch (startsEpoch finds it neither
// more than EpochJump past the PSN after the highest nor behind the
// highest, which a restart's answer needs; a READ response must be far
// from both its own PSNs and the other responses'; a flow without
// responses yet has its highest at 0 and starts none either). It
// inlines, so that addFlow skips the call to startsEpoch for the ACKs of a
// mirror too: 19% of the packets of the benchmark's capture. A reach of 0
// clears none (TestResponseInOrderSameFlows).
func (f *Flow) responseInOrder(psn uint32, c opBits, reach uint32) bool {
	return c&opResponse != 0 && !f.cmPending &&
		(psn-f.resp.high()-1)&psnMask < reach
}

// restarts says whether a request at psn sends the flow's requests again
// from their first PSN when the responder has acknowledged every one of
// them: a requester resends only what no ACK it received covered (a NAK's
// PSN on, or after an ACK timeout the PSN after the last ACK), so this is
// a new connection on the reused QPN that starts at the PSN the last one
// did (NCCL starts every QP at PSN 0), not a timeout. The flow must have
// carried more than that first PSN, so that some ACK after the first
// request's covered it. Requests.started is checked by the caller.
func restarts(f *Flow, psn uint32) bool {
	s, r := &f.Requests, f.respLink
	return psnDiff(psn, s.FirstPSN) <= 0 && psnDiff(s.HighPSN, s.FirstPSN) > 0 &&
		r != nil && r.resp.acked() && psnDiff(r.resp.ackedHigh(), s.HighPSN) >= 0
}

// answersRestart says whether a response at psn, behind the responses of
// the idle flow f, answers the requests of a new connection on a reused
// QPN (see restarts): a flow whose requests f's responses answered has a
// new epoch, begun since f's last packet, whose requests hold psn.
func (t *Table) answersRestart(f *Flow, psn uint32) bool {
	for g := t.byHosts[hostPair{f.Key.Dst, f.Key.Src}].first; g != nil; g = g.hostNext {
		if g.respLink != f {
			continue
		}
		cur := t.lookup(packKey(g.Key.Src, g.Key.Dst, g.Key.DestQP), g.Key.Src, g.Key.Dst, g.Key.DestQP)
		if cur == nil || cur == g || cur.First.Time.Before(f.Last.Time) {
			continue
		}
		if s := &cur.Requests; s.started() && psnDiff(psn, s.FirstPSN) >= 0 && psnDiff(psn, s.HighPSN) <= 0 {
			return true
		}
	}
	return false
}

// far says whether psn is more than jump PSNs behind high or ahead of next.
func far(psn, high, next, jump uint32) bool {
	if jump >= psnHalf {
		return false // no PSN is that far on the 24-bit circle
	}
	if d := psnDiff(psn, high); d < 0 {
		return uint32(-d) > jump
	}
	return psnDiff(psn, next) > int32(jump)
}

// add accounts p, of opcode class c, to f, and reports whether p is an
// RDMA READ request that re-issues the previous READ.
func (f *Flow) add(p *packet.Packet, c opBits, fa *FrameAt) (reissue bool) {
	at := &fa.FrameRef
	h := &p.BTH
	op := h.Opcode
	n := uint64(p.DatagramLen())
	f.Packets, f.WireBytes = f.Packets+1, f.WireBytes+n
	f.addRate(fa.Nanos, n)
	// Field by field: a little faster than the whole-struct copy, which
	// reloads at, just stored by the caller, in 16-byte pieces.
	f.Last.File, f.Last.Frame, f.Last.Time, f.Last.Seq = at.File, at.Frame, at.Time, at.Seq
	// The common cases inline: the flow's first opcode and DSCP value,
	// which are not counted (see countOpcode), and its first port.
	if uint16(op)+1 != f.opFirst && !f.opcodeBumped(op) {
		f.countOpcode(op)
	}
	if uint16(p.DSCP)+1 != f.dscpFirst {
		f.countDSCP(p.DSCP)
	}
	// ecn in a local: f.ECN's increment might have changed p.ECN for all
	// the compiler knows, which would load it again.
	ecn := p.ECN & 3
	f.ECN[ecn]++
	if ecn == 3 {
		f.ECNCE++
	}
	if h.FECN {
		f.FECN++
	}
	if h.BECN {
		f.BECN++
	}
	if p.ICRC == bth.ICRCBad {
		f.ICRCBad++
	}
	if p.Truncated {
		f.Truncated++
	}
	if p.RoCEVersion == 2 && (f.ports.n == 0 || p.SrcPort != f.ports.inline[0]) {
		f.addPort(p.SrcPort)
	}
	if h.Ext&bth.HasDETH != 0 && !f.HasSrcQP {
		f.SrcQP, f.HasSrcQP = h.DETH.SrcQP, true
	}

	if c&opCNP != 0 {
		f.CNPs++
		return false
	}
	f.PayloadBytes += uint64(p.PayloadLen)
	if f.Transport == bth.TransportCNP {
		f.Transport = op.Transport()
	}
	if f.otherSender(h) {
		// Another source QP's datagram (UD: every packet a request): its
		// PSNs are its own, in no PSN space of the flow (OtherSenders),
		// not even when the flow's source QP came from CM and sent none.
		f.coldState().otherSenders++
		if c&opEndsRequest != 0 {
			f.Messages++
		}
		return false
	}
	if !f.HasPSN {
		f.FirstPSN, f.HasPSN = h.PSN, true
	}
	f.LastPSN = h.PSN
	if c&opShowsMTU != 0 {
		f.learnMTU(p)
	}

	switch {
	case c&opReadRequest != 0 && f.rereads(h):
		f.stampRequest(h.PSN, fa.Nanos)
		f.Requests.retransmitted(h.PSN)
		f.noteReissuedRead(h.PSN, at)
		reissue = true
	case c&opRequest != 0:
		var lo, hi int32
		if c&opReadRequest != 0 {
			lo, hi = readSpan(h, uint32(f.pmtu))
		}
		s := &f.Requests
		prev, last := f.reqW.last, s.LastPSN
		if f.reqW.turns(fa.Nanos, s.Packets == 0) { // stampRequest, inline
			f.turnRequests(h.PSN, fa.Nanos)
		}
		f.reqW.last = fa.Nanos
		var res seqResult
		if c&opReadRequest == 0 && h.PSN == s.seq.expHi && s.Packets != 0 {
			res = s.next(h.PSN) // observe's in-order case, inline
		} else {
			res = s.observe(h.PSN, lo, hi, false)
		}
		if c&opEndsRequest != 0 && res != seqRetransmit {
			f.Messages++
		}
		f.noteRequest(res, h.PSN, last, fa, prev)
		if c&opReadRequest != 0 {
			f.noteRead(h)
		}
	case c&opReadResponse != 0:
		f.noteReadResponse(h.PSN, c)
		s := &f.ReadResponses
		last := s.LastPSN
		if h.PSN != s.seq.expHi && c&opOpens == 0 && s.started() && psnDiff(h.PSN, s.seq.expHi) > 0 {
			f.skipOthers(h.PSN) // a MIDDLE or LAST past the PSN expected: one compare in order
		}
		if res := s.observe(h.PSN, 0, 0, c&opOpens != 0); res == seqRetransmit || res == seqOutOfOrder {
			f.noteResent(spaceReadResponses, h.PSN, last, fa.Nanos)
		} else if f.cold != nil && f.cold.reissue.ok && f.cold.reissue.psn == h.PSN {
			// The answer to a re-issued READ, in order (the responses
			// never carried its PSN): a repeat of it is a copy, not the
			// resend expectResend waits for.
			f.cold.reissue.ok = false
		}
	}
	if c&opResponse != 0 {
		// The response's position and slot (see respTracker), inline:
		// turn is called only when turns says so.
		r, pos := &f.resp, respPos(h)
		if slot := uint32(fa.Nanos >> slotShift); r.turns(slot) {
			r.turn(pos, slot, at)
		}
		r.count++
		r.advance(pos, at)
		if c&opReadResponse == 0 {
			// For its copy.
			r.lastSyn, r.lastMSN, f.lastOp = h.AETH.Syndrome, uint16(h.AETH.MSN), op
		}
	}
	if h.Ext&bth.HasAETH != 0 {
		switch h.AETH.Kind() {
		case bth.AckKindNAK:
			if c := h.AETH.NAKCode(); int(c) < len(f.NAKs) {
				f.NAKs[c]++
			} else {
				f.NAKOther++
			}
			f.noteNAK(h, at)
		case bth.AckKindRNRNAK:
			f.RNRNAKs++
			c := f.coldState()
			c.rnrTimers = addValue(c.rnrTimers, h.AETH.RNRTimer())
			f.noteNAK(h, at)
		}
	}
	return reissue
}

// addPlain is add for a request that requestInOrder cleared and that
// nothing about is rare: not an RDMA READ (whose re-issues and spans add
// tells apart), on a flow without retransmission state (retx: noteRequest
// has nothing to do for it), without CE, FECN, BECN or a bad ICRC, of the
// flow's first DSCP value and UDP port and of one of its first three
// opcodes (add's inline cases), without a DETH (a UD flow's source QP, or
// another sender's datagram: otherSender). add sequences such a request
// by PSNStats.next and finds the flow's Transport and HasPSN set
// (Requests.Packets, which requestInOrder found nonzero, counts only
// packets that are not CNPs, which set them first). addPlain does what add
// does for it, without add's tests of what it is not and without a call,
// so without the spills that add's calls need: 79% of the packets of the
// benchmark's capture, ~85 instructions fewer each in add and addFlow's
// RetxAndGaps, which it leaves alone (BENCHMARKS.md, session 23). Other
// requests it turns down, changing nothing (opcodeBumped, its last test,
// changes nothing when it fails), for add. TestAddPlainIsAdd compares the
// two.
func (f *Flow) addPlain(p *packet.Packet, c opBits, fa *FrameAt) bool {
	h := &p.BTH
	ecn := p.ECN & 3
	if c&opReadRequest != 0 || f.retx != nil || h.Ext&bth.HasDETH != 0 ||
		ecn == 3 || h.FECN || h.BECN || p.ICRC == bth.ICRCBad ||
		uint16(p.DSCP)+1 != f.dscpFirst ||
		p.RoCEVersion == 2 && (f.ports.n == 0 || p.SrcPort != f.ports.inline[0]) {
		return false
	}
	op := h.Opcode
	if uint16(op)+1 != f.opFirst && !f.opcodeBumped(op) {
		return false
	}
	at := &fa.FrameRef
	n := uint64(p.DatagramLen())
	f.Packets, f.WireBytes = f.Packets+1, f.WireBytes+n
	f.addRate(fa.Nanos, n)
	f.Last.File, f.Last.Frame, f.Last.Time, f.Last.Seq = at.File, at.Frame, at.Time, at.Seq
	f.ECN[ecn]++
	if p.Truncated {
		f.Truncated++
	}
	f.PayloadBytes += uint64(p.PayloadLen)
	f.LastPSN = h.PSN
	if c&opShowsMTU != 0 && uint64(p.PayloadLen) != uint64(f.pmtu) {
		f.learnMTU(p)
	}
	if f.reqW.turns(fa.Nanos, false) {
		f.turnRequests(h.PSN, fa.Nanos)
	}
	f.reqW.last = fa.Nanos
	f.Requests.next(h.PSN)
	if c&opEndsRequest != 0 {
		f.Messages++
	}
	return true
}

// addRate adds bytes at ns (FrameAt.Nanos) to the 1 ms rate bins.
func (f *Flow) addRate(ns int64, bytes uint64) {
	if bin := msBin(ns); bin != f.binIndex {
		if f.binBytes > f.peakBytes {
			f.peakBytes = f.binBytes
		}
		f.binIndex, f.binBytes = bin, 0
	}
	f.binBytes += bytes
}

// msBin is the 1 ms bin of a FrameAt.Nanos: its Unix milliseconds,
// rounded down as time.Time.UnixMilli does (for the times TimeNanos
// holds).
func msBin(ns int64) int64 {
	if ns >= 0 {
		// The common case, by an unsigned division: a multiply and a
		// shift, without the signed one's corrections and remainder.
		return int64(uint64(ns) / 1e6)
	}
	ms := ns / 1e6
	if ns%1e6 < 0 {
		ms--
	}
	return ms
}

// Finish pairs flows; call it once after the last Add.
func (t *Table) Finish() {
	if t.finished {
		return
	}
	t.finished = true
	t.pairByCM()
	t.pairByPSN()
	t.pairSole()
	for _, f := range t.flows {
		if f.Partner != nil && !f.HasSrcQP {
			f.SrcQP, f.HasSrcQP = f.Partner.Key.DestQP, true
		}
	}
	t.finishLoss()
	t.finishEarly()
}

// Flows returns every flow in ID order (first appearance in the capture).
// The slice is the table's own: do not modify it.
func (t *Table) Flows() []*Flow { return t.flows }

// Len is the number of flows.
func (t *Table) Len() int { return len(t.flows) }
