package reports

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
	"github.com/rocedump/rocedump/topology"
)

// SchemaVersion is the version of the report JSON schema (README, "Report
// JSON"). It changes only when a field changes meaning or goes away.
const SchemaVersion = 1

// Module is one report module: it reads the input and returns findings.
type Module struct {
	Name string
	Run  func(in *Input) []Finding
}

// Modules are the report modules, in the order their findings are listed
// within one severity.
var Modules = []Module{
	{"capture_health", CaptureHealth},
	{"retransmission", Retransmissions},
	{"reordering", Reordering},
	{"congestion", Congestion},
	{"cross_rail", CrossRail},
	{"rdma_on_management", RDMAOnManagement},
	{"storage_on_compute", StorageOnCompute},
	{"non_rdma_on_compute", NonRDMAOnCompute},
	{"fan_out", FanOut},
}

// Summary counts what the report covers.
type Summary struct {
	Flows    int    `json:"flows"`
	QPs      int    `json:"qps"`   // distinct (destination IP, QPN) pairs
	Hosts    int    `json:"hosts"` // distinct RoCE IP addresses
	Bytes    uint64 `json:"bytes"`
	Critical int    `json:"critical"`
	Warning  int    `json:"warning"`
	Info     int    `json:"info"`
	Verdict  string `json:"verdict"`
	Topology bool   `json:"topology"` // a topology was given
}

// Report is the whole report: the JSON document, and the model every
// renderer draws.
type Report struct {
	SchemaVersion int         `json:"schema_version"`
	Tool          string      `json:"tool"`
	Capture       CaptureInfo `json:"capture"`
	Summary       Summary     `json:"summary"`
	// Flows are the flow records of a report read from JSON, merged, or
	// made by hand. A report from Run leaves them nil and keeps the flows
	// it was given instead, whose records are made one at a time as they
	// are written: read a report's records through FlowRecords.
	Flows    []flowtable.Record `json:"flows"`
	Findings []Finding          `json:"findings"`
	// Timeline is for the HTML charts; it is not part of the JSON schema.
	Timeline *Timeline `json:"-"`

	flows []*flows.Flow // Run's input flows, when Flows is nil
}

// FlowRecords is the report's flow records: Flows when set, else the
// records of the flows Run analysed, made as they are read (so that a
// report of a hundred thousand flows never holds them all). The flows must
// not change until the report is written.
func (r *Report) FlowRecords() flowtable.Source {
	if r.Flows == nil && r.flows != nil {
		return flowtable.FlowsOf(r.flows).WithFiles(r.Capture.Files)
	}
	return flowtable.RecordsOf(r.Flows)
}

// Run runs every module over in and returns the ranked report. The report
// refers to in.Flows for its flow records (see FlowRecords).
func Run(in *Input, tool string) *Report {
	in.Config = in.Config.WithDefaults()
	fs := in.Flows
	if fs == nil {
		fs = []*flows.Flow{}
	}
	r := &Report{SchemaVersion: SchemaVersion, Tool: tool, Capture: in.Capture, flows: fs}
	defer in.scanning()()
	for i, m := range Modules {
		for _, f := range m.Run(in) {
			f.normalize()
			f.order = i
			r.Findings = append(r.Findings, f)
		}
	}
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		if c := cmp.Compare(b.Severity, a.Severity); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	r.Summary = summarize(in, r.Findings)
	if in.Collect != nil {
		r.Timeline = in.Collect.Timeline()
	}
	return r
}

// normalize makes empty lists empty (not null) in JSON and sorts them.
func (f *Finding) normalize() {
	if f.Flows == nil {
		f.Flows = []int{}
	}
	if f.Nodes == nil {
		f.Nodes = []string{}
	}
	slices.Sort(f.Flows)
	f.Flows = slices.Compact(f.Flows)
	slices.SortFunc(f.Nodes, topology.CompareNames) // node names, or addresses: dgx-2 before dgx-10
	f.Nodes = slices.Compact(f.Nodes)
	if f.Evidence.Counts == nil {
		f.Evidence.Counts = map[string]float64{}
	}
}

func summarize(in *Input, fs []Finding) Summary {
	s := Summary{Flows: len(in.Flows), Topology: in.Topology != nil}
	sc := in.flowScan()
	// Distinct (destination, QPN) pairs, counted per destination.
	qps := newHostGroups(len(sc.addrs))
	for pass := range 2 {
		for _, b := range sc.brief {
			qps.add(pass, b.dst, b.destQP)
		}
		if pass == 0 {
			qps.place()
		}
	}
	s.Bytes, s.QPs, s.Hosts = sc.bytes, 0, len(sc.addrs)
	for _, n := range qps.distinct(false) {
		s.QPs += n
	}
	for _, f := range fs {
		switch f.Severity {
		case Critical:
			s.Critical++
		case Warning:
			s.Warning++
		default:
			s.Info++
		}
	}
	s.Verdict = verdict(s, fs)
	return s
}

// verdict is the one-paragraph answer at the top of the text and Markdown.
func verdict(s Summary, fs []Finding) string {
	switch {
	case s.Flows == 0:
		for _, f := range fs {
			if n := f.Evidence.Counts["bth_cut"]; f.Kind == KindCaptureHealth && n > 0 {
				return fmt.Sprintf("Nothing to judge: the snap length cut the transport header of %s, so no QP is known. "+
					"Capture again with a larger snap length (see the capture_health finding).", plural(uint64(n), "RoCE frame"))
			}
			if n := f.Evidence.Counts["headers_cut"]; f.Kind == KindCaptureHealth && n > 0 {
				return fmt.Sprintf("Nothing to judge: the snap length cut %s before their UDP or TCP header, so whether they are RoCE is unknown. "+
					"Capture again with a larger snap length (see the capture_health finding).", plural(uint64(n), "frame"))
			}
		}
		// The rest of the capture may still say something: storage or
		// SSH on a compute link, PFC storms.
		for _, f := range fs {
			if f.Severity >= Warning && f.Kind != KindCaptureHealth {
				return fmt.Sprintf("No RoCE traffic in the capture (check that the mirror sees the compute links, UDP 4791), but %s on its other traffic. Start with: %s",
					plural(s.Critical+s.Warning, "finding")+fmt.Sprintf(" (%d critical, %d warning)", s.Critical, s.Warning), f.Title)
			}
		}
		return "No RoCE traffic in the capture: nothing to judge. Check that the mirror sees the compute links (UDP 4791)."
	case s.Critical > 0:
		found := plural(s.Critical, "critical finding")
		if s.Warning > 0 {
			found += " and " + plural(s.Warning, "warning")
		}
		return fmt.Sprintf("%s across %s. Start with: %s", found, plural(s.Flows, "QP flow"), fs[0].Title)
	case s.Warning > 0:
		return fmt.Sprintf("No critical findings; %s across %s. Start with: %s", plural(s.Warning, "warning"), plural(s.Flows, "QP flow"), fs[0].Title)
	}
	return fmt.Sprintf("No problems found in %s between %s.", plural(s.Flows, "QP flow"), plural(s.Hosts, "host"))
}

// AtOrAbove counts the findings of severity s or higher (for --fail-on).
func (r *Report) AtOrAbove(s Severity) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity >= s {
			n++
		}
	}
	return n
}
