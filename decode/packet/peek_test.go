package packet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
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

// TestPeekFixedLayoutsMatchWalk: the peeks' fixed-offset layouts give
// what the walk gives (the same part of the frame, the same header
// length), on every frame of the captures and every table case and mirror
// frame cut at every length (the fuzz test checks it too), and they take
// the benchmark's plain and ERSPAN II frames.
func TestPeekFixedLayoutsMatchWalk(t *testing.T) {
	for _, f := range testFrames(t) {
		if f.lt == capture.LinkTypeEthernet {
			checkPeekWalk(t, f.name, f.data)
		}
	}
	// The carrying datagram ending before the frame (an Ethernet trailer
	// after it), and shorter than the mirror's headers.
	ack := bth.BTH{Opcode: bth.OpcodeRCAcknowledge, PKey: 0xffff, DestQP: 0x0011c3, PSN: 0x00a0b4, AETH: bth.AETH{Syndrome: 0x1f, MSN: 77}}
	inner := eth(0x0800, roce4("10.0.3.21", "10.0.3.7", ack, nil))
	e := eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fS, 0x88be, 0, erspan2(5, false, inner))))
	trailer := append(bytes.Clone(e), 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4)
	short := bytes.Clone(trailer)
	short[16], short[17] = 0, 30 // total length 30: the datagram ends inside GRE
	for _, f := range [][]byte{trailer, short} {
		for n := 0; n <= len(f); n++ {
			checkPeekWalk(t, fmt.Sprintf("ERSPAN II with a trailer, cut at %d", n), f[:n])
		}
	}
	if inner, ok := peekERSPAN2Plain(trailer); !ok || len(inner) != len(e)-erspan2Len {
		t.Errorf("ERSPAN II with a trailer: mirrored frame of %d bytes (%v), want %d", len(inner), ok, len(e)-erspan2Len)
	}
	for _, f := range mirrorFrames() {
		_, plain := peekPlain(f.data)
		inner, mirrored := peekERSPAN2Plain(f.data)
		if mirrored {
			_, mirrored = peekPlain(inner)
		}
		want := map[string]string{"write first": "plain", "write middle": "plain", "ack": "plain",
			"erspan2 write first": "erspan2", "erspan2 ack": "erspan2", "erspan2 ack whole, T bit set": "erspan2",
			"erspan2 ack whole, outer length past the frame": "erspan2"}[f.name]
		if plain != (want == "plain") || mirrored != (want == "erspan2") {
			t.Errorf("%s: plain %v, ERSPAN II around plain %v; want %q", f.name, plain, mirrored, want)
		}
	}
}

// checkPeekWalk fails unless peekRoCEv2IPv4 gives for an Ethernet frame
// what the walk gives.
func checkPeekWalk(t *testing.T, name string, data []byte) {
	t.Helper()
	ip, hl, ok := peekRoCEv2IPv4(capture.LinkTypeEthernet, data)
	wip, whl, wok := peekWalk(data)
	at := func(b []byte) string {
		if len(b) == 0 {
			return "none"
		}
		return fmt.Sprintf("%p+%d", &b[0], len(b))
	}
	if ok != wok || ok && (hl != whl || at(ip) != at(wip)) {
		t.Fatalf("%s: peek %s, %d, %v; the walk %s, %d, %v", name, at(ip), hl, ok, at(wip), whl, wok)
	}
	// PeekRoCEv2IPv4QP, with its own fast path for plain frames, reads
	// the key the walk's IPv4 header gives.
	var want [5]any
	if wok {
		want = [5]any{binary.BigEndian.Uint32(wip[12:]), binary.BigEndian.Uint32(wip[16:]), uint32(0), true, false}
		if len(wip) >= whl+udpHeaderLen+8 {
			b := wip[whl+udpHeaderLen:]
			want[2], want[4] = uint32(b[5])<<16|uint32(b[6])<<8|uint32(b[7]), true
		}
	} else {
		want = [5]any{uint32(0), uint32(0), uint32(0), false, false}
	}
	src, dst, qp, qok, hasQP := PeekRoCEv2IPv4QP(capture.LinkTypeEthernet, data)
	if got := [5]any{src, dst, qp, qok, hasQP}; got != want {
		t.Fatalf("%s: PeekRoCEv2IPv4QP = %v; by the walk %v", name, got, want)
	}
}

// BenchmarkPeek peeks at frames like the benchmark capture's, one layout
// at a time.
func BenchmarkPeek(b *testing.B) {
	for _, f := range mirrorFrames() {
		b.Run(f.name, func(b *testing.B) {
			var sum uint32
			for b.Loop() {
				src, _, qp, _, _ := PeekRoCEv2IPv4QP(capture.LinkTypeEthernet, f.data)
				sum += src + qp
			}
			_ = sum
		})
	}
}
