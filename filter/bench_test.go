package filter

import (
	"fmt"
	"testing"
)

func BenchmarkMatch(b *testing.B) {
	frame := eth(macB, macA, 0x0800, roceCNP())
	tagged := cat(macB, macA, tag(0x8100, 100), be16(0x0800), roceCNP())
	for _, bc := range []struct {
		expr  string
		frame []byte
	}{
		{"udp port 4791", frame},
		{"udp dst port 4791 and udp[8] = 0x81", frame},
		{"host 10.0.0.1 or 10.0.0.2", frame},
		{"vlan 100 and udp port 4791", tagged},
		{"ip[2:2] - ((ip[0] & 0xf) << 2) - 8 = udp[4:2]", frame},
		{"tcp port 80 or arp or ip6", frame},
	} {
		f, err := Compile(bc.expr, linkTypeEthernet)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(bc.expr, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.frame)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				f.Match(bc.frame)
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, expr := range []string{
		"udp port 4791",
		"udp dst port 4791 and udp[8] = 0x81 and not vlan",
		"host 10.0.0.1 or 10.0.0.2 or 10.0.0.3 or 10.0.0.4",
	} {
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := Compile(expr, linkTypeEthernet); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func ExampleCompile() {
	// RoCEv2 congestion notification packets: BTH opcode 0x81 right
	// after the UDP header.
	f, err := Compile("udp dst port 4791 and udp[8] = 0x81", 1) // 1: Ethernet
	if err != nil {
		fmt.Println(err)
		return
	}
	frame := eth(macB, macA, 0x0800, roceCNP())
	fmt.Println(f, f.Match(frame))

	_, err = Compile("udp prot 4791", 1)
	fmt.Println(err)
	// Output:
	// udp dst port 4791 and udp[8] = 0x81 true
	// filter: syntax error at "prot" (position 5) in "udp prot 4791"
}
