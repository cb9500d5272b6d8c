package reports

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
	"github.com/rocedump/rocedump/topology"
)

// MergeSource is one report to merge and the name it goes by (its file).
type MergeSource struct {
	Name   string
	Report *Report
}

// MergeOptions say how to merge.
type MergeOptions struct {
	Tool     string             // the tool field of the merged report
	Topology *topology.Topology // for the recomputed cross_rail, rdma_on_management and fan_out; nil: none
}

// RecomputedKinds are the finding kinds Merge computes again from the
// merged flow records and capture counts, by running their module: they
// depend only on those and the topology, so the result is the one a single
// run over all the captures gives (see Merge for the two patched counts).
var RecomputedKinds = []Kind{KindCaptureHealth, KindCongestion, KindCrossRail, KindRDMAOnManagement, KindFanOut}

// recordKinds are the recomputed kinds that read nothing but the flow
// records and the topology: the reports' own findings add nothing to them.
var recordKinds = []Kind{KindCrossRail, KindRDMAOnManagement, KindFanOut}

// Merge combines the reports of captures taken in different places (one
// mirror per rail, say) into one report, as close as JSON allows to the
// report of a single run over all the captures.
//
// It is exact when each flow (source, destination, destination QP, epoch)
// is in one report only, the one-mirror-per-rail case:
//
//   - capture: files are listed in order; packet, RoCE, malformed,
//     truncated, ICRC (bad and checked) and unsupported counts and drops
//     are summed (a report of a rocedump before icrc_checked has its
//     checked frames estimated: merger.icrcChecked); the span
//     runs from the earliest first packet to the latest last one; problems
//     are kept.
//   - flows: every record is kept and renumbered in order of first
//     appearance (time, then report order, then the report's own order), as
//     one run over the files in the same order numbers them; partner ids
//     and the flow ids of findings follow.
//   - findings of RecomputedKinds are computed again from the merged
//     records and counts (so a share that crosses a threshold only
//     together, or an HCA whose QPs were split across mirrors, comes out
//     as one run would see it). Their frame evidence (first and last frame)
//     and details that come from per-packet observations are taken from the
//     reports' own findings: earliest first, latest last, detail counts
//     summed. congestion's peak_cnps_per_ms is the highest of any one
//     report: time bins of different reports cannot be added up from JSON,
//     so the merged peak can be higher.
//   - other findings (retransmission, mirror_loss, ecn_not_acted,
//     dscp_mismatch, pcp_mismatch, pfc, storage_on_compute, non_rdma_on_compute, and any
//     kind added later) come from per-packet state that is not in the JSON.
//     They are combined: findings of one kind and variant (variantOf: the
//     go-back-N finding with the go-back-N finding, SSH with SSH) are one
//     finding, with counts combined by name (countRuleOf: summed; maxima
//     for peak_, max_, median_ and expected_ counts and those ending in
//     _max; minima for _min; the highest for _mean), flows and nodes
//     joined, the earliest first and latest last frame, and the details
//     of each. What the module derives from its counts is made again with
//     the module's own functions: derived counts (local_ack_timeout), the
//     severity where the module's rule reads only counts and the capture's
//     RoCE packets (retransmission, mirror_loss, non_rdma_on_compute; the
//     highest of the reports' otherwise), and the title (other TCP/UDP's
//     names the services of every report's title, their conversations
//     added up, ordered by the bytes of their evidence: mergedServices). This holds for a finding of a
//     single report too, whose detail says so when its severity changed
//     and gives the share of the merged capture's RoCE packets its
//     retransmitted or mirror-lost packets are (merger.reshare).
//     The totals the flow records carry are put back: the data and CNP
//     packets of dscp_mismatch (and its severity) and pcp_mismatch, the data packets and
//     CE marks of ecn_not_acted (merger.ceMarked). The text is that of the largest report,
//     and the detail says the finding was merged.
//
// What merge combines but cannot make exact is said in the merged report's
// capture problems, prefixed "merge:", for each such finding present
// (merger.approximations): congestion's peak CNP rate (the highest of the
// reports' own peaks: time bins cannot be added up from JSON), go-back-N's
// mean recovery time, ecn_not_acted's undecided CE marks when some
// reports made no such finding and its ce_marked when such a report has CE
// marks on flows that carry CNPs too (merger.ceMarked), the ICRC
// finding's checked frames for reports of an earlier rocedump
// (merger.icrcChecked), PFC's paused time, storms and severity, storage
// addresses seen by several reports, the services in the title of
// other TCP/UDP when a report's title or evidence left some out, and any kind this version does not make. So is what
// cannot be recombined at all: flows that appear in several reports (two
// mirrors saw the same QP: each report's record is listed, the findings
// that cite them count them once per report, and their PSN state is not
// recomputed, since the merge cannot tell the same packets seen twice
// from different ones: merger.noteSharedFindings), files given to more than one report,
// reports with a topology merged without one, and reports without one
// merged with one (merger.nameNodes names their findings' nodes).
func Merge(srcs []MergeSource, opts MergeOptions) (*Report, error) {
	if len(srcs) == 0 {
		return nil, errors.New("merge: no reports")
	}
	for _, s := range srcs {
		if s.Report == nil {
			return nil, fmt.Errorf("merge: %s: no report", s.Name)
		}
		if v := s.Report.SchemaVersion; v != SchemaVersion {
			return nil, fmt.Errorf("merge: %s: schema_version %d, want %d (a rocedump report --format json)", s.Name, v, SchemaVersion)
		}
	}
	m := &merger{srcs: srcs, opts: opts}
	m.capture()
	if err := m.flowRecords(); err != nil {
		return nil, err
	}
	m.findings()
	m.noteSharedFindings()
	r := &Report{SchemaVersion: SchemaVersion, Tool: opts.Tool, Capture: m.info, Flows: m.records, Findings: m.out}
	r.Summary = m.summary()
	r.Capture.Problems = append(r.Capture.Problems, m.notes...)
	if r.Capture.Problems == nil {
		r.Capture.Problems = []string{}
	}
	return r, nil
}

// merger is the state of one Merge.
type merger struct {
	srcs []MergeSource
	opts MergeOptions

	info     CaptureInfo
	fileBase []int // index in info.Files of each report's first file

	records []flowtable.Record
	newID   []map[int]int // per report: its flow id -> merged id
	flows   []*flows.Flow // rebuilt from records, for the recomputed modules

	out      []Finding
	combined []combined // the findings combined, not recomputed
	roce     uint64     // RoCE packets of the merged flows, as a run's flowScan counts them
	// estimatedICRC are the reports without icrc_checked whose checked
	// frames merge estimated from truncated ones (merger.icrcChecked).
	estimatedICRC []string
	// estimatedRoCECut are the reports without roce_truncated whose cut
	// RoCE frames merge estimated (merger.roceTruncated).
	estimatedRoCECut []string
	// ceGuessed are the reports without ecn_not_acted whose CE marks
	// merge counted as on packets other than CNPs though some could be on
	// CNPs, at most ceGuessedMax of them (merger.ceMarked).
	ceGuessed    []string
	ceGuessedMax uint64
	notes        []string // what the merge could not recombine
	// servicesPartial: a report's other TCP/UDP finding named only some
	// of its services (mergedServices).
	servicesPartial bool
	// sharedFlows is the number of flows in more than one report
	// (flowRecords): their captures hold the same traffic. sharedIDs are
	// the merged ids of every report's record of them, and sharedNote the
	// index in notes of the note on them (noteSharedFindings).
	sharedFlows int
	sharedIDs   map[int]bool
	sharedNote  int
}

// capture sums the capture sections.
func (m *merger) capture() {
	c := &m.info
	seen := map[string]string{}
	var drops *Drops
	for _, s := range m.srcs {
		in := s.Report.Capture
		m.fileBase = append(m.fileBase, len(c.Files))
		for _, f := range in.Files {
			if prev, ok := seen[f]; ok {
				m.notef("file %s is in %s and %s: its traffic is counted twice", f, prev, s.Name)
			} else {
				seen[f] = s.Name
			}
		}
		c.Files = append(c.Files, in.Files...)
		c.Packets += in.Packets
		c.RoCE += in.RoCE
		c.Malformed += in.Malformed
		c.Truncated += in.Truncated
		c.RoCETruncated += m.roceTruncated(s)
		c.ICRCBad += in.ICRCBad
		c.ICRCChecked += m.icrcChecked(s)
		c.Unsupported += in.Unsupported
		c.CutOff = c.CutOff || in.CutOff
		c.Problems = append(c.Problems, in.Problems...)
		if !in.First.IsZero() && (c.First.IsZero() || in.First.Before(c.First)) {
			c.First = in.First
		}
		if in.Last.After(c.Last) {
			c.Last = in.Last
		}
		if in.Drops != nil {
			if drops == nil {
				drops = &Drops{}
			}
			drops.Kernel += in.Drops.Kernel
			drops.Interface += in.Drops.Interface
		}
	}
	c.Drops = drops
	if !c.First.IsZero() {
		c.DurationS = c.Last.Sub(c.First).Seconds()
	}
	if c.Files == nil {
		c.Files = []string{}
	}
}

// icrcChecked is the RoCE frames of s whose ICRC was checked: its
// capture's icrc_checked, or for a report without one (of a rocedump
// before it) its RoCE frames less those cut by the snap length, as far as
// the report tells: the truncated frames of its flow records and those
// cut inside their BTH (its truncation finding's bth_cut), which are in
// no flow. That leaves in the mirror's copies of cut frames (in no flow
// count) and RoCEv2 frames over IPv6 with extension headers (whole, but
// unchecked): the estimate is said in a merge note when it matters
// (merger.approximations).
func (m *merger) icrcChecked(s MergeSource) uint64 {
	in := &s.Report.Capture
	if !in.noICRCChecked {
		return in.ICRCChecked
	}
	cut := roceCut(s)
	if in.Truncated > 0 {
		m.estimatedICRC = append(m.estimatedICRC, s.Name)
	}
	return max(in.RoCE-min(in.RoCE, cut), in.ICRCBad)
}

// roceTruncated is the RoCE frames of s the snap length cut: its
// capture's roce_truncated, or for a report without one (of a rocedump
// before it) roceCut, at most its truncated frames, said in a merge note
// when it is not 0 (merger.approximations).
func (m *merger) roceTruncated(s MergeSource) uint64 {
	in := &s.Report.Capture
	if !in.noRoCETruncated {
		return in.RoCETruncated
	}
	if in.Truncated == 0 {
		return 0
	}
	m.estimatedRoCECut = append(m.estimatedRoCECut, s.Name)
	return min(roceCut(s), in.Truncated)
}

// roceCut is what a report tells of its RoCE frames the snap length cut:
// the truncated frames of its flow records and those cut inside their BTH
// (its truncation finding's bth_cut), which are in no flow. A mirror's
// copies of cut frames are in no flow count, so it may fall short.
func roceCut(s MergeSource) uint64 {
	var cut uint64
	for _, r := range s.Report.FlowRecords().Records() {
		cut += r.Truncated
	}
	for _, f := range s.Report.Findings {
		if f.Kind == KindCaptureHealth {
			cut += uint64(max(f.Evidence.Counts["bth_cut"], 0))
		}
	}
	return cut
}

// mergedFlow is a record on its way into the merged list.
type mergedFlow struct {
	src   int // report index
	rec   flowtable.Record
	first time.Time
}

// flowRecords renumbers every report's flows into one list.
func (m *merger) flowRecords() error {
	var all []mergedFlow
	type key struct {
		src, dst string
		qpn      uint32
		epoch    int
	}
	owner := map[key]int{}
	sharedKeys := map[key]bool{}
	var shared []string
	for i, s := range m.srcs {
		for _, r := range s.Report.FlowRecords().Records() {
			t, err := time.Parse(time.RFC3339Nano, r.First)
			if err != nil {
				return fmt.Errorf("merge: %s: flow %d: first %q: %v", s.Name, r.ID, r.First, err)
			}
			all = append(all, mergedFlow{src: i, rec: r, first: t})
			k := key{r.Src, r.Dst, r.DestQPN, r.Epoch}
			if o, ok := owner[k]; ok && o != i {
				sharedKeys[k] = true
				if len(shared) < maxDetails {
					shared = append(shared, fmt.Sprintf("%s > %s qp %s (%s, %s)", r.Src, r.Dst, qpn(r.DestQPN), m.srcs[o].Name, s.Name))
				} else {
					shared = append(shared, "")
				}
			} else if !ok {
				owner[k] = i
			}
		}
	}
	m.sharedFlows = len(shared)
	if len(shared) > 0 {
		var named []string
		for _, s := range shared {
			if s != "" {
				named = append(named, s)
			}
		}
		more := ""
		if n := len(shared) - len(named); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		verb := "flows are"
		if len(shared) == 1 {
			verb = "flow is"
		}
		// The findings that cite them are known after the findings are
		// made: noteSharedFindings completes the note.
		m.sharedNote = len(m.notes)
		m.notef("%d %s in more than one report (%s%s): each report's record of them is listed (the merged flows count them once "+
			"per report)", len(shared), verb, strings.Join(named, "; "), more)
	}
	m.noteDirectionsApart(all)
	// Flows that begin at the same time are numbered as one run reads
	// them: the file whose first record came first goes first, then the
	// file given first (capture.Merger), here the report.
	rank := m.reportRanks()
	slices.SortStableFunc(all, func(a, b mergedFlow) int {
		if c := a.first.Compare(b.first); c != 0 {
			return c
		}
		if c := cmp.Compare(rank[a.src], rank[b.src]); c != 0 {
			return c
		}
		return cmp.Compare(a.rec.ID, b.rec.ID)
	})
	m.newID = make([]map[int]int, len(m.srcs))
	for i := range m.newID {
		m.newID[i] = map[int]int{}
	}
	for i := range all {
		m.newID[all[i].src][all[i].rec.ID] = i + 1
		if r := &all[i].rec; sharedKeys[key{r.Src, r.Dst, r.DestQPN, r.Epoch}] {
			if m.sharedIDs == nil {
				m.sharedIDs = map[int]bool{}
			}
			m.sharedIDs[i+1] = true
		}
	}
	for i := range all {
		m.roce += all[i].rec.Packets
	}
	m.records = make([]flowtable.Record, len(all))
	m.flows = make([]*flows.Flow, len(all))
	for i := range all {
		r := all[i].rec
		r.ID = i + 1
		if files := m.srcs[all[i].src].Report.Capture.Files; len(files) == 1 {
			// A report of an earlier rocedump names no files in its
			// records: its one file is theirs.
			r.FirstFile = cmp.Or(r.FirstFile, files[0])
			r.LastFile = cmp.Or(r.LastFile, files[0])
			if r.CM != nil && r.CM.File == "" {
				c := *r.CM
				c.File = files[0]
				r.CM = &c
			}
		}
		if r.PartnerID != nil {
			if id, ok := m.newID[all[i].src][*r.PartnerID]; ok {
				r.PartnerID = &id
			} else {
				r.PartnerID, r.PartnerQPN = nil, nil
			}
		}
		m.records[i] = r
		f, err := m.rebuild(all[i].src, r)
		if err != nil {
			return fmt.Errorf("merge: %s: flow %d: %v", m.srcs[all[i].src].Name, all[i].rec.ID, err)
		}
		m.flows[i] = f
	}
	for i, r := range m.records {
		if r.PartnerID != nil {
			m.flows[i].Partner = m.flows[*r.PartnerID-1]
		}
	}
	return nil
}

// noteSharedFindings completes the note on flows in more than one report
// with the findings that cite any of them: those add up each report's
// counts, so a packet two mirrors captured counts once for each (two rail
// mirrors that both see a cross-rail connection: its connections, bytes,
// go-back-N episodes twice). The merge cannot subtract them: a finding's
// counts are not kept per flow.
func (m *merger) noteSharedFindings() {
	if m.sharedFlows == 0 {
		return
	}
	var kinds []string
	for _, f := range m.out {
		if !slices.Contains(kinds, string(f.Kind)) && slices.ContainsFunc(f.Flows, func(id int) bool { return m.sharedIDs[id] }) {
			kinds = append(kinds, string(f.Kind))
		}
	}
	if len(kinds) > 0 {
		m.notes[m.sharedNote] += fmt.Sprintf(", the findings that cite them (%s) count them once per report", strings.Join(kinds, ", "))
	}
	m.notes[m.sharedNote] += ", and their PSN state (gaps, retransmissions) is not recomputed, since the merge cannot tell the same " +
		"packets seen by two mirrors from different ones; run rocedump report over all the captures at once for those"
}

// reportRanks orders the reports by their captures' first records, then
// as given, as a run over all their files orders files whose records tie
// in time (capture.Merger): rank[i] is report i's place. A report's
// first is that of its earliest file; a report without packets has no
// flows to order.
func (m *merger) reportRanks() []int {
	order := make([]int, len(m.srcs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return m.srcs[a].Report.Capture.First.Compare(m.srcs[b].Report.Capture.First)
	})
	rank := make([]int, len(m.srcs))
	for r, i := range order {
		rank[i] = r
	}
	return rank
}

// noteDirectionsApart says when the two directions between two hosts are
// in different reports and never in the same one: the RC or XRC flows
// from A to B in some reports, those from B to A in others (captures
// split by direction, as ingress-only mirrors of two ports give). Their
// requests and responses cannot be paired across reports, which a run
// over all the captures would pair: each direction stays a flow without
// a partner, a connection of its own for cross_rail, and its NAKs and
// READ responses are not matched with the requests they answer. all
// holds every report's flows, report by report.
func (m *merger) noteDirectionsApart(all []mergedFlow) {
	type hosts struct{ src, dst string }
	in := map[hosts][]int{} // the reports holding RC or XRC flows from src to dst, ascending
	for _, f := range all {
		if r := &f.rec; r.Transport == "RC" || r.Transport == "XRC" {
			h := hosts{r.Src, r.Dst}
			if l := in[h]; len(l) == 0 || l[len(l)-1] != f.src {
				in[h] = append(l, f.src)
			}
		}
	}
	var apart []string
	for h, l := range in {
		back, ok := in[hosts{h.dst, h.src}]
		if !ok || h.src > h.dst || slices.ContainsFunc(l, func(i int) bool { return slices.Contains(back, i) }) {
			continue
		}
		apart = append(apart, fmt.Sprintf("%s > %s in %s, %s > %s in %s", h.src, h.dst, m.srcs[l[0]].Name, h.dst, h.src, m.srcs[back[0]].Name))
	}
	if len(apart) == 0 {
		return
	}
	slices.Sort(apart)
	n := len(apart)
	more := ""
	if n > maxDetails {
		apart, more = apart[:maxDetails], fmt.Sprintf(" and %d more", n-maxDetails)
	}
	pairs := "host pairs have"
	if n == 1 {
		pairs = "host pair has"
	}
	m.notef("%d %s the two directions of their connections in different reports (%s%s): their requests and responses are not "+
		"paired across reports (no partner, each direction a connection of its own for cross_rail, NAKs and READ responses not matched "+
		"with their requests); run rocedump report over all the captures at once for those", n, pairs, strings.Join(apart, "; "), more)
}

// rebuild makes the flows.Flow that the recomputed modules read from a
// record: identity, counters and first and last frame. PSN state is not in
// a record, so it stays empty; modules that need it are not rerun.
func (m *merger) rebuild(src int, r flowtable.Record) (*flows.Flow, error) {
	s, err := netip.ParseAddr(r.Src)
	if err != nil {
		return nil, err
	}
	d, err := netip.ParseAddr(r.Dst)
	if err != nil {
		return nil, err
	}
	f := &flows.Flow{
		ID: r.ID, Key: flows.Key{Src: s, Dst: d, DestQP: r.DestQPN}, Epoch: r.Epoch, PKey: r.PKey,
		Packets: r.Packets, WireBytes: r.Bytes, PayloadBytes: r.PayloadBytes, Messages: r.Messages,
		RNRNAKs: r.RNRNAKs, CNPs: r.CNPs, ECNCE: r.ECNCE, FECN: r.FECN, BECN: r.BECN, ICRCBad: r.ICRCBad, Truncated: r.Truncated,
		NAKOther: r.NAKs.Other,
	}
	f.SetMirrorDuplicates(r.MirrorDuplicates)
	f.SetCNPsCE(cnpsCE(r))
	f.SetReordered(r.Reordered)
	f.NAKs[bth.NAKPSNSequenceError] = r.NAKs.PSNSeqErr
	f.NAKs[bth.NAKInvalidRequest] = r.NAKs.InvalidRequest
	f.NAKs[bth.NAKRemoteAccessError] = r.NAKs.RemoteAccessErr
	f.NAKs[bth.NAKRemoteOperationalError] = r.NAKs.RemoteOpErr
	f.NAKs[bth.NAKInvalidRDRequest] = r.NAKs.InvalidRDRequest
	if r.SrcQPN != nil {
		f.SrcQP, f.HasSrcQP = *r.SrcQPN, true
	}
	if r.VLAN != nil {
		f.VLAN, f.HasVLAN = *r.VLAN, true
	}
	// The transport by name; an unknown name is none that is answered
	// (not RC, the zero value: capture_health's one-direction rule).
	f.Transport = bth.TransportVendor
	for t := bth.TransportRC; t <= bth.TransportVendor; t++ {
		if t.String() == r.Transport {
			f.Transport = t
		}
	}
	switch r.PairedBy {
	case "cm":
		f.PairedBy = flows.PairCM
	case "psn":
		f.PairedBy = flows.PairPSN
	}
	// A record names the file of its first and last frames (a report of
	// an earlier rocedump does not: flowRecords names the one file of a
	// report that has one).
	fileIndex := func(name string) int {
		if i := slices.Index(m.srcs[src].Report.Capture.Files, name); i >= 0 && name != "" {
			return m.fileBase[src] + i
		}
		return -1
	}
	for _, e := range []struct {
		s    string
		n    int
		file string
		ref  *flows.FrameRef
	}{{r.First, r.FirstFrame, r.FirstFile, &f.First}, {r.Last, r.LastFrame, r.LastFile, &f.Last}} {
		t, err := time.Parse(time.RFC3339Nano, e.s)
		if err != nil {
			return nil, err
		}
		*e.ref = flows.FrameRef{File: fileIndex(e.file), Frame: e.n, Time: t}
	}
	return f, nil
}

// flowRE finds flow ids in finding text: "flow 12", "(flow 3)".
var flowRE = regexp.MustCompile(`\bflow (\d+)\b`)

// remap moves one report's finding to the merged flow ids.
func (m *merger) remap(src int, f Finding) Finding {
	ids := m.newID[src]
	f.Flows = slices.Clone(f.Flows)
	for i, id := range f.Flows {
		f.Flows[i] = ids[id]
	}
	fix := func(s string) string {
		return flowRE.ReplaceAllStringFunc(s, func(w string) string {
			n, _ := strconv.Atoi(w[len("flow "):])
			if id, ok := ids[n]; ok {
				return "flow " + strconv.Itoa(id)
			}
			return w
		})
	}
	f.Detail = fix(f.Detail)
	f.Evidence.Details = slices.Clone(f.Evidence.Details)
	for i, d := range f.Evidence.Details {
		f.Evidence.Details[i] = fix(d)
	}
	f.Evidence.Counts = cloneCounts(f.Evidence.Counts)
	return f
}

// nameNodes names f's nodes, addresses in a report made without a
// topology, by the merge's topology, as a run with it names them.
func (m *merger) nameNodes(f *Finding) {
	if m.opts.Topology == nil {
		return
	}
	f.Nodes = slices.Clone(f.Nodes)
	for i, n := range f.Nodes {
		if a, err := netip.ParseAddr(n); err == nil {
			f.Nodes[i] = m.opts.Topology.NodeOf(a)
		}
	}
}

// sourced is a report's finding, moved to merged flow ids.
type sourced struct {
	src int
	f   Finding
}

// findings recomputes and combines.
func (m *merger) findings() {
	var given []sourced
	hadTopology := false
	var without []string // reports made without a topology
	for i, s := range m.srcs {
		hadTopology = hadTopology || s.Report.Summary.Topology
		if !s.Report.Summary.Topology {
			without = append(without, s.Name)
		}
		for _, f := range s.Report.Findings {
			f = m.remap(i, f)
			if !s.Report.Summary.Topology {
				m.nameNodes(&f)
			}
			given = append(given, sourced{i, f})
		}
	}
	if hadTopology && m.opts.Topology == nil {
		m.notef("the reports were made with a topology but the merge was given none: cross_rail, rdma_on_management and fan_out are recomputed " +
			"without one (give merge the same --topology or --rail-subnet)")
	}
	if m.opts.Topology != nil && len(without) > 0 {
		verb := "were"
		if len(without) == 1 {
			verb = "was"
		}
		m.notef("%s %s made without a topology: the findings merge does not recompute were judged without one there (other TCP/UDP "+
			"counts as on compute links where an end carried RoCE in that capture; no address is storage, management or BMC); "+
			"their nodes are named by the merge's topology (give report the same --topology or --rail-subnet)", strings.Join(without, ", "), verb)
	}
	recomputed := map[Kind]bool{}
	for _, k := range RecomputedKinds {
		recomputed[k] = true
	}
	// The capture problems findings are judged on are the files' own, not
	// the merge's notes.
	in := &Input{Capture: m.info, Flows: m.flows, Topology: m.opts.Topology, Config: Config{}.WithDefaults()}
	in.Capture.Problems = slices.Clone(m.info.Problems)
	for i, mod := range Modules {
		var fs []Finding
		for _, f := range mod.Run(in) {
			if recomputed[f.Kind] {
				fs = append(fs, m.patch(f, given))
			}
		}
		fs = append(fs, m.combine(given, recomputed, i)...)
		for _, f := range fs {
			f.normalize()
			f.order = i
			m.out = append(m.out, f)
		}
	}
	m.fixTotals(given)
	m.fixFabricLoss(given)
	// Kinds no module here makes (a newer rocedump's) go last.
	for _, f := range m.combine(given, recomputed, -1) {
		f.normalize()
		f.order = len(Modules)
		m.out = append(m.out, f)
	}
	m.approximations(given)
	slices.SortStableFunc(m.out, func(a, b Finding) int {
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
}

// moduleOf is the index in Modules of the module that makes findings of
// kind k, or -1.
func moduleOf(k Kind) int {
	name := string(k) // a module makes the kind it is named after...
	switch k {        // ...and these
	case KindMirrorLoss:
		name = "retransmission"
	case KindECNNotActed, KindDSCPMismatch, KindPCPMismatch, KindPFC:
		name = "congestion"
	}
	return slices.IndexFunc(Modules, func(m Module) bool { return m.Name == name })
}

// kindOrder orders the kinds of one module as it emits them.
var kindOrder = map[Kind]int{KindRetransmission: 0, KindMirrorLoss: 1, KindCongestion: 0, KindECNNotActed: 1, KindDSCPMismatch: 2, KindPCPMismatch: 3, KindPFC: 4}

// countKeys is the signature of a finding's variant: its count names, with
// numbers in them made "#" ("priority_3_frames" -> "priority_#_frames").
func countKeys(f *Finding) string {
	var ks []string
	for k := range f.Evidence.Counts {
		ks = append(ks, digitsRE.ReplaceAllString(k, "#"))
	}
	slices.Sort(ks)
	return strings.Join(slices.Compact(ks), ",")
}

var digitsRE = regexp.MustCompile(`[0-9]+`)

// combined is a finding merge combined from the reports' own: its kind
// and variant, and the reports it came from.
type combined struct {
	kind    Kind
	variant string
	srcs    []int  // report indices, each once
	lead    string // the report whose text it has
}

// combine merges the given findings that are not recomputed and belong to
// module mod (-1: to no module), grouped by kind and variant (variantOf),
// in the order the module makes them (kindOrder, variantRank).
func (m *merger) combine(given []sourced, recomputed map[Kind]bool, mod int) []Finding {
	type group struct {
		kind    Kind
		variant string
		rank    int // variantRank
		fs      []sourced
	}
	var groups []*group
	for _, g := range given {
		if recomputed[g.f.Kind] || moduleOf(g.f.Kind) != mod {
			continue
		}
		v := variantOf(&g.f)
		i := slices.IndexFunc(groups, func(x *group) bool { return x.kind == g.f.Kind && x.variant == v })
		if i < 0 {
			groups = append(groups, &group{kind: g.f.Kind, variant: v, rank: variantRank(&g.f)})
			i = len(groups) - 1
		}
		groups[i].fs = append(groups[i].fs, g)
	}
	slices.SortStableFunc(groups, func(a, b *group) int {
		return cmp.Or(cmp.Compare(kindOrder[a.kind], kindOrder[b.kind]), cmp.Compare(a.rank, b.rank))
	})
	var out []Finding
	for _, g := range groups {
		f, lead := m.combineGroup(g.fs)
		c := combined{kind: g.kind, variant: g.variant, lead: m.srcs[lead].Name}
		for _, s := range g.fs {
			if !slices.Contains(c.srcs, s.src) {
				c.srcs = append(c.srcs, s.src)
			}
		}
		m.combined = append(m.combined, c)
		out = append(out, f)
	}
	return out
}

// combineGroup merges findings of one kind and variant from one report or
// more, and returns the index of the report whose text it keeps. The
// counts combine by countRuleOf; then what the module derives from counts
// is made again (derivedCounts), and so are the severity, where its rule
// reads only counts and the capture's RoCE packets, and the title.
func (m *merger) combineGroup(fs []sourced) (Finding, int) {
	if len(fs) == 1 {
		f := fs[0].f
		f.Evidence.Counts = cloneCounts(f.Evidence.Counts)
		m.reshare(&f)
		if m.refresh(&f) {
			f.Detail = fmt.Sprintf("From %s: the severity is that of the merged capture, the text that of the report. ", m.srcs[fs[0].src].Name) + f.Detail
		}
		return f, fs[0].src
	}
	// The largest contributes the text: highest severity, then the largest
	// first count, then the earliest report.
	lead := slices.MinFunc(fs, func(a, b sourced) int {
		if c := cmp.Compare(b.f.Severity, a.f.Severity); c != 0 {
			return c
		}
		if c := cmp.Compare(weight(&b.f), weight(&a.f)); c != 0 {
			return c
		}
		return cmp.Compare(a.src, b.src)
	})
	out := lead.f
	var names []string
	for _, s := range fs {
		if !slices.Contains(names, m.srcs[s.src].Name) {
			names = append(names, m.srcs[s.src].Name)
		}
	}
	out.Evidence = mergeEvidence(fs, nil)
	out.Flows, out.Nodes = nil, nil
	for _, s := range fs {
		out.Flows = append(out.Flows, s.f.Flows...)
		out.Nodes = append(out.Nodes, s.f.Nodes...)
		out.Severity = max(out.Severity, s.f.Severity)
	}
	m.refresh(&out)
	if out.Kind == KindNonRDMAOnCompute && variantOf(&out) == nonRDMAOther {
		services, whole := mergedServices(fs)
		out.Title = nonRDMAOther + ": " + services
		m.servicesPartial = m.servicesPartial || !whole
	}
	out.Detail = fmt.Sprintf("Merged from %s (%s): the counts and the title are those of all of them, the flows and details those of each; "+
		"this text is that of %s. ", plural(len(names), "report"), strings.Join(names, ", "), m.srcs[lead.src].Name) + out.Detail
	return out, lead.src
}

// refresh makes again, from f's combined counts, what its module derives
// from them: derived counts, the severity where the module's rule reads
// only counts and the capture's RoCE packets, and the title. It says
// whether the severity changed.
func (m *merger) refresh(f *Finding) bool {
	derivedCounts(f)
	changed := false
	if sev, ok := severityFromCounts(f, m.roce); ok && sev != f.Severity {
		f.Severity, changed = sev, true
	}
	if t, ok := titleFromCounts(f); ok {
		f.Title = t
	}
	return changed
}

// shareRE is the share of the capture's RoCE packets that the text of a
// retransmission or mirror_loss finding gives (retxShare).
var shareRE = regexp.MustCompile(`\b\d+(\.\d+)?(e[-+]\d+)?% of the RoCE packets`)

// reshare puts in the text of f, a finding of one report, the share of the
// merged capture's RoCE packets its packets are (the module's own
// retxShare), where the report gave their share of its own capture: the
// counts are the report's, but "0.19% of the RoCE packets in the capture"
// over one rail's capture is not that over all of them.
func (m *merger) reshare(f *Finding) {
	var n uint64
	switch f.Kind {
	case KindRetransmission:
		n = countOf(f)("retransmitted_packets")
	case KindMirrorLoss:
		n = countOf(f)("mirror_lost_psns")
	default:
		return
	}
	done := false
	f.Detail = shareRE.ReplaceAllStringFunc(f.Detail, func(s string) string {
		if done {
			return s
		}
		done = true
		return retxShare(n, m.roce) + " of the RoCE packets"
	})
}

// weight is the largest count of a finding, to pick the largest report.
func weight(f *Finding) float64 {
	w := 0.0
	for _, v := range f.Evidence.Counts {
		w = max(w, v)
	}
	return w
}

// olderOnComputeEndpoints is on_compute_endpoints for a storage-role
// finding of a rocedump from before that count: all its storage
// addresses when it is critical (some talk to compute HCA addresses), else
// none.
func olderOnComputeEndpoints(f *Finding) (float64, bool) {
	c := f.Evidence.Counts
	n, role := c["storage_endpoints"]
	if _, has := c["on_compute_endpoints"]; f.Kind != KindStorageOnCompute || !role || has {
		return 0, false
	}
	if f.Severity == Critical {
		return n, true
	}
	return 0, true
}

// mergeEvidence combines the evidence of fs: counts by countRuleOf
// (summed, or maxima, minima), earliest first and latest last frame (of
// tied frames, the first report's first and the last report's last), details joined
// ("name: N" lines summed by name when every line is one). base, if not
// nil, is evidence recomputed from the merged data that wins over fs for
// the counts and details it has.
func mergeEvidence(fs []sourced, base *Evidence) Evidence {
	var e Evidence
	if base != nil {
		e = *base
		e.Counts = cloneCounts(base.Counts)
		e.Details = slices.Clone(base.Details)
	} else {
		e.Counts = map[string]float64{}
	}
	fromBase := map[string]bool{}
	for k := range e.Counts {
		fromBase[k] = base != nil
	}
	var lines []string
	more := 0
	for _, s := range fs {
		ev := &s.f.Evidence
		for k, v := range ev.Counts {
			if !fromBase[k] {
				combineCount(e.Counts, k, v)
			}
		}
		if v, ok := olderOnComputeEndpoints(&s.f); ok {
			combineCount(e.Counts, "on_compute_endpoints", v)
		}
		if ev.First != nil && (e.First == nil || ev.First.Time.Before(e.First.Time)) {
			c := *ev.First
			e.First = &c
		}
		// Of frames at the same time, one run's first is that of the file
		// given first and its last that of the file given last
		// (frameBefore); fs come report by report, as their files do.
		if ev.Last != nil && (e.Last == nil || !ev.Last.Time.Before(e.Last.Time)) {
			c := *ev.Last
			e.Last = &c
		}
		for _, d := range ev.Details {
			if n, ok := andMore(d); ok {
				more += n
				continue
			}
			lines = append(lines, d)
		}
	}
	if base != nil && len(base.Details) > 0 {
		return e
	}
	if summed, ok := sumNamedLines(lines); ok {
		e.Details = summed
		return e
	}
	if more > 0 || len(lines) > maxDetails {
		n := more + max(len(lines)-maxDetails, 0)
		lines = append(lines[:min(len(lines), maxDetails):min(len(lines), maxDetails)], fmt.Sprintf("and %d more", n))
	}
	e.Details = lines
	return e
}

var andMoreRE = regexp.MustCompile(`^and (\d+) more( \w+)?$`)

// andMore reads capped's last line, "and 7 more".
func andMore(s string) (int, bool) {
	m := andMoreRE.FindStringSubmatch(s)
	if m == nil || m[2] != "" {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	return n, true
}

var namedLineRE = regexp.MustCompile(`^([a-z_ -]+): (\d+)$`)

// sumNamedLines adds up lines of the form "bad_opcode: 3" by name, biggest
// first, when every line has that form.
func sumNamedLines(lines []string) ([]string, bool) {
	if len(lines) == 0 {
		return nil, false
	}
	sums := map[string]uint64{}
	var order []string
	for _, l := range lines {
		mm := namedLineRE.FindStringSubmatch(l)
		if mm == nil {
			return nil, false
		}
		n, _ := strconv.ParseUint(mm[2], 10, 64)
		if _, ok := sums[mm[1]]; !ok {
			order = append(order, mm[1])
		}
		sums[mm[1]] += n
	}
	slices.SortStableFunc(order, func(a, b string) int {
		if c := cmp.Compare(sums[b], sums[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	out := make([]string, len(order))
	for i, name := range order {
		out[i] = fmt.Sprintf("%s: %d", name, sums[name])
	}
	return capped(out), true
}

// patch adds to a recomputed finding what only the reports' own findings
// of the same kind and variant know (per-packet observations the JSON
// flows do not carry): the first and last frame, detail counts, and the
// counts the module adds from per-packet state.
func (m *merger) patch(f Finding, given []sourced) Finding {
	var match []sourced
	for _, g := range given {
		if g.f.Kind != f.Kind || slices.Contains(recordKinds, f.Kind) {
			continue
		}
		ok := true
		for k := range f.Evidence.Counts {
			if _, has := g.f.Evidence.Counts[k]; !has && !slices.Contains(optionalCounts, k) {
				ok = false
				break
			}
		}
		if ok {
			match = append(match, g)
		}
	}
	if len(match) == 0 {
		return f
	}
	if f.Kind == KindCongestion && f.Evidence.Counts["cnps"] > 0 {
		// The evidence frames are the CNPs' when there are any, else the
		// CE marks': keep the reports that saw CNPs.
		match = slices.DeleteFunc(match, func(s sourced) bool { return s.f.Evidence.Counts["cnps"] == 0 })
	}
	had := cloneCounts(f.Evidence.Counts)
	first, last := f.Evidence.First, f.Evidence.Last
	f.Evidence = mergeEvidence(match, &f.Evidence)
	if first != nil || last != nil {
		f.Evidence.First, f.Evidence.Last = first, last
	}
	if _, ok := had["cm_mads_cut"]; !ok {
		if n := f.Evidence.Counts["cm_mads_cut"]; n > 0 {
			cmMADsCutNote(&f, uint64(n))
		}
	}
	if _, ok := had["bth_cut"]; !ok {
		if n := f.Evidence.Counts["bth_cut"]; n > 0 {
			bthCutNote(&f, uint64(n))
		}
	}
	if _, ok := had["headers_cut"]; !ok {
		if n := f.Evidence.Counts["headers_cut"]; n > 0 {
			headersCutNote(&f, uint64(n))
		}
	}
	if _, ok := had["peak_cnps_per_ms"]; !ok {
		if v, ok := f.Evidence.Counts["peak_cnps_per_ms"]; ok {
			bins := ""
			if b, ok := f.Evidence.Counts["peak_cnps_bin_ms"]; ok {
				bins = fmt.Sprintf(", a mean over time bins of up to %.3g ms", b)
			}
			peak := fmt.Sprintf("CNPs peaked at %s per ms in the busiest of the merged reports%s (their time bins cannot be added up from JSON, "+
				"so over all of them the peak may be higher). ", cnpRate(v), bins)
			// Where congestionFinding puts its peak sentence.
			const after = "cut the rate of the notified QPs. "
			if i := strings.Index(f.Detail, after); i >= 0 {
				f.Detail = f.Detail[:i+len(after)] + peak + f.Detail[i+len(after):]
			} else {
				f.Detail += " " + peak
			}
		}
	}
	return f
}

// optionalCounts are counts a recomputed finding has only when they are
// above 0 ("only when" in docs/FINDINGS.md): they name no variant, so a
// report's finding without them (its copied flows carried no CNP, its
// files were not cut off) is of the same variant, and its frames count.
var optionalCounts = []string{"cnps_on_copied_flows", "cut_off"}

// cnpRate writes a peak_cnps_per_ms: a count of CNPs in a millisecond,
// or a bin's mean per millisecond (see cnpPeak).
func cnpRate(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// fixTotals puts back, into combined findings, the totals over the whole
// capture that the flow records do carry: the data and CNP packets that
// dscp_mismatch, pcp_mismatch and the not-ECN-capable ecn_not_acted finding count their
// wrong packets against, and the severity that depends on that share.
// Without this they would count only the reports that made the finding.
func (m *merger) fixTotals(given []sourced) {
	var data, cnps, reqData uint64
	names := opcodeNames()
	for _, r := range m.records {
		cnps += r.CNPs
		if r.DestQPN == gsiQPN {
			continue // the collector skips management datagrams
		}
		data += r.Packets - r.CNPs
		for name, n := range r.Opcodes {
			if op, ok := names[name]; ok && (op.IsRequest() || op.IsReadResponse()) {
				reqData += n
			}
		}
	}
	for i := range m.out {
		f := &m.out[i]
		c := f.Evidence.Counts
		set := func(key string, v uint64) {
			old, ok := c[key]
			if !ok || old == float64(v) {
				return
			}
			c[key] = float64(v)
			// The module's text names the total as "N of TOTAL ...".
			f.Detail = strings.Replace(f.Detail, fmt.Sprintf(" of %d ", uint64(old)), fmt.Sprintf(" of %d ", v), 1)
		}
		switch {
		case f.Kind == KindDSCPMismatch && hasCount(f, "data_packets"):
			set("data_packets", data)
			f.Severity = Warning
			if c["wrong_packets"] >= 0.5*c["data_packets"] {
				f.Severity = Critical
			}
		case f.Kind == KindPCPMismatch && hasCount(f, "data_packets"):
			set("data_packets", data)
		case (f.Kind == KindDSCPMismatch || f.Kind == KindPCPMismatch) && hasCount(f, "cnp_packets"):
			set("cnp_packets", cnps)
		case f.Kind == KindECNNotActed && hasCount(f, "not_ect_packets"):
			set("data_packets", reqData)
		case f.Kind == KindECNNotActed && hasCount(f, "not_acted"):
			// Every CE-marked packet but CNPs, of every direction.
			set("ce_marked", m.ceMarked(given))
		}
	}
}

// cnpsCE is how many of r's CE marks were on CNPs: its cnps_ce, or for a
// record of an earlier rocedump, without it, the fewest there can be (those
// its other packets cannot hold: all of a flow of CNPs only), as ceMarked
// counts them.
func cnpsCE(r flowtable.Record) uint64 {
	if r.CNPsCEKnown() {
		return r.CNPsCE
	}
	return r.ECNCE - min(r.ECNCE, r.Packets-min(r.Packets, r.CNPs))
}

// ceMarked is the CE-marked packets other than CNPs of every report, as
// ecn_not_acted counts them (ce_marked): a report's own count when it made
// that finding, else its flow records': all the CE marks of a flow with no
// CNP, none of a flow of CNPs only, and of a flow with both (CNPs go to
// the notified QP, as its ACKs do) as many as its other packets can hold,
// since a record of an earlier rocedump does not say which of its packets
// were marked; one with cnps_ce says it exactly. Those
// reports, if the CE marks of such a flow could be on CNPs too, are kept
// in ceGuessed for a merge note.
func (m *merger) ceMarked(given []sourced) uint64 {
	own := map[int]uint64{}
	for _, g := range given {
		if g.f.Kind == KindECNNotActed && variantOf(&g.f) == "not_acted" {
			own[g.src] += uint64(max(g.f.Evidence.Counts["ce_marked"], 0))
		}
	}
	var ce uint64
	m.ceGuessed, m.ceGuessedMax = nil, 0
	for i, s := range m.srcs {
		if n, ok := own[i]; ok {
			ce += n
			continue
		}
		var guessed uint64
		for _, r := range s.Report.FlowRecords().Records() {
			if r.CNPsCEKnown() {
				ce += r.ECNCE - min(r.ECNCE, r.CNPsCE) // the record says which were CNPs
				continue
			}
			other := r.Packets - min(r.Packets, r.CNPs)
			hi := min(r.ECNCE, other)            // none of the CNPs marked
			lo := r.ECNCE - min(r.ECNCE, r.CNPs) // as many as can be
			ce += hi
			guessed += hi - min(hi, lo)
		}
		if guessed > 0 {
			m.ceGuessed = append(m.ceGuessed, s.Name)
			m.ceGuessedMax += guessed
		}
	}
	return ce
}

// fixFabricLoss puts back the fabric_lost_psns of a merged mirror_loss
// finding: the fabric loss of every flow of the capture, not only of the
// reports that had mirror loss. A report without a mirror_loss finding
// says its fabric loss in its go-back-N and ACK-timeout findings, which
// split it between them as retransmission.go does (a flow with both kinds
// counts in go-back-N only).
func (m *merger) fixFabricLoss(given []sourced) {
	i := slices.IndexFunc(m.out, func(f Finding) bool { return f.Kind == KindMirrorLoss })
	if i < 0 || !hasCount(&m.out[i], "fabric_lost_psns") {
		return
	}
	hasMirrorLoss := map[int]bool{}
	for _, g := range given {
		if g.f.Kind == KindMirrorLoss {
			hasMirrorLoss[g.src] = true
		}
	}
	var fabric float64
	for _, g := range given {
		switch v := variantOf(&g.f); {
		case g.f.Kind == KindMirrorLoss,
			g.f.Kind == KindRetransmission && !hasMirrorLoss[g.src] && (v == "go-back-N" || v == "timeouts"):
			fabric += g.f.Evidence.Counts["fabric_lost_psns"]
		}
	}
	m.out[i].Evidence.Counts["fabric_lost_psns"] = fabric
}

func hasCount(f *Finding, key string) bool {
	_, ok := f.Evidence.Counts[key]
	return ok
}

// opcodeNames maps opcode names, as flow records write them, to opcodes.
func opcodeNames() map[string]bth.Opcode {
	m := make(map[string]bth.Opcode, 256)
	for i := 0; i < 256; i++ {
		m[bth.Opcode(i).String()] = bth.Opcode(i)
	}
	return m
}

// summary counts the merged report as summarize does a single run's.
func (m *merger) summary() Summary {
	return summarize(&Input{Flows: m.flows, Topology: m.opts.Topology}, m.out)
}

func (m *merger) notef(format string, args ...any) {
	m.notes = append(m.notes, "merge: "+fmt.Sprintf(format, args...))
}

func cloneCounts(c map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}
