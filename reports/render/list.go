package render

import (
	"strconv"
	"strings"
)

// maxListed is how many flow IDs or nodes a finding lists in text and
// Markdown; the JSON has them all.
const maxListed = 20

// listed joins items, cut to maxListed with a count of the rest.
func listed(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:maxListed], ", ") + " and " + strconv.Itoa(len(items)-maxListed) + " more"
}

// ids formats flow IDs for listed, each after prefix ("#" in text; none
// in Markdown, where "#3" would link to issue 3).
func ids(v []int, prefix string) []string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = prefix + strconv.Itoa(n)
	}
	return s
}
