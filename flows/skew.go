package flows

// Captures whose order is not the wire's: the fabric or a mirror path
// reordered a burst, or the two directions of a connection come from
// files whose clocks disagree (a tap, two mirror ports, one file per
// direction). The rules for one capture in the wire's order (mirror
// copies, NAKs and their resends) then need the corrections here. See
// the package doc, "Responses before their requests".

// reorderedResend says whether a request at psn, captured at now, behind
// the flow's highest PSN, is a resend of the go-back-N episode in
// progress that the fabric delivered out of order rather than a mirror's
// copy, on a connection that the mirror is not known to copy (copies):
//
//   - it lies before the episode's lowest resent PSN (at most 8 before)
//     and at or after the PSN of the NAK that began the episode, and came
//     less than oneWayAfter after the request before it: a go-back-N
//     resends every PSN from the NAK's, so the resend at the NAK's PSN
//     captured after the one after it is the burst reordered; a lagging
//     mirror's copy of it would come after the copies of the PSNs before
//     it;
//   - or it is the PSN after the episode's last resend, once such a
//     resend came (the last request captured is then not the episode's
//     last: repeatsSequenced's "continues a run" would miss it).
func (f *Flow) reorderedResend(psn uint32, now int64, copies bool) bool {
	r := f.retx
	if copies || r == nil || !r.ep.active || r.ep.kind != EventGoBackN || r.pending.rnr {
		return false
	}
	ep := &r.ep
	if psn == psnAdd(ep.last, 1) {
		return ep.reordered
	}
	return psnDiff(psn, ep.lo) < 0 && psnDiff(ep.lo, psn) <= 8 && psnDiff(psn, r.pending.psn) >= 0 &&
		sinceNanos(now, f.reqW.last) < oneWayAfter
}
