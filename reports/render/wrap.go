package render

import (
	"strings"
	"unicode"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// textWidth is the column the text report wraps at.
const textWidth = 100

// wrap breaks text into lines of at most width columns, each starting with
// indent; the first line starts with first instead. Words longer than a
// line stand alone; a command quoted in backticks is one word (copied
// from the terminal, it must not hold a line break). Line breaks in text start new lines. Columns are those
// a terminal shows, as the tables count them: a CJK character takes two.
func wrap(text, first, indent string, width int) string {
	var b strings.Builder
	prefix := first
	for i, para := range strings.Split(text, "\n") {
		if i > 0 {
			prefix = indent
		}
		line, n := prefix, twwidth.Width(prefix)
		empty := true
		for _, w := range words(para) {
			wn := twwidth.Width(w)
			if !empty && n+1+wn > width {
				b.WriteString(line + "\n")
				line, n, empty = indent, twwidth.Width(indent), true
			}
			if !empty {
				line, n = line+" ", n+1
			}
			line, n, empty = line+w, n+wn, false
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
		prefix = indent
	}
	return b.String()
}

// words splits s at spaces as strings.Fields does, but not inside a pair
// of backticks (a last backtick without a pair quotes nothing), and not
// inside a parenthesis of two words, the gloss of a count ("433 truncated
// (429 RoCE)"), which a line break would tear from its number.
func words(s string) []string {
	return joinShortGlosses(fields(s))
}

// joinShortGlosses joins each pair of words that opens and closes a
// parenthesis ("(429", "RoCE)") into one word.
func joinShortGlosses(ws []string) []string {
	out := ws[:0]
	for i := 0; i < len(ws); i++ {
		w := ws[i]
		if i+1 < len(ws) && strings.HasPrefix(w, "(") && !strings.Contains(w, ")") &&
			strings.HasSuffix(strings.TrimRight(ws[i+1], ".,;:"), ")") && !strings.Contains(ws[i+1], "(") {
			w += " " + ws[i+1]
			i++
		}
		out = append(out, w)
	}
	return out
}

// fields splits s at spaces as strings.Fields does, but not inside a pair
// of backticks; a last backtick without a pair quotes nothing.
func fields(s string) []string {
	pairs := strings.Count(s, "`") / 2 * 2 // backticks that open or close a quote
	var out []string
	var w strings.Builder
	quoted := false
	for _, r := range s {
		if r == '`' && pairs > 0 {
			pairs--
			quoted = !quoted
		}
		if unicode.IsSpace(r) && !quoted {
			if w.Len() > 0 {
				out = append(out, w.String())
				w.Reset()
			}
			continue
		}
		w.WriteRune(r)
	}
	if w.Len() > 0 {
		out = append(out, w.String())
	}
	return out
}

// indentLines puts indent before every non-empty line of s.
func indentLines(s, indent string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			b.WriteString(indent)
		}
		b.WriteString(l)
	}
	return b.String()
}
