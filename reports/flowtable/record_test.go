package flowtable

import (
	"testing"
	"time"

	"github.com/rocedump/rocedump/flows"
)

// TestRecordRatesRounded: mean_bps and peak_bps are whole bits per
// second, rounded half up, whatever their size. A flow whose first and
// last packets are 1 ns apart but whose IP lengths claim 2 GB (a capture
// with broken timestamps, its frames cut by the snap length) has a mean
// of 1.6e19 b/s, past int64: it was written as -9223372036854775808.
func TestRecordRatesRounded(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		bytes uint64
		d     time.Duration
		want  float64
	}{
		{2_000_000_000, time.Nanosecond, 1.6e19},
		{1 << 62, time.Second, 8 * (1 << 62)},
		{100, time.Second, 800},
		{1, 16 * time.Second, 1}, // 0.5 b/s: half up
		{1, 20 * time.Second, 0}, // 0.4 b/s
		{3, 16 * time.Second, 2}, // 1.5 b/s
		{7, 10 * time.Second, 6}, // 5.6 b/s
		{0, time.Second, 0},
	} {
		f := &flows.Flow{WireBytes: tt.bytes, Packets: 2}
		f.First.Time, f.Last.Time = t0, t0.Add(tt.d)
		if got := NewRecord(f).MeanBps; got != tt.want {
			t.Errorf("%d bytes in %v: mean_bps %v, want %v", tt.bytes, tt.d, got, tt.want)
		}
	}
	for _, v := range []float64{0, 0.49, 0.5, 1.5, 1e18, 9.3e18, 1e300} {
		want := v
		switch v {
		case 0.49:
			want = 0
		case 0.5:
			want = 1
		case 1.5:
			want = 2
		}
		if got := round(v); got != want {
			t.Errorf("round(%v) = %v, want %v", v, got, want)
		}
	}
}
