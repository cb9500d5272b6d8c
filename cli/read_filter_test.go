package cli

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// writeCooked rewrites the Ethernet frames of src as a Linux cooked
// capture (SLL, or SLL2 when v2) and returns its path. Frame i is
// "outgoing" (packet type 4) when i%3 == 0, else "to us" (0), and on
// interface 3 when i is even, else 5 (SLL2 only): so that inbound,
// outbound and ifindex each select some frames and not others.
func writeCooked(t *testing.T, src string, v2 bool) string {
	t.Helper()
	r, err := capture.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	lt, name := capture.LinkTypeLinuxSLL, "sll.pcap"
	if v2 {
		lt, name = capture.LinkTypeLinuxSLL2, "sll2.pcap"
	}
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	w, err := capture.NewPcapWriter(bw, lt, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rec capture.Record
	for i := 0; ; i++ {
		if err := r.Next(&rec); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		eth := rec.Data
		pktType, ifIndex := byte(0), uint32(5)
		if i%3 == 0 {
			pktType = 4
		}
		if i%2 == 0 {
			ifIndex = 3
		}
		var hdr []byte
		if v2 {
			// LINKTYPE_LINUX_SLL2: protocol, reserved, interface index,
			// ARPHRD type, packet type, address length, address.
			hdr = make([]byte, 20)
			copy(hdr[0:2], eth[12:14])
			binary.BigEndian.PutUint32(hdr[4:], ifIndex)
			binary.BigEndian.PutUint16(hdr[8:], 1)
			hdr[10], hdr[11] = pktType, 6
			copy(hdr[12:], eth[6:12])
		} else {
			// LINKTYPE_LINUX_SLL: packet type, ARPHRD type, address
			// length, address, protocol.
			hdr = make([]byte, 16)
			binary.BigEndian.PutUint16(hdr[0:], uint16(pktType))
			binary.BigEndian.PutUint16(hdr[2:], 1)
			binary.BigEndian.PutUint16(hdr[4:], 6)
			copy(hdr[6:], eth[6:12])
			copy(hdr[14:16], eth[12:14])
		}
		frame := append(hdr, eth[14:]...)
		if err := w.WritePacket(rec.Timestamp, frame, rec.OrigLen-14+len(hdr)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readKeys runs read --format json and returns each printed packet's time,
// PSN and wire length: what identifies it across files.
func readKeys(t *testing.T, args ...string) []string {
	t.Helper()
	out, errOut, code := runCLI(t, append([]string{"read", "--format", "json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("read %v: exit %d: %s", args, code, errOut)
	}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var p struct {
			Time    string `json:"time"`
			PSN     int    `json:"psn"`
			WireLen int    `json:"wire_len"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, fmt.Sprintf("%s psn %d length %d", p.Time, p.PSN, p.WireLen))
	}
	return keys
}

// TestReadFilterCookedMatchesTcpdump: inbound, outbound and ifindex, which
// apply to Linux cooked captures only, select on SLL and SLL2 captures the
// packets tcpdump selects: read with the filter prints what read without
// it prints of the frames `tcpdump -r FILE -w - EXPR` keeps.
func TestReadFilterCookedMatchesTcpdump(t *testing.T) {
	tcpdump := needTool(t, "tcpdump")
	src := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_write_bw.pcap")
	all := readKeys(t, src)
	for _, v2 := range []bool{false, true} {
		file := writeCooked(t, src, v2)
		exprs := []string{"inbound", "outbound", "udp and not outbound"}
		if v2 {
			exprs = append(exprs, "ifindex 3", "ifindex 5 and inbound", "ifindex 7")
		}
		for _, expr := range exprs {
			sel := filepath.Join(t.TempDir(), "sel.pcap")
			if b, err := exec.Command(tcpdump, "-r", file, "-w", sel, expr).CombinedOutput(); err != nil {
				t.Fatalf("tcpdump -r %s %q: %v\n%s", file, expr, err, b)
			}
			want := readKeys(t, sel)
			got := readKeys(t, file, "--", expr)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s -- %q: read printed %d packets, tcpdump keeps %d of the %d:\n%s", filepath.Base(file), expr, len(got), len(want), len(all), firstDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
			}
			if expr != "ifindex 7" && (len(want) == 0 || len(want) == len(all)) {
				t.Errorf("%s -- %q: tcpdump keeps %d of %d packets: the test capture does not tell it apart", filepath.Base(file), expr, len(want), len(all))
			}
		}
	}
}

// writeRawBSD rewrites the Ethernet frames of src as raw IP of link type
// 12 (BSD DLT_RAW) and returns its path.
func writeRawBSD(t *testing.T, src string) string {
	t.Helper()
	r, err := capture.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(t.TempDir(), "raw12.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewPcapWriter(f, 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	var rec capture.Record
	for {
		if err := r.Next(&rec); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(rec.Timestamp, rec.Data[14:], rec.OrigLen-14); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestReadFilterLinkTypes: the filter is checked against the link types
// the input holds. One that applies to none of the file's link types is a
// usage error naming the file; one that applies to no link type rocedump
// reads is a usage error before any file is opened; raw IP of the BSD link
// types is filtered as raw IP.
func TestReadFilterLinkTypes(t *testing.T) {
	src := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_write_bw.pcap")
	sll := writeCooked(t, src, false)
	missing := filepath.Join(t.TempDir(), "missing.pcap")
	errs := []struct {
		name string
		args []string
		msgs []string
	}{
		{"inbound on Ethernet", []string{src, "--", "inbound"}, []string{src + ": filter: inbound/outbound not supported on Ethernet"}},
		{"ifindex on SLL", []string{sll, "--", "ifindex", "3"}, []string{sll + ": filter: ifindex not supported on LINUX_SLL"}},
		{"no link type, before opening", []string{missing, "--", "ifindex 3 and ether host 1:2:3:4:5:6"},
			[]string{`applies to no link type rocedump reads: "ifindex" (position 1)`, `"1:2:3:4:5:6" (position 26): ethernet addresses supported only on Ethernet`}},
		{"syntax, before opening", []string{missing, "--", "udp and"}, []string{"filter: syntax error"}},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append([]string{"read"}, tt.args...)...)
			if code != ExitUsage || out != "" {
				t.Errorf("exit %d, %d bytes out; want exit 2 and nothing printed", code, len(out))
			}
			for _, m := range tt.msgs {
				if !strings.Contains(errOut, m) {
					t.Errorf("stderr lacks %q:\n%s", m, errOut)
				}
			}
		})
	}
	t.Run("raw IP, BSD link type 12", func(t *testing.T) {
		raw := writeRawBSD(t, src)
		// The same packets, 14 bytes shorter.
		noLen := func(keys []string) string {
			for i, k := range keys {
				keys[i] = k[:strings.Index(k, " length ")]
			}
			return strings.Join(keys, "\n")
		}
		want := readKeys(t, src, "--", "udp and src host 10.1.16.62")
		got := readKeys(t, raw, "--", "udp and src host 10.1.16.62")
		if len(want) == 0 || noLen(got) != noLen(want) {
			t.Errorf("link type 12: %d packets, want the %d of the Ethernet capture", len(got), len(want))
		}
	})
}
