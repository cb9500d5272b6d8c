package cli

import (
	"testing"
	"time"
)

// TestAppendTimeFarApart: --time rel and epoch are exact for times more
// than 292 years apart, where time.Time.Sub saturates and UnixNano wraps:
// a pcapng Simple Packet Block's frame has no time (the zero Time, year 1)
// and a pcapng timestamp can be anywhere in 64 bits of ticks. They printed
// "--9223372036.(+,))+(0(" and "-6795364578.871345152".
func TestAppendTimeFarApart(t *testing.T) {
	zero := time.Unix(1700000000, 123456789).UTC()
	tests := []struct {
		style string
		ts    time.Time
		want  string
	}{
		{"rel", zero, "0.000000000"},
		{"rel", zero.Add(1500 * time.Millisecond), "1.500000000"},
		{"rel", zero.Add(-250 * time.Millisecond), "-0.250000000"},
		{"rel", zero.Add(-1250 * time.Millisecond), "-1.250000000"},
		{"rel", time.Time{}, "-63835596800.123456789"},
		{"rel", time.Unix(1<<40, 0), "1097811627775.876543211"},
		{"epoch", zero, "1700000000.123456789"},
		{"epoch", time.Unix(-1, 5e8), "-0.500000000"},
		{"epoch", time.Time{}, "-62135596800.000000000"},
		{"epoch", time.Unix(1<<40, 5), "1099511627776.000000005"},
	}
	for _, tt := range tests {
		p, err := newPacketPrinter("text", tt.style, false, false)
		if err != nil {
			t.Fatal(err)
		}
		p.setZero(zero)
		if got := string(p.appendTime(nil, tt.ts)); got != tt.want {
			t.Errorf("--time %s of %v: %q, want %q", tt.style, tt.ts, got, tt.want)
		}
	}
}
