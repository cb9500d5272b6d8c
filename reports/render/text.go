package render

import (
	"bytes"
	"io"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// WriteText writes r for a terminal: the verdict, a one-line capture
// summary, the findings ranked critical first with their evidence, and the
// top flows by bytes. Lines wrap at about 100 columns, except tables.
func WriteText(w io.Writer, r *reports.Report) error {
	r = printable(r)
	var b bytes.Buffer
	b.WriteString("rocedump report")
	if r.Tool != "" {
		b.WriteString(" (" + r.Tool + ")")
	}
	b.WriteString("\n\n")
	b.WriteString(wrap(r.Summary.Verdict, "Verdict: ", "         ", textWidth))
	b.WriteString(wrap(captureLine(r.Capture), "Capture: ", "         ", textWidth))
	b.WriteString(wrap(summaryLine(r.Summary), "Summary: ", "         ", textWidth))
	for _, p := range shownProblems(r.Capture.Problems) {
		b.WriteString(wrap(p, "Problem: ", "         ", textWidth))
	}

	fs := ranked(r.Findings)
	b.WriteString("\nFINDINGS")
	if len(fs) == 0 {
		b.WriteString("\n\nNo findings.\n")
	} else {
		b.WriteString(" (" + strconv.Itoa(len(fs)) + ", critical first)\n")
	}
	for i, f := range fs {
		if err := textFinding(&b, i+1, f); err != nil {
			return err
		}
	}

	if err := textFlows(&b, r); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// summaryLine counts flows and findings.
func summaryLine(s reports.Summary) string {
	top := "no topology"
	if s.Topology {
		top = "topology given"
	}
	return reports.Plural(s.Flows, "QP flow") + ", " + reports.Plural(s.QPs, "QP") + ", " + reports.Plural(s.Hosts, "host") + "; findings: " +
		strconv.Itoa(s.Critical) + " critical, " + strconv.Itoa(s.Warning) + " warning, " + strconv.Itoa(s.Info) + " info; " + top
}

// textFinding writes finding number n.
func textFinding(b *bytes.Buffer, n int, f reports.Finding) error {
	const ind = "    "
	num := strconv.Itoa(n) + ". "
	for len(num) < len(ind) {
		num = " " + num
	}
	b.WriteString("\n")
	b.WriteString(wrap("["+severityTag(f.Severity)+"] "+f.Title, num, ind, textWidth))
	b.WriteString(ind + "Kind: " + string(f.Kind) + "\n")
	if f.Detail != "" {
		b.WriteString(wrap(f.Detail, ind, ind, textWidth))
	}
	if err := textEvidence(b, f.Evidence, ind); err != nil {
		return err
	}
	if len(f.Flows) > 0 {
		b.WriteString(wrap(listed(ids(f.Flows, "#")), ind+"Flows: ", ind+"       ", textWidth))
	}
	if len(f.Nodes) > 0 {
		b.WriteString(wrap(listed(f.Nodes), ind+"Nodes: ", ind+"       ", textWidth))
	}
	if e := f.Evidence; e.First != nil {
		b.WriteString(wrap(frameRef(e.First), ind+"First: ", ind+"       ", textWidth))
	}
	if e := f.Evidence; e.Last != nil {
		b.WriteString(wrap(frameRef(e.Last), ind+"Last:  ", ind+"       ", textWidth))
	}
	if f.Next != "" {
		b.WriteString(wrap(f.Next, ind+"Next: ", ind+"      ", textWidth))
	}
	return nil
}

// textEvidence writes the counts and detail lines: inline when there is
// one of a kind, as a table when there are several.
func textEvidence(b *bytes.Buffer, e reports.Evidence, ind string) error {
	cs := sortedCounts(e.Counts)
	switch len(cs) {
	case 0:
	case 1:
		b.WriteString(wrap(cs[0].Name+" = "+countValue(cs[0]), ind+"Evidence: ", ind+"          ", textWidth))
	default:
		b.WriteString(ind + "Evidence:\n")
		rows := make([][]string, len(cs))
		for i, c := range cs {
			rows[i] = []string{c.Name, countValue(c)}
		}
		if err := textTable(b, ind, []string{"COUNT", "VALUE"}, rows, []tw.Align{tw.AlignLeft, tw.AlignRight}); err != nil {
			return err
		}
	}
	switch len(e.Details) {
	case 0:
	case 1:
		b.WriteString(wrap(e.Details[0], ind+"Detail: ", ind+"        ", textWidth))
	default:
		if len(cs) <= 1 {
			b.WriteString(ind + "Details:\n")
		}
		rows := make([][]string, len(e.Details))
		for i, d := range e.Details {
			rows[i] = []string{strconv.Itoa(i + 1), d}
		}
		if err := textTable(b, ind, []string{"#", "DETAIL"}, rows, []tw.Align{tw.AlignRight, tw.AlignLeft}); err != nil {
			return err
		}
	}
	return nil
}

// textTable writes a terminal table indented by ind, no wider than the
// text width.
func textTable(b *bytes.Buffer, ind string, header []string, rows [][]string, align []tw.Align) error {
	var t bytes.Buffer
	tb := tablewriter.NewTable(&t,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNormal),
		tablewriter.WithRowMaxWidth(textWidth-len(ind)-16), // room for borders and a narrow first column
	)
	tb.Header(anySlice(header)...)
	if err := tb.Bulk(rows); err != nil {
		return err
	}
	if err := tb.Render(); err != nil {
		return err
	}
	b.WriteString(indentLines(t.String(), ind))
	return nil
}

// textFlows writes the top flows by bytes with a totals line for all.
func textFlows(b *bytes.Buffer, r *reports.Report) error {
	src := r.FlowRecords()
	shown, all := src.TopByBytes(textTopFlows), src.Len()
	b.WriteString("\nTOP FLOWS BY BYTES")
	if all == 0 {
		b.WriteString("\n\nNo RoCE flows.\n")
		return nil
	}
	b.WriteString(" (" + strconv.Itoa(len(shown)) + " of " + strconv.Itoa(all) + ")\n")
	tb := tablewriter.NewTable(b,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithFooterAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithFooterAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight}),
	)
	tb.Header(anySlice(flowtable.Columns)...)
	for _, f := range shown {
		if err := tb.Append(flowtable.Row(f)); err != nil {
			return err
		}
	}
	tb.Footer(anySlice(src.Totals())...)
	if err := tb.Render(); err != nil {
		return err
	}
	if note := moreFlows(len(shown), all); note != "" {
		b.WriteString(wrap(note, "", "", textWidth))
	}
	return nil
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
