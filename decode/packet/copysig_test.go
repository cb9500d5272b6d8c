package packet

import (
	"encoding/binary"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestCopySignature: the IP Identification, the fragment offset and the
// TCP or UDP checksum are read from the innermost datagram, by the fast
// path and the walk alike (checkFast); over IPv6 the Identification is
// the Fragment header's (RFC 8200 §4.5), 0 without one.
func TestCopySignature(t *testing.T) {
	withID := func(d []byte, id uint16) []byte {
		binary.BigEndian.PutUint16(d[4:], id)
		return d
	}
	withFrag := func(d []byte, off uint16) []byte {
		binary.BigEndian.PutUint16(d[6:], off)
		return d
	}
	seg := tcpSeg(51022, 22, 0x10)
	binary.BigEndian.PutUint16(seg[16:], 0xbeef)
	u := udp(1023, 2049, make([]byte, 40))
	binary.BigEndian.PutUint16(u[6:], 0xcafe)
	rc := withICRC(withID(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(rcWrite, payload64))), 0x1234))
	e2 := func(b []byte) []byte { return erspan2(5, false, b) }
	for _, tc := range []struct {
		name  string
		frame []byte
		id    uint32
		csum  uint16
		off   uint16
	}{
		{"tcp", eth(0x0800, withID(ip4("10.0.0.1", "10.0.0.2", 6, seg), 0x4321)), 0x4321, 0xbeef, 0},
		{"udp", eth(0x0800, withID(ip4("10.0.0.1", "10.0.0.2", 17, u), 7)), 7, 0xcafe, 0},
		{"tcp over ipv6", eth(0x86dd, ip6("fd00::1", "fd00::2", 6, seg)), 0, 0xbeef, 0},
		{"udp over ipv6, first fragment", eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 0, true, u))), 0xabcd, 0xcafe, 0},
		{"udp over ipv6, later fragment", eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 181, true, make([]byte, 64)))), 0xabcd, 0, 181},
		{"udp over ipv6, atomic fragment", eth(0x86dd, ip6("fd00::1", "fd00::2", 44, ip6frag(17, 0, false, u))), 0xabcd, 0xcafe, 0},
		{"udp, later fragment", eth(0x0800, withID(withFrag(ip4("10.0.0.1", "10.0.0.2", 17, make([]byte, 64)), 185), 9)), 9, 0, 185},
		{"roce", eth(0x0800, rc), 0x1234, 0, 0},
		{"roce in erspan ii", eth(0x0800, withID(ip4("192.168.0.1", "192.168.0.2", 47, gre(fS, 0x88be, 0, e2(eth(0x0800, rc)))), 0x9999)), 0x1234, 0, 0},
	} {
		var p Packet
		checkFast(t, tc.name, capture.LinkTypeEthernet, tc.frame, len(tc.frame), &p)
		if p.IPID != tc.id || p.L4Checksum != tc.csum || p.FragOffset != tc.off {
			t.Errorf("%s: IPID %#x checksum %#x fragment offset %d, want %#x %#x %d", tc.name, p.IPID, p.L4Checksum, p.FragOffset, tc.id, tc.csum, tc.off)
		}
	}
}
