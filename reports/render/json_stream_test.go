package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rocedump/rocedump/reports"
)

// wholeJSON is WriteJSON as it was before it streamed the flows: one
// indented Encode of the whole document. The streamed output must be the
// same bytes.
func wholeJSON(r *reports.Report) ([]byte, error) {
	doc, err := jsonReport(r)
	if err != nil {
		return nil, err
	}
	doc.Flows = nil
	for _, f := range r.FlowRecords().Records() {
		f.RNRTimers = nonNilMap(f.RNRTimers)
		f.Opcodes = nonNilMap(f.Opcodes)
		f.DSCP = nonNilMap(f.DSCP)
		f.ECN = nonNilMap(f.ECN)
		f.UDPSrcPorts = nonNil(f.UDPSrcPorts)
		doc.Flows = append(doc.Flows, f)
	}
	doc.Flows = nonNil(doc.Flows)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err = enc.Encode(doc)
	return b.Bytes(), err
}

func TestWriteJSONStreamsSameBytes(t *testing.T) {
	big := incidentReport()
	base := big.Flows
	big.Flows = nil
	for i := range 20_000 {
		rec := base[i%len(base)]
		rec.ID = i + 1
		rec.Src = fmt.Sprintf("10.%d.%d.1 <&>", i/256%256, i%256)
		if i%3 == 0 {
			rec.Opcodes, rec.DSCP, rec.UDPSrcPorts = nil, nil, nil
		}
		big.Flows = append(big.Flows, rec)
	}
	cases := []struct {
		name string
		r    *reports.Report
	}{{"big", big}}
	for _, f := range fixtures() {
		cases = append(cases, struct {
			name string
			r    *reports.Report
		}{f.name, f.r})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want, err := wholeJSON(c.r)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteJSON(&got, c.r); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				i := 0
				for i < min(got.Len(), len(want)) && got.Bytes()[i] == want[i] {
					i++
				}
				t.Errorf("streamed JSON differs from the whole-document encoding at byte %d of %d (want %d bytes)", i, got.Len(), len(want))
			}
		})
	}
}

func nonNilMap[K comparable, V any](m map[K]V) map[K]V {
	if m == nil {
		return map[K]V{}
	}
	return m
}
