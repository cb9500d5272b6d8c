package bench

import (
	"testing"
	"time"
)

func TestParseCPUTimes(t *testing.T) {
	got := parseCPUTimes("cpu  2419973 1841 325482 2093926 8283 0 6531 6165 0 0")
	want := cpuTimes{
		busy:  (2419973 + 1841 + 325482 + 0 + 6531) * 10 * time.Millisecond,
		steal: 6165 * 10 * time.Millisecond,
		ok:    true,
	}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3", "cpu 1 2 x 4 5 6 7 8"} {
		if c := parseCPUTimes(bad); c.ok {
			t.Errorf("%q parsed as %+v", bad, c)
		}
	}
}

func TestActivitySince(t *testing.T) {
	if !readCPUTimes().ok {
		t.Skip("no /proc/stat")
	}
	before := readCPUTimes()
	a := activitySince(before, 0)
	if !a.Known || a.Others < 0 || a.Steal < 0 {
		t.Errorf("activity %+v", a)
	}
	if a := activitySince(cpuTimes{}, 0); a.Known {
		t.Errorf("activity from an unread start: %+v", a)
	}
}
