package reports

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// CaptureHealth reports what limits the capture as evidence, because it
// changes what the other findings can claim. It says nothing about a clean
// capture: the span and packet counts are in the report's capture section.
//
// Severity rules:
//   - live capture drops (kernel or interface) > 0: critical, since loss
//     and retransmission findings can no longer tell fabric loss from
//     capture loss;
//   - no packets, or no RoCE packets: warning (nothing to judge);
//   - ICRC errors: warning; critical when they are ≥ 1% of the RoCE frames
//     whose ICRC was checked (CaptureInfo.ICRCChecked: those captured
//     whole) or ≥ 1000 frames (corruption on the wire, or a broken
//     mirror);
//   - a file cut off mid-record or ended by a bad record: warning;
//   - frames of a link type rocedump does not read: warning;
//   - malformed frames on UDP 4791: warning when ≥ 1% of the frames on
//     4791, info below;
//   - frames cut by the snap length: info (payload sizes still come from
//     the UDP length; the ICRC of those frames is unchecked);
//   - frames the mirror delivered twice (flows.Flow.MirrorDuplicates):
//     warning when they are ≥ 1% of the RoCE frames, info below. Each
//     packet is counted once, so no other finding is wrong for them; the
//     warning is for the mirror session, whose overlapping sources double
//     its load (and with it the risk of mirror loss) and whose CNPs are
//     counted twice;
//   - connections seen one way only (no RoCE packet back between their
//     hosts: a mirror of one direction): warning when every connection of
//     the capture is, info when some are. Nothing else is wrong for them,
//     but the ECN reaction, loss against mirror loss and NAK against
//     timeout cannot be judged on them.
func CaptureHealth(in *Input) []Finding {
	defer in.scanning()()
	c := &in.Capture
	var out []Finding
	if d := c.Drops; d != nil && d.Kernel+d.Interface > 0 {
		out = append(out, Finding{
			Kind:     KindCaptureHealth,
			Severity: Critical,
			Title:    fmt.Sprintf("The live capture dropped %d packets", d.Kernel+d.Interface),
			Detail: fmt.Sprintf("The capture itself lost %d packets (%d in the kernel, %d at the interface) besides the %d it read. "+
				"A PSN gap may be a packet the capture dropped rather than one the fabric lost, so loss and retransmission "+
				"findings of this capture are unreliable (they say so).", d.Kernel+d.Interface, d.Kernel, d.Interface, c.Packets),
			Evidence: Evidence{Counts: map[string]float64{
				"kernel_drops": float64(d.Kernel), "interface_drops": float64(d.Interface), "packets": float64(c.Packets),
			}},
			Next: "Capture again with a larger buffer (`-B`), a capture filter on UDP 4791, or a snap length of 128 bytes; or capture on a dedicated host.",
		})
	}
	if f, ok := linkDownFinding(c); ok {
		out = append(out, f)
	}
	switch {
	case c.Packets == 0:
		out = append(out, Finding{
			Kind:     KindCaptureHealth,
			Severity: Warning,
			Title:    "The capture holds no packets",
			Detail:   "No packet was read, so nothing about the fabric can be judged.",
			Evidence: Evidence{Counts: map[string]float64{"packets": 0}},
			Next:     "Check the capture command, its filter and that the mirror session is active.",
		})
	case c.RoCE == 0:
		out = append(out, noRoCE(in))
	}
	if c.ICRCBad > 0 {
		out = append(out, icrcFinding(in))
	}
	if rp := c.ReadProblems(); c.CutOff || len(rp) > 0 {
		f := Finding{
			Kind:     KindCaptureHealth,
			Severity: Warning,
			Title:    "The capture could not be read to its end",
			Detail: "Reading stopped early in at least one file; every whole record before that point was analysed, " +
				"but traffic after it is missing from every finding.",
			Evidence: Evidence{Counts: map[string]float64{"problems": float64(len(rp))}, Details: capped(rp)},
			Next:     "Copy the capture again (it may have been copied while still being written) or stop the capture cleanly before reading it.",
		}
		if c.CutOff {
			f.Title = "A capture file is cut off mid-record"
			f.Evidence.Counts["cut_off"] = 1
		}
		out = append(out, f)
	}
	if c.Unsupported > 0 {
		out = append(out, Finding{
			Kind:     KindCaptureHealth,
			Severity: Warning,
			Title:    fmt.Sprintf("%s of a link type rocedump does not read were skipped", plural(c.Unsupported, "frame")),
			Detail: fmt.Sprintf("%d of %d frames use a link type rocedump cannot decode (see the problems above), so their traffic is in no finding.",
				c.Unsupported, c.Packets),
			Evidence: Evidence{Counts: map[string]float64{"unsupported_frames": float64(c.Unsupported), "packets": float64(c.Packets)}},
			Next:     "Capture with Ethernet (or Linux cooked) framing, or convert the file with `editcap`.",
		})
	}
	if c.Malformed > 0 {
		out = append(out, malformedFinding(in))
	}
	if c.Truncated > 0 {
		out = append(out, truncatedFinding(in))
	}
	if in.flowScan().copies > 0 {
		out = append(out, copiesFinding(in))
	}
	if in.flowScan().fileCopies > 0 {
		out = append(out, fileCopiesFinding(in))
	}
	if f, ok := earlyFinding(in); ok {
		out = append(out, f)
	}
	if f, ok := oneWayFinding(in); ok {
		out = append(out, f)
	}
	return out
}

// fileCopiesFinding reports the packets captured in two input files taken
// in parallel (flows.Flow.FileCopies): counted once, and the clock offset
// between each two files their copies show (flows.Flow.FileOffsets).
func fileCopiesFinding(in *Input) Finding {
	sc := in.flowScan()
	n := sc.fileCopies
	type pair struct{ first, second int }
	offs := map[pair]*flows.FileOffset{}
	var order []pair
	for _, fl := range sc.fileCopied {
		for _, o := range fl.FileOffsets() {
			k := pair{o.First, o.Second}
			if a := offs[k]; a != nil {
				a.Min, a.Max = min(a.Min, o.Min), max(a.Max, o.Max)
				continue
			}
			o := o
			offs[k] = &o
			order = append(order, k)
		}
	}
	slices.SortFunc(order, func(a, b pair) int {
		if c := cmp.Compare(a.first, b.first); c != 0 {
			return c
		}
		return cmp.Compare(a.second, b.second)
	})
	file := func(i int) string {
		if i >= 0 && i < len(in.Capture.Files) {
			return in.Capture.Files[i]
		}
		return fmt.Sprintf("file %d", i+1)
	}
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: Info,
		Title: fmt.Sprintf("The capture files hold the same packets: %s captured in two files (%s), counted once",
			plural(n, "frame"), plural(len(sc.fileCopied), "flow")),
		Detail: fmt.Sprintf("%d RoCE frames repeat a packet of their flow that another input file, overlapping it in time, holds: "+
			"captures taken in parallel of one traffic (one per host, or two mirror ports), where a packet is captured where it leaves "+
			"and where it arrives. A packet new to its file's sequence of the flow whose PSN a parallel file carried, less than %s before, "+
			"is that file's packet again, whatever the offset between the files' clocks; resends count once each, however many files hold them. "+
			"The flows' packets, bytes and rates and the retransmission findings count each packet once.",
			n, flowtable.HumanDuration(flows.MaxFileOffset)),
		Evidence: Evidence{Counts: map[string]float64{"file_copies": float64(n), "flows": float64(len(sc.fileCopied))}},
	}
	if in.Collect != nil && in.Collect.c.conv.fileCopies > 0 {
		fc := in.Collect.c.conv.fileCopies
		f.Evidence.Counts["conversation_file_copies"] = float64(fc)
		f.Detail += fmt.Sprintf(" The files held %s of TCP or UDP twice as well (the same IP ID or checksum, length and flags, "+
			"in the same direction, less than %s apart): the conversations of the storage and non-RDMA findings count them once.",
			plural(fc, "packet"), flowtable.HumanDuration(flows.MaxFileOffset))
	}
	if len(order) > 0 {
		lo, hi := offs[order[0]].Min, offs[order[0]].Max
		var lines detailLines
		for _, k := range order {
			o := offs[k]
			lo, hi = min(lo, o.Min), max(hi, o.Max)
			lines.add(func() string {
				return fmt.Sprintf("%s captured a packet %s to %s after %s did", file(k.second), signedDuration(o.Min), signedDuration(o.Max), file(k.first))
			})
		}
		for _, e := range clockOffsets(sc.fileCopied) {
			lines.add(func() string {
				how, d := "ahead of", e.offset
				if d < 0 {
					how, d = "behind", -d
				}
				return fmt.Sprintf("the clock of %s is about %s %s %s's (half the difference of the least lags each way between %s and %s)",
					file(e.second), flowtable.HumanDuration(d), how, file(e.first), endpoint(in, e.a), endpoint(in, e.b))
			})
		}
		f.Detail += " The second capture of a file's newest packet came that long after the first, for each two files (below): " +
			"the least of it is the time from one capture point to the other plus or less the offset between the files' clocks; " +
			"with copies of packets both ways between two hosts the latency cancels, and half the difference of the least lags each way " +
			"(packets one way, then the other) is the offset, a better measure of it than responses captured before their requests."
		f.Evidence.Counts["offset_min_s"], f.Evidence.Counts["offset_max_s"] = lo.Seconds(), hi.Seconds()
		f.Evidence.Details = lines.capped()
	}
	for _, x := range sc.fileCopied {
		f.Flows = append(f.Flows, x.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, x.Key.Src), nodeOf(in, x.Key.Dst))
	}
	return f
}

// fileClock is the clock offset between two parallel files that copies of
// packets both ways between hosts a and b show: file second's clock minus
// file first's.
type fileClock struct {
	first, second int
	a, b          netip.Addr
	offset        time.Duration
}

// clockOffsets measures, for each two files, the offset between their
// clocks from the copies of packets going each way between two hosts. A
// FileOffset is by capture order (the file that captured a packet first),
// which is not the packet's way: with an offset larger than the latency
// both ways' packets come first in the same file, and with a latency that
// varies, one way's come first in either. So each flow's lags are made
// signed, the second file's capture less the first's (s), per file pair
// and host direction: one way s is the offset plus the latency, the other
// way the offset less it, and the offset lies between the two ways' ranges:
// half the sum of the higher range's least and the lower range's most (the
// least lags each way, with the latency cancelled when it is the same both
// ways). Ranges that overlap (the latency varied more than the capture
// allows, or a clock stepped) give nothing; of several host pairs, the one
// whose ranges are closest (the least latency) is taken.
func clockOffsets(fl []*flows.Flow) []fileClock {
	type key struct {
		first, second int
		src, dst      netip.Addr
	}
	type span struct{ lo, hi time.Duration }
	spans := map[key]*span{}
	var keys []key
	for _, f := range fl {
		for _, o := range f.FileOffsets() {
			k, lo, hi := key{o.First, o.Second, f.Key.Src, f.Key.Dst}, o.Min, o.Max
			if o.First > o.Second {
				k.first, k.second, lo, hi = o.Second, o.First, -o.Max, -o.Min
			}
			if s := spans[k]; s != nil {
				s.lo, s.hi = min(s.lo, lo), max(s.hi, hi)
				continue
			}
			spans[k] = &span{lo, hi}
			keys = append(keys, k)
		}
	}
	type pair struct{ first, second int }
	best := map[pair]fileClock{}
	gaps := map[pair]time.Duration{}
	var order []pair
	for _, k := range keys {
		back := spans[key{k.first, k.second, k.dst, k.src}]
		if back == nil || k.src.Compare(k.dst) > 0 {
			continue
		}
		one := spans[k]
		hiSpan, loSpan := one, back
		if back.lo >= one.hi {
			hiSpan, loSpan = back, one
		} else if one.lo < back.hi {
			continue // overlapping: no offset fits both ways
		}
		gap := hiSpan.lo - loSpan.hi
		p := pair{k.first, k.second}
		if g, ok := gaps[p]; ok && g <= gap {
			continue
		} else if !ok {
			order = append(order, p)
		}
		gaps[p] = gap
		best[p] = fileClock{first: k.first, second: k.second, a: k.src, b: k.dst, offset: (hiSpan.lo + loSpan.hi) / 2}
	}
	slices.SortFunc(order, func(a, b pair) int {
		if c := cmp.Compare(a.first, b.first); c != 0 {
			return c
		}
		return cmp.Compare(a.second, b.second)
	})
	out := make([]fileClock, 0, len(order))
	for _, p := range order {
		out = append(out, best[p])
	}
	return out
}

// signedDuration is HumanDuration with a sign for a negative d.
func signedDuration(d time.Duration) string {
	if d < 0 {
		return "-" + flowtable.HumanDuration(-d)
	}
	return flowtable.HumanDuration(d)
}

// earlyFinding reports the responses captured before the requests they
// answer (flows.Flow.EarlyResponses): the clocks of the files that hold
// the two directions disagree, or the capture's order is not the wire's.
// A warning: the retransmission, mirror-copy, mirror-loss and ECN findings
// judge the order and timing of requests and their answers, which the
// capture does not keep.
func earlyFinding(in *Input) (Finding, bool) {
	type pair struct{ resp, req int }
	type agg struct {
		n     uint64
		lead  time.Duration
		first flows.EarlyResponses
	}
	var (
		total uint64
		lead  time.Duration
		fl    []*flows.Flow
		pairs = map[pair]*agg{}
		order []pair
	)
	for _, f := range in.Flows {
		e := f.EarlyResponses()
		if e.N == 0 {
			continue
		}
		total += e.N
		lead = max(lead, e.Lead)
		fl = append(fl, f)
		k := pair{e.Response.File, e.Request.File}
		a := pairs[k]
		if a == nil {
			a = &agg{first: e}
			pairs[k] = a
			order = append(order, k)
		}
		a.n += e.N
		if e.Lead > a.lead {
			a.lead, a.first = e.Lead, e
		}
	}
	if total == 0 {
		return Finding{}, false
	}
	file := func(i int) string {
		if i >= 0 && i < len(in.Capture.Files) {
			return in.Capture.Files[i]
		}
		return fmt.Sprintf("file %d", i+1)
	}
	slices.SortFunc(order, func(a, b pair) int {
		if c := cmp.Compare(pairs[b].n, pairs[a].n); c != 0 {
			return c
		}
		if c := cmp.Compare(a.resp, b.resp); c != 0 {
			return c
		}
		return cmp.Compare(a.req, b.req)
	})
	top := order[0]
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: Warning,
		Evidence: Evidence{Counts: map[string]float64{
			"early_responses": float64(total), "flows": float64(len(fl)), "lead_s": lead.Seconds(),
		}},
	}
	if top.resp != top.req {
		// The responses' file stamps them earlier than the wire's order
		// allows: its clock runs behind the requests' file's.
		f.Title = fmt.Sprintf("%s captured before the requests they answer: the clock of %s runs at least %s behind %s's",
			plural(total, "response"), file(top.resp), flowtable.HumanDuration(pairs[top].lead), file(top.req))
	} else {
		f.Title = fmt.Sprintf("%s captured before the requests they answer (by up to %s): the capture does not keep the wire's order",
			plural(total, "response"), flowtable.HumanDuration(lead))
	}
	f.Detail = fmt.Sprintf("%d ACKs, NAKs or READ responses on %s were captured before a request they acknowledge, by up to %s; "+
		"a responder answers only what it received, so the capture does not hold the wire's order. "+
		"When the two directions of a connection come from different files (a tap or two mirror ports, one file per direction), "+
		"the clocks of those files disagree, by at least that much; within one file, two mirror paths of different latency do the same. "+
		"Findings that judge requests by the order and timing of their answers are then unreliable between those files: "+
		"a NAK captured after the resends it asks for makes them look like mirror copies and the NAK unanswered, "+
		"an ACK captured before a resend makes the resend an ACK timeout and the lost packet mirror loss, "+
		"a CNP captured before the CE mark it answers makes the mark unanswered (ecn_not_acted), "+
		"and recovery times, ACK timeouts and the pairing of QPs by their ACKs shift by the offset.",
		total, plural(len(fl), "flow"), flowtable.HumanDuration(lead))
	f.Next = "Shift the early file's times forward by at least the offset (`editcap -t SECONDS`, or the other file back with `editcap -t -SECONDS`) and run again, " +
		"or capture both directions with one clock (one capture NIC, hardware timestamps synchronised by PTP)."
	var lines detailLines
	for _, k := range order {
		a := pairs[k]
		lines.add(func() string {
			return fmt.Sprintf("responses in %s before requests in %s: %d, by up to %s (frame %d before frame %d)",
				file(k.resp), file(k.req), a.n, flowtable.HumanDuration(a.lead), a.first.Response.Frame, a.first.Request.Frame)
		})
	}
	for _, x := range fl {
		f.Flows = append(f.Flows, x.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, x.Key.Src), nodeOf(in, x.Key.Dst))
	}
	f.Evidence.Details = lines.capped()
	return f, true
}

// oneWayFinding reports the connections the capture holds one direction
// of: a flow of a connected transport (RC, XRC, RD) with no partner, when
// no RoCE packet at all went from its destination back to its source.
// Connections count a flow and its partner once.
func oneWayFinding(in *Input) (Finding, bool) {
	type dir = [2]netip.Addr
	seen := hostDirections(in)
	var conns, oneWay uint64
	var span frameSpan
	dirFlows := map[dir][]*flows.Flow{}
	var dirs []dir
	for _, fl := range in.Flows {
		if !connectedTransport(fl.Transport) {
			continue
		}
		if fl.Partner != nil {
			if fl.Partner.ID > fl.ID || !connectedTransport(fl.Partner.Transport) {
				conns++
			}
			continue
		}
		conns++
		d := dir{fl.Key.Src, fl.Key.Dst}
		if seen[dir{d[1], d[0]}] {
			continue
		}
		oneWay++
		if dirFlows[d] == nil {
			dirs = append(dirs, d)
		}
		dirFlows[d] = append(dirFlows[d], fl)
		span.add(fl.First)
		span.add(fl.Last)
	}
	if oneWay == 0 {
		return Finding{}, false
	}
	sev := Info
	if oneWay == conns {
		sev = Warning
	}
	title := fmt.Sprintf("The capture shows only one direction of %d of %s", oneWay, plural(conns, "connection"))
	switch {
	case conns == 1:
		title = "The capture shows only one direction of its one connection"
	case conns == 2 && oneWay == 2:
		title = "The capture shows only one direction of both its connections"
	case oneWay == conns:
		title = fmt.Sprintf("The capture shows only one direction of all %d connections", conns)
	}
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: sev,
		Title:    title,
		Detail: fmt.Sprintf("%d of %s (RC, XRC or RD; a flow and its partner count once) carry packets one way only: the capture holds "+
			"no RoCE packet at all from their destination back to their source (%s), as a mirror of one direction does "+
			"(a SPAN session of a port's ingress or egress only, or a tap of one fibre). What goes the other way, the ACKs, NAKs, "+
			"READ responses and CNPs that answer requests and CE marks (or the requests they answer), is not in the capture, "+
			"so for these connections it cannot tell whether CE marks got a CNP back (their marks count as undecided, not as "+
			"ECN not acted on), whether a PSN gap was lost in the fabric or only missed by the mirror (no ACK shows what the "+
			"responder received), nor whether a resend answered a NAK (go-back-N) or an ACK timeout (with no NAK captured, "+
			"the retransmission finding counts it as a timeout, or, when it came within %s of its original, the mirror "+
			"copies finding as a mirror's copy of it). These flows have no partner.",
			oneWay, plural(conns, "connection"), plural(len(dirs), "host direction"), flowtable.HumanDuration(flows.MirrorWindow)),
		Evidence: Evidence{Counts: map[string]float64{
			"one_way_flows": float64(oneWay), "connections": float64(conns), "host_directions": float64(len(dirs)),
		}},
		Next: "Mirror both directions of the port (a SPAN source of both rx and tx, or both fibres of a tap), " +
			"or give the captures of the two directions to rocedump together.",
	}
	span.set(in, &f.Evidence)
	var lines detailLines
	for _, d := range dirs {
		fs := dirFlows[d]
		f.Nodes = append(f.Nodes, nodeOf(in, d[0]), nodeOf(in, d[1]))
		var pkts uint64
		for _, fl := range fs {
			f.Flows = append(f.Flows, fl.ID)
			pkts += fl.Packets
		}
		lines.add(func() string {
			return fmt.Sprintf("%s > %s: %s, %s, nothing back", endpoint(in, d[0]), endpoint(in, d[1]),
				plural(len(fs), "flow"), plural(pkts, "packet"))
		})
	}
	f.Evidence.Details = lines.capped()
	return f, true
}

// hostDirections is every (source, destination) address pair of a flow.
func hostDirections(in *Input) map[[2]netip.Addr]bool {
	seen := map[[2]netip.Addr]bool{}
	for _, fl := range in.Flows {
		seen[[2]netip.Addr{fl.Key.Src, fl.Key.Dst}] = true
	}
	return seen
}

// seenOneWay: fl has no partner and no RoCE packet went from its
// destination back to its source (seen is hostDirections).
func seenOneWay(seen map[[2]netip.Addr]bool, fl *flows.Flow) bool {
	return fl.Partner == nil && !seen[[2]netip.Addr{fl.Key.Dst, fl.Key.Src}]
}

// connectedTransport: RC, XRC or RD, whose requests are answered.
func connectedTransport(t bth.Transport) bool {
	return t == bth.TransportRC || t == bth.TransportXRC || t == bth.TransportRD
}

// copiesShare is the share of the RoCE frames from which mirror copies
// make a warning, as malformed frames do.
const copiesShare = 0.01

// copiesFinding reports the packets the mirror delivered twice.
func copiesFinding(in *Input) Finding {
	c := &in.Capture
	sc := in.flowScan()
	n := sc.copies
	roce := max(c.RoCE, n)
	copied := slices.Clone(sc.copied)
	slices.SortStableFunc(copied, func(a, b *flows.Flow) int { return cmp.Compare(b.MirrorDuplicates(), a.MirrorDuplicates()) })
	var cnps uint64
	for _, fl := range copied {
		cnps += fl.CNPs
	}
	sev := Info
	if float64(n) >= copiesShare*float64(roce) {
		sev = Warning
	}
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: sev,
		Title: fmt.Sprintf("The mirror delivered %s twice (%s): counted once",
			plural(n, "frame"), plural(len(copied), "flow")),
		Detail: fmt.Sprintf("%d of %d RoCE frames (%s) repeat a packet their flow carried just before (its PSN, and for an ACK or NAK its AETH; a CNP its IPv4 ID), "+
			"less than %s later (%s at most), with no NAK, RNR NAK or re-issued READ asking for it again. "+
			"That is a mirror delivering one packet twice, as a SPAN or ERSPAN session does when its sources overlap (two ports on the packets' path, "+
			"or the ingress and egress of one switch); the second copy may differ in TTL, MAC addresses, DSCP or ECN. Each packet is counted once: "+
			"the flows' packets, bytes and rates and the retransmission, ECN and DSCP findings leave the copies out, "+
			"but for a CE mark the packet's first copy lacks (the egress copy of the switch that marked it), which marks the packet once.",
			n, roce, percent(float64(n), float64(roce)), flowtable.HumanDuration(flows.MirrorWindow), flowtable.HumanDuration(2*flows.MirrorWindow)),
		Evidence: Evidence{Counts: map[string]float64{
			"mirror_duplicates": float64(n), "flows": float64(len(copied)), "roce_packets": float64(roce),
		}},
		Next: "Check the SPAN/ERSPAN session for overlapping sources: mirror each link once (one direction of each port, or only the ports " +
			"that face the hosts), not both ends of a path or both the ingress and the egress of one switch.",
	}
	if sev == Warning {
		f.Detail += " So many copies double the mirror's load, which makes it drop packets (mirror loss) when traffic is heavy."
	}
	if in.Collect != nil && in.Collect.c.conv.copies > 0 {
		f.Detail += fmt.Sprintf(" The mirror delivered %s of TCP or UDP twice as well (the same IP ID or checksum, length and flags, "+
			"in the same direction, less than %s later): the conversations of the storage and non-RDMA findings count them once.",
			plural(in.Collect.c.conv.copies, "packet"), flowtable.HumanDuration(flows.MirrorWindow))
	}
	if cnps > 0 {
		f.Evidence.Counts["cnps_on_copied_flows"] = float64(cnps)
		f.Detail += fmt.Sprintf(" A CNP carries no PSN or payload that differs from the next CNP: its copy is told by its IPv4 ID "+
			"(the same ID, length and UDP source port less than %s later), once its sender's CNPs to that host have carried two different IDs. "+
			"The %s on these flows are what is left, and count the copies that rule cannot tell (over IPv6, with an ID of 0 or one constant ID, "+
			"the copy of the first CNP before a second ID): they may be up to twice the real ones.",
			flowtable.HumanDuration(flows.MirrorWindow), plural(cnps, "CNP"))
	}
	if in.Collect != nil {
		in.Collect.c.health.copies.set(in, &f.Evidence)
	}
	var lines detailLines
	for _, fl := range copied {
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		lines.add(func() string {
			return fmt.Sprintf("flow %d %s: %d of %d packets were copies", fl.ID, flowName(fl), fl.MirrorDuplicates(), fl.Packets+fl.MirrorDuplicates())
		})
	}
	f.Evidence.Details = lines.capped()
	return f
}

// captureSpan describes the capture's time span for a detail sentence.
func captureSpan(c *CaptureInfo) string {
	if c.First.IsZero() {
		return "no time span"
	}
	d := c.Last.Sub(c.First)
	if c.DurationS > 0 {
		d = time.Duration(c.DurationS * float64(time.Second))
	}
	return fmt.Sprintf("%s from %s", flowtable.HumanDuration(d), c.First.UTC().Format("2006-01-02 15:04:05.000000 UTC"))
}

func noRoCE(in *Input) Finding {
	c := &in.Capture
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: Warning,
		Title:    fmt.Sprintf("No RoCE traffic in %s", plural(c.Packets, "packet")),
		Detail: fmt.Sprintf("None of the %d packets (%s) is RoCE (RoCEv2 on UDP 4791 or RoCEv1), so no QP, loss or congestion finding can be made. "+
			"The mirror may watch the wrong port or VLAN, or a capture filter may exclude UDP 4791.", c.Packets, captureSpan(c)),
		Evidence: Evidence{Counts: map[string]float64{"packets": float64(c.Packets), "roce_packets": 0}},
		Next:     "Check the mirror session's source ports (the compute HCA links) and any capture filter; `rocedump read` shows what was captured.",
	}
	if in.Collect != nil {
		if n := in.Collect.c.health.headersCut; n > 0 {
			// Not RoCE as far as can be read: the snap length stopped the
			// reading, not the mirror.
			f.Detail += fmt.Sprintf(" But the snap length cut %d of them before their UDP or TCP header: they may be RoCE all the same "+
				"(an ERSPAN mirror over IPv6 needs 256 bytes).", n)
			f.Next = "Capture again with a larger snap length (`rocedump live --snaplen 256`, `tcpdump -s 256`) before looking at the mirror session."
		}
		for _, cv := range in.Collect.Conversations() {
			f.Evidence.Details = append(f.Evidence.Details, fmt.Sprintf("%s > %s %s: %s, %s",
				cv.Src, cv.Dst, convPort(cv), plural(cv.Packets, "packet"), flowtable.HumanBytes(cv.Bytes)))
		}
		f.Evidence.Details = capped(f.Evidence.Details)
	}
	return f
}

func icrcFinding(in *Input) Finding {
	c := &in.Capture
	// Every bad frame was checked: the floor holds for a CaptureInfo
	// made without ICRCChecked.
	whole := max(c.ICRCChecked, c.ICRCBad)
	sev := Warning
	if c.ICRCBad >= 1000 || float64(c.ICRCBad) >= 0.01*float64(whole) {
		sev = Critical
	}
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: sev,
		Title:    fmt.Sprintf("%s failed the ICRC check", plural(c.ICRCBad, "RoCE frame")),
		Detail: fmt.Sprintf("%d of %d RoCE frames captured whole (%s) carry a wrong invariant CRC. A receiving HCA drops such frames, "+
			"so the sender will retransmit them; if the fabric counters show no errors, the mirror or capture host corrupted them instead.",
			c.ICRCBad, whole, percent(float64(c.ICRCBad), float64(whole))),
		Evidence: Evidence{Counts: map[string]float64{"icrc_bad": float64(c.ICRCBad), "roce_frames_checked": float64(whole)}},
		Next:     "Compare with the switch ports' FCS/symbol error counters and the HCAs' port counters (`ethtool -S`: rx_crc_errors_phy, rx_icrc_encapsulated); check the optics and cables of the flows below.",
	}
	if in.Collect != nil {
		in.Collect.c.health.icrcBad.set(in, &f.Evidence)
	}
	var lines detailLines
	for _, fl := range in.flowScan().icrc { // the flows with ICRC errors
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		lines.add(func() string { return fmt.Sprintf("flow %d %s: %d bad ICRC", fl.ID, flowName(fl), fl.ICRCBad) })
	}
	f.Evidence.Details = lines.capped()
	return f
}

func malformedFinding(in *Input) Finding {
	c := &in.Capture
	on4791 := c.RoCE + c.Malformed
	sev := Info
	if float64(c.Malformed) >= 0.01*float64(on4791) {
		sev = Warning
	}
	// Most of the port's frames not RoCE (another application on 4791,
	// a corrupted mirror, random bytes): the frames that decode as RoCE
	// may be more of the same, whose random opcodes, NAK codes and DSCP
	// make findings of their own.
	garbage := c.Malformed >= c.RoCE
	if garbage {
		sev = Critical
	}
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: sev,
		Title:    fmt.Sprintf("%s on the RoCE port are not valid InfiniBand transport packets", plural(c.Malformed, "frame")),
		Detail: fmt.Sprintf("%d of %d frames to UDP 4791 (or EtherType 0x8915) do not hold a valid BTH. They are counted and skipped; "+
			"they may be another application on port 4791, frames corrupted on the way to the mirror, or a mirror that rewrites headers.",
			c.Malformed, on4791),
		Evidence: Evidence{Counts: map[string]float64{"malformed": float64(c.Malformed), "frames_to_roce_port": float64(on4791)}},
		Next:     "Look at the first malformed frame with `rocedump read -v` (it prints the reason) or Wireshark.",
	}
	if garbage && c.RoCE > 0 {
		f.Detail += fmt.Sprintf(" They are %s of the frames on the port: the %s that decode as RoCE may be the same traffic, "+
			"a valid BTH by chance, so every other finding of this capture is in doubt until that traffic is explained.",
			percent(float64(c.Malformed), float64(on4791)), plural(c.RoCE, "frame"))
	}
	if in.Collect != nil {
		h := &in.Collect.c.health
		h.malformed.set(in, &f.Evidence)
		type rc struct {
			name string
			n    uint64
		}
		var rs []rc
		for r, n := range h.reasons {
			rs = append(rs, rc{r.String(), n})
		}
		slices.SortFunc(rs, func(a, b rc) int {
			if c := cmp.Compare(b.n, a.n); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		for _, r := range rs {
			f.Evidence.Details = append(f.Evidence.Details, fmt.Sprintf("%s: %d", r.name, r.n))
		}
		f.Evidence.Details = capped(f.Evidence.Details)
	}
	return f
}

// snapLengthNext is the next step of a truncation finding whose frames
// were cut before the headers the analysis reads.
const snapLengthNext = "Capture with a snap length that keeps the transport headers: the mirror's own headers (ERSPAN, VLAN tags) come first, " +
	"so count them in: 128 bytes keeps the BTH and the AETH and RETH behind an ERSPAN II header and a VLAN tag, 256 bytes behind any."

// bthCutNote makes f, the truncation finding, say that n frames were cut
// inside their BTH: with no QP, opcode or PSN they are in no flow, and no
// finding but this one sees them, so it is a warning.
func bthCutNote(f *Finding, n uint64) {
	f.Severity = Warning
	f.Title += fmt.Sprintf(", %d inside their transport header", n)
	f.Detail += fmt.Sprintf(" %d of them were cut inside their InfiniBand base transport header (BTH, the 12 bytes after the UDP header): "+
		"their QP, opcode and PSN are unknown, so they are in no flow and the QP, loss and congestion findings cannot see them.", n)
	f.Next = snapLengthNext
}

// headersCutNote makes f, the truncation finding, say that n frames were
// cut before their UDP or TCP header (healthObs.headersCut): whether they
// are RoCE is unknown, so they are in no flow and no finding but this one
// sees them, and it is a warning.
func headersCutNote(f *Finding, n uint64) {
	f.Severity = Warning
	f.Title += fmt.Sprintf(", %d before their UDP or TCP header", n)
	f.Detail += fmt.Sprintf(" %d of them were cut before their UDP or TCP header (inside an IP header, a RoCEv1 GRH, a mirror's GRE, ERSPAN "+
		"or VXLAN headers or the IP header they carry): whether they are RoCE is unknown, so they are in no flow and no other finding sees them.", n)
	f.Next = snapLengthNext
}

func truncatedFinding(in *Input) Finding {
	c := &in.Capture
	f := Finding{
		Kind:     KindCaptureHealth,
		Severity: Info,
		Title:    fmt.Sprintf("%s cut by the snap length", plural(c.Truncated, "frame")),
		Detail: fmt.Sprintf("%d of %d frames were captured only in part, as mirror sessions with truncation do. Payload sizes and bytes still "+
			"come from the IP and UDP lengths and are right; the ICRC of those frames cannot be checked, so wire corruption on them goes unseen.",
			c.Truncated, c.Packets),
		Evidence: Evidence{Counts: map[string]float64{"truncated_frames": float64(c.Truncated), "packets": float64(c.Packets)}},
		Next:     "Nothing to fix for QP, loss and congestion analysis; for ICRC checks capture whole frames.",
	}
	if in.Collect != nil {
		if n := in.Collect.c.health.bthCut; n > 0 {
			f.Evidence.Counts["bth_cut"] = float64(n)
			bthCutNote(&f, n)
		}
		if n := in.Collect.c.health.headersCut; n > 0 {
			f.Evidence.Counts["headers_cut"] = float64(n)
			headersCutNote(&f, n)
		}
		if n := in.Collect.c.health.mgmtCut; n > 0 {
			f.Evidence.Counts["cm_mads_cut"] = float64(n)
			cmMADsCutNote(&f, n)
		}
	}
	return f
}

// cmMADsCutNote adds to f, a truncated finding, the n QP1 datagrams
// counted in cm_mads_cut (healthObs.mgmtCut): those cut before the end of
// their MAD header (IBTA vol 1 §13.4.3), which may be CM messages, and CM
// REQs cut before their service ID (§12.6.5).
func cmMADsCutNote(f *Finding, n uint64) {
	f.Detail += fmt.Sprintf(" %s on QP1 %s cut before the end of their MAD header (RDMA CM messages or not, unknown) or, "+
		"RDMA CM connection requests, before their service ID, so RDMA CM connections (and storage over RDMA CM) cannot be "+
		"identified from them; a snap length of 256 bytes keeps them.", plural(n, "management datagram"), verb(n, "was", "were"))
}

// linkDownFinding reports the times a live capture's interface was down
// (the LinkDownNote problems): nothing reached the capture then, and no
// drop counter counts what the mirror sent.
func linkDownFinding(c *CaptureInfo) (Finding, bool) {
	var periods []string
	for _, p := range c.Problems {
		if d, ok := strings.CutPrefix(p, LinkDownNote); ok {
			periods = append(periods, d)
		}
	}
	if len(periods) == 0 {
		return Finding{}, false
	}
	times := "once"
	if len(periods) > 1 {
		times = fmt.Sprintf("%d times", len(periods))
	}
	return Finding{
		Kind:     KindCaptureHealth,
		Severity: Warning,
		Title:    "The capture interface went down " + times,
		Detail: "While the interface the live capture reads was down (not up, or no link), nothing reached the capture and no drop " +
			"counter counts what the mirror sent: the traffic of that time is in no finding, and a PSN gap across it is the capture's, " +
			"not the fabric's.",
		Evidence: Evidence{Counts: map[string]float64{"down_periods": float64(len(periods))}, Details: capped(periods)},
		Next:     "Check the capture port's link (ip link, ethtool: carrier changes, flaps) and the mirror session, then capture again.",
	}, true
}
