package bth

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// realDir holds the real captures the tests read.
const realDir = "../../testdata/pcaps/real"

// pcapFrame is one record of a classic pcap file.
type pcapFrame struct {
	Number  int // 1-based, as tshark's frame.number
	Data    []byte
	OrigLen int
}

// readPcap reads a classic (libpcap) capture file. It is a small test-only
// reader: gopacket/pcapgo would pull golang.org/x/net into go.mod.
func readPcap(path string) (linkType uint32, frames []pcapFrame, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	if len(b) < 24 {
		return 0, nil, fmt.Errorf("%s: short pcap header", path)
	}
	var bo binary.ByteOrder
	switch binary.LittleEndian.Uint32(b[0:4]) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		bo = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		bo = binary.BigEndian
	default:
		return 0, nil, fmt.Errorf("%s: not a classic pcap file", path)
	}
	linkType = bo.Uint32(b[20:24]) & 0x0fffffff
	off := 24
	for n := 1; off < len(b); n++ {
		if len(b)-off < 16 {
			return 0, nil, fmt.Errorf("%s: frame %d: short record header", path, n)
		}
		incl := int(bo.Uint32(b[off+8:]))
		orig := int(bo.Uint32(b[off+12:]))
		off += 16
		if incl < 0 || len(b)-off < incl {
			return 0, nil, fmt.Errorf("%s: frame %d: short record", path, n)
		}
		frames = append(frames, pcapFrame{Number: n, Data: b[off : off+incl], OrigLen: orig})
		off += incl
	}
	return linkType, frames, nil
}

// roceFrame is a RoCEv2 frame found in a capture.
type roceFrame struct {
	Number int
	IP     []byte // the IP datagram, sliced by its total length, ICRC included
	UDP    []byte // the UDP payload: BTH onwards
}

// roceFrames returns the Ethernet/IPv4/UDP-4791 frames of a capture.
func roceFrames(t testing.TB, name string) []roceFrame {
	t.Helper()
	lt, frames, err := readPcap(filepath.Join(realDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if lt != 1 {
		t.Fatalf("%s: link type %d, want 1 (Ethernet)", name, lt)
	}
	var out []roceFrame
	for _, f := range frames {
		d := f.Data
		if len(d) < 14+20+8 || binary.BigEndian.Uint16(d[12:14]) != 0x0800 {
			continue
		}
		ip := d[14:]
		ihl := int(ip[0]&0x0f) * 4
		total := int(binary.BigEndian.Uint16(ip[2:4]))
		if ip[0]>>4 != 4 || ip[9] != 17 || total > len(ip) || total < ihl+8 {
			continue
		}
		ip = ip[:total]
		udp := ip[ihl:]
		if binary.BigEndian.Uint16(udp[2:4]) != RoCEv2UDPPort {
			continue
		}
		out = append(out, roceFrame{Number: f.Number, IP: ip, UDP: udp[8:]})
	}
	return out
}

// realCaptures lists the captures that hold RoCEv2 traffic.
func realCaptures(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(realDir, "linlinw5_*.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, filepath.Join(realDir, "pcapplusplus_InfiniBandPacket_1pkt.pcap"))
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	if len(names) < 2 {
		t.Skip("no real captures in " + realDir)
	}
	return names
}
