package render

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/reports"
)

// probeHTML opens the HTML page of r in headless Chromium, width pixels
// wide, runs the script probe (JavaScript that sets the variable out to a
// string) and returns out. The page's CSP forbids scripts, so the copy
// opened here has no CSP; the probe is added before </body> and its result
// read back with --dump-dom.
func probeHTML(t *testing.T, r *reports.Report, width int, probe string) string {
	t.Helper()
	bin := needChromium(t)
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(b.String(), "")
	if !strings.Contains(page, "</body>") {
		t.Fatal("page has no </body>")
	}
	page = strings.Replace(page, "</body>", `<script>var out="";`+probe+`;document.body.setAttribute("data-probe",out);</script></body>`, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := headlessChromium(ctx, bin, dir, path, width, 2000, "--dump-dom")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
	}
	m := regexp.MustCompile(`data-probe="([^"]*)"`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("width %d: the probe wrote nothing", width)
	}
	return string(m[1])
}

// heights parses the space-separated pixel heights a probe wrote.
func heights(t *testing.T, s string) []int {
	t.Helper()
	var hs []int
	for _, f := range strings.Fields(s) {
		h, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("probe wrote %q", s)
		}
		hs = append(hs, h)
	}
	return hs
}

// TestHTMLBadgesOneLine checks that every severity badge stays on one
// line when the finding titles are long: in the findings table a long
// title squeezed the severity column and "WARNING" broke into "WARNIN"
// and "G" (the cells' overflow-wrap: anywhere let the badge wrap inside
// its word).
func TestHTMLBadgesOneLine(t *testing.T) {
	r := incidentReport()
	for i := range r.Findings {
		r.Findings[i].Title += strings.Repeat(": a title long enough to take every pixel the findings table has to give", 2)
	}
	for _, width := range []int{1300, 800} {
		hs := heights(t, probeHTML(t, r, width,
			`var h=[];document.querySelectorAll(".badge").forEach(function(e){h.push(Math.round(e.getBoundingClientRect().height))});out=h.join(" ")`))
		if len(hs) < 2*len(r.Findings) {
			t.Fatalf("width %d: %d badges measured, want %d (table and details)", width, len(hs), 2*len(r.Findings))
		}
		for i, h := range hs {
			if h != hs[0] {
				t.Errorf("width %d: badge %d is %d px high, badge 0 %d px: a badge wrapped onto two lines (heights %v)", width, i, h, hs[0], hs)
				break
			}
		}
	}
}

// TestHTMLEvidenceRowsCompact checks that the rows of a finding's evidence
// table keep their height when the detail lines beside it are longer than
// the table: the grid stretched the table to the list's height and spread
// four counts over ten lines, each row several lines high.
func TestHTMLEvidenceRowsCompact(t *testing.T) {
	r := incidentReport()
	for i := range r.Findings {
		f := &r.Findings[i]
		if len(f.Evidence.Counts) == 0 {
			continue
		}
		for j := range 10 {
			f.Evidence.Details = append(f.Evidence.Details, fmt.Sprintf("10.0.%d.1 > 10.0.%d.2 qp 0x%06x (flow %d): 1 PSN in 1 gap acknowledged by the responder, not in the capture", j, j, 0x2000+j, j+1))
		}
	}
	hs := heights(t, probeHTML(t, r, 1300,
		`document.querySelectorAll("details").forEach(function(d){d.open=true});`+
			`var h=[];document.querySelectorAll(".evidence table tbody tr").forEach(function(e){h.push(Math.round(e.getBoundingClientRect().height))});out=h.join(" ")`))
	if len(hs) == 0 {
		t.Fatal("no evidence rows measured")
	}
	lo, hi := hs[0], hs[0]
	for _, h := range hs {
		lo, hi = min(lo, h), max(hi, h)
	}
	if hi > lo+4 {
		t.Errorf("evidence rows are %d to %d px high: the table was stretched to the height of its detail lines (heights %v)", lo, hi, hs)
	}
}

// TestHTMLNoSidewaysScroll checks that the page fits the window down to
// 800 px (a laptop screen split in two): the flows table, 15 columns that
// do not wrap, was wider than its card below ~1050 px and made the whole
// page scroll sideways; it scrolls inside its card instead.
func TestHTMLNoSidewaysScroll(t *testing.T) {
	r := incidentReport()
	for _, width := range []int{1000, 800} {
		got := probeHTML(t, r, width,
			`out=document.documentElement.scrollWidth+" "+document.documentElement.clientWidth+" "+document.querySelectorAll("table.flows tbody tr").length`)
		var page, window, rows int
		if _, err := fmt.Sscan(got, &page, &window, &rows); err != nil {
			t.Fatalf("probe wrote %q", got)
		}
		if rows == 0 {
			t.Fatalf("width %d: no flow rows", width)
		}
		if page > window {
			t.Errorf("width %d: the page is %d px wide in a %d px window: it scrolls sideways", width, page, window)
		}
	}
}

// TestHTMLChartTitlesOneLine checks that a chart's title stays on one line
// beside a long caption: the caption that names the top flows without a
// series squeezed "Throughput of the top flows" into three lines.
func TestHTMLChartTitlesOneLine(t *testing.T) {
	r := incidentReport()
	for _, id := range []int{17, 34, 51} { // three of the top five, as if past the first 4,096 flows
		delete(r.Timeline.FlowBits, id)
	}
	for _, width := range []int{1300, 800} {
		hs := heights(t, probeHTML(t, r, width,
			`var h=[];document.querySelectorAll("figcaption h3").forEach(function(e){h.push(Math.round(e.getBoundingClientRect().height))});out=h.join(" ")`))
		if len(hs) != 3 {
			t.Fatalf("width %d: %d chart titles measured, want 3", width, len(hs))
		}
		for i, h := range hs {
			if h != hs[1] { // the congestion chart's caption is short
				t.Errorf("width %d: chart title %d is %d px high, the congestion chart's %d px: it wrapped (heights %v)", width, i, h, hs[1], hs)
			}
		}
	}
}
