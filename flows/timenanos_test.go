package flows

import (
	"math"
	"testing"
	"time"
)

// TestTimeNanosOrder: TimeNanos, Later and Earlier order capture times
// exactly as time.Time does, inside the years nanoseconds hold and outside
// them (the zero Time, pcapng times before 1678 and past 2262), where
// UnixNano wraps.
func TestTimeNanosOrder(t *testing.T) {
	times := []time.Time{
		{},
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(1500, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1677, 9, 21, 0, 12, 44, 0, time.UTC),
		time.Date(1677, 9, 22, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Unix(0, 0).UTC(),
		time.Unix(0, 1).UTC(),
		time.Unix(1700000000, 5).UTC(),
		time.Unix(1700000000, 6).UTC(),
		time.Date(2262, 4, 11, 23, 47, 15, 0, time.UTC),
		time.Date(2262, 4, 12, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	for _, a := range times {
		an := TimeNanos(a, a.UnixNano())
		if s := a.Unix(); s >= minNanosSec && s <= maxNanosSec && an != a.UnixNano() {
			t.Errorf("TimeNanos(%v) = %d, not UnixNano %d", a, an, a.UnixNano())
		}
		if an != math.MinInt64 && an != math.MaxInt64 && an != a.UnixNano() {
			t.Errorf("TimeNanos(%v) = %d: neither UnixNano nor a bound", a, an)
		}
		for _, b := range times {
			bn := TimeNanos(b, b.UnixNano())
			if an < bn && !a.Before(b) {
				t.Errorf("TimeNanos orders %v before %v", a, b)
			}
			if got, want := Later(an, a, bn, b), a.After(b); got != want {
				t.Errorf("Later(%v, %v) = %v, want %v", a, b, got, want)
			}
			if got, want := Earlier(an, a, bn, b), a.Before(b); got != want {
				t.Errorf("Earlier(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	if got := msBin(-1); got != time.Unix(0, -1).UnixMilli() {
		t.Errorf("msBin(-1) = %d, want %d", got, time.Unix(0, -1).UnixMilli())
	}
	for _, ns := range []int64{math.MinInt64, -2_000_001, -1_000_000, -1, 0, 999_999, 1_000_000, 1700000000123456789, math.MaxInt64} {
		if got, want := msBin(ns), time.Unix(0, ns).UnixMilli(); got != want {
			t.Errorf("msBin(%d) = %d, want UnixMilli %d", ns, got, want)
		}
	}
}
