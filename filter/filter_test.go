package filter

import (
	"encoding/binary"
	"os/exec"
	"testing"
)

// Frames built by hand for the link types and encapsulations the real
// captures lack; the expected answers are libpcap's.

func roceCNP() []byte {
	return ip4(17, "10.0.0.1", "10.0.0.2", udpHdr(49152, 4791, bth(0x81, 0x11, 20)), ip4opts{tos: 0x03})
}

func roceV6() []byte {
	return ip6(17, "2001:db8::1", "2001:db8::2", udpHdr(49152, 4791, bth(0x04, 0x11, 20)))
}

func sll2(proto uint16, ifindex uint32, pkttype byte, payload []byte) []byte {
	return cat(be16(proto), be16(0), be32b(ifindex), be16(1), []byte{pkttype, 6}, macA, []byte{0, 0}, payload)
}

func sll(pkttype uint16, proto uint16, payload []byte) []byte {
	return cat(be16(pkttype), be16(1), be16(6), macA, []byte{0, 0}, be16(proto), payload)
}

func TestMatchHandBuilt(t *testing.T) {
	cnp := roceCNP()
	ethCNP := eth(macB, macA, 0x0800, cnp)
	vlanCNP := cat(macB, macA, tag(0x8100, 100), be16(0x0800), cnp)
	qinqCNP := cat(macB, macA, tag(0x88a8, 100), tag(0x8100, 200), be16(0x0800), cnp)
	q9100 := cat(macB, macA, tag(0x9100, 7), be16(0x86dd), roceV6())
	laterFrag := eth(macB, macA, 0x0800, ip4(17, "10.0.0.1", "10.0.0.2", cat(be16(4791), be16(4791), make([]byte, 20)), ip4opts{frag: 185}))
	v6frag := eth(macB, macA, 0x86dd, ip6(44, "2001:db8::1", "2001:db8::2", cat([]byte{17, 0, 0, 0}, be32b(1), udpHdr(1, 4791, nil))))
	cut := ethCNP[:14+20+2] // cut after the UDP source port
	nullLE := cat(binary.LittleEndian.AppendUint32(nil, 2), cnp)
	nullBE := cat(be32b(2), cnp)
	null6 := cat(binary.LittleEndian.AppendUint32(nil, 30), roceV6())

	tests := []struct {
		name  string
		lt    uint32
		expr  string
		frame []byte
		want  bool
	}{
		{"cnp", 1, "udp dst port 4791 and udp[8] = 0x81", ethCNP, true},
		{"ecn ce", 1, "ip[1] & 0x3 = 3", ethCNP, true},
		{"dest qp", 1, "udp[12:4] & 0xffffff = 0x11", ethCNP, true},
		{"not tcp", 1, "src net 10.0.0.0/8 and not tcp", ethCNP, true},
		{"host inherit", 1, "host 10.9.9.9 or 10.0.0.2", ethCNP, true},
		{"ether src", 1, "ether src 02:00:00:00:00:01 and ether dst 02:00:00:00:00:02", ethCNP, true},
		{"tagged frame needs vlan", 1, "udp port 4791", vlanCNP, false},
		{"vlan then udp", 1, "vlan and udp port 4791", vlanCNP, true},
		{"vlan id", 1, "vlan 100 and udp[8] = 0x81", vlanCNP, true},
		{"other vlan id", 1, "vlan 200", vlanCNP, false},
		{"vlan shifts later primitives", 1, "vlan or udp", ethCNP, false},
		{"qinq", 1, "vlan 100 and vlan 200 and udp port 4791", qinqCNP, true},
		{"qinq needs both tags", 1, "vlan and udp", qinqCNP, false},
		{"0x9100 tag", 1, "vlan 7 and ip6 and udp port 4791", q9100, true},
		{"later fragment has no ports", 1, "udp port 4791", laterFrag, false},
		{"later fragment is udp", 1, "udp and ip[6:2] & 0x1fff != 0", laterFrag, true},
		{"ip6 fragment header: proto", 1, "ip6 proto 17", v6frag, true},
		{"ip6 fragment header: no ports", 1, "udp port 4791", v6frag, false},
		{"short frame", 1, "udp port 4791", cut, false},
		{"short frame rejects under not", 1, "not udp port 4791", cut, false},
		{"short frame, load not needed", 1, "udp[100] = 1 or udp", cut, true},
		{"short frame, load needed", 1, "udp[100] = 1 or tcp", cut, false},
		{"empty frame", 1, "not ip", nil, false},
		{"empty frame, empty filter", 1, "", nil, true},
		{"sll2 cnp", 276, "udp port 4791 and udp[8] = 0x81", sll2(0x0800, 3, 0, cnp), true},
		{"sll2 ifindex", 276, "ifindex 3 and ip", sll2(0x0800, 3, 0, cnp), true},
		{"sll2 outbound", 276, "outbound", sll2(0x0800, 3, 4, cnp), true},
		{"sll2 inbound", 276, "inbound", sll2(0x0800, 3, 4, cnp), false},
		{"sll host", 113, "host 10.0.0.1 and inbound", sll(0, 0x0800, cnp), true},
		{"sll ip6", 113, "ip6", sll(0, 0x0800, cnp), false},
		{"raw ipv4", 101, "ip and udp dst port 4791", cnp, true},
		{"raw ipv6", 101, "ip6 and udp port 4791", roceV6(), true},
		{"raw ipv6 is not ip", 101, "ip", roceV6(), false},
		{"ipv4 link", 228, "udp[8] = 0x81 and not ip6", cnp, true},
		{"ipv6 link", 229, "ip6 net 2001:db8::/32 and udp port 4791", roceV6(), true},
		{"ipv6 link has no ip", 229, "ip", roceV6(), false},
		{"null little-endian", 0, "udp port 4791", nullLE, true},
		// libpcap knows the byte order of the file and takes only that
		// one; Match sees the frame alone and takes either.
		{"null big-endian", 0, "udp port 4791", nullBE, true},
		{"null ip6", 0, "ip6 host 2001:db8::2", null6, true},
		{"loop big-endian", 108, "udp port 4791", nullBE, true},
		{"loop little-endian is not ip", 108, "ip", nullLE, false},
		{"len on any link type", 4242, "len > 10 and ether[0] = 0x45", cnp, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Compile(tt.expr, tt.lt)
			if err != nil {
				t.Fatalf("Compile(%q, %d): %v", tt.expr, tt.lt, err)
			}
			if got := f.Match(tt.frame); got != tt.want {
				t.Errorf("Compile(%q, %d).Match(% x) = %v, want %v", tt.expr, tt.lt, head(tt.frame, 48), got, tt.want)
			}
			// Check the expectation itself against libpcap.
			if _, err := exec.LookPath("tcpdump"); err != nil || linkLayerFor(tt.lt).kind == linkUnknown || tt.name == "null big-endian" {
				return
			}
			one := &pcapFile{linkType: tt.lt, records: []pcapRecord{{data: tt.frame, origLen: len(tt.frame)}}}
			idx, err := tcpdumpMatch(one, tt.expr)
			if err != nil {
				t.Fatal(err)
			}
			if libpcap := len(idx) == 1; libpcap != tt.want {
				t.Errorf("libpcap says %v for %q, the test wants %v", libpcap, tt.expr, tt.want)
			}
		})
	}
}

func TestMatchLenUsesWireLength(t *testing.T) {
	f, err := Compile("greater 1000 and udp port 4791", linkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	frame := eth(macB, macA, 0x0800, roceCNP())
	if f.Match(frame) {
		t.Errorf("Match of a %d-byte frame = true, want false", len(frame))
	}
	if !f.MatchLen(frame, 1082) {
		t.Errorf("MatchLen(frame, 1082) = false, want true")
	}
	if f.MatchLen(frame, -1) {
		t.Errorf("MatchLen(frame, -1) = true, want false")
	}
}

func TestFilterAccessors(t *testing.T) {
	f, err := Compile("udp port 4791", linkTypeSLL2)
	if err != nil {
		t.Fatal(err)
	}
	if f.String() != "udp port 4791" || f.LinkType() != linkTypeSLL2 {
		t.Errorf("String, LinkType = %q, %d", f.String(), f.LinkType())
	}
}

func TestMatchAllocatesNothing(t *testing.T) {
	frames := [][]byte{
		eth(macB, macA, 0x0800, roceCNP()),
		cat(macB, macA, tag(0x8100, 100), be16(0x0800), roceCNP()),
		eth(macB, macA, 0x86dd, roceV6()),
		{0x01, 0x02},
		nil,
	}
	for _, expr := range []string{
		"udp port 4791",
		"udp dst port 4791 and udp[8] = 0x81",
		"vlan and host 10.0.0.1 or ip6 net 2001:db8::/32",
		"ip[2:2] - ((ip[0] & 0xf) << 2) - 8 = udp[4:2]",
		"ether host 02:00:00:00:00:01 and len > 60 and not arp",
		"udp[8:4] / (ip[1] & 3) > 1",
	} {
		f, err := Compile(expr, linkTypeEthernet)
		if err != nil {
			t.Fatal(err)
		}
		for _, fr := range frames {
			if n := testing.AllocsPerRun(100, func() { f.Match(fr) }); n != 0 {
				t.Errorf("%q: Match allocates %v times per call, want 0", expr, n)
			}
		}
	}
}

// TestProgramAgreesWithTree checks the optimizer: where the unoptimized
// tree evaluates without a load out of bounds, the program must give the
// same answer.
func TestProgramAgreesWithTree(t *testing.T) {
	for _, lt := range synthLinkTypes {
		f, _ := synthCapture(lt)
		for _, expr := range append(append([]string{}, synthExprs...), realExprs...) {
			tree, err := parse(expr)
			if err != nil {
				t.Fatalf("%q: %v", expr, err)
			}
			root, err := compileTree(tree, expr, lt)
			if err != nil {
				continue
			}
			prog := newProgram(root)
			for i, r := range f.records {
				want := root.eval(r.data, uint32(r.origLen))
				if want == abort {
					continue
				}
				if got := prog.run(r.data, uint32(r.origLen)); got != (want == accept) {
					t.Errorf("link type %d, %q, frame %d: program %v, tree %v", lt, expr, i, got, want == accept)
				}
			}
		}
	}
}
