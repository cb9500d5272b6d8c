package reports

import (
	"strings"
	"testing"
	"time"
)

// earlyInput is one RC connection split by direction: 40 RDMA WRITEs
// 10 µs apart in requests.pcap, an ACK of every fourth 8 µs after it in
// acks.pcap, whose clock is skew off; merged in time order, as the CLI
// merges files.
func earlyInput(skew time.Duration) *Input {
	var evs []fileEvent
	for i := range 40 {
		at := time.Duration(i) * 10 * time.Microsecond
		evs = append(evs, fileEvent{at: at, psn: uint32(i)})
		if i%4 == 3 {
			evs = append(evs, fileEvent{at: at + 8*time.Microsecond + skew, file: 1, ack: true, psn: uint32(i)})
		}
	}
	return twoFileInput(evs, nil, "requests.pcap", "acks.pcap")
}

// TestEarlyResponsesFinding: a capture split by direction, the ACKs'
// file's clock 20 µs behind the requests' (its times 20 µs early), says so
// in capture_health, naming the two files and how far behind at least, and
// says to shift the ACKs' file forward; in the wire's order (or the ACKs'
// clock ahead) it says nothing.
func TestEarlyResponsesFinding(t *testing.T) {
	for _, skew := range []time.Duration{0, 5 * time.Microsecond, -20 * time.Microsecond} {
		var got []Finding
		for _, f := range CaptureHealth(earlyInput(skew)) {
			if _, ok := f.Evidence.Counts["early_responses"]; ok {
				got = append(got, f)
			}
		}
		if skew >= 0 {
			if len(got) != 0 {
				t.Errorf("skew %v: %q", skew, got[0].Title)
			}
			continue
		}
		if len(got) != 1 {
			t.Fatalf("skew %v: %d early-response findings, want 1", skew, len(got))
		}
		f := got[0]
		// Each ACK comes 12 µs before the WRITE it acknowledges (8 µs
		// after it, less 20 µs).
		want := "10 responses captured before the requests they answer: the clock of acks.pcap runs at least 12.0 µs behind requests.pcap's"
		if f.Title != want || f.Severity != Warning || f.Kind != KindCaptureHealth {
			t.Errorf("got %s %s %q, want warning %q", f.Kind, f.Severity, f.Title, want)
		}
		if c := f.Evidence.Counts; c["early_responses"] != 10 || c["flows"] != 1 || c["lead_s"] != 12e-6 {
			t.Errorf("counts %v", c)
		}
		if !strings.Contains(f.Next, "forward by at least the offset (`editcap -t SECONDS`") {
			t.Errorf("next %q: the early file's times must go forward", f.Next)
		}
		if len(f.Evidence.Details) != 1 || !strings.Contains(f.Evidence.Details[0], "acks.pcap before requests in requests.pcap: 10, by up to 12.0 µs") {
			t.Errorf("details %q", f.Evidence.Details)
		}
	}
}

// TestEarlyResponsesBeforeEveryRequest: the ACKs' file 500 µs behind, so
// every ACK comes before the first WRITE: each of the 10 counts, by up to
// the time from the first (at -462 µs) to the first WRITE.
func TestEarlyResponsesBeforeEveryRequest(t *testing.T) {
	var got []Finding
	for _, f := range CaptureHealth(earlyInput(-500 * time.Microsecond)) {
		if _, ok := f.Evidence.Counts["early_responses"]; ok {
			got = append(got, f)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d early-response findings, want 1", len(got))
	}
	if c := got[0].Evidence.Counts; c["early_responses"] != 10 || c["flows"] != 1 || c["lead_s"] != 462e-6 {
		t.Errorf("counts %v, want 10 early responses on 1 flow, lead 462 µs", c)
	}
}
