package flowtable

import (
	"testing"
	"time"
)

func TestHumanUnits(t *testing.T) {
	bytes := []struct {
		n    uint64
		want string
	}{{0, "0 B"}, {999, "999 B"}, {1000, "1.00 KB"}, {1234, "1.23 KB"}, {45_600_000, "45.6 MB"}, {7_890_000_000, "7.89 GB"}, {1_020_000_000_000, "1.02 TB"},
		// values that round up to the next unit or digit
		{999_999, "1.00 MB"}, {999_500, "1.00 MB"}, {999_499, "999 KB"}, {9_999, "10.0 KB"}, {99_990, "100 KB"}, {9_994, "9.99 KB"}}
	for _, c := range bytes {
		if got := HumanBytes(c.n); got != c.want {
			t.Errorf("HumanBytes(%d): want %q, got %q", c.n, c.want, got)
		}
	}
	rates := []struct {
		bps  float64
		want string
	}{{0, "0 bps"}, {512, "512 bps"}, {12_300, "12.3 Kbps"}, {4_560_000, "4.56 Mbps"}, {398e9, "398 Gbps"}, {3.2e12, "3.20 Tbps"},
		{999.6, "1.00 Kbps"}, {999.4, "999 bps"}, {999_999, "1.00 Mbps"}, {9_999, "10.0 Kbps"}}
	for _, c := range rates {
		if got := HumanRate(c.bps); got != c.want {
			t.Errorf("HumanRate(%v): want %q, got %q", c.bps, c.want, got)
		}
	}
	durs := []struct {
		d    time.Duration
		want string
	}{{0, "0 s"}, {850, "850 ns"}, {12300 * time.Nanosecond, "12.3 µs"}, {4560 * time.Microsecond, "4.56 ms"}, {1230 * time.Millisecond, "1.23 s"}, {125 * time.Second, "2m5s"},
		{999_999, "1.00 ms"}, {9_999, "10.0 µs"}, {999_999_999, "1.00 s"}, {59_999_900 * time.Microsecond, "60.0 s"}, {59_990 * time.Millisecond, "60.0 s"}, {-5, "0 s"}}
	for _, c := range durs {
		if got := HumanDuration(c.d); got != c.want {
			t.Errorf("HumanDuration(%v): want %q, got %q", c.d, c.want, got)
		}
	}
}

func TestRowAndTotals(t *testing.T) {
	q := uint32(0x101)
	a := Record{ID: 1, Src: "10.0.0.1", Dst: "10.0.0.2", DestQPN: 0x201, PartnerQPN: &q, Transport: "RC", Epoch: 1,
		Packets: 10, Bytes: 10_000, DurationS: 0.001, MeanBps: 80e6, RetransmittedPackets: 2, PSNGaps: 1,
		NAKs: NAKCounts{PSNSeqErr: 1}, RNRNAKs: 1, CNPs: 3, ECNCE: 4,
		First: "2026-11-01T10:00:00.000000000Z", Last: "2026-11-01T10:00:00.001000000Z"}
	b := Record{ID: 2, Src: "10.0.0.2", Dst: "10.0.0.3", DestQPN: 0x22, Transport: "UD", Packets: 5, Bytes: 500,
		First: "2026-11-01T10:00:00.000500000Z", Last: "2026-11-01T10:00:00.002000000Z"}
	want := []string{"1", "10.0.0.1", "10.0.0.2", "0x000201 ep1", "0x000101", "RC", "10", "10.0 KB", "1.00 ms", "80.0 Mbps", "2", "1", "2", "3", "4"}
	if got := Row(a); len(got) != len(Columns) || !equal(got, want) {
		t.Errorf("Row:\nwant %q\ngot  %q", want, got)
	}
	if got := Row(b)[4]; got != "-" {
		t.Errorf("UD partner: want -, got %q", got)
	}
	tot := TotalsRow([]Record{a, b})
	wantTot := []string{"", "TOTAL", "2 flows", "", "", "", "15", "10.5 KB", "2.00 ms", "42.0 Mbps", "2", "1", "2", "3", "4"}
	if !equal(tot, wantTot) {
		t.Errorf("TotalsRow:\nwant %q\ngot  %q", wantTot, tot)
	}
	if got := TotalsRow([]Record{b})[2]; got != "1 flow" {
		t.Errorf("TotalsRow of one flow: %q, want \"1 flow\"", got)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
