package packet

import (
	"encoding/binary"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestCopySignature: the IPv4 Identification and the TCP or UDP checksum
// are read from the innermost datagram, by the fast path and the walk
// alike (checkFast), and are 0 for IPv6.
func TestCopySignature(t *testing.T) {
	withID := func(d []byte, id uint16) []byte {
		binary.BigEndian.PutUint16(d[4:], id)
		return d
	}
	seg := tcpSeg(51022, 22, 0x10)
	binary.BigEndian.PutUint16(seg[16:], 0xbeef)
	u := udp(1023, 2049, make([]byte, 40))
	binary.BigEndian.PutUint16(u[6:], 0xcafe)
	rc := withICRC(withID(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(rcWrite, payload64))), 0x1234))
	e2 := func(b []byte) []byte { return erspan2(5, false, b) }
	for _, tc := range []struct {
		name     string
		frame    []byte
		id, csum uint16
	}{
		{"tcp", eth(0x0800, withID(ip4("10.0.0.1", "10.0.0.2", 6, seg), 0x4321)), 0x4321, 0xbeef},
		{"udp", eth(0x0800, withID(ip4("10.0.0.1", "10.0.0.2", 17, u), 7)), 7, 0xcafe},
		{"tcp over ipv6", eth(0x86dd, ip6("fd00::1", "fd00::2", 6, seg)), 0, 0xbeef},
		{"roce", eth(0x0800, rc), 0x1234, 0},
		{"roce in erspan ii", eth(0x0800, withID(ip4("192.168.0.1", "192.168.0.2", 47, gre(fS, 0x88be, 0, e2(eth(0x0800, rc)))), 0x9999)), 0x1234, 0},
	} {
		var p Packet
		checkFast(t, tc.name, capture.LinkTypeEthernet, tc.frame, len(tc.frame), &p)
		if p.IPID != tc.id || p.L4Checksum != tc.csum {
			t.Errorf("%s: IPID %#x checksum %#x, want %#x %#x", tc.name, p.IPID, p.L4Checksum, tc.id, tc.csum)
		}
	}
}
