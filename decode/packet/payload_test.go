package packet

import (
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// TestTransportPayload: the walk keeps the payload of a TCP segment (after
// its options) and of a UDP datagram (to its UDP length, not the Ethernet
// padding of a short frame), over IPv4 and IPv6 and inside a VXLAN tunnel;
// a frame without one (RoCE on the walk, a fragment, ICMP) has none.
func TestTransportPayload(t *testing.T) {
	msg := []byte("rpcbind!")
	opts := cat(tcpSeg(700, 111, 0x18), []byte{1, 1, 1, 1})
	opts[12] = 6 << 4 // 24 bytes: 4 of options
	padded := cat(eth(etherTypeIPv4, ip4("10.0.0.1", "10.0.0.2", protoUDP, udp(700, 111, []byte{1, 2}))), make([]byte, 20))
	frag := ip4("10.0.0.1", "10.0.0.2", protoUDP, udp(700, 111, msg))
	frag[6] = 0x20 // MF: a first fragment
	cm := bth.BTH{Opcode: bth.OpcodeUDSendOnly, PKey: 0xffff, DestQP: 1}
	cases := []struct {
		name  string
		frame []byte
		want  []byte
	}{
		{"udp", eth(etherTypeIPv4, ip4("10.0.0.1", "10.0.0.2", protoUDP, udp(700, 111, msg))), msg},
		{"udp padded", padded, []byte{1, 2}},
		{"tcp options", eth(etherTypeIPv4, ip4("10.0.0.1", "10.0.0.2", protoTCP, cat(opts, msg))), msg},
		{"udp6", eth(etherTypeIPv6, ip6("2001:db8::1", "2001:db8::2", protoUDP, udp(700, 111, msg))), msg},
		{"vxlan inner", eth(etherTypeIPv4, ip4("10.9.0.1", "10.9.0.2", protoUDP, udp(5000, PortVXLAN,
			vxlan(7, eth(etherTypeIPv4, ip4("10.0.0.1", "10.0.0.2", protoUDP, udp(700, 111, msg))))))), msg},
		{"fragment", eth(etherTypeIPv4, frag), nil},
		{"icmp", eth(etherTypeIPv4, ip4("10.0.0.1", "10.0.0.2", 1, msg)), nil},
		{"roce on the walk", eth(etherTypeIPv4, roce4("10.0.0.1", "10.0.0.2", cm, make([]byte, 32))), nil},
	}
	var d Decoder
	var p Packet
	for _, c := range cases {
		// Each after a frame with a payload: none is left over.
		if err := d.Decode(capture.LinkTypeEthernet, cases[0].frame, len(cases[0].frame), &p); err != nil {
			t.Fatal(err)
		}
		if err := d.Decode(capture.LinkTypeEthernet, c.frame, len(c.frame), &p); err != nil {
			t.Fatal(err)
		}
		if got := d.TransportPayload(); string(got) != string(c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: payload %q, want %q", c.name, got, c.want)
		}
	}
}
