package flowtable

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// bigRecords are n flows with cells of varied widths: IPv4 and IPv6
// addresses, epochs, partners or none, µs durations, big counters.
func bigRecords(n int) []Record {
	t0 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	rs := make([]Record, n)
	for i := range rs {
		r := &rs[i]
		r.ID = i + 1
		r.Src = fmt.Sprintf("10.%d.%d.%d", i%8, i/8%256, i%7)
		r.Dst = fmt.Sprintf("10.%d.%d.2", i%8, i/3%256)
		if i%997 == 0 {
			r.Src = fmt.Sprintf("fd00::%x:%x", i, i*7)
		}
		r.DestQPN = uint32(i * 37 % (1 << 24))
		r.Epoch = i % 5 / 4
		r.Transport = []string{"RC", "UD", "UC", "CNP", "RC", "XRC"}[i%6]
		if i%3 != 0 {
			q := uint32(i * 11)
			r.PartnerQPN = &q
		}
		r.Packets = uint64(i) * uint64(i%1000+1)
		r.Bytes = r.Packets * 1100
		r.DurationS = float64(i%5000) * 1e-6 * float64(i%17+1)
		r.MeanBps = float64(r.Bytes) * 8 / max(r.DurationS, 1e-9)
		r.RetransmittedPackets = uint64(i % 13 * i % 7)
		r.PSNGaps = uint64(i % 11)
		r.NAKs.PSNSeqErr = uint64(i % 9)
		r.RNRNAKs = uint64(i % 4)
		r.CNPs = uint64(i * i % 100000)
		r.ECNCE = uint64(i % 123456)
		r.First = t0.Add(time.Duration(i) * time.Microsecond).Format("2006-01-02T15:04:05.000000000Z07:00")
		r.Last = t0.Add(time.Duration(i*3) * time.Millisecond).Format("2006-01-02T15:04:05.000000000Z07:00")
	}
	return rs
}

// TestWriteTableStreamSameBytes compares the streamed table with
// tablewriter's on a table big enough to take the streaming path.
func TestWriteTableStreamSameBytes(t *testing.T) {
	for _, n := range []int{1, 7, streamRows + 1} {
		rs := bigRecords(n)
		shown := rs[:max(1, n-n/10)]
		var got, want bytes.Buffer
		if err := writeTableStream(&got, RecordsOf(shown), RecordsOf(rs)); err != nil {
			t.Fatal(err)
		}
		if err := writeTableWriter(&want, RecordsOf(shown), RecordsOf(rs)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.String(), want.String()
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			lo := max(0, i-200)
			t.Errorf("%d rows: streamed table differs from tablewriter's at byte %d:\ngot:  %q\nwant: %q", n, i, g[lo:min(len(g), i+100)], w[lo:min(len(w), i+100)])
		}
	}
}
