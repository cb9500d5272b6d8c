package render

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/rocedump/rocedump/reports"
)

// printable returns r, or a copy of it whose text for people has no
// control characters: the text, Markdown and HTML reports print node
// names from the topology file and capture file names as they are, and an
// escape sequence there would recolour or retitle the terminal that shows
// the text report, and is not a character HTML may hold. Each control
// character becomes its Go escape ("\x1b"); line breaks stay, as text and
// Markdown lay them out. The JSON keeps every string as it was (JSON
// escapes them). r is not modified.
func printable(r *reports.Report) *reports.Report {
	if !hasControl(r) {
		return r
	}
	c := *r
	c.Tool = visible(c.Tool)
	c.Capture.Files = visibleAll(c.Capture.Files)
	c.Capture.Problems = visibleAll(c.Capture.Problems)
	c.Summary.Verdict = visible(c.Summary.Verdict)
	c.Findings = slices.Clone(r.Findings)
	for i := range c.Findings {
		f := &c.Findings[i]
		f.Title, f.Detail, f.Next = visible(f.Title), visible(f.Detail), visible(f.Next)
		f.Nodes = visibleAll(f.Nodes)
		f.Evidence.Details = visibleAll(f.Evidence.Details)
		f.Evidence.First = visibleFrame(f.Evidence.First)
		f.Evidence.Last = visibleFrame(f.Evidence.Last)
	}
	return &c
}

// hasControl reports whether any string printable rewrites has a control
// character, so that the usual report is not copied.
func hasControl(r *reports.Report) bool {
	ss := []string{r.Tool, r.Summary.Verdict}
	ss = append(ss, r.Capture.Files...)
	ss = append(ss, r.Capture.Problems...)
	for _, f := range r.Findings {
		ss = append(ss, f.Title, f.Detail, f.Next)
		ss = append(ss, f.Nodes...)
		ss = append(ss, f.Evidence.Details...)
		for _, fr := range []*reports.Frame{f.Evidence.First, f.Evidence.Last} {
			if fr != nil {
				ss = append(ss, fr.File)
			}
		}
	}
	return slices.ContainsFunc(ss, func(s string) bool { return strings.IndexFunc(s, isControl) >= 0 })
}

// isControl is a control character other than a line break, a line or
// paragraph separator, or a bidirectional-text control (a right-to-left
// override turns the rest of a line around): what the topology loader
// refuses in a name, which a report read from JSON (rocedump merge) may
// still hold.
func isControl(r rune) bool {
	return r != '\n' && unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u061c' || r == '\u200e' || r == '\u200f' ||
		r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069'
}

// Visible is s with each character printable escapes written as its Go
// escape ("\x1b", "\u202e"): for a line of a report's text printed on
// its own, as rocedump merge prints its notes.
func Visible(s string) string { return visible(s) }

// visible is s with each control character but '\n' as its Go escape.
func visible(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isControl(r) {
			q := strconv.QuoteRune(r) // '\x1b', '\t', '\u0085'
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func visibleAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = visible(s)
	}
	return out
}

func visibleFrame(f *reports.Frame) *reports.Frame {
	if f == nil {
		return nil
	}
	c := *f
	c.File = visible(c.File)
	return &c
}
