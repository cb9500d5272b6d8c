package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// WriteJSON writes r as one indented JSON object with the fields of the
// report schema (see Schema): schema_version, tool, capture, summary,
// flows and findings. Lists are [] and maps {} when empty, never null;
// times are in UTC; findings are ranked critical first. A count that is
// not a finite number is an error, since JSON cannot carry it.
//
// The flows, the bulk of a big report, are written a chunk of records at
// a time (made from the report's flows as they are written, see
// reports.Report.FlowRecords), by flowtable.EncodeRecords on every P, so
// that memory follows the flow table rather than the document. The bytes
// are those of one indented json.Encoder over the whole report.
func WriteJSON(w io.Writer, r *reports.Report) error {
	doc, err := jsonReport(r)
	if err != nil {
		return err
	}
	var head bytes.Buffer
	if err := newJSONEncoder(&head, "  ").Encode(doc); err != nil {
		return err
	}
	src := r.FlowRecords()
	if src.Len() == 0 {
		_, err := w.Write(head.Bytes())
		return err
	}
	// The flows are a member of the top-level object, so their empty list
	// is on a line of its own two spaces in (a string cannot hold a raw
	// newline): split the document there.
	const mark = "\n  \"flows\": []"
	i := bytes.Index(head.Bytes(), []byte(mark))
	if i < 0 {
		return fmt.Errorf("render: json: no flows member in the report")
	}
	i += len(mark) - 1 // at the ']'
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head.Bytes()[:i])
	// Records are elements of "flows": two levels deep. jsonReport wrote
	// their empty maps and lists as {} and [], never null.
	enc := flowtable.JSONEncoder{Indent: "  ", NilAsEmpty: true}
	err = flowtable.EncodeRecords(bw, src, enc, func(e *flowtable.JSONEncoder, dst []byte, i int, rec *flowtable.Record) ([]byte, error) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n    "...)
		return e.AppendRecord(dst, rec, 2)
	})
	if err != nil {
		return err
	}
	bw.WriteString("\n  ")
	bw.Write(head.Bytes()[i:])
	return bw.Flush()
}

// newJSONEncoder returns an encoder that leaves HTML characters alone and
// indents by indent (not at all if empty).
func newJSONEncoder(w io.Writer, indent string) *json.Encoder {
	enc := json.NewEncoder(w)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	enc.SetEscapeHTML(false)
	return enc
}

// jsonReport is a copy of r made ready for JSON, without its flows (an
// empty list); r is not modified.
func jsonReport(r *reports.Report) (*reports.Report, error) {
	out := *r
	out.Timeline = nil
	c := &out.Capture
	c.Files = nonNil(c.Files)
	c.Problems = nonNil(c.Problems)
	c.First, c.Last = c.First.UTC(), c.Last.UTC()
	if c.Drops != nil {
		d := *c.Drops
		c.Drops = &d
	}

	out.Flows = []flowtable.Record{} // WriteJSON writes them in their place

	out.Findings = nonNil(ranked(r.Findings))
	for i := range out.Findings {
		f := &out.Findings[i]
		f.Flows = nonNil(f.Flows)
		f.Nodes = nonNil(f.Nodes)
		counts := make(map[string]float64, len(f.Evidence.Counts))
		for k, v := range f.Evidence.Counts {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("render: json: finding %q: count %q is %v, which JSON cannot carry", f.Title, k, v)
			}
			counts[k] = v
		}
		f.Evidence.Counts = counts
		f.Evidence.First = utcFrame(f.Evidence.First)
		f.Evidence.Last = utcFrame(f.Evidence.Last)
	}
	return &out, nil
}

func utcFrame(f *reports.Frame) *reports.Frame {
	if f == nil {
		return nil
	}
	c := *f
	c.Time = c.Time.UTC()
	return &c
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
