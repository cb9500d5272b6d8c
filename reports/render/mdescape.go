package render

import (
	"strings"
	"unicode"
)

// mdInline escapes s for inline Markdown (GitHub-flavoured; Jira's
// Markdown paste reads it the same): characters that would start
// emphasis, code, links, HTML or a table cell become literal, and so do
// what GitHub's Markdown links by itself (www.example.com, http://...,
// e-mail addresses), as file and node names can hold them. Line breaks
// become spaces, so the result is safe in a table cell.
func mdInline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		prev, next := ' ', ' '
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		switch {
		case strings.ContainsRune("\\`*[]<>|~", r):
			b.WriteByte('\\')
		case r == '_' && !(alnum(prev) && alnum(next)):
			b.WriteByte('\\') // intraword _ cannot emphasise; others can
		case r == '&' && (unicode.IsLetter(next) || next == '#'):
			b.WriteByte('\\') // would start an entity
		case r == '#' && unicode.IsDigit(next) && !alnum(prev):
			b.WriteByte('\\') // GitHub links #3 to issue 3 (flow numbers in details)
		case r == '@':
			b.WriteByte('\\') // an e-mail address would become a mailto: link
		case r == ':' && i+2 < len(rs) && rs[i+1] == '/' && rs[i+2] == '/':
			b.WriteByte('\\') // http://... would become a link
		case r == '.' && wwwBefore(rs, i):
			b.WriteByte('\\') // www.example.com would become a link
		case i == 0 && strings.ContainsRune("#-+", r) && next == ' ':
			b.WriteByte('\\') // would start a heading or a list at line start
		case i == 0 && strings.Trim(s, "-= ") == "":
			b.WriteByte('\\') // a rule or a setext heading underline
		}
		b.WriteRune(r)
	}
	out := b.String()
	// "1. " or "1) " at the start would be an ordered list.
	if j := strings.IndexFunc(out, func(r rune) bool { return !unicode.IsDigit(r) }); j > 0 && (out[j] == '.' || out[j] == ')') &&
		(j+1 == len(out) || out[j+1] == ' ') {
		out = out[:j] + "\\" + out[j:]
	}
	return out
}

// mdParagraphs escapes multi-line text as Markdown paragraphs: each line
// of s becomes its own paragraph.
func mdParagraphs(s string) string {
	var ps []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			ps = append(ps, mdInline(l))
		}
	}
	return strings.Join(ps, "\n\n")
}

// wwwBefore says whether rs[i] ends a word "www" (any case), where a
// link of GitHub-flavoured Markdown's "www." can start.
func wwwBefore(rs []rune, i int) bool {
	if i < 3 || !strings.EqualFold(string(rs[i-3:i]), "www") {
		return false
	}
	return i == 3 || !(alnum(rs[i-4]) || rs[i-4] == '.' || rs[i-4] == '-')
}

func alnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
