package reports

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// What merge needs to know about the findings it combines rather than
// recomputes: which of its module's findings one is (variantOf), how a
// count adds up across reports (countRuleOf), and what the module derives
// from the counts (derivedCounts, severityFromCounts, titleFromCounts),
// made by the module's own functions so that the two cannot disagree.

// variantOf names which of its kind's findings f is, so that merge
// combines like with like: the go-back-N finding with the go-back-N
// finding, not with the ACK-timeout one. Kinds this version does not make
// fall back to their count names (countKeys).
func variantOf(f *Finding) string {
	has := func(k string) bool { _, ok := f.Evidence.Counts[k]; return ok }
	switch f.Kind {
	case KindRetransmission:
		switch {
		case has("gbn_episodes"):
			return "go-back-N"
		case has("timeouts"):
			return "timeouts"
		case has("rnr_naks"):
			return "rnr"
		case has("reissued_reads"):
			return "reissued_reads"
		}
		for k := range f.Evidence.Counts {
			if strings.HasPrefix(k, "naks_") { // one fatal NAK code each
				return "fatal " + k
			}
		}
	case KindMirrorLoss, KindPFC:
		return ""
	case KindECNNotActed:
		if has("not_ect_packets") {
			return "not_ect"
		}
		return "not_acted"
	case KindDSCPMismatch, KindPCPMismatch:
		if has("cnp_packets") {
			return "cnp"
		}
		return "data"
	case KindStorageOnCompute:
		switch {
		case has("cm_requests"):
			return "cm"
		case has("storage_endpoints"):
			return "role"
		case has("cm_requests_unclassified"):
			return "cm_cut"
		}
		return "ip"
	case KindNonRDMAOnCompute:
		for _, v := range []string{nonRDMASSH, nonRDMABootstrap, nonRDMAOther} {
			if strings.HasPrefix(f.Title, v+":") {
				return v
			}
		}
	}
	return countKeys(f)
}

// variantRank is where f's variant comes among the findings of its kind in
// the order its module makes them (fatal NAKs by code, go-back-N, ACK
// timeouts, RNR, re-issued READs; CE not acted on before not-ECT; data
// before CNPs; storage by CM service, by TCP/UDP port, by role; SSH,
// bootstrap, other TCP/UDP), so that merge lists them as one run over the
// captures does, whichever report had which first. Variants this version
// does not make come last.
func variantRank(f *Finding) int {
	var order []string
	switch f.Kind {
	case KindRetransmission:
		for _, c := range fatalNAKCodes {
			order = append(order, "fatal naks_"+c.String())
		}
		order = append(order, "fatal naks_reserved", "go-back-N", "timeouts", "rnr", "reissued_reads")
	case KindECNNotActed:
		order = []string{"not_acted", "not_ect"}
	case KindDSCPMismatch, KindPCPMismatch:
		order = []string{"data", "cnp"}
	case KindStorageOnCompute:
		order = []string{"cm", "cm_cut", "ip", "role"}
	case KindNonRDMAOnCompute:
		order = []string{nonRDMASSH, nonRDMABootstrap, nonRDMAOther}
	}
	if i := slices.Index(order, variantOf(f)); i >= 0 {
		return i
	}
	return len(order)
}

// countRule is how one count of several reports' findings combines.
type countRule int

const (
	countSum  countRule = iota
	countMax            // a peak, maximum or setting
	countMin            // a minimum
	countMean           // a mean: the highest of the reports' means (approximate: see mergeNotes)
)

// countRuleOf says how a count combines, from its name: peak_, max_,
// median_ and expected_ counts and those ending in _max are maxima, _min
// minima, _mean means; every other count is summed.
func countRuleOf(name string) countRule {
	switch {
	case strings.HasSuffix(name, "_min"):
		return countMin
	case strings.HasSuffix(name, "_mean"):
		return countMean
	case strings.HasSuffix(name, "_max"):
		return countMax
	}
	for _, p := range []string{"peak_", "max_", "median_", "expected_"} {
		if strings.HasPrefix(name, p) {
			return countMax
		}
	}
	return countSum
}

// combineCount adds v of one report into c[name].
func combineCount(c map[string]float64, name string, v float64) {
	old, ok := c[name]
	switch rule := countRuleOf(name); {
	case !ok:
		c[name] = v
	case rule == countMax || rule == countMean:
		c[name] = max(old, v)
	case rule == countMin:
		c[name] = min(old, v)
	default:
		c[name] = old + v
	}
}

// derivedCounts recomputes the counts a module derives from others: the
// local_ack_timeout that the longest ACK-timeout wait matches.
func derivedCounts(f *Finding) {
	c := f.Evidence.Counts
	if v, ok := c["timeout_ms_max"]; ok && f.Kind == KindRetransmission && hasCount(f, "local_ack_timeout") {
		c["local_ack_timeout"] = float64(impliedAckTimeout(time.Duration(math.Round(v * float64(time.Millisecond)))))
	}
}

// severityFromCounts is the severity f's module gives it, when its rule
// reads only the finding's counts and the RoCE packets of the capture
// (roce): for the retransmission, mirror_loss and non_rdma_on_compute
// findings. ok is false for the others.
func severityFromCounts(f *Finding, roce uint64) (sev Severity, ok bool) {
	n := countOf(f)
	switch f.Kind {
	case KindRetransmission:
		if strings.HasPrefix(variantOf(f), "fatal ") {
			return Critical, true
		}
		return retxSeverity(n("retransmitted_packets"), roce), true
	case KindMirrorLoss:
		if mirrorWidespread(n("mirror_lost_psns"), n("qps"), roce) {
			return Critical, true
		}
		return Warning, true
	case KindNonRDMAOnCompute:
		switch variantOf(f) {
		case nonRDMASSH:
			return Warning, true
		case nonRDMABootstrap:
			return bootstrapSeverity(f.Evidence.Counts["bytes"]), true
		case nonRDMAOther:
			return otherTCPSeverity(f.Evidence.Counts["bytes"]), true
		}
	}
	return f.Severity, false
}

// titleFromCounts is the title f's module gives it, from its counts (and
// its severity where the title says it: widespread mirror loss, storage on
// compute HCA addresses). ok is false when the title says more than the
// counts (other TCP/UDP names its services) or the kind is not one this
// version makes.
func titleFromCounts(f *Finding) (string, bool) {
	c, n := f.Evidence.Counts, countOf(f)
	critical := f.Severity == Critical
	v := variantOf(f)
	switch f.Kind {
	case KindRetransmission:
		switch v {
		case "go-back-N":
			return goBackNTitle(n("retransmitted_packets"), n("gbn_episodes"), n("qps"), n("psn_seq_err_naks")), true
		case "timeouts":
			return timeoutTitle(n("retransmitted_packets"), n("timeouts"), n("qps")), true
		case "rnr":
			return rnrTitle(n("rnr_naks"), n("qps")), true
		case "reissued_reads":
			return reissuedReadTitle(n("reissued_reads"), n("resent_requests"), n("qps")), true
		case "fatal naks_reserved":
			return reservedNAKTitle(n("fatal_naks")), true
		}
		for code := range fatalNAK {
			if v == "fatal naks_"+code.String() {
				return fatalNAKTitle(code, n("qps")), true
			}
		}
	case KindReordering:
		return reorderingTitle(n("reordered_packets")+n("read_responses_out_of_order"), n("flows"), n("max_psns_behind"), c["max_late_us"]), true
	case KindMirrorLoss:
		return mirrorLossTitle(n("mirror_lost_psns"), n("mirror_gaps"), n("qps"), critical), true
	case KindECNNotActed:
		if v == "not_ect" {
			return notECTTitle(n("flows")), true
		}
		return ecnNotActedTitle(n("not_acted")), true
	case KindDSCPMismatch:
		class := "data"
		if v == "cnp" {
			class = "CNP"
		}
		return dscpTitle(class, n("wrong_packets"), uint8(n("expected_dscp"))), true
	case KindPCPMismatch:
		class := "data"
		if v == "cnp" {
			class = "CNP"
		}
		return pcpTitle(class, n("wrong_packets"), uint8(n("expected_pcp"))), true
	case KindPFC:
		var storms []int
		for k, x := range c {
			mid, ok := strings.CutPrefix(k, "priority_")
			mid, ok2 := strings.CutSuffix(mid, "_storms")
			if p, err := strconv.Atoi(mid); ok && ok2 && err == nil && x > 0 {
				storms = append(storms, p)
			}
		}
		slices.Sort(storms)
		return pfcTitle(storms, n("pfc_frames"), n("pause_frames_802_3x")), true
	case KindStorageOnCompute:
		switch v {
		case "cm":
			var ports []uint16
			for k := range c {
				num, ok := strings.CutPrefix(k, "flows_")
				if p, err := strconv.ParseUint(num, 10, 16); ok && err == nil {
					ports = append(ports, uint16(p))
				}
			}
			return storageCMTitle(ports, critical), true
		case "cm_cut":
			return storageCMCutTitle(n("cm_requests_unclassified")), true
		case "role":
			onCompute := n("storage_endpoints") // reports from before on_compute_endpoints: all of them
			if _, ok := c["on_compute_endpoints"]; ok {
				onCompute = n("on_compute_endpoints")
			}
			return storageRoleTitle(n("storage_endpoints"), onCompute, critical), true
		}
		var names []string
		for _, name := range storageIPNames {
			if _, ok := c[storageIPKey(name)+"_conversations"]; ok {
				names = append(names, name)
			}
		}
		return storageIPTitle(names, critical), true
	case KindNonRDMAOnCompute:
		if v == nonRDMASSH || v == nonRDMABootstrap {
			return nonRDMATitle(v, n("conversations")), true
		}
	}
	return "", false
}

// countOf reads f's counts as whole numbers.
func countOf(f *Finding) func(string) uint64 {
	return func(k string) uint64 { return uint64(math.Round(max(f.Evidence.Counts[k], 0))) }
}

// approximations writes a "merge:" capture problem for each finding in the
// merged report that is not what one run over all the captures would give,
// saying what is approximate; nothing for a finding that is exact (one
// merged from reports of disjoint flows whose counts only add up, or that
// only one report made where no other could add to it).
func (m *merger) approximations(given []sourced) {
	present := func(k Kind, variant string) *combined {
		for i := range m.combined {
			if c := &m.combined[i]; c.kind == k && c.variant == variant {
				return c
			}
		}
		return nil
	}
	// congestion is recomputed, but for its peak rate (merger.patch).
	var peaks []string
	var sum, peak float64
	for _, g := range given {
		if v, ok := g.f.Evidence.Counts["peak_cnps_per_ms"]; ok && g.f.Kind == KindCongestion {
			peaks = append(peaks, fmt.Sprintf("%s: %s", m.srcs[g.src].Name, cnpRate(v)))
			sum += v
			peak = max(peak, v)
		}
	}
	if len(peaks) > 1 {
		m.notef("congestion: peak_cnps_per_ms %s is the highest of the reports' own peaks (%s): their CNP time bins are not in the JSON, "+
			"so over all the captures the peak may be higher, up to their sum (%s)", cnpRate(peak), strings.Join(peaks, ", "), cnpRate(sum))
	}
	if len(m.estimatedICRC) > 0 && m.info.ICRCBad > 0 {
		m.notef("capture_health: roce_frames_checked counts, for %s (without icrc_checked: a report of an earlier rocedump), "+
			"the RoCE frames less the truncated ones of the flow records and those cut inside their BTH: a mirror's copy of a cut frame "+
			"counts as checked", strings.Join(m.estimatedICRC, ", "))
	}
	if len(m.estimatedRoCECut) > 0 {
		m.notef("capture: roce_truncated is estimated for %s (without roce_truncated: a report of an earlier rocedump) "+
			"as the truncated frames of its flow records and those cut inside their BTH: a mirror's copies of cut frames are in neither, "+
			"so it may fall short",
			strings.Join(m.estimatedRoCECut, ", "))
	}
	if c := present(KindRetransmission, "go-back-N"); c != nil && len(c.srcs) > 1 {
		m.notef("retransmission: go-back-N recovery_ms_mean is the highest of the %d reports' means, not the mean over every episode "+
			"(the JSON does not say how many recoveries each mean is of)", len(c.srcs))
	}
	if c := present(KindECNNotActed, "not_acted"); c != nil && len(c.srcs) < len(m.srcs) {
		m.notef("ecn_not_acted: undecided (CE marks too close to the end of a capture to tell) counts only the %d of %d reports "+
			"that found CE marks not acted on, and each report judged its marks with the --ecn-window it was made with", len(c.srcs), len(m.srcs))
	}
	if c := present(KindECNNotActed, "not_acted"); c != nil && len(m.ceGuessed) > 0 {
		m.notef("ecn_not_acted: ce_marked counts, for %s (which made no such finding), the CE marks of flows that carry CNPs and "+
			"other packets as on the other packets: a flow record does not say which of its packets were marked, and up to %d of them "+
			"may be CNPs, which ecn_not_acted leaves out", strings.Join(m.ceGuessed, ", "), m.ceGuessedMax)
	}
	if i := slices.IndexFunc(m.out, func(f Finding) bool { return f.Kind == KindCongestion }); i >= 0 && hasCount(&m.out[i], "ce_marked") {
		if names, most := m.cnpsCEUnknown(); len(names) > 0 {
			m.notef("congestion: ce_marked counts, for %s (a report of an earlier rocedump, its flow records without cnps_ce), the CE marks "+
				"of flows that carry CNPs and other packets as on the other packets: up to %d of them may be on CNPs, which ce_marked leaves out", strings.Join(names, ", "), most)
		}
	}
	if c := present(KindPFC, ""); c != nil && len(m.srcs) > 1 {
		judged := "the capture of " + c.lead
		if len(c.srcs) > 1 {
			judged = "each report's own capture (the worst of them)"
		}
		m.notef("pfc: paused time runs to the end of each report's own capture, the pause frames of different reports are not put on one "+
			"timeline (a storm is found within one report only), and the severity, from the share of the capture paused, is judged on %s", judged)
	}
	if c := present(KindStorageOnCompute, "role"); c != nil && len(c.srcs) > 1 {
		m.notef("storage_on_compute: storage_endpoints adds up the storage addresses of %d reports: an address seen by several mirrors "+
			"counts once per report", len(c.srcs))
	}
	m.noteSharedConversations(given)
	if c := present(KindNonRDMAOnCompute, nonRDMAOther); c != nil && len(c.srcs) > 1 {
		if m.servicesPartial {
			m.notef("non_rdma_on_compute: the title of other TCP/UDP names the services of all %d reports as far as their titles "+
				"and evidence list them: a report's title names its five busiest, and its evidence ten conversations, so a service "+
				"may be left out or ranked by part of its bytes", len(c.srcs))
		}
	}
	// A flow record of an earlier rocedump does not say which file its
	// frames are in (merger.rebuild).
	var unnamed []string
	for _, f := range m.out {
		e := &f.Evidence
		if len(m.info.Files) > 1 && (e.First != nil && e.First.File == "" || e.Last != nil && e.Last.File == "") &&
			!slices.Contains(unnamed, string(f.Kind)) {
			unnamed = append(unnamed, string(f.Kind))
		}
	}
	if len(unnamed) > 0 {
		m.notef("the first and last frames of %s name no file: they come from flow records of a report over several files, "+
			"made by a rocedump that did not say which file a frame is in (first_file, last_file)", strings.Join(unnamed, ", "))
	}
	for _, c := range m.combined {
		if moduleOf(c.kind) < 0 && len(c.srcs) > 1 {
			m.notef("%s (a kind this rocedump does not make) is combined, not recomputed: counts summed (maxima for peak_ and max_ "+
				"counts), the worst severity, the title of %s", c.kind, c.lead)
		}
	}
}

// mergedServices is the services part of the title of other TCP/UDP on
// compute links merged from fs, as servicesSummary makes it over all their
// conversations: each service of their titles with its conversations
// added up, busiest first by the bytes of their evidence lines (one a
// conversation, three significant digits), then by name. A report's title
// names its five busiest services only ("and N more"), and its evidence
// ten conversations: whole is false when one of them left some out.
func mergedServices(fs []sourced) (title string, whole bool) {
	convs := map[string]int{}
	bytes := map[string]float64{}
	whole = true
	for _, s := range fs {
		lines := 0
		for _, l := range s.f.Evidence.Details {
			if _, more := andMore(l); more {
				whole = false
			}
			lines++
		}
		if float64(lines) != s.f.Evidence.Counts["conversations"] || strings.Contains(s.f.Title, ", and ") {
			whole = false
		}
		for _, part := range strings.Split(strings.TrimPrefix(s.f.Title, nonRDMAOther+": "), ", ") {
			name, n, ok := strings.Cut(part, " (")
			k, err := strconv.Atoi(strings.TrimSuffix(n, ")"))
			if !ok || err != nil || strings.HasPrefix(part, "and ") {
				continue
			}
			convs[name] += k
		}
		for _, l := range s.f.Evidence.Details {
			name, rest, ok := strings.Cut(l, ": ")
			if _, has := convs[name]; !ok || !has {
				continue
			}
			if i := strings.LastIndex(rest, ", "); i >= 0 {
				bytes[name] += parseHumanBytes(rest[i+2:])
			}
		}
	}
	return servicesText(convs, bytes), whole
}

// parseHumanBytes is the number of bytes flowtable.HumanBytes wrote as s
// ("512 B", "1.23 KB"), to its three significant digits; 0 if s is none.
func parseHumanBytes(s string) float64 {
	num, unit, ok := strings.Cut(s, " ")
	v, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil {
		return 0
	}
	for i, u := range []string{"B", "KB", "MB", "GB", "TB", "PB"} {
		if u == unit {
			return v * math.Pow(1000, float64(i))
		}
	}
	return 0
}

// cnpsCEUnknown are the reports whose flow records have no cnps_ce (an
// earlier rocedump's) and CE marks on flows that carry CNPs and other
// packets, and how many of those marks could be on CNPs at most: the
// recomputed congestion finding counts them in ce_marked (merger.rebuild
// takes as on CNPs only those that must be: cnpsCE), which one run
// leaves CNPs out of.
func (m *merger) cnpsCEUnknown() (names []string, most uint64) {
	for _, s := range m.srcs {
		var n uint64
		for _, r := range s.Report.FlowRecords().Records() {
			if !r.CNPsCEKnown() {
				n += min(r.ECNCE, r.CNPs) - min(r.ECNCE, r.CNPs, cnpsCE(r)) // those that may be on CNPs, less those that must
			}
		}
		if n > 0 {
			names = append(names, s.Name)
			most += n
		}
	}
	return names, most
}

// conversationFinding says f counts non-RoCE conversations, which merge
// adds up: non_rdma_on_compute, and storage_on_compute over TCP/UDP or of
// storage-role addresses.
func conversationFinding(f *Finding) bool {
	return f.Kind == KindNonRDMAOnCompute || f.Kind == KindStorageOnCompute && variantOf(f) != "cm"
}

// noteSharedConversations says that the conversations of reports whose
// captures hold the same traffic count once per report: the merge adds
// up their counts, and cannot tell one conversation seen in two captures
// (one per host) from two. The reports hold the same traffic when they
// share flows (merger.sharedFlows), or list the same conversation (a
// detail line's service and addresses, before its counts).
func (m *merger) noteSharedConversations(given []sourced) {
	seenBy := map[string]map[int]bool{}
	srcs := map[int]bool{}
	for _, g := range given {
		if !conversationFinding(&g.f) {
			continue
		}
		srcs[g.src] = true
		for _, l := range g.f.Evidence.Details {
			k, _, ok := strings.Cut(l, ", ")
			if !ok || !strings.Contains(k, " > ") {
				continue
			}
			k = string(g.f.Kind) + " " + k
			if seenBy[k] == nil {
				seenBy[k] = map[int]bool{}
			}
			seenBy[k][g.src] = true
		}
	}
	if len(srcs) < 2 {
		return
	}
	listed := 0
	for _, by := range seenBy {
		if len(by) > 1 {
			listed++
		}
	}
	if m.sharedFlows == 0 && listed == 0 {
		return
	}
	var why []string
	if m.sharedFlows > 0 {
		why = append(why, fmt.Sprintf("%s in more than one report", plural(m.sharedFlows, "flow")))
	}
	if listed > 0 {
		why = append(why, fmt.Sprintf("%s listed by more than one report", plural(listed, "conversation")))
	}
	m.notef("non_rdma_on_compute, storage_on_compute: conversations, packets and bytes add up the %d reports' own, and their captures "+
		"hold the same traffic (%s): a conversation captured for more than one report counts once for each; run rocedump report "+
		"over all the captures at once, which counts a packet captured in two files once", len(srcs), strings.Join(why, "; "))
}
