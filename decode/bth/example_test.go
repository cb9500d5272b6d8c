package bth_test

import (
	"fmt"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocedump/rocedump/decode/bth"
)

// rcAck is a real RoCEv2 frame (linlinw5_rping.pcap, frame 5): Ethernet,
// IPv4, UDP to port 4791, BTH, AETH and the ICRC.
var rcAck = []byte{
	0x00, 0x50, 0x56, 0xa7, 0x7d, 0x03, 0x00, 0x50, 0x56, 0xa7, 0x12, 0x9f, 0x08, 0x00, 0x45, 0x00,
	0x00, 0x30, 0x5a, 0xd1, 0x40, 0x00, 0x40, 0x11, 0xab, 0x6f, 0x0a, 0x01, 0x10, 0x3d, 0x0a, 0x01,
	0x10, 0x3e, 0xcb, 0xa1, 0x12, 0xb7, 0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0x00, 0x00,
	0x00, 0x2c, 0x00, 0xfe, 0xbd, 0x3d, 0x1f, 0x00, 0x00, 0x01, 0x3b, 0x80, 0x66, 0x8b,
}

// Importing the package registers UDP port 4791 and EtherType 0x8915, so
// gopacket.NewPacket decodes RoCE, each extended header a layer of its own.
func Example_newPacket() {
	p := gopacket.NewPacket(rcAck, layers.LinkTypeEthernet, gopacket.Default)
	for _, l := range p.Layers() {
		fmt.Println(l.LayerType())
	}
	b := p.Layer(bth.LayerTypeBTH).(*bth.BTH)
	fmt.Printf("%v qp=%#x psn=%d\n", b.Opcode, b.DestQP, b.PSN)
	a := p.Layer(bth.LayerTypeAETH).(*bth.AETH)
	fmt.Println(a.Kind(), "credits", a.Credits(), "msn", a.MSN)
	// Output:
	// Ethernet
	// IPv4
	// UDP
	// BTH
	// AETH
	// Payload
	// RC_ACKNOWLEDGE qp=0x2c psn=16694589
	// ack credits 31 msn 1
}

// With a DecodingLayerParser the BTH layer, reused packet after packet,
// decodes the BTH and all its extended headers without allocating.
func Example_decodingLayerParser() {
	var (
		eth     layers.Ethernet
		ip4     layers.IPv4
		udp     layers.UDP
		b       bth.BTH
		payload gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &udp, &b, &payload)
	decoded := make([]gopacket.LayerType, 0, 8)
	if err := parser.DecodeLayers(rcAck, &decoded); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(decoded)
	fmt.Println(b.Opcode, b.Ext, b.AETH.Kind(), "msn", b.AETH.MSN)
	fmt.Println("payload bytes:", b.PayloadLen(int(udp.Length)-8))
	fmt.Println("icrc:", bth.VerifyICRCv2(rcAck[14:14+int(ip4.Length)]))
	// Output:
	// [Ethernet IPv4 UDP BTH Payload]
	// RC_ACKNOWLEDGE AETH ack msn 1
	// payload bytes: 0
	// icrc: ok
}

func ExampleOpcode() {
	for _, op := range []bth.Opcode{0x0b, 0x64, 0xa0, 0x4c, 0x81, 0x2c, 0xc3} {
		fmt.Printf("%#02x %-22v %-20v %d\n", uint8(op), op, op.Headers(), op.HeaderLen())
	}
	// Output:
	// 0x0b RC_RDMA_WRITE_ONLY_IMM RETH|ImmDt           32
	// 0x64 UD_SEND_ONLY           DETH                 20
	// 0xa0 XRC_SEND_FIRST         XRCETH               16
	// 0x4c RD_RDMA_READ_REQUEST   RDETH|DETH|RETH      40
	// 0x81 CNP                    none                 12
	// 0x2c RESERVED_0x2c          none                 12
	// 0xc3 VENDOR_0xc3            none                 12
}

func ExampleRNRTimerDuration() {
	a := bth.AETH{Syndrome: 0x2e} // RNR NAK, timer 14
	fmt.Println(a.Kind(), bth.RNRTimerDuration(a.RNRTimer()))
	// Output: rnr_nak 1.28ms
}
