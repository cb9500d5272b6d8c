package reports

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// Congestion reports the congestion signals of the capture: DCQCN at work
// (CE marks and CNPs), DCQCN not working (CE marks nobody answers, RoCE
// data that is not ECN-capable), traffic on the wrong DSCP or 802.1Q
// priority, and PFC.
//
// Kinds and severity rules:
//   - congestion: CNPs, CE marks, FECN or BECN seen. Info while the share of
//     CE-marked or CNP-answered data packets stays below 1% (DCQCN doing its
//     job); warning at 1% or more (sustained congestion).
//   - ecn_not_acted: CE marks with no CNP back within Config.ECNWindow, per
//     host direction (see collector_ecn.go for the exact rule): warning.
//     RoCE data packets that are not ECN-capable (ECN 00): warning, as
//     switches cannot mark them and DCQCN is off for those QPs.
//   - dscp_mismatch: data packets not on Config.DataDSCP: warning, critical
//     when they are half or more of all RoCE data (the job runs outside the
//     lossless class). CNPs not on Config.CNPDSCP: warning.
//   - pcp_mismatch: tagged data packets (the innermost frame has an 802.1Q
//     tag) not on priority Config.DataPCP, tagged CNPs not on
//     Config.CNPPCP: warning. Untagged frames are not judged.
//   - pfc: PFC pause frames. Critical when a priority had a pause storm
//     (PFCStormDuration); warning when a priority was paused for 1% or more
//     of the capture, or 802.3x link-level PAUSE frames were seen; info
//     otherwise.
func Congestion(in *Input) []Finding {
	defer in.scanning()()
	var out []Finding
	if f, ok := congestionFinding(in); ok {
		out = append(out, f)
	}
	out = append(out, ecnNotActed(in)...)
	out = append(out, notECT(in)...)
	out = append(out, dscpMismatch(in)...)
	out = append(out, pcpMismatch(in)...)
	if f, ok := pfcFinding(in); ok {
		out = append(out, f)
	}
	return out
}

func congestionFinding(in *Input) (Finding, bool) {
	sc := in.flowScan()
	cnps, ce, fecn, becn := sc.cnps, sc.ce, sc.fecn, sc.becn
	data := sc.packets - sc.cnps // the sum of Packets - CNPs over the flows
	var cnpFlows, ceFlows []*flows.Flow
	bySource := map[netip.Addr]*struct{ cnps, qps uint64 }{}
	for _, f := range sc.cong { // the flows with CNPs, CE marks or FECN
		if f.CNPs > 0 {
			cnpFlows = append(cnpFlows, f)
			s := bySource[f.Key.Src]
			if s == nil {
				s = &struct{ cnps, qps uint64 }{}
				bySource[f.Key.Src] = s
			}
			s.cnps += f.CNPs
			s.qps++
		}
		if f.ECNCE > 0 || f.FECN > 0 {
			ceFlows = append(ceFlows, f)
		}
	}
	if cnps+ce+fecn+becn == 0 {
		return Finding{}, false
	}
	sev := Info
	if data > 0 && (float64(ce) >= 0.01*float64(data) || float64(cnps) >= 0.01*float64(data)) {
		sev = Warning
	}
	f := Finding{
		Kind:     KindCongestion,
		Severity: sev,
		Evidence: Evidence{Counts: map[string]float64{
			"cnps": float64(cnps), "ce_marked": float64(ce), "fecn": float64(fecn), "becn": float64(becn),
			"data_packets": float64(data), "notified_qps": float64(len(cnpFlows)), "cnp_sources": float64(len(bySource)),
		}},
		Next: "Find the congested egress: the switch port toward the CNP sources (ECN-marked and PFC counters, queue depth). " +
			"For an AllReduce, check for incast (many ranks into one HCA) and for cross-rail or storage traffic sharing the path.",
	}
	switch {
	case cnps > 0:
		f.Title = fmt.Sprintf("%s slowed %s (CNPs from %s)", plural(cnps, "CNP"), plural(len(cnpFlows), "QP"), plural(len(bySource), "host"))
	case ce > 0:
		f.Title = fmt.Sprintf("%s marked ECN Congestion Experienced", plural(ce, "RoCE packet"))
	default:
		f.Title = fmt.Sprintf("InfiniBand FECN/BECN bits on %s", plural(fecn+becn, "packet"))
	}
	// data counts every packet but CNPs, ACKs and QP1 included
	// (data_packets in docs/FINDINGS.md): the detail says so, as the
	// data variants of dscp_mismatch and ecn_not_acted count fewer.
	f.Detail = fmt.Sprintf("Switches marked %s CE (%s of the %d RoCE packets other than CNPs, ACKs included) and receiving HCAs sent %s back, "+
		"so DCQCN cut the rate of the notified QPs. ", plural(ce, "packet"), percent(float64(ce), float64(data)), data, plural(cnps, "CNP"))
	if cnps == 0 {
		// No CNP to say DCQCN acted: the receivers sent none, or they
		// went a way the capture does not show.
		f.Detail = fmt.Sprintf("Switches marked %s CE (%s of the %d RoCE packets other than CNPs, ACKs included), and the capture holds no CNP back: "+
			"either the receiving HCAs sent none (see ecn_not_acted) or the mirror does not show their direction (see capture_health). ",
			plural(ce, "packet"), percent(float64(ce), float64(data)), data)
	}
	if in.Collect != nil && cnps > 0 {
		f.Detail += cnpPeak(in.Collect.Timeline().CNPs, &f.Evidence)
	}
	if sc.cnpsCE > 0 {
		// Not data (after the CNP peak, where merge puts its own): a
		// CNP's CE tells of the reverse path, and DCQCN does not answer it.
		f.Detail += fmt.Sprintf("%s carried CE as well, not counted among the data packets. ", plural(sc.cnpsCE, "CNP"))
	}
	if sev == Warning {
		f.Detail += "At 1% or more of the data this is sustained congestion: the AllReduce runs below line rate for as long as it lasts."
	} else {
		f.Detail += "At this level it is DCQCN doing its job, but it tells where the fabric is tight."
	}
	if fecn+becn > 0 {
		f.Detail += fmt.Sprintf(" %d packets carry the BTH FECN bit and %d BECN (CNPs set BECN by design).", fecn, becn)
	}
	var span frameSpan
	if in.Collect != nil {
		if in.Collect.c.cnpSpan.ok {
			span = in.Collect.c.cnpSpan
		} else {
			span = in.Collect.c.ceSpan
		}
	}
	span.set(in, &f.Evidence)

	slices.SortStableFunc(cnpFlows, func(a, b *flows.Flow) int { return cmp.Compare(b.CNPs, a.CNPs) })
	var lines detailLines
	for _, fl := range cnpFlows {
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		lines.add(func() string {
			// Over the time from the first CNP to the last; without the
			// collector (merge) only the flow's duration is known, and
			// the flow's ACKs may span much longer than its CNPs.
			over := fmt.Sprintf("in a flow of %s", flowtable.HumanDuration(fl.Duration()))
			if in.Collect != nil {
				if sp := in.Collect.c.rareOf(fl.ID).cnpSpanOf(); sp.ok {
					over = "over " + flowtable.HumanDuration(sp.last.Time.Sub(sp.first.Time))
				}
			}
			return fmt.Sprintf("qp %s at %s: %s from %s %s (flow %d)",
				qpn(fl.Key.DestQP), endpoint(in, fl.Key.Dst), plural(fl.CNPs, "CNP"), fl.Key.Src, over, fl.ID)
		})
	}
	srcs := make([]netip.Addr, 0, len(bySource))
	for a := range bySource {
		srcs = append(srcs, a)
	}
	slices.SortFunc(srcs, func(a, b netip.Addr) int {
		if c := cmp.Compare(bySource[b].cnps, bySource[a].cnps); c != 0 {
			return c
		}
		return a.Compare(b)
	})
	for _, a := range srcs {
		s := bySource[a]
		lines.add(func() string {
			return fmt.Sprintf("%s sent %s to %s", endpoint(in, a), plural(s.cnps, "CNP"), plural(s.qps, "QP"))
		})
	}
	slices.SortStableFunc(ceFlows, func(a, b *flows.Flow) int { return cmp.Compare(b.ECNCE+b.FECN, a.ECNCE+a.FECN) })
	for _, fl := range ceFlows {
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		lines.add(func() string {
			line := fmt.Sprintf("flow %d %s: %d of %d packets CE-marked", fl.ID, flowName(fl), fl.ECNCE, fl.Packets)
			if fl.FECN > 0 || fl.BECN > 0 {
				line += fmt.Sprintf(", FECN %d, BECN %d", fl.FECN, fl.BECN)
			}
			return line
		})
	}
	f.Evidence.Details = lines.capped()
	return f, true
}

// ecnNotActed reports CE marks that no CNP answered.
func ecnNotActed(in *Input) []Finding {
	if in.Collect == nil {
		return nil
	}
	var marks, notActed, undecided uint64
	var span frameSpan
	var bad []ECNReaction
	for _, r := range in.Collect.ECN() {
		marks += r.CEMarked
		undecided += r.CEMarked - r.Acted - r.NotActed
		if r.NotActed == 0 {
			continue
		}
		notActed += r.NotActed
		bad = append(bad, r)
		span.add(*r.FirstNotActed)
		span.add(*r.LastNotActed)
	}
	if notActed == 0 {
		return nil
	}
	slices.SortStableFunc(bad, func(a, b ECNReaction) int { return cmp.Compare(b.NotActed, a.NotActed) })
	f := Finding{
		Kind:     KindECNNotActed,
		Severity: Warning,
		Title:    ecnNotActedTitle(notActed),
		Detail: fmt.Sprintf("Switches marked these packets Congestion Experienced, but the receiving HCA sent no CNP to the sender within %s, "+
			"so DCQCN never slowed the sender: queues keep growing until PFC pauses the link, and pauses spread into storms. "+
			"Usually the receiver's ECN notification point is disabled for this priority.", flowtable.HumanDuration(in.Config.ECNWindow)),
		Evidence: Evidence{Counts: map[string]float64{
			"ce_marked": float64(marks), "not_acted": float64(notActed), "undecided": float64(undecided), "directions": float64(len(bad)),
		}},
		Next: "On the receiving hosts, check DCQCN: `/sys/class/net/<if>/ecn/roce_np/enable/<prio>` (`mlnx_qos`, or `mlxreg`/`mlxconfig ROCE_CC_PRIO_MASK`) " +
			"for the RoCE priority; also check that the mirror sees both directions, or CNPs are missed.",
	}
	span.set(in, &f.Evidence)
	// The CE-marked flows of each direction, in flow order.
	type dir struct{ src, dst netip.Addr }
	ceByDir := map[dir][]int{}
	for _, fl := range in.flowScan().cong {
		if fl.ECNCE > 0 {
			d := dir{fl.Key.Src, fl.Key.Dst}
			ceByDir[d] = append(ceByDir[d], fl.ID)
		}
	}
	var lines detailLines
	for _, r := range bad {
		f.Nodes = append(f.Nodes, nodeOf(in, r.Src), nodeOf(in, r.Dst))
		lines.add(func() string {
			return fmt.Sprintf("%s > %s: %d of %d CE marks without a CNP back", endpoint(in, r.Src), endpoint(in, r.Dst), r.NotActed, r.CEMarked)
		})
		f.Flows = append(f.Flows, ceByDir[dir{r.Src, r.Dst}]...)
	}
	f.Evidence.Details = lines.capped()
	return []Finding{f}
}

// notECT reports RoCE data that switches cannot mark.
func notECT(in *Input) []Finding {
	if in.Collect == nil {
		return nil
	}
	s := &in.Collect.c
	observed := in.Collect.Table.Flows() // what the counts are of, by ID
	var n, data uint64
	var span frameSpan
	var lines detailLines
	f := Finding{Kind: KindECNNotActed, Severity: Warning}
	for _, fl := range in.Flows {
		id := fl.ID
		if id < 1 || id > len(observed) {
			continue
		}
		r := s.rareOf(id)
		o := countsOf(observed[id-1], r)
		data += o.ectData + o.notECTData
		if o.notECTData == 0 {
			continue
		}
		n += o.notECTData
		span.add(r.firstNotECTOf())
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		lines.add(func() string {
			return fmt.Sprintf("flow %d %s: %d of %d data packets not ECN-capable", fl.ID, flowName(fl), o.notECTData, o.notECTData+o.ectData)
		})
	}
	if n == 0 {
		return nil
	}
	f.Title = notECTTitle(uint64(len(f.Flows)))
	f.Detail = fmt.Sprintf("%d of %d RoCE data packets carry ECN 00 (not ECT). Switches cannot mark them, so no CNP is ever sent and DCQCN never "+
		"slows these QPs: under load they fill switch buffers until PFC pauses the link.", n, data)
	f.Evidence = Evidence{Counts: map[string]float64{"not_ect_packets": float64(n), "data_packets": float64(data), "flows": float64(len(f.Flows))}, Details: lines.capped()}
	if span.ok {
		f.Evidence.First = evFrame(in, span.first)
	}
	f.Next = "On the sending hosts, check that DCQCN's reaction point is enabled for the RoCE priority (`/sys/class/net/<if>/ecn/roce_rp/enable/<prio>`) " +
		"and that the application's traffic class keeps the ECT bits (RDMA CM tos, NCCL_IB_TC)."
	return []Finding{f}
}

// dscpMismatch reports flows whose data or CNPs are off the expected DSCP.
func dscpMismatch(in *Input) []Finding {
	if in.Collect == nil {
		return nil
	}
	sc := in.flowScan()
	s := &in.Collect.c
	var out []Finding
	for _, class := range []string{"data", "CNP"} {
		want, ci := in.Config.DataDSCP, dscpData
		if class == "CNP" {
			want, ci = in.Config.CNPDSCP, dscpCNP
		}
		var total, wrong uint64
		var span frameSpan
		var lines detailLines
		f := Finding{Kind: KindDSCPMismatch, Severity: Warning}
		values := map[uint8]uint64{}
		// Collector.DSCP's checks, made only for the flows with wrong
		// packets (TestDSCPChecks holds this to Collector.DSCP).
		for i, of := range in.Collect.Table.Flows() {
			r := s.rareOf(i + 1)
			o := countsOf(of, r)
			n, all := o.dataWrong, o.data
			if class == "CNP" {
				n, all = o.cnpWrong, o.cnp
			}
			total += all
			if n == 0 {
				continue
			}
			d := s.check(i+1, of)
			fl := sc.flow(d.FlowID)
			if fl == nil {
				continue
			}
			wrong += n
			// The class's own first and last wrong packet: a flow of
			// ACKs and CNPs can have both kinds wrong.
			span.add(r.classFirst[ci])
			span.add(r.classLast[ci])
			f.Flows = append(f.Flows, fl.ID)
			f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
			byValue := r.wrongValues(ci)
			for v, c := range byValue {
				values[v] += c
			}
			lines.add(func() string {
				var vs []string
				for _, v := range slices.Sorted(maps.Keys(byValue)) {
					vs = append(vs, fmt.Sprintf("%d on DSCP %d", byValue[v], v))
				}
				return fmt.Sprintf("flow %d %s: %d of %d %s packets wrong (%s)", fl.ID, flowName(fl), n, all, class, strings.Join(vs, ", "))
			})
		}
		if wrong == 0 {
			continue
		}
		var vs []string
		for _, v := range slices.Sorted(maps.Keys(values)) {
			vs = append(vs, fmt.Sprintf("%d", v))
		}
		f.Evidence = Evidence{Counts: map[string]float64{
			"wrong_packets": float64(wrong), strings.ToLower(class) + "_packets": float64(total), "expected_dscp": float64(want), "flows": float64(len(f.Flows)),
		}, Details: lines.capped()}
		span.set(in, &f.Evidence)
		if class == "data" {
			if float64(wrong) >= 0.5*float64(total) {
				f.Severity = Critical
			}
			f.Title = dscpTitle(class, wrong, want)
			f.Detail = fmt.Sprintf("%d of %d RoCE data packets carry DSCP %s instead of %d. The switches map DSCP to a priority, so these "+
				"packets miss the lossless RoCE queue: they can be dropped (go-back-N retransmissions) or paused on a class that "+
				"does not expect PFC, and they are not ECN-marked like the rest.", wrong, total, strings.Join(vs, ", "), want)
			f.Next = "Check the traffic class the application sets (NCCL_IB_TC, RDMA CM tos, `cma_roce_tos`) and the HCA's trust mode and " +
				"DSCP-to-priority map (`mlnx_qos -i <if>`: trust dscp, dscp2prio), and the switch's QoS map on these ports."
		} else {
			f.Title = dscpTitle(class, wrong, want)
			f.Detail = fmt.Sprintf("%d of %d CNPs carry DSCP %s instead of %d. CNPs belong on their own strict-priority class; queued behind data "+
				"they reach the sender late and DCQCN reacts after the queue has already built.", wrong, total, strings.Join(vs, ", "), want)
			f.Next = "Check the CNP DSCP and priority on the receiving HCAs (`/sys/class/net/<if>/ecn/roce_np/cnp_dscp` and `cnp_802p_prio`) and the switch's CNP queue."
		}
		out = append(out, f)
	}
	return out
}

// pcpMismatch reports flows whose tagged data or CNPs are off the expected
// 802.1Q priority (the PCP of the innermost frame's innermost tag, IEEE
// 802.1Q §6.9.3), one finding per class as dscpMismatch.
func pcpMismatch(in *Input) []Finding {
	if in.Collect == nil {
		return nil
	}
	sc := in.flowScan()
	s := &in.Collect.c
	var out []Finding
	for _, class := range []string{"data", "CNP"} {
		want, ci := in.Config.DataPCP, dscpData
		if class == "CNP" {
			want, ci = in.Config.CNPPCP, dscpCNP
		}
		var total, wrong uint64
		var span frameSpan
		var lines detailLines
		var values [8]uint64
		f := Finding{Kind: KindPCPMismatch, Severity: Warning}
		for i, of := range in.Collect.Table.Flows() {
			r := s.rareOf(i + 1)
			o := countsOf(of, r)
			all := o.data
			if class == "CNP" {
				all = o.cnp
			}
			total += all
			w := r.wrongPCPOf(ci)
			if w == nil {
				continue
			}
			fl := sc.flow(i + 1)
			if fl == nil {
				continue
			}
			wrong += w.packets
			span.add(w.first)
			span.add(w.last)
			f.Flows = append(f.Flows, fl.ID)
			f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
			for v, n := range w.byValue {
				values[v] += n
			}
			lines.add(func() string {
				return fmt.Sprintf("flow %d %s: %d of %d %s packets tagged off priority %d (%s)", fl.ID, flowName(fl), w.packets, all, class,
					want, pcpValues(&w.byValue))
			})
		}
		if wrong == 0 {
			continue
		}
		f.Evidence = Evidence{Counts: map[string]float64{
			"wrong_packets": float64(wrong), strings.ToLower(class) + "_packets": float64(total), "expected_pcp": float64(want), "flows": float64(len(f.Flows)),
		}, Details: lines.capped()}
		span.set(in, &f.Evidence)
		f.Title = pcpTitle(class, wrong, want)
		if class == "data" {
			f.Detail = fmt.Sprintf("%d of %d RoCE data packets carry an 802.1Q tag with another priority than %d (%s). PFC protects only "+
				"the lossless priority: on a priority without PFC these packets are dropped when a queue fills (go-back-N retransmissions), "+
				"and on another one they share a queue, its pauses and its ECN marking with traffic they should not. Untagged frames are not judged.",
				wrong, total, want, pcpValues(&values))
			f.Next = fmt.Sprintf("On the sending HCAs check the priority RoCE is sent on: `mlnx_qos -i <if>` (trust mode; with trust pcp the "+
				"prio map, and PFC enabled on priority %d), the VLAN interface's egress-qos-map (`ip -d link show <vlan-if>`) and the "+
				"application's traffic class (NCCL_IB_TC, RDMA CM tos); then the switch's trust and remark settings on these ports.", want)
		} else {
			f.Detail = fmt.Sprintf("%d of %d CNPs carry an 802.1Q tag with another priority than %d (%s). CNPs belong on their own "+
				"strict-priority queue; queued behind data they reach the sender late and DCQCN reacts after the queue has already built.",
				wrong, total, want, pcpValues(&values))
			f.Next = "Check the CNP priority on the receiving HCAs (`/sys/class/net/<if>/ecn/roce_np/cnp_802p_prio`, and `mlnx_qos -i <if>` " +
				"trust mode and prio map), the VLAN interface's egress-qos-map, and the switch's trust and remark settings and CNP queue on these ports."
		}
		out = append(out, f)
	}
	return out
}

// pcpValues writes packets by priority: "12 on priority 0, 3 on priority 5".
func pcpValues(byValue *[8]uint64) string {
	var vs []string
	for v, n := range byValue {
		if n > 0 {
			vs = append(vs, fmt.Sprintf("%d on priority %d", n, v))
		}
	}
	return strings.Join(vs, ", ")
}

// pfcFinding reports PFC pause frames per priority.
func pfcFinding(in *Input) (Finding, bool) {
	if in.Collect == nil {
		return Finding{}, false
	}
	prio, pause := in.Collect.PFC()
	var xoff, storms uint64
	var span frameSpan
	var lines []string
	var stormPrios []int
	var worstShare float64
	capSpan := in.Capture.Last.Sub(in.Capture.First)
	if capSpan <= 0 && in.Collect.c.started {
		capSpan = in.Collect.c.last.Sub(in.Collect.c.first)
	}
	counts := map[string]float64{}
	for i := range prio {
		p := &prio[i]
		if p.Frames == 0 {
			continue
		}
		st := &in.Collect.c.pfc.prio[i]
		xoff += p.XOFF
		storms += uint64(p.Storms)
		span.add(*p.First)
		span.add(*p.Last)
		share := 0.0
		if capSpan > 0 {
			share = float64(st.pausedT) / float64(capSpan)
		}
		worstShare = max(worstShare, share)
		pfx := fmt.Sprintf("priority_%d_", i)
		counts[pfx+"frames"] = float64(p.Frames)
		counts[pfx+"xoff"] = float64(p.XOFF)
		counts[pfx+"xon"] = float64(p.XON)
		counts[pfx+"pause_quanta"] = float64(p.PauseQuanta)
		counts[pfx+"paused_us"] = float64(st.pausedT) / float64(time.Microsecond)
		counts[pfx+"storms"] = float64(p.Storms)
		from := "from " + net.HardwareAddr(st.most[:]).String()
		if st.senders > 1 {
			from = fmt.Sprintf("from %d senders", st.senders)
		}
		line := fmt.Sprintf("priority %d: %s %s (%d XOFF, %d XON), %d quanta, paused %s", i, plural(p.Frames, "frame"), from, p.XOFF, p.XON,
			p.PauseQuanta, flowtable.HumanDuration(st.pausedT))
		if capSpan > 0 {
			line += " (" + percent(float64(st.pausedT), float64(capSpan)) + " of the capture)"
		}
		if st.senders > 1 {
			line += " by " + net.HardwareAddr(st.most[:]).String() + ", the sender that paused it longest"
		}
		line += ", longest pause " + flowtable.HumanDuration(st.longest)
		if p.Storms > 0 {
			line += fmt.Sprintf(", %s, longest %s", plural(p.Storms, "storm"), flowtable.HumanDuration(p.LongestStorm))
			stormPrios = append(stormPrios, i)
		}
		lines = append(lines, line)
	}
	frames := in.Collect.c.pfc.frames
	if frames == 0 && pause == 0 {
		return Finding{}, false
	}
	counts["pfc_frames"] = float64(frames)
	counts["xoff_frames"] = float64(xoff)
	counts["storms"] = float64(storms)
	counts["pause_frames_802_3x"] = float64(pause)
	f := Finding{
		Kind:     KindPFC,
		Severity: Info,
		Evidence: Evidence{Counts: counts, Details: capped(lines)},
		Next: "Find the port that sends the pauses (switch PFC counters per priority, `ethtool -S <if> | grep pause` on the HCAs) and what " +
			"keeps its queue full; check that the PFC watchdog is on. PFC on the RoCE priority should be rare when DCQCN works.",
	}
	span.set(in, &f.Evidence)
	switch {
	case storms > 0:
		f.Severity = Critical
		f.Title = pfcTitle(stormPrios, frames, pause)
		f.Detail = fmt.Sprintf("A priority stayed paused without a break for longer than %s (every XOFF arrived before the previous pause ran out, "+
			"at an assumed %d Gb/s). A storm stops every QP on that priority behind the paused port and spreads upstream hop by hop: "+
			"the AllReduce stalls and NCCL may time out.", flowtable.HumanDuration(PFCStormDuration), PFCLinkGbps)
	default:
		if worstShare >= 0.01 || pause > 0 {
			f.Severity = Warning
		}
		f.Title = pfcTitle(nil, frames, pause)
		f.Detail = fmt.Sprintf("Switches or HCAs sent %d XOFF pauses; the paused time assumes %d Gb/s links. PFC keeps RoCE lossless, "+
			"but every pause stalls all QPs on that priority of the link, so pauses on a large share of the capture slow the AllReduce "+
			"and show that DCQCN is not keeping queues short.", xoff, PFCLinkGbps)
		if frames == 0 {
			f.Detail = "The capture holds no PFC (per-priority) pause frame."
		}
	}
	if pause > 0 {
		f.Detail += fmt.Sprintf(" %d 802.3x link-level PAUSE frames stop every priority of the link, not just RoCE: global pause should be off where PFC is used.", pause)
	}
	pfcWithoutRoCE(in, &prio, &f)
	return f, true
}

// pfcWithoutRoCE says which priorities the pfc finding f saw paused
// (XOFF) carried none of the capture's RoCE data packets tagged with an
// 802.1Q priority: their pauses hold back other traffic, or PFC is on
// another priority than RoCE is sent on. Nothing when no RoCE data was
// tagged (its priority is not in the capture).
func pfcWithoutRoCE(in *Input, prio *[8]PFCPriority, f *Finding) {
	var tagged [8]uint64 // RoCE data packets by the priority of their tag
	tagged[in.Config.DataPCP&7] = in.Collect.c.taggedData
	for i := range in.Collect.Table.Flows() {
		if w := in.Collect.c.rareOf(i + 1).wrongPCPOf(dscpData); w != nil {
			for v, n := range w.byValue {
				tagged[v] += n
			}
		}
	}
	var total uint64
	var on []string
	for v, n := range tagged {
		total += n
		if n > 0 {
			on = append(on, strconv.Itoa(v))
		}
	}
	if total == 0 {
		return
	}
	var none []string
	for i := range prio {
		if prio[i].XOFF > 0 && tagged[i] == 0 {
			none = append(none, strconv.Itoa(i))
		}
	}
	if len(none) == 0 {
		return
	}
	f.Evidence.Counts["paused_priorities_without_roce"] = float64(len(none))
	what := "Priority " + none[0] + " was"
	if len(none) > 1 {
		what = "Priorities " + strings.Join(none, ", ") + " were"
	}
	f.Detail += fmt.Sprintf(" %s paused but carried none of the %d tagged RoCE data packets (they were on priority %s): "+
		"the pauses hold back other traffic, or PFC is enabled on another priority than the one RoCE is sent on, which then has no lossless class "+
		"(check `mlnx_qos -i <if>` on the HCAs and the switch's PFC priorities).", what, total, strings.Join(on, ", "))
}

// The titles of the ecn_not_acted, dscp_mismatch, pcp_mismatch and pfc findings, from
// what their counts say: the module makes them here, and so does merge for
// the findings it combines (titleFromCounts).

func ecnNotActedTitle(notActed uint64) string {
	return fmt.Sprintf("%s got no CNP back (ECN not acted on)", plural(notActed, "CE-marked packet"))
}

func notECTTitle(flows uint64) string {
	return fmt.Sprintf("RoCE data is not ECN-capable on %s: congestion control is off", plural(flows, "flow"))
}

// dscpTitle is the title for wrong packets of class ("data" or "CNP") not
// on DSCP want.
func dscpTitle(class string, wrong uint64, want uint8) string {
	if class == "CNP" {
		return fmt.Sprintf("%s not on DSCP %d", plural(wrong, "CNP"), want)
	}
	return fmt.Sprintf("%s of RoCE data not on DSCP %d", plural(wrong, "packet"), want)
}

// pcpTitle is the title for tagged packets of class ("data" or "CNP") not
// on 802.1Q priority want.
func pcpTitle(class string, wrong uint64, want uint8) string {
	if class == "CNP" {
		return fmt.Sprintf("%s not on priority %d", plural(wrong, "CNP"), want)
	}
	return fmt.Sprintf("%s of RoCE data not on priority %d", plural(wrong, "packet"), want)
}

// pfcTitle names the priorities that had a pause storm, else the frames:
// PFC (802.1Qbb) frames and 802.3x PAUSE frames apart, as a capture of
// link-level PAUSE alone holds no PFC frame.
func pfcTitle(stormPrios []int, pfc, pause uint64) string {
	if len(stormPrios) == 0 {
		switch {
		case pfc == 0:
			return plural(pause, "802.3x link-level PAUSE frame")
		case pause == 0:
			return fmt.Sprintf("%s paused traffic", plural(pfc, "PFC frame"))
		}
		return fmt.Sprintf("%s and %s paused traffic", plural(pfc, "PFC frame"), plural(pause, "802.3x PAUSE frame"))
	}
	var ps []string
	for _, p := range stormPrios {
		ps = append(ps, strconv.Itoa(p))
	}
	return fmt.Sprintf("PFC pause storm on priority %s", strings.Join(ps, ", "))
}

// peakPerWindow is the most events of s in any window of width w (at
// least one bin) sliding bin by bin, and the window's start: a rate that
// does not depend on how fine the timeline's bins are.
// cnpPeak puts the CNPs' peak rate in ev (peak_cnps_per_ms) and returns
// the sentence that says it. The time bins are 1 µs wide and double as a
// capture runs longer, so that there are at most timelineMaxBins: past
// ~200 ms of capture a bin is wider than a millisecond and the busiest
// bin's count is not a millisecond's. Then peak_cnps_per_ms is that bin's
// mean per millisecond (the busiest millisecond in it had at least as
// many) and peak_cnps_bin_ms says how wide the bin is.
func cnpPeak(cnps Series, ev *Evidence) string {
	peak, at := peakPerWindow(cnps, time.Millisecond)
	stamp := at.UTC().Format("15:04:05.000000")
	if cnps.Bin <= time.Millisecond {
		ev.Counts["peak_cnps_per_ms"] = peak
		return fmt.Sprintf("CNPs peaked at %.0f in the millisecond starting %s. ", peak, stamp)
	}
	ms := float64(cnps.Bin) / float64(time.Millisecond)
	ev.Counts["peak_cnps_per_ms"] = peak / ms
	ev.Counts["peak_cnps_bin_ms"] = ms
	bin := flowtable.HumanDuration(cnps.Bin)
	return fmt.Sprintf("CNPs peaked at %.0f in the %s starting %s, %.1f a millisecond "+
		"(on a capture this long the report's time bins are %s wide). ", peak, bin, stamp, peak/ms, bin)
}

func peakPerWindow(s Series, w time.Duration) (peak float64, start time.Time) {
	k := 1
	if s.Bin > 0 && w > s.Bin {
		k = int((w + s.Bin - 1) / s.Bin)
	}
	sum, at := 0.0, 0
	for i, v := range s.Bins {
		sum += v
		if i >= k {
			sum -= s.Bins[i-k]
		}
		if sum > peak {
			peak, at = sum, max(0, i-k+1)
		}
	}
	return peak, s.Start.Add(time.Duration(at) * s.Bin)
}
