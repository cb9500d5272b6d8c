package render

import (
	_ "embed" // for the page template
	"html/template"
	"io"
	"strconv"
	"strings"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

//go:embed report.html.tmpl
var pageTemplate string

// WriteHTML writes r as one self-contained HTML file: inline CSS, inline
// SVG charts drawn here, no scripts, fonts or images, and a Content
// Security Policy that forbids any fetch. Everything from the report is
// escaped by html/template (the SVG escapes its own text).
func WriteHTML(w io.Writer, r *reports.Report) error {
	r = printable(r)
	t, err := template.New("report").Parse(pageTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, newPage(r))
}

// page is what the template draws.
type page struct {
	Tool, Verdict, Banner string
	Counts                []pill
	Files, Span           string
	Facts                 []fact
	Findings              []htmlFinding
	Charts                []chart
	FlowColumns           []string
	Flows                 [][]cell
	Totals                []cell
	FlowsShown, FlowsAll  int
	SchemaVersion         int
}

// pill is a count in the banner: "3 critical".
type pill struct {
	N     int
	Label string
}

// cell is a table cell; Class marks non-zero problem counters.
type cell struct{ Text, Class string }

// htmlFinding is one finding, ready for the template.
type htmlFinding struct {
	N             int
	Severity, Tag string
	Kind, Title   string
	Detail        []string // paragraphs
	Counts        []fact
	Details       []string
	Flows, Nodes  string
	First, Last   string
	Next          []textPart // prose and commands
	Open          bool
}

func newPage(r *reports.Report) page {
	p := page{
		Tool: r.Tool, Verdict: r.Summary.Verdict, Banner: "ok",
		Files: files(r.Capture.Files), Span: spanText(r.Capture),
		Facts: captureFacts(r), Charts: charts(r), FlowColumns: flowtable.Columns,
		SchemaVersion: r.SchemaVersion,
	}
	fs := ranked(r.Findings)
	if s, ok := worst(fs); ok {
		p.Banner = s.String()
	} else if r.Summary.Flows == 0 {
		p.Banner = "neutral" // nothing to judge is not good news
	}
	n := map[reports.Severity]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	p.Counts = []pill{{n[reports.Critical], "critical"}, {n[reports.Warning], "warning"}, {n[reports.Info], "info"}}
	for i, f := range fs {
		p.Findings = append(p.Findings, newHTMLFinding(i+1, f))
	}
	src := r.FlowRecords()
	shown, all := src.TopByBytes(htmlTopFlows), src.Len()
	for _, f := range shown {
		p.Flows = append(p.Flows, cells(flowtable.Row(f)))
	}
	if all > 0 {
		p.Totals = cells(src.Totals())
	}
	p.FlowsShown, p.FlowsAll = len(shown), all
	return p
}

func newHTMLFinding(n int, f reports.Finding) htmlFinding {
	h := htmlFinding{
		N: n, Severity: f.Severity.String(), Tag: severityTag(f.Severity),
		Kind: string(f.Kind), Title: f.Title, Details: f.Evidence.Details,
		Flows: listed(ids(f.Flows, "#")), Nodes: listed(f.Nodes),
		First: frameRef(f.Evidence.First), Last: frameRef(f.Evidence.Last), Next: nextSpans(f.Next),
		Open: f.Severity == reports.Critical,
	}
	for _, l := range strings.Split(f.Detail, "\n") {
		if strings.TrimSpace(l) != "" {
			h.Detail = append(h.Detail, l)
		}
	}
	for _, c := range sortedCounts(f.Evidence.Counts) {
		h.Counts = append(h.Counts, fact{c.Name, countValue(c)})
	}
	return h
}

// cells marks the problem counters (RETX and after) that are not zero.
func cells(row []string) []cell {
	out := make([]cell, len(row))
	for i, v := range row {
		out[i].Text = v
		if i >= 10 && v != "0" {
			out[i].Class = "hot"
		}
	}
	return out
}

func (p page) FlowsMore() string {
	if p.FlowsAll <= p.FlowsShown {
		return ""
	}
	return strconv.Itoa(p.FlowsAll-p.FlowsShown) + " more flows not shown"
}
