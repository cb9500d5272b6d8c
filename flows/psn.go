package flows

// PSNs are 24-bit serial numbers (IBTA vol 1 §9.7.1): they wrap from
// 0xFFFFFF to 0, and "ahead" means less than half the space ahead.
const (
	psnMask = 1<<24 - 1
	psnHalf = 1 << 23
)

// psnDiff returns a-b as a signed distance on the 24-bit PSN circle.
func psnDiff(a, b uint32) int32 {
	d := (a - b) & psnMask
	if d >= psnHalf {
		return int32(d) - 1<<24
	}
	return int32(d)
}

// psnAdd returns p+n on the 24-bit PSN circle.
func psnAdd(p uint32, n int32) uint32 { return (p + uint32(n)) & psnMask }

// seqResult is what one sequenced packet was (see the package doc).
type seqResult uint8

const (
	seqFirst seqResult = iota
	seqInOrder
	seqGap
	seqOutOfOrder
	seqRetransmit
)

// maxOpenGaps bounds the PSN ranges a flow remembers as missing. Older
// ranges are forgotten: a packet filling one then counts as retransmitted.
const maxOpenGaps = 8

// psnRange is an inclusive range of PSNs.
type psnRange struct{ lo, hi uint32 }

// sequencer is the part of a PSNStats that says which PSNs it expects
// next; the rest of its state is PSNStats' own fields (FirstPSN, LastPSN,
// HighPSN, MissingPSNs) and its open gaps. A PSN space has started when
// its Packets is not 0.
type sequencer struct {
	expLo uint32 // lowest PSN the next in-order packet may have
	expHi uint32 // highest PSN the next in-order packet may have
	nGaps uint8  // open gaps in PSNStats.gaps
}

// inGap says whether psn lies in one of the open gaps: a packet there is
// the first copy of its PSN the capture holds.
func (s *PSNStats) inGap(psn uint32) bool {
	if s.seq.nGaps == 0 {
		return false
	}
	for _, g := range s.gaps[:s.seq.nGaps] {
		if psnDiff(psn, g.lo) >= 0 && psnDiff(psn, g.hi) <= 0 {
			return true
		}
	}
	return false
}

// started says whether the PSN space has had a packet.
func (s *PSNStats) started() bool { return s.Packets != 0 }

// observe sequences one packet at psn and counts it: see the package doc.
// extraMin..extraMax is the number of PSNs the packet consumes beyond its
// own, as a range: an RDMA READ request of n response packets consumes n-1
// more, and n is known only within the range the path MTU allows. opens
// says the packet may start a new run anywhere at or after the expected
// PSN: a READ response FIRST or ONLY, whose PSN follows the requester's
// other requests, which travel the other way.
func (s *PSNStats) observe(psn uint32, extraMin, extraMax int32, opens bool) seqResult {
	if s.Packets == 0 {
		s.Packets = 1
		s.FirstPSN, s.LastPSN, s.HighPSN = psn, psn, psn
		s.expect(psn, extraMin, extraMax)
		return seqFirst
	}
	s.Packets++
	s.LastPSN = psn
	if psnDiff(psn, s.seq.expLo) >= 0 && (opens || psnDiff(psn, s.seq.expHi) <= 0) {
		s.HighPSN = psn
		s.expect(psn, extraMin, extraMax)
		return seqInOrder
	}
	if psnDiff(psn, s.seq.expHi) > 0 {
		skipped := uint32(psnDiff(psn, s.seq.expHi))
		s.addGap(psnRange{s.seq.expHi, psnAdd(psn, -1)})
		s.MissingPSNs += uint64(skipped)
		s.PSNGaps++
		s.HighPSN = psn
		s.expect(psn, extraMin, extraMax)
		return seqGap
	}
	if s.fill(psn) {
		s.MissingPSNs--
		s.OutOfOrder++
		// An RDMA READ request takes its responses' PSNs too: those it
		// surely takes (extraMin) that its gap skipped are no longer
		// missing (Flow.cutSpan takes them out of the loss too).
		for q, i := psn, int32(0); i < extraMin; i++ {
			if q = psnAdd(q, 1); !s.fill(q) {
				break
			}
			s.MissingPSNs--
		}
		return seqOutOfOrder
	}
	s.Retransmitted++
	return seqRetransmit
}

// next is observe for a packet at the very PSN the started space expects
// next (seq.expHi) that takes no PSNs beyond its own (not an RDMA READ
// request): in order, whatever the previous packet's extraMin (expLo is
// at or before expHi). It inlines, so that Flow.add sequences a request
// in order, most packets of a busy QP, without observe's call and its
// general tests.
func (s *PSNStats) next(psn uint32) seqResult {
	s.Packets++
	s.LastPSN, s.HighPSN = psn, psn
	n := psnAdd(psn, 1)
	s.seq.expLo, s.seq.expHi = n, n
	return seqInOrder
}

func (s *PSNStats) expect(psn uint32, extraMin, extraMax int32) {
	s.seq.expLo = psnAdd(psn, 1+extraMin)
	s.seq.expHi = psnAdd(psn, 1+extraMax)
}

// lastGap is the gap the last packet sequenced seqGap opened.
func (s *PSNStats) lastGap() psnRange { return s.gaps[s.seq.nGaps-1] }

func (s *PSNStats) addGap(r psnRange) {
	if s.gaps == nil {
		s.gaps = new([maxOpenGaps]psnRange)
	}
	if s.seq.nGaps == maxOpenGaps {
		copy(s.gaps[:], s.gaps[1:])
		s.seq.nGaps--
	}
	s.gaps[s.seq.nGaps] = r
	s.seq.nGaps++
}

// fill removes psn from the open gaps and reports whether it was in one.
func (s *PSNStats) fill(psn uint32) bool {
	n := int(s.seq.nGaps)
	for i := 0; i < n; i++ {
		g := s.gaps[i]
		if psnDiff(psn, g.lo) < 0 || psnDiff(psn, g.hi) > 0 {
			continue
		}
		switch {
		case g.lo == g.hi:
			copy(s.gaps[i:], s.gaps[i+1:n])
			s.seq.nGaps--
		case psn == g.lo:
			s.gaps[i].lo = psnAdd(psn, 1)
		case psn == g.hi:
			s.gaps[i].hi = psnAdd(psn, -1)
		default:
			s.gaps[i].hi = psnAdd(psn, -1)
			s.addGap(psnRange{psnAdd(psn, 1), g.hi})
		}
		return true
	}
	return false
}

// retransmitted counts a packet known to be a retransmission without
// moving the expected PSN: a re-issued RDMA READ request.
func (s *PSNStats) retransmitted(psn uint32) {
	s.Packets++
	s.Retransmitted++
	s.LastPSN = psn
}
