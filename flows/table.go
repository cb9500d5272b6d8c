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

	cm       map[cmKey]*cmExchange // CM exchanges by requester side and comm ID
	cmByFlow map[Key]*cmSide       // CM info waiting for (or given to) the flow with this key
	finished bool
}

// NewTable returns an empty flow table.
func NewTable(cfg Config) *Table {
	return &Table{
		cfg:      cfg.withDefaults(),
		active:   map[Key]*Flow{},
		cm:       map[cmKey]*cmExchange{},
		cmByFlow: map[Key]*cmSide{},
	}
}

// Add accounts one decoded packet. Only RoCE packets whose BTH was captured
// are flows' business; other packets are ignored.
func (t *Table) Add(p *packet.Packet, at FrameRef) {
	if p.Kind != packet.KindRoCE || !p.HasBTH {
		return
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
	return f
}

// startsEpoch says whether p begins a new connection on f's key: a CM
// exchange for the key arrived after f began, or p's PSN is far from
// everything f carried and f had gone idle.
func (t *Table) startsEpoch(f *Flow, p *packet.Packet, at FrameRef) bool {
	if side := t.cmByFlow[f.Key]; side != nil && side.flow == nil {
		return true
	}
	op := p.BTH.Opcode
	if op.IsCNP() || at.Time.Sub(f.Last.Time) < t.cfg.EpochIdle {
		return false
	}
	var ref *sequencer
	switch {
	case op.IsRequest():
		ref = &f.Requests.seq
	case op.IsReadResponse():
		ref = &f.ReadResponses.seq
	case op.IsResponse():
		if !f.resp.started {
			return false
		}
		return far(p.BTH.PSN, f.resp.high, t.cfg.EpochJump)
	}
	if ref == nil || !ref.started {
		return false
	}
	return far(p.BTH.PSN, ref.high, t.cfg.EpochJump)
}

func far(psn, ref uint32, jump uint32) bool {
	d := psnDiff(psn, ref)
	if d < 0 {
		d = -d
	}
	return uint32(d) > jump
}

// add accounts p to f.
func (f *Flow) add(p *packet.Packet, at FrameRef) {
	h := &p.BTH
	f.Packets++
	f.WireBytes += uint64(p.IPTotalLen)
	f.PayloadBytes += uint64(p.PayloadLen)
	f.Last = at
	f.opcodes.add(h.Opcode)
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

	op := h.Opcode
	if op.EndsRequest() || (op.IsReadResponse() && (op.IsLast() || op.IsOnly())) {
		f.Messages++
	}
	switch {
	case op.IsCNP():
		f.CNPs++
	case op.IsRequest():
		lo, hi := readSpan(h)
		f.Requests.observe(h.PSN, lo, hi)
	case op.IsReadResponse():
		f.ReadResponses.observe(h.PSN, 0, 0)
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
		case bth.AckKindRNRNAK:
			f.RNRNAKs++
			f.rnrTimers.add(h.AETH.RNRTimer())
		}
	}
}

// readSpan is the range of extra PSNs an RDMA READ request consumes: one
// per response packet, which depends on the path MTU (256 to 4096 bytes).
func readSpan(h *bth.BTH) (lo, hi int32) {
	if !h.Opcode.IsReadRequest() || h.Ext&bth.HasRETH == 0 {
		return 0, 0
	}
	n := int64(h.RETH.DMALen)
	most := (n + 255) / 256
	least := (n + 4095) / 4096
	if most < 1 {
		most = 1
	}
	if least < 1 {
		least = 1
	}
	if most > psnHalf/2 {
		most = psnHalf / 2
	}
	return int32(least - 1), int32(most - 1)
}

func (s *PSNStats) observe(psn uint32, extraLo, extraHi int32) {
	res := s.seq.observe(psn, extraLo, extraHi)
	s.Packets++
	switch res {
	case seqGap:
		s.PSNGaps++
	case seqOutOfOrder:
		s.OutOfOrder++
	case seqRetransmit:
		s.Retransmitted++
	}
	s.FirstPSN, s.LastPSN, s.HighPSN = s.seq.first, s.seq.last, s.seq.high
	s.MissingPSNs = s.seq.missing
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
}

// Flows returns every flow in ID order (first appearance in the capture).
func (t *Table) Flows() []*Flow { return t.flows }

// Len is the number of flows.
func (t *Table) Len() int { return len(t.flows) }
