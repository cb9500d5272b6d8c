package bth_test

import (
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocedump/rocedump/decode/bth"
)

// TestNewPacketKeysOnDestinationPort: gopacket's UDP layer would also pick
// the BTH decoder for a datagram *from* port 4791; RoCEv2 is keyed on the
// destination port only, so such a datagram stays a plain payload, while
// the same frame sent to 4791 decodes as RoCE.
func TestNewPacketKeysOnDestinationPort(t *testing.T) {
	swapped := append([]byte(nil), rcAck...)
	// UDP header at 14+20: source 0xcba1 → 4791, destination 4791 → 0xcba1.
	swapped[34], swapped[35], swapped[36], swapped[37] = 0x12, 0xb7, 0xcb, 0xa1
	p := gopacket.NewPacket(swapped, layers.LinkTypeEthernet, gopacket.Default)
	if p.Layer(bth.LayerTypeBTH) != nil {
		t.Errorf("UDP from 4791 to 52129 decoded as BTH: %v", p)
	}
	if p.Layer(gopacket.LayerTypePayload) == nil {
		t.Errorf("want the UDP payload as a Payload layer, got %v", p)
	}
	for _, opt := range []gopacket.DecodeOptions{gopacket.Default, gopacket.Lazy, gopacket.NoCopy} {
		if gopacket.NewPacket(rcAck, layers.LinkTypeEthernet, opt).Layer(bth.LayerTypeBTH) == nil {
			t.Errorf("%+v: RoCE to port 4791 not decoded as BTH", opt)
		}
	}
}
