package bth

import (
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"strconv"
	"testing"
)

// refICRCv2 is the ICRC of a RoCEv2 datagram computed the plain way (Annex
// A17 §A17.8.1): copy the 8 bytes of ones and the datagram without its
// trailer, set the variant fields to ones, one crc32.ChecksumIEEE. ok is
// false where ICRCv2 must return an error.
func refICRCv2(ip []byte) (crc uint32, ok bool) {
	if len(ip) < 1 {
		return 0, false
	}
	var ipLen int
	switch ip[0] >> 4 {
	case 4:
		ipLen = int(ip[0]&0x0f) * 4
		if ipLen < 20 || len(ip) < ipLen || ip[9] != 17 {
			return 0, false
		}
	case 6:
		ipLen = 40
		if len(ip) < ipLen || ip[6] != 17 {
			return 0, false
		}
	default:
		return 0, false
	}
	if len(ip) < ipLen+8+BTHLen+ICRCLen {
		return 0, false
	}
	m := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ip[:len(ip)-ICRCLen]...)
	h := m[8:]
	if ipLen == 40 && h[0]>>4 == 6 {
		h[0] |= 0x0f
		h[1], h[2], h[3], h[7] = 0xff, 0xff, 0xff, 0xff
	} else {
		h[1], h[8], h[10], h[11] = 0xff, 0xff, 0xff, 0xff
	}
	h[ipLen+6], h[ipLen+7] = 0xff, 0xff
	h[ipLen+8+4] = 0xff
	return crc32.ChecksumIEEE(m), true
}

// refICRCv1 is the ICRC of a RoCEv1 packet (GRH first) computed the plain way.
func refICRCv1(g []byte) (crc uint32, ok bool) {
	if len(g) < GRHLen+BTHLen+ICRCLen {
		return 0, false
	}
	m := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, g[:len(g)-ICRCLen]...)
	h := m[8:]
	h[0] |= 0x0f
	h[1], h[2], h[3], h[7] = 0xff, 0xff, 0xff, 0xff
	h[GRHLen+4] = 0xff
	return crc32.ChecksumIEEE(m), true
}

// checkICRC compares ICRCv2, VerifyICRCv2 and ICRCv1 on pkt with the plain
// computations.
func checkICRC(t *testing.T, pkt []byte) {
	t.Helper()
	want, ok := refICRCv2(pkt)
	got, err := ICRCv2(pkt)
	if ok != (err == nil) || got != want {
		t.Fatalf("ICRCv2(% x) = %08x, %v; want %08x, ok %v", pkt, got, err, want, ok)
	}
	st := ICRCUnchecked
	if ok {
		st = ICRCBad
		if binary.LittleEndian.Uint32(pkt[len(pkt)-ICRCLen:]) == want {
			st = ICRCOK
		}
	}
	if got := VerifyICRCv2(pkt); got != st {
		t.Fatalf("VerifyICRCv2(% x) = %v, want %v", pkt, got, st)
	}
	want, ok = refICRCv1(pkt)
	got, err = ICRCv1(pkt)
	if ok != (err == nil) || got != want {
		t.Fatalf("ICRCv1(% x) = %08x, %v; want %08x, ok %v", pkt, got, err, want, ok)
	}
}

// TestICRCMatchesReference checks the ICRC, masked word by word, against the
// plain computation on every real RoCEv2 datagram and on random datagrams of
// every length from 0 to 300 bytes (across the switch to crc32.Update for
// long payloads and the end of the buffer IPv4 options are masked in), IPv4
// with every IHL and IPv6, each as drawn and with its ICRC made good.
func TestICRCMatchesReference(t *testing.T) {
	for _, name := range realCaptures(t) {
		for _, f := range roceFrames(t, name) {
			checkICRC(t, f.IP)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, first := range []byte{0x45, 0x46, 0x4f, 0x60, 0x6a} {
		for n := 0; n <= 300; n++ {
			for range 4 {
				p := make([]byte, n)
				for i := range p {
					p[i] = byte(rng.Uint32())
				}
				if n > 0 {
					p[0] = first
				}
				if n > 9 {
					p[9] = 17
				}
				if n > 6 && first>>4 == 6 {
					p[6] = 17
				}
				checkICRC(t, p)
				if crc, ok := refICRCv2(p); ok {
					binary.LittleEndian.PutUint32(p[len(p)-ICRCLen:], crc)
					checkICRC(t, p)
				}
			}
		}
	}
}

func BenchmarkICRCv2Sizes(b *testing.B) {
	for _, n := range []int{44, 48, 96, 300, 1024, 4096} {
		ip := make([]byte, n)
		ip[0], ip[9] = 0x45, 17
		binary.BigEndian.PutUint16(ip[2:], uint16(n))
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				_, _ = ICRCv2(ip)
			}
		})
	}
}
