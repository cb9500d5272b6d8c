package reports

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rocedump/rocedump/reports/flowtable"
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
	{"congestion", Congestion},
	{"cross_rail", CrossRail},
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
	SchemaVersion int                `json:"schema_version"`
	Tool          string             `json:"tool"`
	Capture       CaptureInfo        `json:"capture"`
	Summary       Summary            `json:"summary"`
	Flows         []flowtable.Record `json:"flows"`
	Findings      []Finding          `json:"findings"`
	// Timeline is for the HTML charts; it is not part of the JSON schema.
	Timeline *Timeline `json:"-"`
}

// Run runs every module over in and returns the ranked report.
func Run(in *Input, tool string) *Report {
	in.Config = in.Config.WithDefaults()
	r := &Report{SchemaVersion: SchemaVersion, Tool: tool, Capture: in.Capture, Flows: flowtable.Records(in.Flows)}
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
	slices.Sort(f.Nodes)
	f.Nodes = slices.Compact(f.Nodes)
	if f.Evidence.Counts == nil {
		f.Evidence.Counts = map[string]float64{}
	}
}

func summarize(in *Input, fs []Finding) Summary {
	s := Summary{Flows: len(in.Flows), Topology: in.Topology != nil}
	type qp struct {
		dst string
		qpn uint32
	}
	qps := map[qp]bool{}
	hosts := map[string]bool{}
	for _, f := range in.Flows {
		s.Bytes += f.WireBytes
		qps[qp{f.Key.Dst.String(), f.Key.DestQP}] = true
		hosts[f.Key.Src.String()], hosts[f.Key.Dst.String()] = true, true
	}
	s.QPs, s.Hosts = len(qps), len(hosts)
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
		return "No RoCE traffic in the capture: nothing to judge. Check that the mirror sees the compute links (UDP 4791)."
	case s.Critical > 0:
		return fmt.Sprintf("%d critical and %d warning findings across %d QP flows. Start with: %s", s.Critical, s.Warning, s.Flows, fs[0].Title)
	case s.Warning > 0:
		return fmt.Sprintf("No critical findings; %d warnings across %d QP flows. Start with: %s", s.Warning, s.Flows, fs[0].Title)
	}
	return fmt.Sprintf("No problems found in %d QP flows between %d hosts.", s.Flows, s.Hosts)
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
