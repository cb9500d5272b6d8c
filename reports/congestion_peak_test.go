package reports

import (
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/flows"
)

// TestCNPPeakLongCapture checks peak_cnps_per_ms on a capture long enough
// for the time bins to be wider than a millisecond: a CNP every 5 ms for 2
// s and a burst of 4 within 100 µs. The busiest bin holds 4 more CNPs
// than a millisecond ever does, and its count is not a millisecond's.
func TestCNPPeakLongCapture(t *testing.T) {
	for _, tc := range []struct {
		name    string
		span    time.Duration // CNPs every 5 ms for this long
		wantBin bool          // the bins are wider than a millisecond
	}{
		{"short capture, 1 µs bins", 0, false},
		{"2 s capture, wide bins", 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			in := &Input{Config: Config{}.WithDefaults()}
			c := NewCollector(flows.NewTable(flows.Config{}), in.Config)
			add := func(us float64) { c.Add(roce("10.0.0.2", "10.0.0.1", 0x100, opCNP, 0, 48, 0), s.ref(us)) }
			burstAt := float64(tc.span/time.Microsecond) / 2
			for us := 0.0; us <= float64(tc.span/time.Microsecond); us += 5000 {
				add(us)
				if us == burstAt {
					for i := 1; i <= 4; i++ {
						add(us + 20*float64(i))
					}
				}
			}
			c.Finish()
			in.Collect, in.Flows = c, c.Table.Flows()
			var cong *Finding
			for _, f := range Congestion(in) {
				if f.Kind == KindCongestion {
					cong = &f
				}
			}
			if cong == nil {
				t.Fatal("no congestion finding")
			}
			bin := c.Timeline().CNPs.Bin
			if got := bin > time.Millisecond; got != tc.wantBin {
				t.Fatalf("time bins of %v: the test needs them %s a millisecond", bin, map[bool]string{true: "wider than", false: "at most"}[tc.wantBin])
			}
			peak := cong.Evidence.Counts["peak_cnps_per_ms"]
			binMs, hasBin := cong.Evidence.Counts["peak_cnps_bin_ms"]
			if !tc.wantBin {
				// The burst and the CNP it follows: 5 in one millisecond.
				if peak != 5 || hasBin || !strings.Contains(cong.Detail, "CNPs peaked at 5 in the millisecond") {
					t.Errorf("peak_cnps_per_ms %v (bin %v), detail %q: want 5 in the millisecond", peak, binMs, cong.Detail)
				}
				return
			}
			ms := float64(bin) / float64(time.Millisecond)
			// The busiest bin holds the burst, its CNP and the others 5 ms
			// apart in it: per millisecond, at most 5 (the burst's) and at
			// least one every 5 ms.
			if binMs != ms || peak > 5 || peak < 0.2 || peak*ms < 5 {
				t.Errorf("peak_cnps_per_ms %v, peak_cnps_bin_ms %v (bins of %v): want the busiest bin's mean per millisecond", peak, binMs, bin)
			}
			if !strings.Contains(cong.Detail, "a millisecond (on a capture this long the report's time bins are") {
				t.Errorf("detail %q does not say the peak is over a wider bin", cong.Detail)
			}
		})
	}
}
