package cli

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestSkippedLinkTypesNamed: frames of several link types rocedump does
// not decode are all named, lowest first on every run (the analyzer keeps
// them in a map).
func TestSkippedLinkTypesNamed(t *testing.T) {
	erf := writeERF(t)                             // ERF (197)
	other := writeOfLinkType(t, 147, "user0.pcap") // LINKTYPE_147
	const want = "skipped 2 frames: unsupported link type LINKTYPE_147: "
	for range 5 {
		_, stderr, code := runCLI(t, "flows", erf, other, genCapture("congestion.pcap"))
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stderr, want) || !strings.Contains(stderr, "; also of link type ERF (197)") {
			t.Fatalf("stderr does not name both link types, lowest first:\n%s", stderr)
		}
	}
}

// TestSkippedLinkTypeNotCutOff: frames skipped for their link type are a
// capture_health finding of their own, not "could not be read to its end":
// every file was read to its end.
func TestSkippedLinkTypeNotCutOff(t *testing.T) {
	out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", writeERF(t), genCapture("congestion.pcap"))
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "of a link type rocedump does not read were skipped") {
		t.Errorf("no finding on the skipped frames:\n%s", out)
	}
	if strings.Contains(out, "could not be read to its end") {
		t.Errorf("a finding says the capture could not be read to its end:\n%s", out)
	}
}

// TestSkippedFilesNamed: flows, report and extract name the files whose
// frames were skipped for their link type, as read names each file; with
// several captures (a directory of mirrors) the count alone did not say
// which to convert.
func TestSkippedFilesNamed(t *testing.T) {
	erf := writeERF(t)
	good := genCapture("congestion.pcap")
	out := filepath.Join(t.TempDir(), "x.pcap")
	for _, cmd := range [][]string{{"flows"}, {"report", "--fail-on", "never"}, {"extract", "--flow", "1", "-o", out}} {
		_, stderr, code := runCLI(t, append(cmd, good, erf)...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", cmd[0], code, stderr)
		}
		if !strings.Contains(stderr, "skipped 1 frame: unsupported link type ERF (197): ") || !strings.Contains(stderr, "; in "+erf+"\n") {
			t.Errorf("%s does not name the file of the skipped frame, %s:\n%s", cmd[0], erf, stderr)
		}
		if strings.Contains(stderr, good) {
			t.Errorf("%s names %s, which has no skipped frame:\n%s", cmd[0], good, stderr)
		}
	}
}

// TestReadNamesEverySkippedLinkType: read names every link type of the
// frames it skipped in a file, not only the lowest, as flows does.
func TestReadNamesEverySkippedLinkType(t *testing.T) {
	le := binary.LittleEndian
	b := pcapngStart() // interface 0: Ethernet
	for _, lt := range []uint16{197, 147} {
		b = append(b, pcapngBlock(1, le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, lt), 0), 0))...)
	}
	eachRealRecord(t, "linlinw5_rdma_write_lat.pcap", func(n int, rec *capture.Record) {
		b = append(b, pcapngEPB(0, rec.Data)...)
	})
	b = append(b, pcapngEPB(1, make([]byte, 30))...)
	b = append(b, pcapngEPB(2, make([]byte, 30))...)
	b = append(b, pcapngEPB(2, make([]byte, 30))...)
	path := filepath.Join(t.TempDir(), "mixed.pcapng")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runCLI(t, "read", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "skipped 3 frames: unsupported link type LINKTYPE_147: ") || !strings.Contains(stderr, "; also of link type ERF (197)\n") {
		t.Errorf("read does not name both link types of the skipped frames:\n%s", stderr)
	}
}

// pcapngEPB is a little-endian pcapng Enhanced Packet Block of data on
// interface ifID, at time 0.
func pcapngEPB(ifID uint32, data []byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, ifID), 0), 0)
	b = le.AppendUint32(le.AppendUint32(b, uint32(len(data))), uint32(len(data)))
	return pcapngBlock(6, append(b, data...))
}
