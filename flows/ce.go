package flows

import "github.com/rocedump/rocedump/decode/packet"

// CE marks on a mirror's copies (see the package doc, "Mirror copies"):
// the copy of a packet taken after a switch's queue may carry the CE the
// switch marked it with, which the first copy, taken before, lacks. A
// packet counts as CE-marked once if any captured copy of it carries CE.
// A copy carries no sign of which frame it repeats (a PSN resent before
// the first transmission's copy came has two), so each flow keeps, per
// PSN space, how many packets at each of its last PSNs a CE marked
// (ceRing): their first copy's, or a copy's the ring took. A copy with
// CE marks a packet when fewer than the packets the flow carried at its
// PSN (one, and one more for each of the space's last runs of resends
// that holds it: flowCold.resent, resentBefore) are marked; else it adds
// nothing. Only packets with CE touch the ring.

// ceRing counts, for the 64 PSNs up to hi, the packets a CE marked at
// each (0 to 3, two bits a PSN: the offset hi-psn in bits 2k and 2k+1 of
// the 128 bits w). hi is the highest PSN a CE marked; past it, none is.
type ceRing struct {
	w  [2]uint64
	hi uint32 // with marksSet once a CE marked a packet
}

// ceWindow is how far behind hi the ring knows a PSN.
const ceWindow = 64

// ceDiff is psnDiff for PSNs (mask psnMask) or posDiff for response
// positions (posMask).
func ceDiff(a, b, mask uint32) int32 {
	if mask == posMask {
		return posDiff(a, b)
	}
	return psnDiff(a, b)
}

// offset returns where psn's count lies (psn a PSN, or with mask posMask
// a response position); past says psn is past hi (or no CE marked a
// packet yet), ok that it is at most ceWindow-1 behind it.
func (r *ceRing) offset(psn, mask uint32) (word int, shift uint, past, ok bool) {
	if r.hi&marksSet == 0 {
		return 0, 0, true, false
	}
	d := -ceDiff(psn, r.hi&mask, mask)
	if d < 0 {
		return 0, 0, true, false
	}
	if d >= ceWindow {
		return 0, 0, false, false
	}
	return int(d >> 5), uint(d&31) * 2, false, true
}

// mark counts a packet at psn (with mask: see offset) that a CE marked,
// at most carried there:
// it says whether it could (a PSN more than ceWindow behind hi always
// can: the ring no longer knows it).
func (r *ceRing) mark(psn, mask uint32, carried uint64) bool {
	i, sh, past, ok := r.offset(psn, mask)
	switch {
	case past:
		s := uint(2 * ceWindow)
		if r.hi&marksSet != 0 {
			s = uint(2 * ceDiff(psn, r.hi&mask, mask))
		}
		// w << s over 128 bits (Go shifts of 64 or more give 0): the
		// PSNs it passes have no mark, psn has one.
		w0, w1 := r.w[0], r.w[1]
		r.w[1] = w1<<s | w0>>(64-s) | w0<<(s-64)
		r.w[0] = w0<<s | 1
		r.hi = psn | marksSet
		return true
	case !ok:
		return true
	}
	if n := r.w[i] >> sh & 3; n >= carried || n == 3 {
		return false
	}
	r.w[i] += 1 << sh
	return true
}

// ceRings are a flow's rings: its requests', by PSN, then its
// responses' (ACKs, NAKs, READ and atomic responses), by position
// (respPos: an ACK and a NAK at one PSN are two responses).
type ceRings [2]ceRing

// ceKey is the ring of p, of opcode class c, and its key and mask there.
func ceKey(p *packet.Packet, c opBits) (ring int, key, mask uint32) {
	if c&opRequest != 0 {
		return 0, p.BTH.PSN, psnMask
	}
	return 1, respPos(&p.BTH), posMask
}

// noteCE notes, after f.add accounted p, of opcode class c, a first copy
// with CE in f's ring (ceFirst), or a CNP with CE in f's CNPsCE, and
// returns reissue: the value of f.add, which Table.addFlow passes through
// it so as to keep its lines. A packet without CE costs a compare.
func (t *Table) noteCE(f *Flow, p *packet.Packet, c opBits, reissue bool) bool {
	if p.ECN&3 == 3 {
		t.noteMark(f, p, c)
	}
	return reissue
}

// noteMark is noteCE for a packet with CE.
func (t *Table) noteMark(f *Flow, p *packet.Packet, c opBits) {
	switch {
	case c&opCNP != 0:
		f.coldState().cnpsCE++
	case c&(opRequest|opResponse) != 0:
		t.ceFirst(f, p, c)
	}
}

// ceFirst notes p, a first copy with CE of opcode class c, in f's ring.
// Another UD sender's PSNs are its own (otherSender): not in the ring.
func (t *Table) ceFirst(f *Flow, p *packet.Packet, c opBits) {
	if !f.otherSender(&p.BTH) {
		i, key, mask := ceKey(p, c)
		t.ceRingsOf(f)[i].mark(key, mask, 3)
	}
}

// ceRingsOf returns f's rings, which the table keeps by flow index (a
// flow that never carried CE takes none: the slice reaches the last flow
// that did, 48 bytes a flow).
func (t *Table) ceRingsOf(f *Flow) *ceRings {
	i := f.ID - 1
	if i >= len(t.ce) {
		t.ce = append(t.ce, make([]ceRings, i+1-len(t.ce))...)
	}
	return &t.ce[i]
}

// copyCE accounts the CE of p, a mirror's copy of a packet of f, of
// opcode class c, that carries CE, and says whether it made the packet
// CE-marked: fewer of the packets f carried at its PSN are marked than
// it carried (see ceRing). Then the packet moves, in f.ECN, from its
// first copy's codepoint to CE, and counts in ECNCE. The first copy's
// codepoint is not kept: it is taken for ECT(0) while the flow has such
// packets, else ECT(1). A switch marks only ECN-capable packets (RFC 3168
// §5: it drops a not-ECT one instead), so a flow with neither left gains
// nothing: its copy's CE is a rewrite of the field, not a mark.
func (t *Table) copyCE(f *Flow, p *packet.Packet, c opBits) bool {
	i, key, mask := ceKey(p, c)
	return t.ceRingsOf(f)[i].mark(key, mask, f.carried(p.BTH.PSN, c)) && f.moveToCE()
}

// carried is how many packets at psn, of opcode class c, f carried as
// far as it knows: one, and one more for each of the last runs of
// resends of its PSN space (flowCold.resent, resentBefore) that holds
// psn (a re-issued READ is a run of its own: noteReissuedRead). ACKs and
// atomic ACKs: one.
func (f *Flow) carried(psn uint32, c opBits) uint64 {
	n := uint64(1)
	space := spaceRequests
	switch {
	case c&opReadResponse != 0:
		space = spaceReadResponses
	case c&opRequest == 0:
		return n
	}
	if cs := f.cold; cs != nil {
		if cs.resent[space].holds(psn) {
			n++
		}
		for i := range cs.resentBefore[space] {
			if cs.resentBefore[space][i].holds(psn) {
				n++
			}
		}
	}
	return n
}

// moveToCE moves a packet of f counted in ECT(0), or else ECT(1), to CE
// (see copyCE); false if f has none.
func (f *Flow) moveToCE() bool {
	for _, e := range [...]int{2, 1} {
		if f.ECN[e] != 0 {
			f.ECN[e]--
			f.ECN[3]++
			f.ECNCE++
			return true
		}
	}
	return false
}

// CopyMarkedCE says whether the last packet AddFlowDelta or AddFlow
// reported as a mirror's copy made its packet CE-marked (see copyCE): its
// flow counted the mark, and a caller that counts CE marks itself should
// count it too, at the copy's frame, and nothing else of the copy.
func (t *Table) CopyMarkedCE() bool { return t.copyMarked }
