package flows

import (
	"time"

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
	active map[Key]*Flow // the current epoch of each key
	flows  []*Flow       // every flow, in ID order

	// last is a one-entry cache: consecutive packets of one flow (the
	// common case on a busy QP) skip the map lookup.
	lastKey  Key
	lastFlow *Flow

	byHosts map[hostPair][]*Flow // every flow, by source and destination address

	cm       map[cmKey]*cmExchange // CM exchanges by requester side and comm ID
	cmByFlow map[Key]*cmSide       // CM info waiting for (or given to) the flow with this key
	finished bool
}

// NewTable returns an empty flow table.
func NewTable(cfg Config) *Table {
	return &Table{
		cfg:      cfg.withDefaults(),
		active:   map[Key]*Flow{},
		byHosts:  map[hostPair][]*Flow{},
		cm:       map[cmKey]*cmExchange{},
		cmByFlow: map[Key]*cmSide{},
	}
}

// Add accounts one decoded packet. Only RoCE packets whose BTH was captured
// are flows' business; other packets are ignored.
func (t *Table) Add(p *packet.Packet, at FrameRef) { t.AddFlow(p, at) }

// AddFlow is Add that also returns the flow p was accounted to (the current
// epoch of its key, perhaps new with p), or nil if p is not a flow's
// business: callers that observe the flow too need no second lookup.
func (t *Table) AddFlow(p *packet.Packet, at FrameRef) *Flow {
	if p.Kind != packet.KindRoCE || !p.HasBTH {
		return nil
	}
	if p.HasCM {
		t.noteCM(p, at)
	}
	k := Key{Src: p.Src, Dst: p.Dst, DestQP: p.BTH.DestQP}
	f := t.lastFlow
	if f == nil || k != t.lastKey {
		f = t.active[k]
	}
	if f == nil || t.startsEpoch(f, p, at) {
		f = t.newFlow(k, f, p, at)
	}
	t.lastKey, t.lastFlow = k, f
	f.add(p, at)
	if p.BTH.Opcode.IsResponse() && connected(f.Transport) {
		t.notePair(f, p.BTH.PSN, at.Time)
		t.noteResponse(f, &p.BTH, at)
	}
	return f
}

// newFlow starts a flow for k; prev is the key's previous epoch, if any.
func (t *Table) newFlow(k Key, prev *Flow, p *packet.Packet, at FrameRef) *Flow {
	f := &Flow{
		ID:        len(t.flows) + 1,
		Key:       k,
		Transport: p.BTH.Opcode.Transport(),
		PKey:      p.BTH.PKey,
		HasVLAN:   p.HasVLAN,
		VLAN:      p.VLAN,
		First:     at,
		binIndex:  at.Time.UnixMilli(),
	}
	if prev != nil {
		f.Epoch = prev.Epoch + 1
	}
	if side := t.cmByFlow[k]; side != nil && side.flow == nil {
		side.flow = f
		f.CM = &side.info
		f.SrcQP, f.HasSrcQP = side.info.SrcQP, true
	}
	t.active[k] = f
	t.flows = append(t.flows, f)
	hp := hostPair{k.Src, k.Dst}
	t.byHosts[hp] = append(t.byHosts[hp], f)
	return f
}

// startsEpoch says whether p begins a new connection on f's key: a CM
// exchange for the key arrived after f began, or f had gone idle and p's
// PSN is far from its PSN space: more than EpochJump behind the highest PSN
// or ahead of the PSNs expected next.
func (t *Table) startsEpoch(f *Flow, p *packet.Packet, at FrameRef) bool {
	if side := t.cmByFlow[f.Key]; side != nil && side.flow == nil {
		return true
	}
	op := p.BTH.Opcode
	if op.IsCNP() || at.Time.Sub(f.Last.Time) < t.cfg.EpochIdle {
		return false
	}
	var s *sequencer
	switch {
	case op.IsRequest():
		s = &f.Requests.seq
	case op.IsReadResponse():
		s = &f.ReadResponses.seq
	case op.IsResponse():
		r := &f.resp
		return r.started && far(p.BTH.PSN, r.high, psnAdd(r.high, 1), t.cfg.EpochJump)
	default:
		return false
	}
	return s.started && far(p.BTH.PSN, s.high, s.expHi, t.cfg.EpochJump)
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

// add accounts p to f.
func (f *Flow) add(p *packet.Packet, at FrameRef) {
	h := &p.BTH
	op := h.Opcode
	f.Packets++
	f.WireBytes += uint64(p.IPTotalLen)
	f.Last = at
	f.opcodes.add(op)
	f.dscp.add(p.DSCP)
	f.ECN[p.ECN&3]++
	if p.ECN&3 == 3 {
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
	if p.RoCEVersion == 2 {
		f.ports.add(p.SrcPort)
	}
	if h.Ext&bth.HasDETH != 0 && !f.HasSrcQP {
		f.SrcQP, f.HasSrcQP = h.DETH.SrcQP, true
	}
	f.addRate(at.Time, uint64(p.IPTotalLen))

	if op.IsCNP() {
		f.CNPs++
		return
	}
	f.PayloadBytes += uint64(p.PayloadLen)
	if f.Transport == bth.TransportCNP {
		f.Transport = op.Transport()
	}
	if !f.HasPSN {
		f.FirstPSN, f.HasPSN = h.PSN, true
	}
	f.LastPSN = h.PSN
	f.learnMTU(p)

	switch {
	case op.IsReadRequest() && f.rereads(h):
		f.Requests.retransmitted(h.PSN)
		f.noteReissuedRead(h.PSN, at)
	case op.IsRequest():
		lo, hi := readSpan(h, f.pmtu)
		res := f.Requests.observe(h.PSN, lo, hi, false)
		if op.EndsRequest() && res != seqRetransmit {
			f.Messages++
		}
		f.noteRequest(res, h.PSN, at)
		if op.IsReadRequest() {
			f.noteRead(h)
		}
	case op.IsReadResponse():
		f.ReadResponses.observe(h.PSN, 0, 0, op.IsFirst() || op.IsOnly())
		f.resp.note(h.PSN)
	case op.IsResponse():
		f.resp.note(h.PSN)
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
			f.rnrTimers.add(h.AETH.RNRTimer())
			f.noteNAK(h, at)
		}
	}
}

func (f *Flow) addRate(ts time.Time, bytes uint64) {
	bin := ts.UnixMilli()
	if bin != f.binIndex {
		if f.binBytes > f.peakBytes {
			f.peakBytes = f.binBytes
		}
		f.binIndex, f.binBytes = bin, 0
	}
	f.binBytes += bytes
}

// Finish pairs flows; call it once after the last Add.
func (t *Table) Finish() {
	if t.finished {
		return
	}
	t.finished = true
	t.pairByCM()
	t.pairByPSN()
	for _, f := range t.flows {
		if f.Partner != nil && !f.HasSrcQP {
			f.SrcQP, f.HasSrcQP = f.Partner.Key.DestQP, true
		}
	}
	t.finishLoss()
}

// Flows returns every flow in ID order (first appearance in the capture).
func (t *Table) Flows() []*Flow { return t.flows }

// Len is the number of flows.
func (t *Table) Len() int { return len(t.flows) }
