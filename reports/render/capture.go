package render

import (
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// fact is one labelled line of the capture summary.
type fact struct{ Label, Value string }

// captureFacts describes the capture for the summary tables.
func captureFacts(r *reports.Report) []fact {
	c := r.Capture
	fs := []fact{
		{"Files", files(c.Files)},
		{"Packets", u64(c.Packets) + " (" + u64(c.RoCE) + " RoCE)"},
		{"Span", spanText(c)},
		{"Truncated", truncatedValue(c)},
		{"Malformed", u64(c.Malformed)},
		{"ICRC bad", u64(c.ICRCBad)},
	}
	if c.Unsupported > 0 {
		fs = append(fs, fact{"Unsupported link type", u64(c.Unsupported)})
	}
	if c.CutOff {
		fs = append(fs, fact{"Cut off", "yes: a file ends mid-packet (see Problem)"})
	}
	fs = append(fs, fact{"Drops", drops(c.Drops)})
	s := r.Summary
	fs = append(fs,
		fact{"Flows", reports.Plural(s.Flows, "QP flow") + ", " + reports.Plural(s.QPs, "QP") + ", " + reports.Plural(s.Hosts, "host") + ", " + flowtable.HumanBytes(s.Bytes)},
		fact{"Topology", topology(s.Topology)},
	)
	for _, p := range shownProblems(c.Problems) {
		fs = append(fs, fact{"Problem", p})
	}
	return fs
}

// truncatedValue is the frames the snap length cut, with the RoCE ones
// among them when some are not RoCE: "5 (2 RoCE)".
func truncatedValue(c reports.CaptureInfo) string {
	return u64(c.Truncated) + reports.RoCEAmongTruncated(c.Truncated, c.RoCETruncated)
}

// captureLine is the one-line capture summary of the text report.
func captureLine(c reports.CaptureInfo) string {
	parts := []string{
		files(c.Files),
		reports.Plural(c.Packets, "packet") + " (" + u64(c.RoCE) + " RoCE)",
		spanText(c),
		reports.TruncatedCount(c.Truncated, c.RoCETruncated),
	}
	if c.Malformed > 0 {
		parts = append(parts, u64(c.Malformed)+" malformed")
	}
	if c.ICRCBad > 0 {
		parts = append(parts, u64(c.ICRCBad)+" ICRC bad")
	}
	if c.CutOff {
		parts = append(parts, "cut off")
	}
	return strings.Join(parts, ", ") + "; drops: " + drops(c.Drops)
}

func files(fs []string) string {
	switch len(fs) {
	case 0:
		return "no files"
	case 1:
		return fs[0]
	}
	if len(fs) > maxListedFiles {
		// A directory of rotated captures is thousands of files: their
		// names would be hundreds of lines at the top of the report (and
		// the HTML page's title). The JSON report lists every one.
		return strconv.Itoa(len(fs)) + " files (" + strings.Join(fs[:listedFiles], ", ") + ", ... " +
			fs[len(fs)-1] + ": " + strconv.Itoa(len(fs)-listedFiles-1) + " more between)"
	}
	return strconv.Itoa(len(fs)) + " files (" + strings.Join(fs, ", ") + ")"
}

// shownProblems are the capture problems the summary lists: every one, or
// of more than maxListedProblems (each of a directory's thousands of
// files cut off, say) the first ones and a line that counts the others,
// which the JSON report lists.
func shownProblems(ps []string) []string {
	if len(ps) <= maxListedProblems {
		return ps
	}
	const shown = maxListedProblems - 1
	return append(ps[:shown:shown], "and "+strconv.Itoa(len(ps)-shown)+" more (the JSON report's capture.problems lists every one)")
}

// maxListedProblems is the most capture problems the summary lists.
const maxListedProblems = 10

// maxListedFiles is the most capture files the summary names one by one;
// of more it names the first listedFiles and the last.
const (
	maxListedFiles = 8
	listedFiles    = 3
)

func spanText(c reports.CaptureInfo) string {
	if c.First.IsZero() && c.Last.IsZero() {
		return "no timestamps"
	}
	d := time.Duration(c.DurationS * 1e9)
	if c.DurationS == 0 {
		d = c.Last.Sub(c.First)
	}
	return stamp(c.First) + " to " + stamp(c.Last) + " (" + flowtable.HumanDuration(d) + ")"
}

func drops(d *reports.Drops) string {
	if d == nil {
		return "not counted (file input)"
	}
	return u64(d.Kernel) + " kernel, " + u64(d.Interface) + " interface"
}

func topology(given bool) string {
	if given {
		return "given"
	}
	return "none (nodes are IP addresses)"
}
