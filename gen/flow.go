package gen

import (
	"github.com/rocedump/rocedump/decode/bth"
)

const psnMask = 0xffffff

// npkts is the number of packets (PSNs) a message of n bytes takes at mtu.
func npkts(n, mtu int) int {
	if n <= 0 {
		return 1
	}
	return (n + mtu - 1) / mtu
}

// segLen is the payload of packet i of a message of n bytes at mtu.
func segLen(n, mtu, i int) int {
	k := npkts(n, mtu)
	if n <= 0 {
		return 0
	}
	if i < k-1 {
		return mtu
	}
	return n - (k-1)*mtu
}

// psnAdd adds d to a 24-bit PSN.
func psnAdd(p uint32, d int) uint32 { return uint32(int64(p)+int64(d)) & psnMask }

// Transport opcode bits (IBTA vol 1 Table 38).
func transportBase(t string) uint8 {
	switch t {
	case "UC":
		return 0x20
	case "RD":
		return 0x40
	case "UD":
		return 0x60
	case "XRC":
		return 0xa0
	}
	return 0x00
}

// unit is one data packet (PSN) of the message being generated.
type unit struct {
	lost, seen, mirror bool // fabric loss on first transmission; mirror saw it; mirror missed it
	ce, cnp, fecn      bool
	ceResends          bool // ce marks the resends, not the first transmission
	cnpOp              uint8
	sent, captured     bool // sent before; an earlier copy is in the file
}

// msgEvents are the events of one message, resolved.
type msgEvents struct {
	dscp int // -1: flow default
	becn bool
	rnr  int // -1: none, else the RNR timer code
	nak  int // -1: none, else the NAK code
}

// flowGen generates one flow, a message per batch.
type flowGen struct {
	g        *generator
	idx      int32
	f        *Flow
	base     uint8
	reliable bool
	pkey     uint16
	dscp     uint8
	ecn      uint8
	rtt      int64
	timeout  int64
	ipID     [2]uint16 // the last IPv4 ID of each direction (push)

	clock     int64 // when the requester may start its next message
	npsn      uint32
	opIdx     int
	opLeft    int
	msgNo     int
	done      bool
	va        uint64
	rkey      uint32
	atomicVal uint64

	msn      uint32 // responder's message sequence number
	ackCount int

	events map[int][]*Event
	units  []unit
	req    *FlowTruth
	resp   *FlowTruth
}

func newFlowGen(g *generator, i int) *flowGen {
	f := &g.s.Flows[i]
	ecn, _ := ecnValue(f.ECN)
	fg := &flowGen{
		g: g, idx: int32(i), f: f,
		base:     transportBase(f.Transport),
		reliable: f.Transport == "RC" || f.Transport == "XRC" || f.Transport == "RD",
		pkey:     *f.PKey,
		dscp:     uint8(*f.DSCP),
		ecn:      ecn,
		rtt:      usToNS(f.RTTUS),
		timeout:  usToNS(f.TimeoutUS),
		clock:    usToNS(f.StartUS),
		npsn:     f.StartPSN,
		va:       0x7f0000000000 + uint64(i)<<32,
		rkey:     0x1000 + uint32(i),
		events:   map[int][]*Event{},
		req:      newFlowTruth(f, "requester"),
		resp:     newFlowTruth(f, "responder"),
	}
	for k := range f.Events {
		e := &f.Events[k]
		fg.events[e.AtMsg] = append(fg.events[e.AtMsg], e)
	}
	if len(f.Ops) > 0 {
		fg.opLeft = f.Ops[0].Count
	}
	return fg
}

// gap is the serialisation time of a packet with n payload bytes.
func (fg *flowGen) gap(n int) int64 {
	ns := int64(float64((n+90)*8) / fg.g.s.LinkGbps)
	if ns < 1 {
		ns = 1
	}
	return ns
}

func (fg *flowGen) nextBatch(s *source) {
	for fg.opIdx < len(fg.f.Ops) && fg.opLeft == 0 {
		fg.opIdx++
		if fg.opIdx < len(fg.f.Ops) {
			fg.opLeft = fg.f.Ops[fg.opIdx].Count
		}
	}
	if fg.done || fg.opIdx >= len(fg.f.Ops) {
		s.done = true
		return
	}
	op := &fg.f.Ops[fg.opIdx]
	fg.opLeft--
	fg.msgNo++
	fg.clock = s.nextStart
	switch {
	case op.Op == "read":
		fg.readMessage(s, op)
	case fg.reliable:
		fg.reliableMessage(s, op)
	default:
		fg.unreliableMessage(s, op)
	}
	if op.Op == "write" || op.Op == "read" {
		fg.va += uint64(op.Bytes)
	}
	s.nextStart = fg.clock + usToNS(op.GapUS)
	if fg.done {
		s.done = true
	}
}

// prepare resolves the current message's events onto its n data units.
func (fg *flowGen) prepare(n int) msgEvents {
	if cap(fg.units) < n {
		fg.units = make([]unit, n)
	}
	fg.units = fg.units[:n]
	clear(fg.units)
	me := msgEvents{dscp: -1, rnr: -1, nak: -1}
	span := func(off, cnt int, fn func(u *unit)) {
		for i := off; i < off+cnt && i < n; i++ {
			fn(&fg.units[i])
		}
	}
	for _, e := range fg.events[fg.msgNo] {
		switch {
		case e.FabricDrop != nil:
			d := e.FabricDrop
			seen := d.Seen == nil || *d.Seen
			span(derefOr(d.PSNOffset, 0), d.Packets, func(u *unit) { u.lost, u.seen = true, seen })
		case e.TimeoutDrop != nil:
			d := e.TimeoutDrop
			seen := d.Seen == nil || *d.Seen
			span(derefOr(d.PSNOffset, n-1), n, func(u *unit) { u.lost, u.seen = true, seen })
		case e.MirrorDrop != nil:
			span(derefOr(e.MirrorDrop.PSNOffset, 0), e.MirrorDrop.Packets, func(u *unit) { u.mirror = true })
		case e.CEMark != nil:
			c := e.CEMark
			span(c.PSNOffset, c.Packets, func(u *unit) { u.ce, u.cnp, u.cnpOp, u.ceResends = true, c.CNP, uint8(*c.CNPOpcode), c.Resends })
		case e.FECN != nil:
			span(e.FECN.PSNOffset, e.FECN.Packets, func(u *unit) { u.fecn = true })
			me.becn = e.FECN.BECN
		case e.DSCP != nil:
			me.dscp = *e.DSCP
		case e.RNRNAK != nil:
			me.rnr = e.RNRNAK.Timer
		case e.NAK != nil:
			c, _ := parseNAK(*e.NAK)
			me.nak = int(c)
		}
	}
	return me
}

func derefOr(p *int, d int) int {
	if p == nil {
		return d
	}
	return *p
}

// push queues p, and its mirror copy when the flow has mirror_dup.
func (fg *flowGen) push(s *source, p pkt) {
	if fg.f.MirrorDup != nil {
		// A new IPv4 ID on every packet, as Linux soft-RoCE sets it,
		// which the copy repeats (see MirrorDup).
		d := 0
		if p.rev {
			d = 1
		}
		fg.ipID[d]++
		p.ipID = fg.ipID[d]
	}
	s.push(p)
	m := fg.f.MirrorDup
	if m == nil {
		return
	}
	p.dup = true
	p.t += usToNS(m.DelayUS)
	if m.TTL != nil {
		p.ttl = uint8(*m.TTL)
	}
	if m.DSCP != nil {
		p.dscp = uint8(*m.DSCP)
	}
	if e, ok := ecnValue(m.ECN); ok {
		p.dupCE = e == 3 && p.ecn&3 != 3 && p.ecn != 0 // a switch marks only ECN-capable packets (RFC 3168 §5)
		p.ecn = e
	}
	s.push(p)
}

// base packet of this flow in one direction.
func (fg *flowGen) newPkt(t int64, rev bool, opcode uint8, psn uint32) pkt {
	dest := fg.f.DestQPN
	if rev {
		dest = fg.f.SrcQPN
	}
	p := pkt{t: t, kind: kindFlow, owner: fg.idx, rev: rev, dscp: fg.dscp, ecn: fg.ecn}
	p.b = bth.BTH{Opcode: bth.Opcode(opcode), PKey: fg.pkey, DestQP: dest, PSN: psn & psnMask}
	switch fg.f.Transport {
	case "RD":
		p.b.RDETH.EECnxt = fg.f.EECnxt
		if !rev {
			p.b.DETH = bth.DETH{QKey: fg.f.QKey, SrcQP: fg.f.SrcQPN}
		}
	case "UD":
		p.b.DETH = bth.DETH{QKey: fg.f.QKey, SrcQP: fg.f.SrcQPN}
	case "XRC":
		if !rev {
			p.b.XRCETH.XRCSRQ = fg.f.XRCSRQ
		}
	}
	return p
}

// applyUnit sets the per-packet marks of a first transmission.
func (fg *flowGen) mark(p *pkt, u *unit, first bool, me *msgEvents) {
	if me.dscp >= 0 {
		p.dscp = uint8(me.dscp)
	}
	if u.ce && first != u.ceResends {
		p.ecn = 3
	}
	if first && u.fecn {
		p.b.FECN = true
	}
}

// dataOpcode is the opcode of packet i of n of a WRITE or SEND.
func dataOpcode(op *Op, i, n int) uint8 {
	first, last := i == 0, i == n-1
	if op.Op == "write" {
		switch {
		case first && last && op.Imm:
			return bth.OpWriteOnlyImm
		case first && last:
			return bth.OpWriteOnly
		case first:
			return bth.OpWriteFirst
		case last && op.Imm:
			return bth.OpWriteLastImm
		case last:
			return bth.OpWriteLast
		}
		return bth.OpWriteMiddle
	}
	switch {
	case first && last && op.Imm:
		return bth.OpSendOnlyImm
	case first && last && op.Inv:
		return bth.OpSendOnlyInv
	case first && last:
		return bth.OpSendOnly
	case first:
		return bth.OpSendFirst
	case last && op.Imm:
		return bth.OpSendLastImm
	case last && op.Inv:
		return bth.OpSendLastInv
	case last:
		return bth.OpSendLast
	}
	return bth.OpSendMiddle
}

// requestPkt is data unit i of a WRITE, SEND or atomic request.
func (fg *flowGen) requestPkt(t int64, op *Op, psn0 uint32, i, n int) pkt {
	var code uint8
	switch op.Op {
	case "cmp_swap":
		code = bth.OpCompareSwap
	case "fetch_add":
		code = bth.OpFetchAdd
	default:
		code = dataOpcode(op, i, n)
	}
	p := fg.newPkt(t, false, fg.base|code, psnAdd(psn0, i))
	switch code {
	case bth.OpWriteFirst, bth.OpWriteOnly, bth.OpWriteOnlyImm:
		p.b.RETH = bth.RETH{VA: fg.va, RKey: fg.rkey, DMALen: uint32(op.Bytes)}
	case bth.OpCompareSwap:
		p.b.AtomicETH = bth.AtomicETH{VA: fg.va &^ 7, RKey: fg.rkey, SwapData: fg.atomicVal + 100, CompareData: fg.atomicVal}
	case bth.OpFetchAdd:
		p.b.AtomicETH = bth.AtomicETH{VA: fg.va &^ 7, RKey: fg.rkey, SwapData: 1}
	}
	switch code {
	case bth.OpWriteLastImm, bth.OpWriteOnlyImm, bth.OpSendLastImm, bth.OpSendOnlyImm:
		p.b.ImmDt.Data = 0x1000 + uint32(fg.msgNo)
	case bth.OpSendLastInv, bth.OpSendOnlyInv:
		p.b.IETH.RKey = fg.rkey
	}
	if fg.f.Transport == "UD" {
		p.b.SolicitedEvent = false
	}
	if i == n-1 && fg.reliable {
		p.b.AckReq = true
	}
	if code != bth.OpCompareSwap && code != bth.OpFetchAdd {
		p.plen = int32(segLen(op.Bytes, fg.f.MTU, i))
	}
	return p
}

// ackPkt is an ACK, NAK or RNR NAK from the responder.
func (fg *flowGen) ackPkt(t int64, psn uint32, syndrome uint8) pkt {
	p := fg.newPkt(t, true, fg.base|bth.OpAcknowledge, psn)
	p.b.AETH = bth.AETH{Syndrome: syndrome, MSN: fg.msn & psnMask}
	return p
}

// cnpPkt is a CNP to the QP that sent a CE-marked packet (Annex A17 §A17.9.2).
func (fg *flowGen) cnpPkt(t int64, rev bool, opcode uint8) pkt {
	p := fg.newPkt(t, rev, opcode, 0)
	p.b = bth.BTH{Opcode: bth.Opcode(opcode), PKey: fg.pkey, DestQP: p.b.DestQP, BECN: true}
	p.cnp = true
	p.dscp = uint8(*fg.g.s.CNPDSCP)
	p.ecn = 0
	p.plen = bth.CNPPayloadLen
	return p
}

// AETH syndromes (IBTA vol 1 §9.3.5).
const (
	synACK = 0x1f // ACK, credit count 31: invalid (end-to-end credits not used)
)

func synNAK(code uint8) uint8 { return 0x60 | code&0x1f }
func synRNR(timer int) uint8  { return 0x20 | uint8(timer)&0x1f }

// rnrNS is the RNR NAK timer in nanoseconds (IBTA vol 1 Table 45).
func rnrNS(code int) int64 {
	us := [32]float64{655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920,
		2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520}
	return usToNS(us[code&31])
}

// reliableMessage plays one WRITE, SEND or atomic message of an RC, XRC or
// RD flow: the requester sends every packet, the responder ACKs, NAKs a PSN
// gap, and the requester goes back N on a NAK or after a timeout.
func (fg *flowGen) reliableMessage(s *source, op *Op) {
	atomic := op.Op == "cmp_swap" || op.Op == "fetch_add"
	n := npkts(op.Bytes, fg.f.MTU)
	if atomic {
		n = 1
	}
	mev := fg.prepare(n)
	me := &mev
	psn0 := fg.npsn
	fg.npsn = psnAdd(psn0, n)
	t := fg.clock
	expected, lastAcked, from := 0, -1, 0
	for {
		nakT, rnrT := int64(-1), int64(-1)
		fatal, gapped := false, false
		tt := t
		var lastSend int64
		for i := from; i < n; i++ {
			u := &fg.units[i]
			first := !u.sent
			u.sent = true
			lost := first && u.lost
			captured := !(lost && !u.seen) && !(first && u.mirror)
			p := fg.requestPkt(tt, op, psn0, i, n)
			fg.mark(&p, u, first, me)
			if captured {
				p.retx = u.captured
				fg.push(s, p)
				u.captured = true
			}
			if lost {
				fg.req.FabricDrops++
			}
			if first && u.mirror {
				fg.req.MirrorDrops++
			}
			lastSend = tt
			tt += fg.gap(int(p.plen))
			if lost || gapped {
				continue
			}
			at := lastSend + fg.rtt
			switch {
			case i > expected:
				gapped = true
				nakT = at
				fg.push(s, fg.ackPkt(at, psnAdd(psn0, expected), synNAK(0)))
				continue
			case i < expected:
				if i == n-1 {
					fg.push(s, fg.ackPkt(at, psnAdd(psn0, i), synACK))
				}
				continue
			case first && me.rnr >= 0 && i == 0:
				gapped = true
				rnrT = at
				fg.push(s, fg.ackPkt(at, psnAdd(psn0, i), synRNR(me.rnr)))
				continue
			case first && me.nak >= 0 && i == 0:
				gapped, fatal = true, true
				fg.push(s, fg.ackPkt(at, psnAdd(psn0, i), synNAK(uint8(me.nak))))
				continue
			}
			expected++
			fg.ackCount++
			if first && u.ce && u.cnp {
				fg.push(s, fg.cnpPkt(at, true, u.cnpOp))
			}
			if i == n-1 {
				fg.msn++
			}
			if atomic {
				a := fg.newPkt(at, true, fg.base|bth.OpAtomicAcknowledge, psnAdd(psn0, i))
				a.b.AETH = bth.AETH{Syndrome: synACK, MSN: fg.msn & psnMask}
				a.b.AtomicAckETH.OrigRemoteData = fg.atomicVal
				a.b.BECN = me.becn
				fg.push(s, a)
				lastAcked = i
			} else if i == n-1 || (fg.f.AckEvery > 0 && fg.ackCount%fg.f.AckEvery == 0) {
				a := fg.ackPkt(at, psnAdd(psn0, i), synACK)
				a.b.BECN = me.becn
				fg.push(s, a)
				lastAcked = i
			}
		}
		switch {
		case fatal:
			fg.done = true
			fg.clock = lastSend
			return
		case expected == n:
			fg.req.MessagesCompleted++
			fg.clock = lastSend
			if atomic {
				if op.Op == "fetch_add" {
					fg.atomicVal++
				} else {
					fg.atomicVal += 100
				}
			}
			return
		}
		resume := tt
		switch {
		case nakT >= 0:
			resume = max(resume, nakT)
			from = expected
		case rnrT >= 0:
			resume = max(resume, rnrT+rnrNS(me.rnr))
			from = expected
		default:
			resume = max(resume, lastSend+fg.timeout)
			from = lastAcked + 1
			fg.req.Timeouts++
		}
		t = resume
	}
}

// unreliableMessage plays a UC or UD message: no ACKs, a lost packet loses
// the message.
func (fg *flowGen) unreliableMessage(s *source, op *Op) {
	n := npkts(op.Bytes, fg.f.MTU)
	mev := fg.prepare(n)
	me := &mev
	psn0 := fg.npsn
	fg.npsn = psnAdd(psn0, n)
	tt := fg.clock
	var lastSend int64
	delivered := true
	for i := 0; i < n; i++ {
		u := &fg.units[i]
		p := fg.requestPkt(tt, op, psn0, i, n)
		fg.mark(&p, u, true, me)
		if !(u.lost && !u.seen) && !u.mirror {
			fg.push(s, p)
		}
		if u.lost {
			fg.req.FabricDrops++
			delivered = false
		}
		if u.mirror {
			fg.req.MirrorDrops++
		}
		lastSend = tt
		tt += fg.gap(int(p.plen))
		if !u.lost && u.ce && u.cnp && delivered {
			fg.push(s, fg.cnpPkt(lastSend+fg.rtt, true, u.cnpOp))
		}
	}
	if delivered {
		fg.req.MessagesCompleted++
	}
	fg.clock = lastSend
}

// readMessage plays an RDMA READ: a request, then the responder's response
// packets; on a gap or a lost tail the requester re-issues the READ for the
// rest.
func (fg *flowGen) readMessage(s *source, op *Op) {
	n := npkts(op.Bytes, fg.f.MTU)
	mev := fg.prepare(n)
	me := &mev
	psn0 := fg.npsn
	fg.npsn = psnAdd(psn0, n)
	t := fg.clock
	expected, pass := 0, 0
	fg.msn++
	for {
		from := expected
		rq := fg.newPkt(t, false, fg.base|bth.OpReadRequest, psnAdd(psn0, from))
		rq.b.RETH = bth.RETH{VA: fg.va + uint64(from*fg.f.MTU), RKey: fg.rkey, DMALen: uint32(op.Bytes - from*fg.f.MTU)}
		if op.Bytes == 0 {
			rq.b.RETH.DMALen = 0
		}
		rq.b.AckReq = true
		if me.dscp >= 0 {
			rq.dscp = uint8(me.dscp)
		}
		rq.retx = pass > 0
		fg.push(s, rq)
		pass++
		if pass == 1 && (me.nak >= 0 || me.rnr >= 0) {
			syn := synNAK(uint8(max(me.nak, 0)))
			if me.nak < 0 {
				syn = synRNR(me.rnr)
			}
			fg.push(s, fg.ackPkt(t+fg.rtt, psn0, syn))
			if me.nak >= 0 {
				fg.done = true
				fg.clock = t
				return
			}
			t += fg.rtt + rnrNS(me.rnr)
			continue
		}
		tt := t + fg.rtt
		var last int64
		gapT := int64(-1)
		for i := from; i < n; i++ {
			u := &fg.units[i]
			first := !u.sent
			u.sent = true
			lost := first && u.lost
			captured := !(lost && !u.seen) && !(first && u.mirror)
			var code uint8
			switch {
			case i == from && i == n-1:
				code = bth.OpReadResponseOnly
			case i == from:
				code = bth.OpReadResponseFirst
			case i == n-1:
				code = bth.OpReadResponseLast
			default:
				code = bth.OpReadResponseMiddle
			}
			p := fg.newPkt(tt, true, fg.base|code, psnAdd(psn0, i))
			if code != bth.OpReadResponseMiddle {
				p.b.AETH = bth.AETH{Syndrome: synACK, MSN: fg.msn & psnMask}
			}
			p.plen = int32(segLen(op.Bytes, fg.f.MTU, i))
			fg.mark(&p, u, first, me)
			p.b.BECN = p.b.BECN || me.becn
			if captured {
				p.retx = u.captured
				fg.push(s, p)
				u.captured = true
			}
			if lost {
				fg.resp.FabricDrops++
			}
			if first && u.mirror {
				fg.resp.MirrorDrops++
			}
			last = tt
			tt += fg.gap(int(p.plen))
			if lost || gapT >= 0 {
				continue
			}
			if i > expected {
				gapT = last
				continue
			}
			expected++
			if first && u.ce && u.cnp {
				fg.push(s, fg.cnpPkt(last+fg.rtt/4, false, u.cnpOp))
			}
		}
		if expected == n {
			fg.req.MessagesCompleted++
			fg.clock = last
			return
		}
		if gapT >= 0 {
			t = max(tt, gapT+fg.gap(0))
		} else {
			t = max(tt, t+fg.timeout)
			fg.req.Timeouts++
		}
	}
}
