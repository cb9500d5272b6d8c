package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/reports"
)

// TestHTMLSelfContained checks that the page can fetch nothing and that
// text from the report cannot become markup, in the page or in the SVG.
func TestHTMLSelfContained(t *testing.T) {
	r := incidentReport()
	r.Flows[0].Src = `10.0.0.1"><script>alert(2)</script>` // flow 1 is drawn: its label is in the SVG legend
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := strings.ToLower(b.String())
	for _, bad := range []string{"http://", "https://", "<script", "<link", "@import", "url(", "<img", "<iframe", "<object", "src=", "href=\"http", "xlink:href"} {
		if i := strings.Index(page, bad); i >= 0 {
			t.Errorf("page contains %q: ...%s...", bad, page[max(i-80, 0):min(i+80, len(page))])
		}
	}
	for _, want := range []string{
		"SSH on a compute link &lt;script&gt;alert(1)&lt;/script&gt; &amp; &#34;more&#34;", // finding title
		"ops &#34;night&#34; &amp; &lt;day&gt;.pcap",                                       // file name
		"10.0.0.1&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt; → 10.0.0.2",                // SVG legend
		`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestHTMLBanner checks that the banner takes the colour of the worst
// finding, and that a capture with nothing in it is not called good.
func TestHTMLBanner(t *testing.T) {
	withOnly := func(s reports.Severity) *reports.Report {
		r := incidentReport()
		var fs []reports.Finding
		for _, f := range r.Findings {
			if f.Severity <= s {
				fs = append(fs, f)
			}
		}
		r.Findings = fs
		return r
	}
	quiet := quietReport()
	tests := []struct {
		name string
		r    *reports.Report
		want string
	}{
		{"critical", incidentReport(), `<header class="banner critical">`},
		{"warning", withOnly(reports.Warning), `<header class="banner warning">`},
		{"info", withOnly(reports.Info), `<header class="banner info">`},
		{"clean", quiet, `<header class="banner ok">`},
		{"no traffic", emptyReport(), `<header class="banner neutral">`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHTML(&b, tc.r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tc.want) {
				t.Errorf("page lacks %s", tc.want)
			}
		})
	}
}
