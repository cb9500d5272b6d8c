package cli

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// ipv6Fragments returns the Ethernet frames of a UDP datagram from src
// port sport to dst port dport with payload bytes of data, split into
// IPv6 fragments (RFC 8200 §4.5: a Fragment header of Identification id,
// fragment payloads a multiple of 8 bytes) that fit an MTU of mtu.
func ipv6Fragments(src, dst netip.Addr, sport, dport uint16, id uint32, sum uint16, payload, mtu int) [][]byte {
	be := binary.BigEndian
	dgram := be.AppendUint16(be.AppendUint16(nil, sport), dport)
	dgram = be.AppendUint16(be.AppendUint16(dgram, uint16(8+payload)), sum)
	for i := range payload {
		dgram = append(dgram, byte(i))
	}
	per := (mtu - 40 - 8) &^ 7
	var frames [][]byte
	for off := 0; off < len(dgram); off += per {
		end := min(off+per, len(dgram))
		offM := uint16(off/8) << 3
		if end < len(dgram) {
			offM |= 1 // M: more fragments
		}
		ip := []byte{0x60, 0, 0, 0}
		ip = be.AppendUint16(ip, uint16(8+end-off))
		ip = append(ip, 44, 64) // next header Fragment, hop limit 64
		s, d := src.As16(), dst.As16()
		ip = append(append(ip, s[:]...), d[:]...)
		ip = append(ip, 17, 0) // next header UDP, reserved
		ip = be.AppendUint32(be.AppendUint16(ip, offM), id)
		frame := append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd}, ip...)
		frames = append(frames, append(frame, dgram[off:end]...))
	}
	return frames
}

// TestStorageIPv6FragmentCopies: a mirror that delivers every frame of
// fragmented NFS-over-UDP datagrams over IPv6 twice (the copy 2 µs
// later, its hop limit lowered) counts each fragment once in the
// storage conversation, as over IPv4: the later fragments, which carry
// no UDP checksum, are told by the Fragment header's Identification and
// offset, and their length. Before, only the first fragments' copies
// (checksum) were matched: 42 fragments counted 78 times, 92,448 bytes
// for 50,064. tshark (no
// reassembly) is the oracle for the distinct fragments and their bytes.
func TestStorageIPv6FragmentCopies(t *testing.T) {
	tshark := needTool(t, "tshark")
	client, server := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	var frames [][]byte
	for i := range 3 {
		// A call and its reply, 8000 bytes each: 7 fragments of an MTU of
		// 1280, five of the same length (the middle ones).
		id := uint32(0x10000 + 2*i)
		frames = append(frames, ipv6Fragments(client, server, 800, 2049, id, uint16(0x1000+i), 8000, 1280)...)
		frames = append(frames, ipv6Fragments(server, client, 2049, 800, id+1, uint16(0x2000+i), 8000, 1280)...)
	}
	var mirrored []capturedFrame
	for _, f := range frames {
		cp := append([]byte(nil), f...)
		cp[14+7]-- // hop limit 63: the copy after a router
		mirrored = append(mirrored, capturedFrame{data: f}, capturedFrame{data: cp})
	}
	file := writeTestPcap(t, "nfs6_fragments.pcap", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), 2*time.Microsecond, mirrored)

	// tshark: every frame's fragment (Identification, offset) and length;
	// the distinct ones are what was sent.
	out, err := exec.Command(tshark, "-n", "-r", file, "-o", "ipv6.defragment:FALSE", "-T", "fields",
		"-e", "ipv6.src", "-e", "ipv6.fraghdr.ident", "-e", "ipv6.fraghdr.offset", "-e", "ipv6.plen").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	distinct := map[string]bool{}
	var wantBytes, lines int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		lines++
		f := strings.Split(line, "\t")
		if len(f) != 4 || f[1] == "" {
			t.Fatalf("tshark line %q: want a fragment", line)
		}
		k := strings.Join(f, " ")
		if !distinct[k] {
			distinct[k] = true
			var plen int
			fmt.Sscan(f[3], &plen)
			wantBytes += 40 + plen
		}
	}
	if lines != 2*len(frames) || len(distinct) != len(frames) || len(frames) != 42 {
		t.Fatalf("tshark: %d frames, %d distinct fragments; want %d and %d, 42", lines, len(distinct), 2*len(frames), len(frames))
	}

	rep, errOut, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", file)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	r := decodeReport(t, rep)
	var counts map[string]float64
	for _, f := range r.Findings {
		if f.Kind == "storage_on_compute" && f.Evidence.Counts["nfs_conversations"] > 0 {
			counts = f.Evidence.Counts
		}
	}
	if counts["nfs_conversations"] != 1 || counts["nfs_bytes"] != float64(wantBytes) {
		t.Errorf("storage finding counts %v: want 1 NFS conversation of %d bytes, the %d distinct fragments tshark shows", counts, wantBytes, len(distinct))
	}
}
