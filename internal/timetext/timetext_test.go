package timetext

import (
	"math/rand/v2"
	"testing"
	"time"
)

// testTimes are times every layout must write as AppendFormat does: the
// edges of seconds, years and the layouts' reach, before 1970, far
// future (a pcapng timestamp may say any year), other zones, and runs of
// times in one second (what the Stamp reuses) broken by others.
func testTimes() []time.Time {
	ts := []time.Time{
		{},
		time.Unix(0, 0),
		time.Unix(0, 1),
		time.Unix(-1, 0),
		time.Unix(-1, 999_999_999),
		time.Unix(-62135596800, 0), // year 1
		time.Date(0, 1, 1, 0, 0, 0, 5, time.UTC),
		time.Date(-1, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2262, 4, 11, 23, 47, 16, 854_775_807, time.UTC),
		time.Date(2262, 4, 11, 23, 47, 16, 854_775_808, time.UTC),
		time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 1, 10, 0, 0, 626_000, time.UTC),
		time.Date(2026, 11, 1, 10, 0, 0, 999_999_999, time.UTC),
		time.Date(2026, 11, 1, 10, 0, 1, 0, time.UTC),
		time.Date(2026, 11, 1, 10, 0, 0, 1, time.UTC), // back in the earlier second
		time.Date(2026, 11, 1, 12, 0, 0, 42, time.FixedZone("CET", 3600)),
		time.Date(2026, 11, 1, 12, 0, 0, 42, time.FixedZone("odd", -3*3600-17*60-5)),
		time.Now(), // with a monotonic reading
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		sec := r.Int64N(1<<40) - 1<<39
		ts = append(ts, time.Unix(sec, r.Int64N(1e9)))
		for range r.IntN(4) { // more in the same second
			ts = append(ts, time.Unix(sec, r.Int64N(1e9)))
		}
	}
	return ts
}

func TestStampMatchesFormat(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stamp  Stamp
		layout string
	}{
		{"RFC3339Nano", RFC3339Nano(), "2006-01-02T15:04:05.000000000Z07:00"},
		{"DateTime", DateTime(), "2006-01-02 15:04:05.000000000"},
		{"Clock", Clock(), "15:04:05.000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.stamp
			for _, tm := range testTimes() {
				want := tm.UTC().Format(tc.layout)
				if got := string(s.Append([]byte("x"), tm)); got != "x"+want {
					t.Fatalf("%v (Unix %d, %d ns): got %q, want %q", tm, tm.Unix(), tm.Nanosecond(), got, "x"+want)
				}
			}
		})
	}
}

func TestAppendRFC3339Nano(t *testing.T) {
	for _, tm := range testTimes() {
		want := tm.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
		if got := string(AppendRFC3339Nano([]byte("x"), tm)); got != "x"+want {
			t.Fatalf("%v: got %q, want %q", tm, got, "x"+want)
		}
	}
}

func TestStampAllocs(t *testing.T) {
	s := RFC3339Nano()
	b := make([]byte, 0, 64)
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	i := 0
	if n := testing.AllocsPerRun(1000, func() {
		i++
		b = s.Append(b[:0], base.Add(time.Duration(i)*time.Microsecond))
	}); n != 0 {
		t.Errorf("Append allocates %v times a call, want 0", n)
	}
}

func BenchmarkStamp(b *testing.B) {
	s := RFC3339Nano()
	buf := make([]byte, 0, 64)
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = s.Append(buf[:0], base.Add(time.Duration(i)*50*time.Nanosecond))
	}
}

func BenchmarkAppendFormat(b *testing.B) {
	buf := make([]byte, 0, 64)
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		buf = base.Add(time.Duration(i)*50*time.Nanosecond).UTC().AppendFormat(buf[:0], "2006-01-02T15:04:05.000000000Z07:00")
	}
}

// TestStampRFC3339NanoRuns: the RFC3339Nano Stamp, and the zero Stamp,
// write what time.Time.Format writes over runs of times in one second,
// back to an earlier second, and years written through AppendFormat
// between those written by hand.
func TestStampRFC3339NanoRuns(t *testing.T) {
	ts := testTimes()
	// The same times again, each followed by one of its own second.
	for _, tm := range testTimes() {
		ts = append(ts, tm, tm.Add(-time.Duration(tm.Nanosecond())))
	}
	for name, s := range map[string]Stamp{"RFC3339Nano": RFC3339Nano(), "zero": {}} {
		for _, tm := range ts {
			want := tm.UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
			if got := string(s.Append([]byte("x"), tm)); got != "x"+want {
				t.Fatalf("%s: %v (Unix %d, %d ns): got %q, want %q", name, tm, tm.Unix(), tm.Nanosecond(), got, "x"+want)
			}
		}
	}
}
