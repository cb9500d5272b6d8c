package flows

import "github.com/rocedump/rocedump/decode/packet"

// CNP copies (see the package doc, "Mirror copies"): a CNP carries no
// meaningful PSN (RoCEv2 Annex A17.9.3; ConnectX sends 0) and no payload
// that differs from the next CNP of its QP, so the PSN rule does not see a
// mirror's copy of one. What does differ is the IPv4 Identification, where
// the sender sets a new one on every packet (Linux soft-RoCE does), and a
// switch forwards it unchanged (RFC 791 §3.2; RFC 6864 lets a sender of
// atomic datagrams, DF set, send any ID, 0 or a constant one too). A CNP is
// a copy when a CNP of its flow within MirrorWindow before it (or after:
// a capture a little out of time order) carried the same non-zero IPv4 ID,
// IP length, UDP source port and BTH PSN, that CNP was not matched to a
// copy yet, and the sender's CNPs to that host have carried two different
// non-zero IDs (cnpHost.varies): a NIC that sends one constant ID would
// make every CNP look like a copy of the one before.

// cnpRingLen is how many of a flow's latest CNPs a copy is looked for
// among: CNPs of other QPs come between a CNP and its copy, and under
// congestion CNPs of its own QP too (a NIC sends one every few
// microseconds at most).
const cnpRingLen = 8

// cnpSig is what a mirror's copy of a CNP repeats (see above).
type cnpSig struct {
	nanos      int64 // FrameAt.Nanos; 0 for an empty slot
	psn        uint32
	length     int32
	id         uint32 // packet.Packet.IPID
	port       uint16
	ecn        uint8 // the CNP's ECN codepoint, for its copy's CE
	recognised bool  // a copy was already matched to it
}

// cnpRing is a flow's latest CNPs with a non-zero IPv4 ID.
type cnpRing struct {
	sigs [cnpRingLen]cnpSig
	next int
}

// cnpHost is what the CNPs from one address to another have shown: the
// first non-zero IPv4 ID, and whether a later one differed.
type cnpHost struct {
	first  uint32
	varies bool
}

// sigOf is p's signature at now (0 made 1: a time, not an empty slot).
func sigOf(p *packet.Packet, now int64) cnpSig {
	if now == 0 {
		now = 1
	}
	return cnpSig{nanos: now, psn: p.BTH.PSN, length: int32(p.IPTotalLen), id: p.IPID, port: p.SrcPort, ecn: p.ECN & 3}
}

// cnpCopyCE notes the CE of a copy of o, a CNP of f, and says whether it
// made o CE-marked: o's first copy carried an ECN-capable codepoint, not
// CE (a switch marks only ECN-capable packets, RFC 3168 §5), and o moves,
// in f.ECN, from it to CE, and counts in ECNCE and CNPsCE, as a CNP whose
// first copy carried CE does (a CNP's copies come once each: the copy is
// matched to one CNP once).
func (f *Flow) cnpCopyCE(o *cnpSig) bool {
	if o.ecn == 0 || o.ecn == 3 || f.ECN[o.ecn] == 0 {
		return false
	}
	f.ECN[o.ecn]--
	f.ECN[3]++
	f.ECNCE++
	f.coldState().cnpsCE++
	return true
}

// cnpCopied says whether p, a CNP of f captured at now, is a mirror's
// copy of one f counted (see above), and counts it in f's
// MirrorDuplicates if so. Only CNPs call it: it costs other packets
// nothing.
func (t *Table) cnpCopied(f *Flow, p *packet.Packet, now int64) bool {
	if p.IPID == 0 {
		return false // IPv6, RoCEv1, or a sender that sends 0: nothing to go on
	}
	if t.cnpHosts == nil {
		t.cnpHosts = map[hostPair]*cnpHost{}
	}
	hp := hostPair{f.Key.Src, f.Key.Dst}
	h := t.cnpHosts[hp]
	if h == nil {
		h = &cnpHost{first: p.IPID}
		t.cnpHosts[hp] = h
	} else if p.IPID != h.first {
		h.varies = true
	}
	cs := f.coldState()
	if cs.cnps == nil {
		cs.cnps = new(cnpRing)
	}
	r, s := cs.cnps, sigOf(p, now)
	if h.varies {
		for i := range r.sigs {
			o := &r.sigs[i]
			if d := s.nanos - o.nanos; o.nanos != 0 && !o.recognised && o.id == s.id && o.length == s.length && o.port == s.port &&
				o.psn == s.psn && d <= int64(MirrorWindow) && d >= -int64(MirrorWindow) {
				o.recognised = true
				cs.copies++
				t.copyMarked = s.ecn == 3 && f.cnpCopyCE(o)
				return true
			}
		}
	}
	r.sigs[r.next] = s
	r.next = (r.next + 1) % cnpRingLen
	return false
}
