package render

import "strings"

// textPart is a piece of a finding's next step: prose, or a command the
// finding quotes in backticks (Code).
type textPart struct {
	Text string
	Code bool
}

// nextSpans splits a next step at its backtick-quoted commands. A
// backtick without a closing one is prose.
func nextSpans(s string) []textPart {
	var out []textPart
	for {
		i := strings.IndexByte(s, '`')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(s[i+1:], '`')
		}
		if i < 0 || j <= 0 {
			if s != "" {
				out = append(out, textPart{Text: s})
			}
			return out
		}
		if i > 0 {
			out = append(out, textPart{Text: s[:i]})
		}
		out = append(out, textPart{Text: s[i+1 : i+1+j], Code: true})
		s = s[i+2+j:]
	}
}

// mdNext is a next step as Markdown: commands as code spans, the prose
// escaped.
func mdNext(s string) string {
	var b strings.Builder
	for _, p := range nextSpans(strings.Join(strings.Fields(s), " ")) {
		if !p.Code {
			// mdInline trims: keep the spaces around the commands.
			if strings.HasPrefix(p.Text, " ") {
				b.WriteByte(' ')
			}
			b.WriteString(mdInline(p.Text))
			if strings.HasSuffix(p.Text, " ") && strings.TrimSpace(p.Text) != "" {
				b.WriteByte(' ')
			}
			continue
		}
		// A code span holds its text as it is: no escapes, nothing inside
		// it becomes markup or a link.
		b.WriteString("`" + p.Text + "`")
	}
	return b.String()
}
