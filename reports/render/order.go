package render

import (
	"cmp"
	"slices"

	"github.com/rocedump/rocedump/reports"
)

// ranked returns the findings critical first, keeping the report's order
// within a severity. The report's slice is not modified.
func ranked(fs []reports.Finding) []reports.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b reports.Finding) int { return cmp.Compare(b.Severity, a.Severity) })
	return out
}

// worst is the highest severity among fs; ok is false when there are none.
func worst(fs []reports.Finding) (s reports.Severity, ok bool) {
	for i, f := range fs {
		if i == 0 || f.Severity > s {
			s = f.Severity
		}
	}
	return s, len(fs) > 0
}

// count is one named number of a finding's evidence.
type count struct {
	Name  string
	Value float64
}

// sortedCounts lists a counts map by name, so no map order leaks out.
func sortedCounts(m map[string]float64) []count {
	out := make([]count, 0, len(m))
	for k, v := range m {
		out = append(out, count{k, v})
	}
	slices.SortFunc(out, func(a, b count) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
