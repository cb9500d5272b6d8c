package cli

import (
	"strings"
	"testing"
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
