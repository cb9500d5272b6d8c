package render

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/reports"
)

// TestWritersLeaveReportUnchanged renders every fixture in every format
// and checks the report is as it was (renderers copy before they sort).
func TestWritersLeaveReportUnchanged(t *testing.T) {
	for i, fx := range fixtures() {
		for _, wr := range writers {
			want := fixtures()[i].r // a fresh copy
			if err := wr.write(&bytes.Buffer{}, fx.r); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fx.r, want) {
				t.Errorf("%s.%s: the writer changed the report", fx.name, wr.ext)
			}
		}
	}
}

// TestRanking checks that every format lists critical findings first and
// keeps the report's order within a severity.
func TestRanking(t *testing.T) {
	r := incidentReport()
	want := []string{"Go-back-N", "ECN not acted on", "PFC pause storm", "The mirror missed", "RoCE data on DSCP 0",
		"Congestion on rail 2", "Cross-rail traffic", "Fan-out is normal", "NVMe-oF connection", "SSH on a compute link", "1204 truncated"}
	for _, wr := range writers {
		var b bytes.Buffer
		if err := wr.write(&b, r); err != nil {
			t.Fatal(err)
		}
		out, at := b.String(), 0
		for _, w := range want {
			i := strings.Index(out[at:], w)
			if i < 0 {
				t.Errorf("%s: %q missing or out of order", wr.ext, w)
				break
			}
			at += i
		}
	}
}

func TestJSONRejectsNaN(t *testing.T) {
	r := incidentReport()
	r.Findings[0].Evidence.Counts["ratio"] = math.NaN()
	err := WriteJSON(&bytes.Buffer{}, r)
	if err == nil || !strings.Contains(err.Error(), `count "ratio" is NaN`) {
		t.Errorf("WriteJSON with a NaN count: error %v, want one naming the count", err)
	}
}

func TestMarkdownEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain text 10.0.0.1", "plain text 10.0.0.1"},
		{"a | b", `a \| b`},
		{"<script>alert(1)</script>", `\<script\>alert(1)\</script\>`},
		{"*bold* and `code` [link](x) ~strike~", "\\*bold\\* and \\`code\\` \\[link\\](x) \\~strike\\~"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"_emphasis_ goes", `\_emphasis\_ goes`},
		{"# heading", `\# heading`},
		{"#3 is not a heading", `\#3 is not a heading`},
		// GitHub links #3 to issue 3: flow numbers in detail lines.
		{"flows #3 and #11, C# and #x", `flows \#3 and \#11, C# and #x`},
		{"- list", `\- list`},
		{"1. list", `1\. list`},
		{"4.2 ms", "4.2 ms"},
		{"---", `\---`},
		{"a &amp; b & c", `a \&amp; b & c`},
		{"back\\slash", `back\\slash`},
		{"two\nlines", "two lines"},
		// GitHub-flavoured autolinks: www., http(s):// and e-mail addresses
		// in file and node names would become links.
		{"www.capture-host.example/a.pcap", `www\.capture-host.example/a.pcap`},
		{"/srv/WWW.mirror.example.pcap", `/srv/WWW\.mirror.example.pcap`},
		{"dgx-1.www.example.com", "dgx-1.www.example.com"},
		{"from http://wiki.example.com/pod", `from http\://wiki.example.com/pod`},
		{"ops@dgx-1.example.com", `ops\@dgx-1.example.com`},
		{"10.0.0.1:4791", "10.0.0.1:4791"},
	}
	for _, tc := range tests {
		if got := mdInline(tc.in); got != tc.want {
			t.Errorf("mdInline(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		name, text, first, indent string
		width                     int
		want                      string
	}{
		{"fits", "a b c", "> ", "  ", 10, "> a b c\n"},
		{"wraps", "aaa bbb ccc ddd", "> ", "  ", 9, "> aaa bbb\n  ccc ddd\n"},
		{"long word alone", "x " + strings.Repeat("y", 12) + " z", "", "", 5, "x\n" + strings.Repeat("y", 12) + "\nz\n"},
		{"line breaks kept", "one\ntwo", "- ", "  ", 80, "- one\n  two\n"},
		{"runes count once", "ééé ééé", "", "", 7, "ééé ééé\n"},
		{"wide runes count twice", "名前 名前 ab", "", "", 9, "名前 名前\nab\n"},
		{"empty", "", "Next: ", "", 80, "Next:\n"},
		// A command in backticks is one word: copied from the terminal, it
		// must not come with a line break in it.
		{"command kept whole", "Run `rdma statistic show link mlx5_X/1`, then (`ip -br a`).", "Next: ", "  ", 24,
			"Next: Run\n  `rdma statistic show link mlx5_X/1`,\n  then (`ip -br a`).\n"},
		{"lone backtick", "a ` b c d", "", "", 5, "a ` b\nc d\n"},
		// A count's two-word gloss stays with it: "433 truncated (429
		// RoCE)" broke after "(429".
		{"two-word parenthesis kept whole", "433 truncated (429 RoCE); drops", "", "", 18,
			"433 truncated\n(429 RoCE); drops\n"},
		{"longer parenthesis wraps", "x (a b c) y", "", "", 4, "x (a\nb c)\ny\n"},
	}
	for _, tc := range tests {
		if got := wrap(tc.text, tc.first, tc.indent, tc.width); got != tc.want {
			t.Errorf("%s: wrap = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCountValue(t *testing.T) {
	tests := []struct {
		name string
		v    float64
		want string
	}{
		{"packets", 412, "412"},
		{"ratio", 1.0 / 3, "0.333333"},
		{"bytes", 6_200_000_000, "6200000000 (6.20 GB)"},
		{"retransmitted_bytes", 999, "999"},
		{"max_recovery_ms", 4.2, "4.2 (4.20 ms)"},
		{"gap_us", 12.5, "12.5 (12.5 µs)"},
		{"cnps_per_s", 70000, "70000"},
		{"peak_bps", 4e11, "400000000000 (400 Gbps)"},
		{"huge", 1e20, "1e+20"},
		{"big_fraction", 1234567.5, "1234568"},
		{"weird_s", math.Inf(1), "+Inf"},
		// The unit before a _max, _min or _mean, as the findings name them.
		{"recovery_ms_max", 4.2, "4.2 (4.20 ms)"},
		{"recovery_ms_mean", 0.0125, "0.0125 (12.5 µs)"},
		{"timeout_ms_min", 131, "131 (131 ms)"},
		{"rnr_wait_ms_max", 2500, "2500 (2.50 s)"},
		{"catch_up_ms_max", 0.3, "0.3 (300 µs)"},
		{"offset_max_s", 1.5, "1.5 (1.50 s)"},
		{"max_late_us", 1500, "1500 (1.50 ms)"},
		{"peak_cnps_per_ms", 12, "12"},
		{"retransmitted_bytes_max", 2e6, "2000000 (2.00 MB)"},
		{"timeout_ms_max", 0, "0"}, // "0 (0 s)" says nothing more
		{"names_ms", 5, "5 (5.00 ms)"},
		{"maximum", 5, "5"},
	}
	for _, tc := range tests {
		if got := countValue(count{tc.name, tc.v}); got != tc.want {
			t.Errorf("countValue(%s, %v) = %q, want %q", tc.name, tc.v, got, tc.want)
		}
	}
}

// TestSummaryPlurals: one of a thing is said in the singular.
func TestSummaryPlurals(t *testing.T) {
	s := reports.Summary{Flows: 1, QPs: 1, Hosts: 1, Critical: 1}
	if got, want := summaryLine(s), "1 QP flow, 1 QP, 1 host; findings: 1 critical, 0 warning, 0 info; no topology"; got != want {
		t.Errorf("summaryLine = %q, want %q", got, want)
	}
	for _, f := range captureFacts(&reports.Report{Summary: s}) {
		if f.Label == "Flows" && !strings.HasPrefix(f.Value, "1 QP flow, 1 QP, 1 host, ") {
			t.Errorf("Flows fact %q", f.Value)
		}
	}
	if got := captureLine(reports.CaptureInfo{Files: []string{"a.pcap"}, Packets: 1, RoCE: 1}); !strings.Contains(got, "1 packet (1 RoCE)") {
		t.Errorf("captureLine = %q, want 1 packet", got)
	}
}

// TestCutOffNamesNoFile checks that a cut-off capture of several files
// does not blame the last one: the reader flags any file that ends
// mid-record (here the first), and the problem line names it.
func TestCutOffNamesNoFile(t *testing.T) {
	r := quietReport()
	r.Capture.Files = []string{"a.pcap", "b.pcap"}
	r.Capture.CutOff = true
	r.Capture.Problems = []string{"a.pcap: file cut off in record 20 (have 41 of 78 bytes)"}
	for _, wr := range writers {
		var b bytes.Buffer
		if err := wr.write(&b, r); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); strings.Contains(s, "last file") {
			t.Errorf("%s says the last file is cut off; it was a.pcap, the first", wr.ext)
		}
	}
	if strings.Contains(Schema(), "The last file ends") {
		t.Error("schema.json says cut_off is about the last file")
	}
}

// TestNoControlCharacters puts terminal escapes, a bell, a tab and a C1
// control in what a topology file and capture file names give a report
// (node names, details, files): text, Markdown and HTML show them as Go
// escapes, never raw; JSON keeps them, escaped by JSON; the report is
// left as it was.
func TestNoControlCharacters(t *testing.T) {
	const evil = "dgx\x1b[31m-01\x1b]0;pwned\x07\tz\u0085\x7f"
	r := incidentReport()
	r.Capture.Files = []string{"cap\x1b[2J.pcap"}
	r.Capture.Problems = []string{"cap\x1b[2J.pcap: file cut off"}
	f := &r.Findings[0]
	f.Nodes = append(f.Nodes, evil)
	f.Evidence.Details = append(f.Evidence.Details, "10.0.0.1 ("+evil+" mlx5_0)")
	f.Evidence.First = &reports.Frame{File: "cap\x1b[2J.pcap", Frame: 3}
	want := incidentReport()
	want.Capture.Files, want.Capture.Problems = r.Capture.Files, r.Capture.Problems
	want.Findings[0].Nodes, want.Findings[0].Evidence = f.Nodes, f.Evidence
	for _, wr := range writers {
		var b bytes.Buffer
		if err := wr.write(&b, r); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if wr.ext == "json" {
			if !strings.Contains(out, `dgx\u001b[31m-01`) {
				t.Errorf("json lost the node name as it was")
			}
			continue
		}
		if i := strings.IndexFunc(out, isControl); i >= 0 {
			t.Errorf("%s: raw control character %q at byte %d: %q", wr.ext, out[i], i, out[max(0, i-30):min(len(out), i+30)])
		}
		shown := out
		if wr.ext == "md" { // undo Markdown's escapes: \\x1b\[31m is \x1b[31m
			shown = regexp.MustCompile(`\\(.)`).ReplaceAllString(out, "$1")
		}
		for _, s := range []string{`dgx\x1b[31m-01\x1b]0;pwned\a\tz\u0085\x7f`, `cap\x1b[2J.pcap`} {
			if !strings.Contains(shown, s) {
				t.Errorf("%s lacks %q", wr.ext, s)
			}
		}
		if !reflect.DeepEqual(r, want) {
			t.Fatalf("%s: the writer changed the report", wr.ext)
		}
	}
}

// TestManyFilesNamedBriefly: a report on a directory of 3,000 rotated
// captures names a few of them in its summary, not all 3,000 (hundreds of
// lines of names at the top of the text, Markdown and HTML, the HTML
// page's title too); the JSON report keeps every name.
func TestManyFilesNamedBriefly(t *testing.T) {
	r := quietReport()
	r.Capture.Files = nil
	for i := range 3000 {
		r.Capture.Files = append(r.Capture.Files, fmt.Sprintf("rot/cap_%04d.pcap", i))
	}
	for _, wr := range writers {
		var b bytes.Buffer
		if err := wr.write(&b, r); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if n := strings.Count(s, "rot/cap_"); wr.ext == "json" && n < 3000 || wr.ext != "json" && n > 20 {
			t.Errorf("%s names %d of the 3000 files", wr.ext, n)
		}
		if wr.ext != "json" && (!strings.Contains(s, "3000 files (rot/cap_0000.pcap") || !strings.Contains(s, "rot/cap_2999.pcap") || !strings.Contains(s, "2996 more")) {
			t.Errorf("%s does not say 3000 files from the first to the last, and how many more", wr.ext)
		}
	}
	few := []string{"a.pcap", "b.pcap", "c.pcap"}
	if got, want := files(few), "3 files (a.pcap, b.pcap, c.pcap)"; got != want {
		t.Errorf("files = %q, want %q", got, want)
	}
}

// TestManyProblemsListedBriefly: a report on 1,000 files, every one cut
// off, lists ten problems in its summary, not a thousand lines; the JSON
// report keeps every one.
func TestManyProblemsListedBriefly(t *testing.T) {
	r := quietReport()
	r.Capture.CutOff = true
	r.Capture.Problems = nil
	for i := range 1000 {
		r.Capture.Problems = append(r.Capture.Problems, fmt.Sprintf("rot/cap_%04d.pcap: file cut off in record 20 (have 68 of 78 bytes)", i))
	}
	for _, wr := range writers {
		var b bytes.Buffer
		if err := wr.write(&b, r); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if n := strings.Count(s, "file cut off in record"); wr.ext == "json" && n != 1000 || wr.ext != "json" && n != 9 {
			t.Errorf("%s lists %d of the 1000 problems", wr.ext, n)
		}
		if wr.ext != "json" && !strings.Contains(s, "and 991 more") {
			t.Errorf("%s does not count the problems it leaves out", wr.ext)
		}
	}
	few := []string{"a", "b"}
	if got := shownProblems(few); !reflect.DeepEqual(got, few) {
		t.Errorf("shownProblems(%q) = %q", few, got)
	}
}

// TestMarkdownNamesDoNotLink: file and node names that GitHub-flavoured
// Markdown would turn into links (a host name with www., a URL, an
// e-mail address) come out escaped, in the capture table, the findings'
// nodes and the flows table.
func TestMarkdownNamesDoNotLink(t *testing.T) {
	r := quietReport()
	r.Capture.Files = []string{"www.mirror-host.example/rail3.pcap", "http://files.example.com/b.pcap"}
	r.Findings = append(r.Findings, reports.Finding{Kind: "fan_out", Severity: reports.Info, Title: "t",
		Nodes: []string{"ops@dgx-1.example.com", "www.dgx-2.example"}})
	r.Flows[0].Src = "www.src.example"
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{`www\.mirror-host.example/rail3.pcap`, `http\://files.example.com/b.pcap`, `ops\@dgx-1.example.com`, `www\.dgx-2.example`, `www\.src.example`} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}

// TestNextCommandsAsCode: the commands a finding's next step quotes in
// backticks are code in Markdown and HTML (not literal backticks), and the
// prose around them is escaped as any text.
func TestNextCommandsAsCode(t *testing.T) {
	r := quietReport()
	r.Findings = append(r.Findings, reports.Finding{Kind: "pfc", Severity: reports.Warning, Title: "t",
		Next: "Find the port (`ethtool -S <if> | grep pause` on the HCAs) and *why*; then `rocedump read -v`. A lone ` stays."})
	var md, page bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	want := "**Next:** Find the port (`ethtool -S <if> | grep pause` on the HCAs) and \\*why\\*; then `rocedump read -v`. A lone \\` stays.\n"
	if !strings.Contains(md.String(), want) {
		t.Errorf("Markdown lacks %q:\n%s", want, md.String())
	}
	want = "<strong>Next:</strong> Find the port (<code>ethtool -S &lt;if&gt; | grep pause</code> on the HCAs) and *why*; then <code>rocedump read -v</code>. A lone ` stays.</p>"
	if !strings.Contains(page.String(), want) {
		t.Errorf("HTML lacks %q", want)
	}
}
