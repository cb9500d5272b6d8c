package capture

import (
	"encoding/binary"
	"io"
	"testing"
	"time"
)

// TestTimesFitNanos checks what Reader.TimesFitNanos promises: every
// record of a pcap, at the extremes of its time fields (seconds from 0 to
// 2^32-1, a fraction up to 2^32-1 micro- or nanoseconds, which carries
// into the seconds), has a TimeNanos that is its time in nanoseconds, not
// wrapped; and a pcapng, whose times may lie past 2262, does not promise
// it.
func TestTimesFitNanos(t *testing.T) {
	for _, nano := range []bool{false, true} {
		var pkts []pkt
		for _, sec := range []uint32{0, 1, 1 << 31, pcapJoinedSec - 1, pcapJoinedSec, 1<<32 - 1} {
			for _, frac := range []uint32{0, 999_999, 999_999_999, 1<<32 - 1} {
				pkts = append(pkts, pkt{sec: sec, frac: frac, data: frame(len(pkts), 60)})
			}
		}
		file, _ := encodePcap(pcapSpec{order: binary.LittleEndian, nano: nano, snaplen: 65535, linkType: 1}, pkts)
		for _, small := range []bool{false, true} {
			r, recs, err := readBytes(t, file, "t.pcap", small)
			if err != io.EOF {
				t.Fatalf("nano %v, small %v: %v", nano, small, err)
			}
			if !r.TimesFitNanos() {
				t.Errorf("nano %v, small %v: a pcap's times do not fit", nano, small)
			}
			if len(recs) != len(pkts) {
				t.Fatalf("nano %v, small %v: %d records; want %d", nano, small, len(recs), len(pkts))
			}
			for i, rec := range recs {
				if got := time.Unix(0, rec.TimeNanos).UTC(); !got.Equal(rec.Timestamp) {
					t.Errorf("nano %v, small %v, record %d (%d s, fraction %d): TimeNanos %d is %v; the time is %v",
						nano, small, i+1, pkts[i].sec, pkts[i].frac, rec.TimeNanos, got, rec.Timestamp)
				}
			}
		}
	}

	// A pcapng record of 2^62 microseconds: past 2262.
	var f ngFile
	f.shb(binary.LittleEndian)
	f.idb(1, 0)
	f.epb(0, 1<<62, frame(0, 60), 60)
	r, recs, err := readBytes(t, f.b, "t.pcapng", false)
	if err != io.EOF || len(recs) != 1 {
		t.Fatalf("pcapng: %d records, %v", len(recs), err)
	}
	if time.Unix(0, recs[0].TimeNanos).Equal(recs[0].Timestamp) {
		t.Fatalf("pcapng: the record's time %v fits TimeNanos; the test wants one that does not", recs[0].Timestamp)
	}
	if r.TimesFitNanos() {
		t.Error("a pcapng says its times fit")
	}
}
