package render

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHTMLBadgesOneLine opens a report whose finding titles are long in
// headless Chromium and checks that every severity badge stays on one
// line: in the findings table a long title squeezed the severity column
// and "WARNING" broke into "WARNIN" and "G" (the cells' overflow-wrap:
// anywhere let the badge wrap inside its word). The page's CSP forbids
// scripts, so the test drops it from its copy and adds one that writes
// each badge's height into the page for --dump-dom.
func TestHTMLBadgesOneLine(t *testing.T) {
	bin := needChromium(t)
	r := incidentReport()
	for i := range r.Findings {
		r.Findings[i].Title += strings.Repeat(": a title long enough to take every pixel the findings table has to give", 2)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, r); err != nil {
		t.Fatal(err)
	}
	page := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy"[^>]*>`).ReplaceAllString(b.String(), "")
	probe := `<script>var h=[];document.querySelectorAll(".badge").forEach(function(e){h.push(Math.round(e.getBoundingClientRect().height))});` +
		`document.body.setAttribute("data-badge-heights",h.join(" "));</script></body>`
	if !strings.Contains(page, "</body>") {
		t.Fatal("page has no </body>")
	}
	page = strings.Replace(page, "</body>", probe, 1)

	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, width := range []string{"1300", "800"} {
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
			"--force-device-scale-factor=1", "--user-data-dir="+filepath.Join(dir, "profile"),
			"--window-size="+width+",2000", "--dump-dom", "file://"+path)
		cmd.Env = append(os.Environ(), "HOME="+dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.Bytes())
		}
		m := regexp.MustCompile(`data-badge-heights="([^"]*)"`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("width %s: the probe wrote no badge heights", width)
		}
		heights := strings.Fields(string(m[1]))
		if len(heights) < 2*len(r.Findings) {
			t.Fatalf("width %s: %d badges measured, want %d (table and details)", width, len(heights), 2*len(r.Findings))
		}
		for i, h := range heights {
			if h != heights[0] {
				t.Errorf("width %s: badge %d is %s px high, badge 0 %s px: a badge wrapped onto two lines (heights %s)", width, i, h, heights[0], m[1])
				break
			}
		}
	}
}
