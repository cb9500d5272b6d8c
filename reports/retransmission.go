package reports

import (
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/topology"
)

// Severity thresholds of Retransmissions.
const (
	// retxCriticalShare and retxCriticalPackets: a recovery mechanism whose
	// resent packets are at least this share of the capture's RoCE packets,
	// and at least this many, is critical.
	retxCriticalShare   = 0.01
	retxCriticalPackets = 100
	// mirrorUntrustedShare and mirrorUntrustedPSNs, or mirrorUntrustedFlows:
	// mirror loss this widespread makes the capture untrustworthy for loss
	// analysis (critical).
	mirrorUntrustedShare = 0.001
	mirrorUntrustedPSNs  = 10
	mirrorUntrustedFlows = 8
)

// Retransmissions reports loss and recovery on reliable (RC) queue pairs.
// It reads the counters the flows package keeps per flow (Flow.Retx, NAKs,
// RNR NAKs, READ response resends; their exact definitions are in the flows
// package doc, "Retransmissions and loss") and re-derives no PSN state.
//
// Findings of kind retransmission, one per mechanism seen, and their
// severity:
//   - fatal NAKs, one finding per code (remote_access_err, invalid_request,
//     remote_op_err, invalid_rd_request; reserved codes together): critical,
//     as the requester's QP went to the error state;
//   - go-back-N (PSN sequence error NAKs and the resends answering them),
//     ACK timeouts (resends no NAK asked for), RNR NAKs with their retries,
//     and re-issued READ requests: warning; critical when the packets that
//     mechanism resent are 1% or more of the capture's RoCE packets and at
//     least 100.
//
// One finding of kind mirror_loss for request PSNs the responder
// acknowledged though the capture holds no copy (delivered, missed by the
// mirror): warning; critical when widespread (0.1% or more of the RoCE
// packets and at least 10 PSNs, or on 8 or more flows), with a title that
// says the capture cannot be trusted for loss analysis.
func Retransmissions(in *Input) []Finding {
	defer in.scanning()()
	roce := in.scan.packets
	out := fatalNAKFindings(in)
	for _, mk := range []func(*Input, uint64) (Finding, bool){goBackNFinding, timeoutFinding, rnrFinding, reissuedReadFinding, mirrorLossFinding} {
		if f, ok := mk(in, roce); ok {
			out = append(out, f)
		}
	}
	if note := captureDropsNote(in.Capture.Drops); note != "" {
		for i := range out {
			if _, gaps := out[i].Evidence.Counts["fabric_lost_psns"]; gaps {
				out[i].Detail += note
			}
		}
	}
	return out
}

// captureDropsNote is what the findings that count lost PSNs (go-back-N,
// ACK timeouts, re-issued READs, mirror loss: those with fabric_lost_psns)
// add when a live capture dropped packets: their PSN gaps may be the
// capture's own drops, and a NAK it dropped turns a go-back-N into what
// looks like an ACK timeout. "" when nothing was dropped.
func captureDropsNote(d *Drops) string {
	if d == nil || d.Kernel+d.Interface == 0 {
		return ""
	}
	return fmt.Sprintf(" The capture itself dropped %s (%d in the kernel, %d at the interface; see capture_health): a PSN gap here may be "+
		"one of them rather than a packet the fabric lost or the mirror missed, and a NAK it dropped makes a go-back-N look like an ACK timeout, "+
		"so these counts are unreliable.", retxPlural(d.Kernel+d.Interface, "packet", "packets"), d.Kernel, d.Interface)
}

// nodeName names the node of ip: the topology's node name, or the address.
func nodeName(in *Input, ip netip.Addr) string {
	if in.Topology != nil {
		return in.Topology.NodeOf(ip)
	}
	return ip.String()
}

// retxGroup gathers the flows, nodes, frames and detail lines of a finding.
type retxGroup struct {
	in          *Input
	flows       []int
	nodes       []string
	first, last flows.FrameRef
	framed      bool
	rows        []retxRow // the first maxLines rows in the order fill lists them
	nrows       int       // rows added
}

// maxLines is how many detail lines a retransmission finding lists; the
// rest are counted in an "and N more" line.
const maxLines = 10

type retxRow struct {
	weight uint64
	id     int
	text   string
}

// conn adds a flow and its partner, and both endpoints.
func (g *retxGroup) conn(f *flows.Flow) {
	g.flows = append(g.flows, f.ID)
	if f.Partner != nil {
		g.flows = append(g.flows, f.Partner.ID)
	}
	g.nodes = append(g.nodes, nodeName(g.in, f.Key.Src), nodeName(g.in, f.Key.Dst))
}

// frames widens the evidence frames with f's events of the given kinds.
func (g *retxGroup) frames(f *flows.Flow, kinds ...flows.RetxEventKind) {
	for _, k := range kinds {
		if first, last, ok := f.RetxSpan(k); ok {
			g.frame(first)
			g.frame(last)
		}
	}
}

func (g *retxGroup) frame(r flows.FrameRef) {
	if !g.framed || retxBefore(r, g.first) {
		g.first = r
	}
	if !g.framed || retxBefore(g.last, r) {
		g.last = r
	}
	g.framed = true
}

func retxBefore(a, b flows.FrameRef) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.Before(b.Time)
	}
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Frame < b.Frame
}

// row adds a detail line for flow f, ranked by weight (larger first, then
// by flow ID). Only the maxLines first are kept, so text is called only
// for a row that ranks among them when it is added.
func (g *retxGroup) row(weight uint64, f *flows.Flow, text func() string) {
	g.nrows++
	// before reports whether a ranks before the new row.
	before := func(a retxRow) bool { return a.weight > weight || a.weight == weight && a.id < f.ID }
	if len(g.rows) == maxLines && before(g.rows[maxLines-1]) {
		return
	}
	i := len(g.rows)
	for i > 0 && !before(g.rows[i-1]) {
		i--
	}
	if len(g.rows) < maxLines {
		g.rows = append(g.rows, retxRow{})
	}
	copy(g.rows[i+1:], g.rows[i:len(g.rows)-1])
	g.rows[i] = retxRow{weight, f.ID, retxFlowLabel(f) + ": " + text()}
}

// fill writes the gathered lists into the finding, flows and nodes sorted
// and each once.
func (g *retxGroup) fill(fd *Finding) {
	slices.Sort(g.flows)
	slices.SortFunc(g.nodes, topology.CompareNames)
	fd.Flows = slices.Compact(g.flows)
	fd.Nodes = slices.Compact(g.nodes)
	if g.framed {
		fd.Evidence.First, fd.Evidence.Last = retxFrame(g.in, g.first), retxFrame(g.in, g.last)
	}
	for _, r := range g.rows {
		fd.Evidence.Details = append(fd.Evidence.Details, r.text)
	}
	if g.nrows > maxLines {
		fd.Evidence.Details = append(fd.Evidence.Details, fmt.Sprintf("and %d more", g.nrows-maxLines))
	}
}

func retxFrame(in *Input, r flows.FrameRef) *Frame {
	fr := &Frame{Frame: r.Frame, Time: r.Time}
	if r.File >= 0 && r.File < len(in.Capture.Files) {
		fr.File = in.Capture.Files[r.File]
	}
	return fr
}

// retxFlowLabel is "10.0.0.1 > 10.0.0.2 qp 0x000201 (flow 3)".
func retxFlowLabel(f *flows.Flow) string {
	return fmt.Sprintf("%s > %s qp 0x%06x (flow %d)", f.Key.Src, f.Key.Dst, f.Key.DestQP, f.ID)
}

// retxSeverity applies the share rule to resent packets.
func retxSeverity(resent, roce uint64) Severity {
	if resent >= retxCriticalPackets && float64(resent) >= retxCriticalShare*float64(roce) {
		return Critical
	}
	return Warning
}

// ms is a duration in milliseconds, for counts.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// retxDur formats a duration for text: "0 µs", "12 µs", "1.28 ms", "4.3 s".
func retxDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64) + " µs"
	case d < time.Second:
		return strconv.FormatFloat(math.Round(ms(d)*1000)/1000, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(math.Round(d.Seconds()*1000)/1000, 'f', -1, 64) + " s"
}

// retxPlural writes "1 packet", "3 packets"; an empty noun leaves the number alone.
// retxRange writes "1.28 ms", or "10 µs to 640 µs" when min and max differ.
func retxRange(lo, hi time.Duration) string {
	if lo == hi {
		return retxDur(lo)
	}
	return retxDur(lo) + " to " + retxDur(hi)
}

func retxPlural(n uint64, one, many string) string {
	noun := many
	if n == 1 {
		noun = one
	}
	if noun == "" {
		return strconv.FormatUint(n, 10)
	}
	return strconv.FormatUint(n, 10) + " " + noun
}

func retxShare(part, whole uint64) string {
	if whole == 0 {
		return "0%"
	}
	p := 100 * float64(part) / float64(whole)
	if p >= 10 {
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	}
	return strconv.FormatFloat(p, 'g', 2, 64) + "%"
}

// counterHint is where the HCA counts what the capture shows.
const counterHint = "On both hosts' HCAs read the RDMA counters: `rdma statistic show link mlx5_X/1`, or " +
	"`grep -H . /sys/class/infiniband/mlx5_X/ports/1/hw_counters/* | grep -E 'out_of_sequence|packet_seq_err|rnr_nak|local_ack_timeout'`."

// fatalNAK says what each fatal NAK code means and what to check.
var fatalNAK = map[bth.NAKCode]struct{ name, what, next string }{
	bth.NAKRemoteAccessError: {"remote access error",
		"The responder refused an RDMA access: an R_Key it does not know, an address outside the memory region, or access rights the region lacks. " +
			"The requester's work request completes with IBV_WC_REM_ACCESS_ERR. This is almost always the application (a buffer deregistered or freed while in use, " +
			"a stale R_Key), not the network.",
		"Look for IBV_WC_REM_ACCESS_ERR / \"remote access error\" in the requester's logs (NCCL: NCCL_DEBUG=INFO), memory registration on the responder " +
			"(GPUDirect RDMA: nvidia-peermem loaded, BAR1 space), and the counters req_remote_access_errors / resp_remote_access_errors."},
	bth.NAKInvalidRequest: {"invalid request",
		"The responder could not accept the request: an opcode its QP does not allow, a SEND longer than the posted receive buffer, or a request past its limits. " +
			"The requester's work request completes with IBV_WC_REM_INV_REQ_ERR.",
		"Compare message sizes with the receive buffers posted at the responder, the QP access flags and max_dest_rd_atomic at both ends, and library versions; " +
			"counter req_remote_invalid_request."},
	bth.NAKRemoteOperationalError: {"remote operational error",
		"The responder failed to complete the request for a reason of its own (its receive queue, CQ or memory hit an error). " +
			"The requester's work request completes with IBV_WC_REM_OP_ERR.",
		"Check the responder host: `dmesg` for mlx5 errors, CQ overruns, and its application logs; counters resp_local_length_error and resp_cqe_error."},
	bth.NAKInvalidRDRequest: {"invalid RD request",
		"The responder rejected the request as an invalid Reliable Datagram request (IBTA Table 43, code 4). On an RC QP this points at a responder that " +
			"mis-parsed the request or a non-conforming implementation.",
		"Check the HCA firmware and driver versions at both ends and the responder's logs."},
}

// fatalNAKCodes are the fatal NAK codes (IBTA Table 43), in the order
// fatalNAKFindings reports them.
var fatalNAKCodes = []bth.NAKCode{bth.NAKRemoteAccessError, bth.NAKInvalidRequest, bth.NAKRemoteOperationalError, bth.NAKInvalidRDRequest}

// fatalNAKFindings makes one critical finding per fatal NAK code seen, and
// one for reserved codes.
func fatalNAKFindings(in *Input) []Finding {
	var out []Finding
	for _, code := range fatalNAKCodes {
		g := retxGroup{in: in}
		var naks, qps uint64
		for _, f := range in.flowScan().retx { // the others have none of it
			n := f.NAKs[code]
			if n == 0 {
				continue
			}
			naks += n
			qps++
			g.conn(f)
			for _, e := range f.RetxEvents() {
				if e.Kind == flows.EventNAK && bth.NAKCode(e.Code) == code {
					g.frame(e.At)
				}
			}
			g.row(n, f, func() string {
				req := "no request flow paired"
				if f.Partner != nil {
					req = "answering " + retxFlowLabel(f.Partner)
				}
				return fmt.Sprintf("%s NAK %s, %s", retxPlural(n, "", ""), code, req)
			})
		}
		if naks == 0 {
			continue
		}
		m := fatalNAK[code]
		fd := Finding{
			Kind:     KindRetransmission,
			Severity: Critical,
			Title:    fatalNAKTitle(code, qps),
			Detail: fmt.Sprintf("The responder sent %s %s (%s) on %s. %s A fatal NAK is not retried: the QP moves to the error state and every "+
				"outstanding work request on it is flushed, so the job sees a failed transfer (NCCL aborts the communicator).",
				retxPlural(naks, "NAK", "NAKs"), code, m.name, retxPlural(qps, "QP", "QPs"), m.what),
			Evidence: Evidence{Counts: map[string]float64{
				"fatal_naks": float64(naks), "naks_" + code.String(): float64(naks), "qps": float64(qps),
			}},
			Next: m.next,
		}
		g.fill(&fd)
		out = append(out, fd)
	}
	// Reserved codes.
	g := retxGroup{in: in}
	var other uint64
	for _, f := range in.flowScan().retx { // the others have none of it
		if f.NAKOther == 0 {
			continue
		}
		other += f.NAKOther
		g.conn(f)
		g.frames(f, flows.EventNAK)
		g.row(f.NAKOther, f, func() string { return retxPlural(f.NAKOther, "NAK", "NAKs") + " with a reserved code" })
	}
	if other > 0 {
		fd := Finding{
			Kind:     KindRetransmission,
			Severity: Critical,
			Title:    reservedNAKTitle(other),
			Detail: "NAK codes 5 to 31 are reserved (IBTA Table 43). A requester treats a NAK it does not know as fatal, so the QP went to the error state; " +
				"a reserved code comes from a non-conforming or corrupted responder.",
			Evidence: Evidence{Counts: map[string]float64{"fatal_naks": float64(other), "naks_reserved": float64(other)}},
			Next:     "Check the responder's HCA firmware and driver, and the frames' ICRC (capture_health).",
		}
		g.fill(&fd)
		out = append(out, fd)
	}
	return out
}

// goBackNFinding reports go-back-N episodes and the PSN sequence error NAKs
// that start them.
func goBackNFinding(in *Input, roce uint64) (Finding, bool) {
	g := retxGroup{in: in}
	var episodes, resent, naks, fabric, fabricGaps, qps uint64
	var unsent uint64 // of fabric: named by a NAK, no resend captured
	var recovery, catchUp flows.Durations
	for _, f := range in.flowScan().retx { // the others have none of it
		n := f.NAKs[bth.NAKPSNSequenceError]
		naks += n
		r := &f.Retx
		if r.GBNEpisodes == 0 {
			if n > 0 && f.Partner == nil && nakAnswered(in, f) {
				// Unpaired, but a go-back-N of the host pair answered it.
				g.conn(f)
				g.frames(f, flows.EventNAK)
			} else if n > 0 && (f.Partner == nil || f.Partner.Retx.GBNEpisodes == 0) {
				// A NAK whose resend the capture does not show.
				g.conn(f)
				g.frames(f, flows.EventNAK)
				g.row(0, f, func() string {
					return retxPlural(n, "PSN sequence error NAK", "PSN sequence error NAKs") + ", no resend captured"
				})
			}
			if nakedLoss(f) {
				// The PSNs that NAK named: lost in the fabric all the same.
				fabric += r.FabricLostPSNs
				fabricGaps += r.FabricGaps
				unsent += r.FabricLostPSNs
				g.conn(f)
				g.frames(f, flows.EventFabricLoss)
				g.row(0, f, func() string {
					return fmt.Sprintf("%s lost before the mirror, named by a PSN sequence error NAK, no resend captured",
						retxPlural(r.FabricLostPSNs, "PSN", "PSNs"))
				})
			}
			continue
		}
		qps++
		episodes += r.GBNEpisodes
		resent += r.GBNResent
		fabric += r.FabricLostPSNs
		fabricGaps += r.FabricGaps
		recovery = addDurations(recovery, r.GBNRecovery)
		catchUp = addDurations(catchUp, r.GBNCatchUp)
		g.conn(f)
		g.frames(f, flows.EventGoBackN, flows.EventFabricLoss)
		if f.Partner != nil {
			g.frames(f.Partner, flows.EventNAK)
		}
		g.row(r.GBNResent, f, func() string {
			text := fmt.Sprintf("%s, %s resent", retxPlural(r.GBNEpisodes, "episode", "episodes"), strconv.FormatUint(r.GBNResent, 10))
			if r.GBNRecovery.N > 0 {
				text += ", NAK to resend up to " + retxDur(r.GBNRecovery.Max)
			}
			if r.FabricLostPSNs > 0 {
				text += fmt.Sprintf(", %s lost before the mirror", retxPlural(r.FabricLostPSNs, "PSN", "PSNs"))
			}
			return text
		})
	}
	if episodes == 0 && naks == 0 {
		return Finding{}, false
	}
	fd := Finding{
		Kind:     KindRetransmission,
		Severity: retxSeverity(resent, roce),
		Title:    goBackNTitle(resent, episodes, qps, naks),
		Evidence: Evidence{Counts: map[string]float64{
			"gbn_episodes": float64(episodes), "retransmitted_packets": float64(resent), "psn_seq_err_naks": float64(naks),
			"fabric_lost_psns": float64(fabric), "fabric_gaps": float64(fabricGaps), "qps": float64(qps),
			"recovery_ms_max": ms(recovery.Max), "recovery_ms_mean": ms(recovery.Mean()), "catch_up_ms_max": ms(catchUp.Max),
		}},
		Next: "Packets were dropped between requester and responder. Check, along the path, the switch buffers and ECN/WRED thresholds " +
			"(drops under congestion: see the congestion findings), that PFC is enabled for the RoCE priority on every hop (a lossless class does not drop), " +
			"and link errors: `ethtool -S <netdev> | grep -E 'rx_discards_phy|rx_crc_errors|rx_symbol_err'` on the hosts, FEC/CRC counters and optics " +
			"(DOM levels) on the switch ports. " + counterHint,
	}
	var b strings.Builder
	if episodes == 0 {
		times := "once"
		if naks != 1 {
			times = strconv.FormatUint(naks, 10) + " times"
		}
		fmt.Fprintf(&b, "The responder found a PSN missing (PSN sequence error) and NAKed with the PSN it expected, %s, so that the requester "+
			"goes back N and resends from that PSN on: a packet was lost between requester and responder. The capture holds no resend answering "+
			"them: it ends before the resend, it began after the packets the NAK asks for were first sent, or it does not show the requester's "+
			"direction (a mirror of one direction).", times)
		if fabric > 0 {
			fmt.Fprintf(&b, " %s (%s) never reached the capture point: lost in the fabric before the mirror, they show as PSN gaps "+
				"that the NAKs name.", retxPlural(fabric, "PSN", "PSNs"), retxPlural(fabricGaps, "gap", "gaps"))
		}
		fd.Detail = b.String()
		g.fill(&fd)
		return fd, true
	}
	fmt.Fprintf(&b, "The responder found a PSN missing (PSN sequence error), NAKed with the PSN it expected, and the requester went back N: "+
		"it resent everything from that PSN on, the lost packet and all those behind it. %s on %s resent %s (%s of the RoCE packets in the capture)",
		retxPlural(episodes, "go-back-N episode", "go-back-N episodes"), retxPlural(qps, "QP", "QPs"), retxPlural(resent, "packet", "packets"), retxShare(resent, roce))
	if recovery.N > 0 {
		fmt.Fprintf(&b, "; from the NAK to the first resend took %s at most (mean %s)", retxDur(recovery.Max), retxDur(recovery.Mean()))
	}
	if catchUp.N > 0 {
		fmt.Fprintf(&b, ", to new data %s at most", retxDur(catchUp.Max))
	}
	b.WriteString(".")
	if fabric > 0 {
		fmt.Fprintf(&b, " %s (%s) never reached the capture point the first time: lost in the fabric before the mirror, "+
			"they show as PSN gaps that the resend filled", retxPlural(fabric, "PSN", "PSNs"), retxPlural(fabricGaps, "gap", "gaps"))
		if unsent > 0 {
			fmt.Fprintf(&b, " (for %d of them, on QPs with no episode, a NAK named them and the capture holds no resend)", unsent)
		}
		b.WriteString(".")
	}
	if naks > episodes {
		fmt.Fprintf(&b, " The capture holds %d more PSN sequence error NAKs than episodes: repeated NAKs, or resends it does not show.", naks-episodes)
	}
	b.WriteString(" Go-back-N recovers within microseconds of the NAK, but every loss costs a burst of resent data on a QP the collective is waiting for.")
	fd.Detail = b.String()
	g.fill(&fd)
	return fd, true
}

// nakAnswered says whether a go-back-N episode of a flow from f's
// destination to its source began with the resend that answered one of
// the PSN sequence error NAKs f carries. It is for a flow with no partner:
// the QPs of a host pair that start at the same PSNs (as NCCL's do) may
// stay unpaired, and a NAK pending on several of them is still answered
// by the resend at its PSN (see the flows package doc). An episode's
// event keeps the time from its NAK (Wait), which names the NAK exactly.
func nakAnswered(in *Input, f *flows.Flow) bool {
	var naks []time.Time
	for _, e := range f.RetxEvents() {
		if e.Kind == flows.EventNAK && bth.NAKCode(e.Code) == bth.NAKPSNSequenceError {
			naks = append(naks, e.At.Time)
		}
	}
	if len(naks) == 0 {
		return false
	}
	for _, r := range in.flowScan().retx {
		if r.Retx.GBNEpisodes == 0 || r.Key.Src != f.Key.Dst || r.Key.Dst != f.Key.Src {
			continue
		}
		for _, e := range r.RetxEvents() {
			if e.Kind == flows.EventGoBackN && slices.ContainsFunc(naks, e.At.Time.Add(-e.Wait).Equal) {
				return true
			}
		}
	}
	return false
}

// nakedLoss says whether f, a flow with no go-back-N episode, has fabric
// loss that a PSN sequence error NAK named but the capture holds no resend
// of, which the go-back-N finding counts (no ACK-timeout finding has the
// flow, and so no finding would). Fabric loss is decided by a resend
// captured out of order, which starts an episode, or by such a NAK (see
// the flows package doc): with no go-back-N episode, no timeout and no
// resend after a re-issued READ (the re-issued READ finding counts that
// loss), it is the NAK's, unless an RNR retry resent it (the only other
// episode a resend can start) and no PSN sequence error NAK answers the
// flow.
func nakedLoss(f *flows.Flow) bool {
	r := &f.Retx
	return r.FabricLostPSNs > 0 && r.GBNEpisodes == 0 && r.Timeouts == 0 && f.ReissueResent() == 0 &&
		(r.RNRRetries == 0 || f.Partner != nil && f.Partner.NAKs[bth.NAKPSNSequenceError] > 0)
}

func addDurations(a, b flows.Durations) flows.Durations {
	if b.N == 0 {
		return a
	}
	if a.N == 0 {
		return b
	}
	a.N += b.N
	a.Sum += b.Sum
	a.Min = min(a.Min, b.Min)
	a.Max = max(a.Max, b.Max)
	return a
}

// impliedAckTimeout is the local_ack_timeout exponent n whose timeout,
// 4.096 µs × 2^n, is closest to d (in log scale).
func impliedAckTimeout(d time.Duration) int {
	if d < 4096*time.Nanosecond {
		return 0
	}
	return int(math.Round(math.Log2(float64(d) / 4096)))
}

// timeoutHint reads the waits: the local_ack_timeout they match, or, for
// waits under a millisecond (below any ACK timeout set in practice), NAKs
// the capture missed.
func timeoutHint(wait flows.Durations, n int) string {
	if wait.Min < time.Millisecond {
		return "A wait under a millisecond is shorter than any ACK timeout used in practice: the capture probably missed the NAKs that asked for " +
			"some of these resends. "
	}
	return fmt.Sprintf("That matches local_ack_timeout ≈ %d (%s). ", n, retxDur(time.Duration(4096*math.Pow(2, float64(n)))))
}

// timeoutFinding reports resends no NAK asked for.
func timeoutFinding(in *Input, roce uint64) (Finding, bool) {
	g := retxGroup{in: in}
	var timeouts, resent, qps, fabric uint64
	var oneWay, oneWayTimeouts uint64
	var seen map[[2]netip.Addr]bool
	var wait flows.Durations
	for _, f := range in.flowScan().retx { // the others have none of it
		r := &f.Retx
		if r.Timeouts == 0 {
			continue
		}
		if seen == nil {
			seen = hostDirections(in)
		}
		back := !seenOneWay(seen, f)
		if !back {
			oneWay++
			oneWayTimeouts += r.Timeouts
		}
		qps++
		timeouts += r.Timeouts
		resent += r.TimeoutResent
		wait = addDurations(wait, r.TimeoutWait)
		g.conn(f)
		g.frames(f, flows.EventTimeout)
		// With go-back-N, the go-back-N finding counts the fabric loss.
		lost := r.GBNEpisodes == 0 && r.FabricLostPSNs > 0
		if lost {
			fabric += r.FabricLostPSNs
			g.frames(f, flows.EventFabricLoss)
		}
		g.row(r.TimeoutResent, f, func() string {
			text := fmt.Sprintf("%s, %d resent, waited %s", retxPlural(r.Timeouts, "timeout", "timeouts"),
				r.TimeoutResent, retxRange(r.TimeoutWait.Min, r.TimeoutWait.Max))
			if lost {
				text += fmt.Sprintf(", %s lost before the mirror", retxPlural(r.FabricLostPSNs, "PSN", "PSNs"))
			}
			if !back {
				text += ", nothing captured back"
			}
			return text
		})
	}
	if timeouts == 0 {
		return Finding{}, false
	}
	n := impliedAckTimeout(wait.Max)
	fd := Finding{
		Kind:     KindRetransmission,
		Severity: retxSeverity(resent, roce),
		Title:    timeoutTitle(resent, timeouts, qps),
		Detail: fmt.Sprintf("These resends had no NAK before them: a packet was lost with nothing behind it to reveal the gap (the tail of a message, "+
			"or the NAK or ACK itself), so the requester waited for its ACK timeout, 4.096 µs × 2^local_ack_timeout, and resent from the oldest "+
			"unacknowledged PSN. The QP moved no data while it waited: %s here. %s"+
			"After retry_cnt timeouts in a row (ConnectX retry_cnt, at most 7) the QP fails with \"transport retry counter exceeded\" "+
			"(IBV_WC_RETRY_EXC_ERR).", retxRange(wait.Min, wait.Max), timeoutHint(wait, n)),
		Evidence: Evidence{Counts: map[string]float64{
			"timeouts": float64(timeouts), "retransmitted_packets": float64(resent), "qps": float64(qps),
			"timeout_ms_min": ms(wait.Min), "timeout_ms_max": ms(wait.Max), "local_ack_timeout": float64(n),
			"fabric_lost_psns": float64(fabric),
		}},
		Next: "Find the loss as for go-back-N (switch drops, PFC, link errors on the path), and check the QPs' timeout and retry settings " +
			"(NCCL_IB_TIMEOUT and NCCL_IB_RETRY_CNT for NCCL; local_ack_timeout and retry_cnt in ibv_modify_qp). " + counterHint,
	}
	if oneWay > 0 {
		fd.Detail += fmt.Sprintf(" %s of these QPs (%s) show no packet back in the capture (a mirror of one direction, see capture_health): "+
			"a NAK that asked for their resends would not be in it either, so these may be go-back-N after a loss rather than timeouts.",
			strconv.FormatUint(oneWay, 10), retxPlural(oneWayTimeouts, "timeout", "timeouts"))
	}
	g.fill(&fd)
	return fd, true
}

// rnrFinding reports RNR NAKs and the retries after them.
func rnrFinding(in *Input, roce uint64) (Finding, bool) {
	g := retxGroup{in: in}
	var naks, retries, resent, qps uint64
	var wait flows.Durations
	var timerMin, timerMax time.Duration
	seenTimer := false
	for _, f := range in.flowScan().retx { // the others have none of it
		if f.RNRNAKs > 0 {
			naks += f.RNRNAKs
			qps++
			g.conn(f)
			g.frames(f, flows.EventRNRNAK)
			vcs := f.RNRTimers()
			for _, vc := range vcs {
				d := bth.RNRTimerDuration(vc.Value)
				if !seenTimer || d < timerMin {
					timerMin = d
				}
				if !seenTimer || d > timerMax {
					timerMax = d
				}
				seenTimer = true
			}
			g.row(f.RNRNAKs, f, func() string {
				var timers []string
				for _, vc := range vcs {
					timers = append(timers, fmt.Sprintf("%s × timer %d (%s)", strconv.FormatUint(vc.Count, 10), vc.Value, retxDur(bth.RNRTimerDuration(vc.Value))))
				}
				text := retxPlural(f.RNRNAKs, "RNR NAK", "RNR NAKs") + ": " + strings.Join(timers, ", ")
				if p := f.Partner; p != nil && p.Retx.RNRRetries > 0 {
					text += "; retried after " + retxRange(p.Retx.RNRWait.Min, p.Retx.RNRWait.Max)
				}
				return text
			})
		}
		if r := &f.Retx; r.RNRRetries > 0 {
			retries += r.RNRRetries
			resent += r.RNRResent
			wait = addDurations(wait, r.RNRWait)
			g.conn(f)
			g.frames(f, flows.EventRNRRetry)
		}
	}
	if naks == 0 && retries == 0 {
		return Finding{}, false
	}
	fd := Finding{
		Kind:     KindRetransmission,
		Severity: retxSeverity(resent, roce),
		Title:    rnrTitle(naks, qps),
		Evidence: Evidence{Counts: map[string]float64{
			"rnr_naks": float64(naks), "rnr_retries": float64(retries), "retransmitted_packets": float64(resent), "qps": float64(qps),
			"rnr_timer_ms_min": ms(timerMin), "rnr_timer_ms_max": ms(timerMax), "rnr_wait_ms_max": ms(wait.Max),
		}},
		Next: "Check the receiving application: receive queue depth and how fast it reposts receives (CPU, polling thread), and the QPs' min_rnr_timer " +
			"and rnr_retry (ConnectX rnr_retry 7 retries forever; anything less fails the QP with IBV_WC_RNR_RETRY_EXC_ERR). " + counterHint,
	}
	detail := fmt.Sprintf("A SEND (or WRITE with immediate) arrived when the responder had no receive WQE posted, so it answered Receiver Not Ready "+
		"with a timer (IBTA Table 45: %s here) and the requester paused that long before resending. %s resent %s",
		retxRange(timerMin, timerMax), retxPlural(retries, "retry", "retries"), retxPlural(resent, "packet", "packets"))
	if wait.N > 0 {
		detail += ", " + retxRange(wait.Min, wait.Max) + " after the RNR NAK"
	}
	fd.Detail = detail + ". The fabric lost nothing: the receiver could not keep up, and every RNR NAK stalls the QP for the whole timer."
	g.fill(&fd)
	return fd, true
}

// reissuedReadFinding reports RDMA READs re-issued after a lost response,
// and the requests resent in their recovery (go-back-N from the READ:
// the requests that followed it, sent again right after the re-issue).
func reissuedReadFinding(in *Input, roce uint64) (Finding, bool) {
	g := retxGroup{in: in}
	var reads, responses, requests, qps, fabric uint64
	for _, f := range in.flowScan().retx { // the others have none of it
		r := &f.Retx
		if r.ReissuedReads == 0 {
			continue
		}
		qps++
		reads += r.ReissuedReads
		requests += f.ReissueResent()
		var resp uint64
		if p := f.Partner; p != nil {
			resp = p.ReadResponses.Retransmitted
		}
		responses += resp
		g.conn(f)
		g.frames(f, flows.EventReissuedRead, flows.EventReissueResend)
		// With go-back-N or a timeout, their finding counts the fabric
		// loss; else the re-issues' resends decided it.
		lost := r.GBNEpisodes == 0 && r.Timeouts == 0 && f.ReissueResent() > 0 && r.FabricLostPSNs > 0
		if lost {
			fabric += r.FabricLostPSNs
			g.frames(f, flows.EventFabricLoss)
		}
		g.row(r.ReissuedReads+f.ReissueResent(), f, func() string {
			text := fmt.Sprintf("%s, %s sent again", retxPlural(r.ReissuedReads, "READ re-issued", "READs re-issued"),
				retxPlural(resp, "READ response", "READ responses"))
			if f.ReissueResent() > 0 {
				text += fmt.Sprintf(", %s after them resent", retxPlural(f.ReissueResent(), "request", "requests"))
			}
			if lost {
				text += fmt.Sprintf(", %s lost before the mirror", retxPlural(r.FabricLostPSNs, "PSN", "PSNs"))
			}
			return text
		})
	}
	if reads == 0 {
		return Finding{}, false
	}
	resent := reads + responses + requests
	resends := retxPlural(reads, "re-issued READ", "re-issued READs") + " and " + retxPlural(responses, "resent response", "resent responses")
	if requests > 0 {
		resends = fmt.Sprintf("%s, %s and %s resent after them (go-back-N from the READ: the requests that followed it, sent again "+
			"right after the re-issue; no ACK timeout)", retxPlural(reads, "re-issued READ", "re-issued READs"),
			retxPlural(responses, "resent response", "resent responses"), retxPlural(requests, "request packet", "request packets"))
	}
	detail := fmt.Sprintf("A READ response packet went missing on its way back (responder to requester), so the requester re-issued the READ "+
		"for the rest of the data (a duplicate READ request from the PSN of the missing response) and the responder sent those responses again: "+
		"%s, %s of the RoCE packets.", resends, retxShare(resent, roce))
	counts := map[string]float64{
		"reissued_reads": float64(reads), "resent_read_responses": float64(responses), "retransmitted_packets": float64(resent), "qps": float64(qps),
		"resent_requests": float64(requests), "fabric_lost_psns": float64(fabric),
	}
	fd := Finding{
		Kind:     KindRetransmission,
		Severity: retxSeverity(resent, roce),
		Title:    reissuedReadTitle(reads, requests, qps),
		Detail:   detail,
		Evidence: Evidence{Counts: counts},
		Next:     "Find the drops on the path from the responder back to the requester as for go-back-N (switch buffers, PFC, link errors). " + counterHint,
	}
	g.fill(&fd)
	return fd, true
}

// mirrorLossFinding reports request PSNs the responder acknowledged though
// the capture holds no copy of them.
func mirrorLossFinding(in *Input, roce uint64) (Finding, bool) {
	g := retxGroup{in: in}
	var psns, gaps, qps, fabric uint64
	for _, f := range in.flowScan().retx { // the others have none of it
		fabric += f.Retx.FabricLostPSNs
		r := &f.Retx
		if r.MirrorLostPSNs == 0 {
			continue
		}
		qps++
		psns += r.MirrorLostPSNs
		gaps += r.MirrorGaps
		g.conn(f)
		g.frames(f, flows.EventMirrorLoss)
		g.row(r.MirrorLostPSNs, f, func() string {
			return fmt.Sprintf("%s in %s acknowledged by the responder, not in the capture",
				retxPlural(r.MirrorLostPSNs, "PSN", "PSNs"), retxPlural(r.MirrorGaps, "gap", "gaps"))
		})
	}
	if psns == 0 {
		return Finding{}, false
	}
	widespread := mirrorWidespread(psns, qps, roce)
	fd := Finding{
		Kind:     KindMirrorLoss,
		Severity: Warning,
		Title:    mirrorLossTitle(psns, gaps, qps, false),
		Evidence: Evidence{Counts: map[string]float64{
			"mirror_lost_psns": float64(psns), "mirror_gaps": float64(gaps), "qps": float64(qps), "fabric_lost_psns": float64(fabric),
		}},
		Next: "Check the mirror: SPAN/ERSPAN session drops and oversubscription (a mirror of several 400G ports into one destination port drops under load), " +
			"the collector's NIC and capture host (`ethtool -S` rx_discards_phy / rx_out_of_buffer, kernel drops), and the snap length. " +
			"Mirror less (fewer ports, one direction, a truncating session) or capture on the hosts before trusting loss numbers.",
	}
	detail := fmt.Sprintf("The capture lacks %s (%s of the RoCE packets) that the responder acknowledged past: an ACK or response at a later PSN "+
		"came back and nothing was NAKed or resent. These packets were delivered; the mirror or the capture missed them, not the fabric. ",
		retxPlural(psns, "request packet", "request packets"), retxShare(psns, roce))
	if widespread {
		fd.Severity = Critical
		fd.Title = mirrorLossTitle(psns, gaps, qps, true)
		detail += "The mirror loss is widespread, so this capture cannot be trusted for loss analysis: a PSN gap in it says nothing about the fabric."
	} else {
		detail += "PSN gaps in this capture are therefore not all fabric loss, so its loss analysis cannot be fully trusted: " +
			"only gaps that were NAKed or resent (fabric_lost_psns) show real loss."
	}
	fd.Detail = detail
	g.fill(&fd)
	return fd, true
}

// The titles of the retransmission and mirror_loss findings, from their
// counts: the module makes them here, and so does merge for the findings
// it combines (titleFromCounts), so that a headline says what the summed
// counts do.

func fatalNAKTitle(code bth.NAKCode, qps uint64) string {
	return fmt.Sprintf("Fatal NAK %s (%s): %s went to the error state", code, fatalNAK[code].name, retxPlural(qps, "QP", "QPs"))
}

func reservedNAKTitle(naks uint64) string {
	return fmt.Sprintf("%s with a reserved NAK code", retxPlural(naks, "NAK", "NAKs"))
}

// goBackNTitle is the go-back-N finding's title; with no episode (NAKs
// only, whose resends the capture lacks) it names the NAKs instead.
func goBackNTitle(resent, episodes, qps, naks uint64) string {
	if episodes == 0 {
		return fmt.Sprintf("Go-back-N: %s, no resend captured", retxPlural(naks, "PSN sequence error NAK", "PSN sequence error NAKs"))
	}
	return fmt.Sprintf("Go-back-N: %s resent in %s after packet loss on %s", retxPlural(resent, "packet", "packets"),
		retxPlural(episodes, "episode", "episodes"), retxPlural(qps, "QP", "QPs"))
}

func timeoutTitle(resent, timeouts, qps uint64) string {
	return fmt.Sprintf("ACK timeouts: %s resent after %s on %s", retxPlural(resent, "packet", "packets"),
		retxPlural(timeouts, "timeout", "timeouts"), retxPlural(qps, "QP", "QPs"))
}

func rnrTitle(naks, qps uint64) string {
	return fmt.Sprintf("%s on %s: the receiver was not ready", retxPlural(naks, "RNR NAK", "RNR NAKs"), retxPlural(qps, "QP", "QPs"))
}

func reissuedReadTitle(reads, requests, qps uint64) string {
	t := fmt.Sprintf("%s re-issued after lost READ responses on %s", retxPlural(reads, "RDMA READ", "RDMA READs"), retxPlural(qps, "QP", "QPs"))
	if requests > 0 {
		t += fmt.Sprintf(", %s after them resent", retxPlural(requests, "request", "requests"))
	}
	return t
}

func mirrorLossTitle(psns, gaps, qps uint64, widespread bool) string {
	were := "were"
	if psns == 1 {
		were = "was"
	}
	t := fmt.Sprintf("The mirror missed %s that %s delivered (%s on %s)", retxPlural(psns, "packet", "packets"), were,
		retxPlural(gaps, "gap", "gaps"), retxPlural(qps, "QP", "QPs"))
	if widespread {
		t = "This capture cannot be trusted for loss analysis: " + strings.ToLower(t[:1]) + t[1:]
	}
	return t
}

// mirrorWidespread says whether mirror loss of psns PSNs on qps QPs, in a
// capture of roce RoCE packets, makes it untrustworthy for loss analysis.
func mirrorWidespread(psns, qps, roce uint64) bool {
	return psns >= mirrorUntrustedPSNs && float64(psns) >= mirrorUntrustedShare*float64(roce) || qps >= mirrorUntrustedFlows
}
