package packet

import (
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestPeekRoCEv2IPv4 checks the peek against Decode on every frame of
// every capture under testdata/pcaps and every table case and mirror frame
// cut at every length (checkPeek), and that it takes the captures' plain
// and VLAN-tagged RoCEv2 frames over IPv4, and those mirrored in ERSPAN
// over IPv4.
func TestPeekRoCEv2IPv4(t *testing.T) {
	var d Decoder
	var p Packet
	peeked, plain, mirrored := 0, 0, 0
	for _, f := range testFrames(t) {
		if d.Decode(f.lt, f.data, f.origLen, &p) != nil {
			continue
		}
		checkPeek(t, f.lt, f.data, &p)
		if _, _, ok := PeekRoCEv2IPv4(f.lt, f.data); ok {
			peeked++
		}
		if f.fromFile && f.lt == capture.LinkTypeEthernet && p.Kind == KindRoCE && p.RoCEVersion == 2 &&
			p.IPVersion == 4 && p.NEncap == 0 && !p.Fragment {
			plain++
			if _, _, ok := PeekRoCEv2IPv4(f.lt, f.data); !ok {
				t.Errorf("%s: a plain RoCEv2 frame over IPv4 is not taken by the peek", f.name)
			}
		}
		if f.fromFile && f.lt == capture.LinkTypeEthernet && p.Kind == KindRoCE && p.RoCEVersion == 2 &&
			p.IPVersion == 4 && !p.Fragment && erspanOverIPv4(&p) {
			mirrored++
			if _, _, ok := PeekRoCEv2IPv4(f.lt, f.data); !ok {
				t.Errorf("%s: a RoCEv2 frame over IPv4 mirrored in ERSPAN over IPv4 is not taken by the peek", f.name)
			}
		}
	}
	if plain == 0 || mirrored == 0 || peeked < plain+mirrored {
		t.Errorf("peek took %d frames; the captures have %d plain RoCEv2 frames over IPv4 and %d mirrored in ERSPAN", peeked, plain, mirrored)
	}
	for _, tc := range []struct {
		name string
		lt   capture.LinkType
		data []byte
	}{
		{"empty", capture.LinkTypeEthernet, nil},
		{"raw IP link type", capture.LinkTypeRaw, make([]byte, 64)},
		{"IPv6", capture.LinkTypeEthernet, append(make([]byte, 12), 0x86, 0xdd)},
		{"TCP to port 4791", capture.LinkTypeEthernet, peekFrame(6, 0)},
		{"first fragment", capture.LinkTypeEthernet, peekFrame(17, 0x2000)},
		{"later fragment", capture.LinkTypeEthernet, peekFrame(17, 0x0010)},
		{"cut before the port", capture.LinkTypeEthernet, peekFrame(17, 0)[:14+20+3]},
	} {
		if _, _, ok := PeekRoCEv2IPv4(tc.lt, tc.data); ok {
			t.Errorf("%s: taken by the peek", tc.name)
		}
	}
	if src, dst, ok := PeekRoCEv2IPv4(capture.LinkTypeEthernet, peekFrame(17, 0)); !ok || src != 0x0a000001 || dst != 0x0a000102 {
		t.Errorf("UDP to port 4791: peek gave %08x > %08x, %v", src, dst, ok)
	}
}

// erspanOverIPv4 says whether p's frame came mirrored in ERSPAN over GRE in
// an IPv4 header, the carrying Ethernet frame untagged or with one tag.
func erspanOverIPv4(p *Packet) bool {
	var kinds []EncapKind
	for _, e := range p.Encap[:p.NEncap] {
		if e.Kind != EncapVLAN {
			kinds = append(kinds, e.Kind)
		}
	}
	return len(kinds) == 4 && kinds[0] == EncapEthernet && kinds[1] == EncapIPv4 && kinds[2] == EncapGRE &&
		(kinds[3] == EncapERSPAN1 || kinds[3] == EncapERSPAN2 || kinds[3] == EncapERSPAN3)
}

// peekFrame is Ethernet, IPv4 10.0.0.1 > 10.0.1.2 with protocol proto and
// flags/fragment offset frag, and ports 1234 > 4791.
func peekFrame(proto byte, frag uint16) []byte {
	b := append(make([]byte, 12), 0x08, 0x00)
	b = append(b, 0x45, 0, 0, 40, 0, 0, byte(frag>>8), byte(frag), 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 1, 2)
	return append(b, 0x04, 0xd2, 0x12, 0xb7, 0, 20, 0, 0)
}
