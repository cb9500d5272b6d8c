package render

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// timeLayout is RFC 3339 with nanoseconds, the layout of the flows JSON.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

// stamp formats a capture time in UTC, or "-" when there is none.
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(timeLayout)
}

// number formats an evidence count: integers in full, fractions with six
// significant digits, huge values in exponent form.
func number(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'g', -1, 64)
	case a >= 1e15:
		return strconv.FormatFloat(v, 'g', 6, 64)
	case v == math.Trunc(v) || a >= 1e6:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// countValue is number(c.Value) with a human reading when the name says
// the unit by a suffix (…bytes, …_bps, …_s, …_ms, …_us, …_ns), also
// before a statistic (recovery_ms_max, timeout_ms_min, recovery_ms_mean).
// Zero gets none: "0 (0 s)" says nothing more.
func countValue(c count) string {
	raw := number(c.Value)
	if math.IsNaN(c.Value) || math.IsInf(c.Value, 0) || c.Value <= 0 {
		return raw
	}
	var human string
	n := c.Name
	if strings.Contains(n, "_per_") {
		n = "" // a rate such as cnps_per_s: no unit to show
	}
	for _, stat := range []string{"_max", "_min", "_mean", "_median"} {
		n = strings.TrimSuffix(n, stat)
	}
	switch {
	case strings.HasSuffix(n, "bytes") && c.Value >= 1000 && c.Value < 1e19:
		human = flowtable.HumanBytes(uint64(c.Value))
	case strings.HasSuffix(n, "_bps") && c.Value >= 1000:
		human = flowtable.HumanRate(c.Value)
	case strings.HasSuffix(n, "_s"):
		human = duration(c.Value * 1e9)
	case strings.HasSuffix(n, "_ms"):
		human = duration(c.Value * 1e6)
	case strings.HasSuffix(n, "_us"):
		human = duration(c.Value * 1e3)
	case strings.HasSuffix(n, "_ns"):
		human = duration(c.Value)
	}
	if human == "" || human == raw {
		return raw
	}
	return raw + " (" + human + ")"
}

// duration formats ns nanoseconds, or "" when they do not fit a Duration.
func duration(ns float64) string {
	if ns >= math.MaxInt64 {
		return ""
	}
	return flowtable.HumanDuration(time.Duration(ns))
}

// frameRef names one frame for people: "frame 17 of a.pcap at TIME".
func frameRef(f *reports.Frame) string {
	if f == nil {
		return ""
	}
	s := "frame " + strconv.Itoa(f.Frame)
	if f.File != "" {
		s += " of " + f.File
	}
	return s + " at " + stamp(f.Time)
}

// severityTag is the upper-case severity, e.g. "CRITICAL".
func severityTag(s reports.Severity) string { return strings.ToUpper(s.String()) }

func u64(v uint64) string { return strconv.FormatUint(v, 10) }
