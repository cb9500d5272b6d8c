package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestReadSimplePacketBlockHasNoTime: the frame of a pcapng Simple Packet
// Block has no time, and read prints it without one, as the README says
// and tshark does (its time column is blank). It printed the zero Time:
// "00:00:00.000000000", "0001-01-01 00:00:00.000000000", an epoch of
// -62135596800, a JSON "time" of "0001-01-01T00:00:00.000000000Z", and,
// as the first frame, it made --time rel count every later frame from
// year 1 (63835596800 seconds on). --time rel counts from the first
// frame that has a time.
func TestReadSimplePacketBlockHasNoTime(t *testing.T) {
	file := pcapngStart()
	var epb1 []byte
	eachRealRecord(t, "linlinw5_rdma_write_bw.pcap", func(n int, rec *capture.Record) {
		switch n {
		case 22: // RC_RDMA_WRITE_FIRST, without a time
			file = append(file, pcapngSPB(rec)...)
		case 23: // then the same frame as frame 24 with its time
			file = append(file, pcapngTestEPB(rec)...)
			epb1 = pcapngTestEPB(rec)
		}
	})
	file = append(file, epb1...)
	src := filepath.Join(t.TempDir(), "spb.pcapng")
	if err := os.WriteFile(src, file, 0o644); err != nil {
		t.Fatal(err)
	}
	const line1 = "10.1.16.62.49935 > 10.1.16.61.4791: RC_RDMA_WRITE_FIRST qp 0x00001b psn 5454383 "
	tests := []struct {
		args        []string
		want1, want []string // the untimed frame's line starts with want1, the next two lines with want
	}{
		{[]string{"--time", "time"}, []string{line1}, []string{"14:56:01.226558000 ", "14:56:01.226558000 "}},
		{[]string{"--time", "date"}, []string{line1}, []string{"2026-06-16 14:56:01.226558000 ", "2026-06-16 14:56:01.226558000 "}},
		{[]string{"--time", "epoch"}, []string{line1}, []string{"1781621761.226558000 ", "1781621761.226558000 "}},
		{[]string{"--time", "rel"}, []string{line1}, []string{"0.000000000 ", "0.000000000 "}},
		{[]string{"--format", "json"}, []string{`{"frame":1,"src":"10.1.16.62",`},
			[]string{`{"frame":2,"time":"2026-06-16T14:56:01.226558000Z",`, `{"frame":3,"time":"2026-06-16T14:56:01.226558000Z",`}},
	}
	for _, tt := range tests {
		out, stderr, code := runCLI(t, append(append([]string{"read"}, tt.args...), src)...)
		if code != ExitOK {
			t.Fatalf("read %v: exit %d: %s", tt.args, code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 {
			t.Fatalf("read %v: %d lines, want 3:\n%s", tt.args, len(lines), out)
		}
		for i, want := range append(tt.want1, tt.want...) {
			if !strings.HasPrefix(lines[i], want) {
				t.Errorf("read %v: line %d is\n%s\nwant it to start with\n%s", tt.args, i+1, lines[i], want)
			}
		}
	}
}

// pcapngTestEPB is a little-endian pcapng Enhanced Packet Block of rec on
// interface 0, with its time in microseconds.
func pcapngTestEPB(rec *capture.Record) []byte {
	us := uint64(rec.Timestamp.UnixMicro())
	var b []byte
	for _, v := range []uint32{0, uint32(us >> 32), uint32(us), uint32(len(rec.Data)), uint32(rec.OrigLen)} {
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	}
	return pcapngBlock(6, append(b, rec.Data...))
}
