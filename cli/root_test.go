package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
)

// TestHelpTopics: `rocedump help CMD` is CMD's help (exit 0); an unknown
// topic is a usage error (exit 2), as an unknown command is.
func TestHelpTopics(t *testing.T) {
	out, errOut, code := runCLI(t, "help", "read")
	if code != ExitOK || !strings.Contains(out, "Print every RoCE packet") {
		t.Errorf("help read: exit %d, %q / %q", code, out, errOut)
	}
	for _, args := range [][]string{{"help", "bogus"}, {"bogus"}} {
		out, errOut, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, `unknown`) || !strings.Contains(errOut, `"bogus"`) {
			t.Errorf("rocedump %v: exit %d, stdout %q, stderr %q; want exit 2 naming the unknown topic", args, code, out, errOut)
		}
	}
}

// TestHelpTexts: the root help gives every command's exit codes (1 for
// the findings of report, merge and live); it and read's name every
// wrapper the decoder strips.
func TestHelpTexts(t *testing.T) {
	root, _, _ := runCLI(t, "--help")
	read, _, _ := runCLI(t, "read", "--help")
	if !strings.Contains(root, "1 findings at or above --fail-on (report, merge,\nlive)") {
		t.Errorf("rocedump --help does not say report, merge and live exit 1 on findings:\n%s", root)
	}
	for _, w := range []string{"ERSPAN I/II/III", "GRE", "VXLAN", "QinQ"} {
		if !strings.Contains(root, w) || !strings.Contains(read, w) {
			t.Errorf("rocedump --help or read --help does not name %s", w)
		}
	}
}

// TestREADMEEncapTokens: the README's read JSON table lists every encap
// token the decoder writes.
func TestREADMEEncapTokens(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, "| `encap` |") {
			row = l
		}
	}
	if row == "" {
		t.Fatal("no encap row in the README")
	}
	for k := packet.EncapVLAN; !strings.HasPrefix(k.String(), "EncapKind("); k++ {
		if !strings.Contains(row, "`"+k.String()) {
			t.Errorf("README's encap row lacks %q", k.String())
		}
	}
}

// TestReadFatalErrorLast: a fatal error (here a modified pcap, after a
// capture read whole) is the last line on stderr, with no summary of the
// run it cut short, as in flows and report; the message says what to do.
func TestReadFatalErrorLast(t *testing.T) {
	kuz := filepath.Join(t.TempDir(), "kuz.pcap")
	hdr := []byte{0x34, 0xcd, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0}
	if err := os.WriteFile(kuz, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	for _, files := range [][]string{{kuz}, {cm, kuz}} {
		out, errOut, code := runCLI(t, append([]string{"read"}, files...)...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		want := kuz + ": a modified (Kuznetzov) pcap file is not supported: convert it with editcap -F pcap"
		if code != ExitUsage || len(lines) != 1 || !strings.HasSuffix(lines[0], want) {
			t.Errorf("read %v: exit %d, stderr:\n%s\nwant exit 2 and one line ending %q", files, code, errOut, want)
		}
		if (out != "") != (len(files) > 1) {
			t.Errorf("read %v: %d bytes printed", files, len(out))
		}
	}
}

// TestReadCountsSingular: read's summary and warnings say "1 packet", "1
// frame", never "1 packets".
func TestReadCountsSingular(t *testing.T) {
	src := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	r, err := capture.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rec capture.Record
	if err := r.Next(&rec); err != nil {
		t.Fatal(err)
	}
	var one, mixed bytes.Buffer
	w1, _ := capture.NewPcapWriter(&one, capture.LinkTypeEthernet, 0)
	w1.WritePacket(rec.Timestamp, rec.Data, rec.OrigLen)
	wm, _ := capture.NewPcapngWriter(&mixed)
	wm.WritePacket(rec.Timestamp, capture.LinkTypeEthernet, rec.Data, rec.OrigLen)
	wm.WritePacket(rec.Timestamp, capture.LinkTypeERF, rec.Data, rec.OrigLen)
	dir := t.TempDir()
	for name, b := range map[string][]byte{"one.pcap": one.Bytes(), "mixed.pcapng": mixed.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, _ := runCLI(t, "read", filepath.Join(dir, "one.pcap"))
	if !strings.Contains(errOut, "rocedump: 1 packet read, 1 RoCE,") {
		t.Errorf("one packet: %q", errOut)
	}
	_, errOut, _ = runCLI(t, "flows", filepath.Join(dir, "one.pcap"))
	if !strings.Contains(errOut, "rocedump: 1 flow, 1 packet read, 1 RoCE,") {
		t.Errorf("flows, one packet: %q", errOut)
	}
	_, errOut, _ = runCLI(t, "extract", "--flow", "1", "-o", filepath.Join(dir, "out.pcap"), filepath.Join(dir, "one.pcap"))
	if !strings.Contains(errOut, "rocedump: wrote 1 packet of 1 flow to ") {
		t.Errorf("extract, one packet: %q", errOut)
	}
	_, errOut, _ = runCLI(t, "read", filepath.Join(dir, "mixed.pcapng"))
	if !strings.Contains(errOut, "skipped 1 frame: unsupported link type ERF") || !strings.Contains(errOut, "rocedump: 2 packets read, 1 RoCE,") {
		t.Errorf("one of two frames skipped: %q", errOut)
	}
}

// TestReadHelpCMAndTruncated: read --help says that --opcode cm selects
// RDMA CM messages only (other MADs on QP1 are not: packet.HasCM), and
// that the summary's truncated frames are RoCE or not, the RoCE ones
// among them said when some are not, as the README says.
func TestReadHelpCMAndTruncated(t *testing.T) {
	out, _, _ := runCLI(t, "read", "--help")
	text := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"cm (RDMA CM messages, not the other MADs on QP1)",
		"truncated frames (RoCE or not, and how many of them are RoCE when some are not: 433 truncated (429 RoCE))"} {
		if !strings.Contains(text, want) {
			t.Errorf("rocedump read --help does not say %q:\n%s", want, out)
		}
	}
}
