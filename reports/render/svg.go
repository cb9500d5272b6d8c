package render

import (
	"html/template"
	"strconv"
	"strings"
)

// svg builds one inline SVG element. Numbers are written with one decimal
// place and every text is HTML-escaped, so the output is deterministic
// and safe to put in the page as template.HTML.
type svg struct{ b strings.Builder }

// f formats a coordinate with one decimal place.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func (s *svg) open(w, h float64, label string) {
	s.b.WriteString(`<svg class="chart" viewBox="0 0 ` + f(w) + ` ` + f(h) + `" role="img" aria-label="` + esc(label) + `">` + "\n")
}

func (s *svg) close() template.HTML {
	s.b.WriteString("</svg>")
	return template.HTML(s.b.String()) // every piece was escaped or is a number
}

func (s *svg) rect(x, y, w, h float64, fill string) {
	s.b.WriteString(`<rect x="` + f(x) + `" y="` + f(y) + `" width="` + f(w) + `" height="` + f(h) + `" fill="` + fill + `"/>` + "\n")
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string, width float64) {
	s.b.WriteString(`<line x1="` + f(x1) + `" y1="` + f(y1) + `" x2="` + f(x2) + `" y2="` + f(y2) + `" stroke="` + stroke + `" stroke-width="` + f(width) + `"/>` + "\n")
}

func (s *svg) circle(x, y, r float64, fill string) {
	s.b.WriteString(`<circle cx="` + f(x) + `" cy="` + f(y) + `" r="` + f(r) + `" fill="` + fill + `"/>` + "\n")
}

// polyline draws a line through points (x0 y0 x1 y1 ...) with a tooltip.
func (s *svg) polyline(pts []float64, stroke, tip string) {
	s.b.WriteString(`<polyline fill="none" stroke="` + stroke + `" stroke-width="2" stroke-linejoin="round" stroke-linecap="round" points="`)
	for i := 0; i+1 < len(pts); i += 2 {
		if i > 0 {
			s.b.WriteByte(' ')
		}
		s.b.WriteString(f(pts[i]) + "," + f(pts[i+1]))
	}
	s.b.WriteString(`"><title>` + esc(tip) + "</title></polyline>\n")
}

// text writes label at (x, y); anchor is start, middle or end; class
// selects a style of the page's stylesheet.
func (s *svg) text(x, y float64, anchor, class, label string) {
	s.b.WriteString(`<text x="` + f(x) + `" y="` + f(y) + `" text-anchor="` + anchor + `"`)
	if class != "" {
		s.b.WriteString(` class="` + class + `"`)
	}
	s.b.WriteString(">" + esc(label) + "</text>\n")
}

func esc(s string) string { return template.HTMLEscapeString(s) }
