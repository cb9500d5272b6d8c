package flows

import "github.com/rocedump/rocedump/decode/packet"

// CE marks on a mirror's copies (see the package doc, "Mirror copies"):
// the copy of a packet taken after a switch's queue may carry the CE the
// switch marked it with, which the first copy, taken before, lacks. A
// packet counts as CE-marked once if any captured copy of it carries CE.
// A copy carries no sign of which frame it repeats (a PSN resent before
// the first transmission's copy came has two), but a mirror delivers a
// flow's copies in the order of their originals: the k-th copy captured
// at a PSN repeats the k-th transmission there. So each flow that carried
// CE or a mirror's copy keeps, per PSN space, for each of its last PSNs,
// which of the transmissions there a CE marked (the first copy of
// transmission carried-1, when it carries CE: flowCold.resent,
// resentBefore), and how many copies came there (ceRing). A copy with CE
// marks its packet when its transmission is not marked yet. Only packets
// with CE, and copies, touch the ring: a ring that began at the flow's
// first CE would not know the copies that came before (their
// transmissions unmarked: a CE, first copy or copy, begins the ring), and
// a copy at their PSN would then name an earlier transmission than the
// one it repeats.

// ceRing keeps, for the ceWindow PSNs (or response positions) up to hi, a
// byte each, at the PSN modulo ceWindow: bit k (k 0 to 3) says a CE marked
// transmission k of the PSN (the fifth and later share bit 3), and the
// bits ceCopyShift on count the copies captured there (0 to 3: at most).
// hi is the highest PSN a CE marked or a copy came at since; past it, the
// ring knows nothing (no copy came there: copies move hi).
type ceRing struct {
	b  [ceWindow]uint8
	hi uint32 // with marksSet once a CE marked a packet
}

const (
	// ceWindow is how many PSNs up to hi the ring knows.
	ceWindow = 64
	// ceCopyShift is where a PSN's count of copies begins in its byte.
	ceCopyShift = 4
	// ceTransmissions is how many transmissions of a PSN the ring tells
	// apart.
	ceTransmissions = 4
)

// ceDiff is psnDiff for PSNs (mask psnMask) or posDiff for response
// positions (posMask).
func ceDiff(a, b, mask uint32) int32 {
	if mask == posMask {
		return posDiff(a, b)
	}
	return psnDiff(a, b)
}

// at returns psn's byte (psn a PSN, or with mask posMask a response
// position), moving hi to psn when psn is past it, and clearing the bytes
// of the PSNs it passes; start says it may begin an empty ring. nil if the
// ring is empty and start is false, or if psn is ceWindow or more behind
// hi: the ring no longer knows it.
func (r *ceRing) at(psn, mask uint32, start bool) *uint8 {
	if r.hi&marksSet == 0 {
		if !start {
			return nil
		}
		r.b = [ceWindow]uint8{}
		r.hi = psn | marksSet
		return &r.b[psn%ceWindow]
	}
	hi := r.hi & mask
	switch d := ceDiff(psn, hi, mask); {
	case d >= ceWindow:
		r.b = [ceWindow]uint8{}
		r.hi = psn | marksSet
	case d > 0:
		for k := uint32(1); k <= uint32(d); k++ {
			r.b[(hi+k)&mask%ceWindow] = 0
		}
		r.hi = psn | marksSet
	case d <= -ceWindow:
		return nil
	}
	return &r.b[psn%ceWindow]
}

// first notes a first copy with CE at psn (with mask: see at) of
// transmission carried-1 there (carried at least 1).
func (r *ceRing) first(psn, mask uint32, carried uint64) {
	if b := r.at(psn, mask, true); b != nil {
		*b |= 1 << min(carried-1, ceTransmissions-1)
	}
}

// copied counts a copy at psn (with mask: see at), with CE if ce, and
// says whether it marks its packet: it has CE and the transmission it
// repeats (the copies at psn before it: the mirror's order), one of the
// carried the flow knows there, is not marked yet; or it has CE at a PSN
// the ring no longer knows. Any copy may begin a ring.
func (r *ceRing) copied(psn, mask uint32, ce bool, carried uint64) bool {
	b := r.at(psn, mask, true)
	if b == nil {
		return ce // with CE: a PSN the ring no longer knows
	}
	k := *b >> ceCopyShift
	if k < ceTransmissions-1 {
		*b += 1 << ceCopyShift
	}
	if !ce || uint64(k) >= carried || *b&(1<<k) != 0 {
		return false
	}
	*b |= 1 << k
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
		t.ceRingsOf(f)[i].first(key, mask, f.carried(p.BTH.PSN, c))
	}
}

// ceRingsOf returns f's rings, which the table keeps by flow index (a
// flow that never carried CE nor a mirror's copy takes none: the slice
// reaches the last flow that did, 136 bytes a flow).
func (t *Table) ceRingsOf(f *Flow) *ceRings {
	i := f.ID - 1
	if i >= len(t.ce) {
		t.ce = append(t.ce, make([]ceRings, i+1-len(t.ce))...)
	}
	return &t.ce[i]
}

// copyCE counts p, a mirror's copy of a packet of f, of opcode class c,
// in f's ring (begun by f's first CE or copy, so that it knows every copy
// of its PSNs: see above), and says whether its CE made the packet
// CE-marked: the transmission it repeats is not marked yet (see ceRing).
// Then the packet moves, in f.ECN, from its first copy's codepoint to CE,
// and counts in ECNCE. The first copy's codepoint is not kept: it is
// taken for ECT(0) while the flow has such packets, else ECT(1). A switch
// marks only ECN-capable packets (RFC 3168 §5: it drops a not-ECT one
// instead), so a flow with neither left gains nothing: its copy's CE is a
// rewrite of the field, not a mark. A flow without copies or CE takes
// no ring, and its packets pay nothing here: only copies, the slow path
// already (Table.copied), come.
func (t *Table) copyCE(f *Flow, p *packet.Packet, c opBits) bool {
	ce := p.ECN&3 == 3
	i, key, mask := ceKey(p, c)
	carried := uint64(0) // unused without CE
	if ce {
		carried = f.carried(p.BTH.PSN, c)
	}
	return t.ceRingsOf(f)[i].copied(key, mask, ce, carried) && f.moveToCE()
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
// reported as a mirror's copy made its packet CE-marked (see copyCE, and
// for a CNP cnpCopyCE): its flow counted the mark, and a caller that
// counts CE marks itself should count it too, at the copy's frame, and
// nothing else of the copy.
func (t *Table) CopyMarkedCE() bool { return t.copyMarked }
