package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestReadRoCEv1WithoutGRH: a RoCEv1 frame (EtherType 0x8915) whose GRH
// the snap length cut, or whose GRH is not one (NxtHdr not 0x1B), has no
// GIDs, traffic class or hop limit to print. read printed empty addresses
// and made-up zeros: " > : RoCEv1 RoCE [|bth]", JSON "src":"","dst":"",
// "ip_version":0,"dscp":0,"ecn":"not-ect" (an ECN it never read), and
// with -v "GRH sgid  dgid  tclass dscp 0 ecn not-ect flowlabel 0x00000
// hoplmt 0". Now the text line says where the cut is ([|grh]) and prints
// no addresses, JSON leaves out the fields it does not have (as it does
// ttl), and -v prints no GRH line.
func TestReadRoCEv1WithoutGRH(t *testing.T) {
	var v1 *capture.Record
	r, err := capture.Open(filepath.Join(repoRoot, "testdata", "pcaps", "gen", "transports.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec capture.Record
	for r.Next(&rec) == nil {
		if len(rec.Data) > 14+40 && rec.Data[12] == 0x89 && rec.Data[13] == 0x15 {
			c := rec
			c.Data = append([]byte(nil), rec.Data...)
			v1 = &c
			break
		}
	}
	if v1 == nil {
		t.Fatal("transports.pcap has no RoCEv1 frame")
	}
	cut := *v1
	cut.Data = v1.Data[:14+20] // half the GRH
	bad := *v1
	bad.Data = append([]byte(nil), v1.Data...)
	bad.Data[14+6] = 0x11 // NxtHdr UDP, not BTH
	file := pcapngStart()
	file = append(file, pcapngTestEPB(&cut)...)
	file = append(file, pcapngTestEPB(&bad)...)
	src := filepath.Join(t.TempDir(), "v1.pcapng")
	if err := os.WriteFile(src, file, 0o644); err != nil {
		t.Fatal(err)
	}

	out, stderr, code := runCLI(t, "read", src)
	if code != ExitOK {
		t.Fatalf("read: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], " RoCEv1 RoCE [|grh], length ") ||
		!strings.Contains(lines[1], " RoCEv1 malformed RoCE: bad GRH, length ") {
		t.Errorf("read:\n%s\nwant a line with \"RoCEv1 RoCE [|grh]\", then one with \"RoCEv1 malformed RoCE: bad GRH\"", out)
	}
	if strings.Contains(out, " > :") {
		t.Errorf("read prints empty addresses:\n%s", out)
	}

	out, _, _ = runCLI(t, "read", "-v", src)
	if strings.Contains(out, "GRH sgid") || !strings.Contains(out, "\n    GRH cut off by the snap length\n") {
		t.Errorf("read -v prints a GRH it did not decode, or not that the snap length cut it:\n%s", out)
	}

	out, _, _ = runCLI(t, "read", "--format", "json", src)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		for _, field := range []string{`"src":`, `"dst":`, `"ip_version":`, `"dscp":`, `"ecn":`, `"ttl":`} {
			if strings.Contains(line, field) {
				t.Errorf("read --format json gives %s without a GRH: %s", field, line)
			}
		}
		if !strings.Contains(line, `"roce_version":1`) {
			t.Errorf("read --format json: not RoCEv1: %s", line)
		}
	}
}
