// Package render writes a reports.Report for people and programs: text for
// a terminal, Markdown for a ticket, JSON (with its JSON Schema) for tools,
// and one self-contained HTML file with inline SVG charts.
//
// Every writer has the form func(io.Writer, *reports.Report) error, leaves
// the report unchanged, and is deterministic: findings are ranked critical
// first (stable within a severity), counts are listed by name, flows by
// bytes then ID, times are the capture's own in UTC RFC 3339 and numbers
// have fixed formats, so the same report always gives the same bytes.
package render
