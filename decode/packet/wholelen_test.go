package packet

import (
	"encoding/binary"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestDatagramLenFirstFragment: the first fragment of a RoCEv2 datagram
// (IPv4 with options, or IPv6 with a destination options header before
// its Fragment header) counts the length of the whole datagram, as a
// frame cut by the snap length does: its IP header and the UDP length,
// without the IPv6 Fragment header. Before, it counted the fragment's own
// length, so a flow of fragmented packets had fewer bytes than payload.
// Later fragments, a mirror's fragmented tunnel and whole datagrams keep
// IPTotalLen.
func TestDatagramLenFirstFragment(t *testing.T) {
	ib := udp(49152, 4791, ibPayload(rcWrite, payload64))
	v4 := func(off uint16, mf bool, frag []byte) []byte {
		h := ip4("10.0.0.1", "10.0.0.2", 17, frag)
		// 4 bytes of options (NOP NOP NOP EOL): IHL 6.
		h = cat(h[:20], []byte{1, 1, 1, 0}, h[20:])
		h[0] = 0x46
		binary.BigEndian.PutUint16(h[2:], uint16(len(h)))
		v := off / 8
		if mf {
			v |= 0x2000
		}
		binary.BigEndian.PutUint16(h[6:], v)
		return h
	}
	v6 := func(off uint16, mf bool, frag []byte) []byte {
		return ip6("fd00::1", "fd00::2", 60, ip6ext(44, ip6frag(17, off/8, mf, frag)))
	}
	cases := []struct {
		name  string
		frame []byte
		want  int
	}{
		{"ipv4 options first fragment", eth(0x0800, v4(0, true, ib[:48])), 24 + len(ib)},
		{"ipv4 options later fragment", eth(0x0800, v4(48, false, ib[48:])), 24 + len(ib) - 48},
		{"ipv6 first fragment", eth(0x86dd, v6(0, true, ib[:48])), 40 + 8 + len(ib)},
		{"ipv6 later fragment", eth(0x86dd, v6(48, false, ib[48:])), 40 + 8 + 8 + len(ib) - 48},
		{"ipv4 whole", eth(0x0800, rcWrite4), len(rcWrite4)},
		{"ipv4 cut by the snap length", eth(0x0800, rcWrite4)[:80], len(rcWrite4)},
	}
	for _, c := range cases {
		var d Decoder
		var p Packet
		orig := len(c.frame)
		if c.name == "ipv4 cut by the snap length" {
			orig = etherHeaderLen + len(rcWrite4)
		}
		if err := d.Decode(capture.LinkTypeEthernet, c.frame, orig, &p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := p.DatagramLen(); got != c.want {
			t.Errorf("%s: DatagramLen %d (IPTotalLen %d, WholeLen %d), want %d", c.name, got, p.IPTotalLen, p.WholeLen, c.want)
		}
	}
}
