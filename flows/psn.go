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

// sequencer follows one PSN space of a flow.
type sequencer struct {
	started     bool
	first, last uint32
	high        uint32 // highest PSN seen
	expLo       uint32 // lowest PSN the next in-order packet may have
	expHi       uint32 // highest PSN the next in-order packet may have
	missing     uint64 // PSNs skipped by gaps and not seen since
	gaps        [maxOpenGaps]psnRange
	nGaps       int
}

// observe classifies psn. extraMin..extraMax is the number of PSNs the
// packet consumes beyond its own, as a range: an RDMA READ request of n
// response packets consumes n-1 more, and n is known only within the range
// the path MTU allows. opens says the packet may start a new run anywhere
// at or after the expected PSN: a READ response FIRST or ONLY, whose PSN
// follows the requester's other requests, which travel the other way.
func (s *sequencer) observe(psn uint32, extraMin, extraMax int32, opens bool) seqResult {
	if !s.started {
		s.started = true
		s.first, s.last, s.high = psn, psn, psn
		s.expect(psn, extraMin, extraMax)
		return seqFirst
	}
	s.last = psn
	if psnDiff(psn, s.expLo) >= 0 && (opens || psnDiff(psn, s.expHi) <= 0) {
		s.high = psn
		s.expect(psn, extraMin, extraMax)
		return seqInOrder
	}
	if psnDiff(psn, s.expHi) > 0 {
		skipped := uint32(psnDiff(psn, s.expHi))
		s.addGap(psnRange{s.expHi, psnAdd(psn, -1)})
		s.missing += uint64(skipped)
		s.high = psn
		s.expect(psn, extraMin, extraMax)
		return seqGap
	}
	if s.fill(psn) {
		s.missing--
		return seqOutOfOrder
	}
	return seqRetransmit
}

func (s *sequencer) expect(psn uint32, extraMin, extraMax int32) {
	s.expLo = psnAdd(psn, 1+extraMin)
	s.expHi = psnAdd(psn, 1+extraMax)
}

func (s *sequencer) addGap(r psnRange) {
	if s.nGaps == maxOpenGaps {
		copy(s.gaps[:], s.gaps[1:])
		s.nGaps--
	}
	s.gaps[s.nGaps] = r
	s.nGaps++
}

// fill removes psn from the open gaps and reports whether it was in one.
func (s *sequencer) fill(psn uint32) bool {
	for i := 0; i < s.nGaps; i++ {
		g := s.gaps[i]
		if psnDiff(psn, g.lo) < 0 || psnDiff(psn, g.hi) > 0 {
			continue
		}
		switch {
		case g.lo == g.hi:
			copy(s.gaps[i:], s.gaps[i+1:s.nGaps])
			s.nGaps--
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

// observe sequences one packet (see sequencer.observe) and counts it.
func (s *PSNStats) observe(psn uint32, extraLo, extraHi int32, opens bool) seqResult {
	res := s.seq.observe(psn, extraLo, extraHi, opens)
	s.Packets++
	switch res {
	case seqGap:
		s.PSNGaps++
	case seqOutOfOrder:
		s.OutOfOrder++
	case seqRetransmit:
		s.Retransmitted++
	}
	s.sync()
	return res
}

// retransmitted counts a packet known to be a retransmission without
// moving the expected PSN: a re-issued RDMA READ request.
func (s *PSNStats) retransmitted(psn uint32) {
	s.Packets++
	s.Retransmitted++
	s.seq.last = psn
	s.sync()
}

// sync copies the sequencer's state to the exported fields.
func (s *PSNStats) sync() {
	s.FirstPSN, s.LastPSN, s.HighPSN = s.seq.first, s.seq.last, s.seq.high
	s.MissingPSNs = s.seq.missing
}
