package render

import (
	"bytes"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// WriteMarkdown writes r as Markdown that pastes cleanly into a ticket:
// the verdict in bold, capture and findings summary tables, one section
// per finding with its evidence table and next step, and the top flows.
// Text from the report is escaped so it never turns into markup.
func WriteMarkdown(w io.Writer, r *reports.Report) error {
	r = printable(r)
	var b bytes.Buffer
	b.WriteString("## rocedump report\n\n")
	b.WriteString("**" + mdInline(r.Summary.Verdict) + "**\n\n")

	b.WriteString("### Capture\n\n")
	var rows [][]string
	for _, f := range captureFacts(r) {
		rows = append(rows, []string{f.Label, mdInline(f.Value)})
	}
	if err := mdTable(&b, []string{"Capture", "Value"}, rows, tw.AlignLeft); err != nil {
		return err
	}

	fs := ranked(r.Findings)
	b.WriteString("\n### Findings\n\n")
	if len(fs) == 0 {
		b.WriteString("No findings.\n")
	} else {
		rows = rows[:0]
		for i, f := range fs {
			rows = append(rows, []string{strconv.Itoa(i + 1), severityTag(f.Severity), mdInline(string(f.Kind)), mdInline(f.Title)})
		}
		if err := mdTable(&b, []string{"#", "Severity", "Kind", "Title"}, rows, tw.AlignLeft); err != nil {
			return err
		}
	}
	for _, f := range fs {
		if err := mdFinding(&b, f); err != nil {
			return err
		}
	}

	if err := mdFlows(&b, r); err != nil {
		return err
	}
	// A blank line last: Markdown appended to the ticket (`rocedump flows
	// --format markdown >> ticket.md`) starts a table of its own instead
	// of adding rows to the flows table this one ends with.
	b.WriteString("\n")
	_, err := w.Write(b.Bytes())
	return err
}

// mdFinding writes one finding's section.
func mdFinding(b *bytes.Buffer, f reports.Finding) error {
	b.WriteString("\n### [" + severityTag(f.Severity) + "] " + mdInline(f.Title) + "\n\n")
	b.WriteString("Kind: " + mdInline(string(f.Kind)))
	if len(f.Flows) > 0 {
		b.WriteString(" · Flows: " + mdInline(listed(ids(f.Flows, ""))))
	}
	if len(f.Nodes) > 0 {
		b.WriteString(" · Nodes: " + mdInline(listed(f.Nodes)))
	}
	b.WriteString("\n\n")
	if f.Detail != "" {
		b.WriteString(mdParagraphs(f.Detail) + "\n\n")
	}
	e := f.Evidence
	var rows [][]string
	for _, c := range sortedCounts(e.Counts) {
		rows = append(rows, []string{mdInline(c.Name), mdInline(countValue(c))})
	}
	for _, d := range e.Details {
		rows = append(rows, []string{"detail", mdInline(d)})
	}
	if e.First != nil {
		rows = append(rows, []string{"first frame", mdInline(frameRef(e.First))})
	}
	if e.Last != nil {
		rows = append(rows, []string{"last frame", mdInline(frameRef(e.Last))})
	}
	if len(rows) > 0 {
		if err := mdTable(b, []string{"Evidence", "Value"}, rows, tw.AlignLeft); err != nil {
			return err
		}
		b.WriteString("\n")
	}
	if f.Next != "" {
		b.WriteString("**Next:** " + mdNext(f.Next) + "\n")
	}
	return nil
}

// mdFlows writes the top flows by bytes with a totals row for all.
func mdFlows(b *bytes.Buffer, r *reports.Report) error {
	src := r.FlowRecords()
	shown, all := src.TopByBytes(textTopFlows), src.Len()
	b.WriteString("\n### Top flows by bytes")
	if all == 0 {
		b.WriteString("\n\nNo RoCE flows.\n")
		return nil
	}
	b.WriteString(" (" + strconv.Itoa(len(shown)) + " of " + strconv.Itoa(all) + ")\n\n")
	var rows [][]string
	for _, f := range shown {
		rows = append(rows, mdCells(flowtable.Row(f)))
	}
	tot := mdCells(src.Totals())
	tot[1] = "**TOTAL**"
	rows = append(rows, tot)
	if err := mdTable(b, flowtable.Columns, rows, tw.AlignRight); err != nil {
		return err
	}
	if note := moreFlows(len(shown), all); note != "" {
		b.WriteString("\n" + note + "\n")
	}
	return nil
}

// mdTable writes a Markdown table; cells must already be escaped.
func mdTable(b *bytes.Buffer, header []string, rows [][]string, align tw.Align) error {
	t := tablewriter.NewTable(b,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(align),
		tablewriter.WithHeaderAlignment(align),
	)
	t.Header(anySlice(header)...)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

func mdCells(cells []string) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = mdInline(c)
	}
	return out
}
