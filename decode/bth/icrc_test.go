package bth

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// roceV2IPv6 builds an IPv6/UDP/BTH(RC SEND_ONLY)/payload/ICRC datagram with
// a correct ICRC computed here independently of ICRCv2.
func roceV2IPv6() []byte {
	bth := append(bthBytes(0x04), 1, 2, 3, 4, 5, 6, 7, 8)
	udpLen := 8 + len(bth) + ICRCLen
	p := []byte{0x6b, 0xa1, 0x23, 0x45, byte(udpLen >> 8), byte(udpLen), 17, 64}
	p = append(p, make([]byte, 32)...)
	p[8+15], p[24+15] = 1, 2
	p = append(p, 0xc0, 0x00, 0x12, 0xb7, byte(udpLen>>8), byte(udpLen), 0x12, 0x34)
	p = append(p, bth...)
	// Independent masking: copy, set the variant fields, CRC.
	m := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, p...)
	m[8+0] |= 0x0f
	m[8+1], m[8+2], m[8+3], m[8+7] = 0xff, 0xff, 0xff, 0xff
	m[8+40+6], m[8+40+7] = 0xff, 0xff
	m[8+48+4] = 0xff
	return binary.LittleEndian.AppendUint32(p, crc32.ChecksumIEEE(m))
}

// roceV1 builds a GRH/BTH(RC ACK)/ICRC packet with a correct ICRC.
func roceV1() []byte {
	p := append(append([]byte(nil), tGRH...), bthBytes(0x11)...)
	p = append(p, tAETH...)
	m := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, p...)
	m[8+0] |= 0x0f
	m[8+1], m[8+2], m[8+3], m[8+7] = 0xff, 0xff, 0xff, 0xff
	m[8+40+4] = 0xff
	return binary.LittleEndian.AppendUint32(p, crc32.ChecksumIEEE(m))
}

// realIPv4 returns a real RoCEv2 IPv4 datagram (an RC WRITE_FIRST).
func realIPv4(t *testing.T) []byte {
	t.Helper()
	for _, f := range roceFrames(t, "linlinw5_rdma_write_bw.pcap") {
		if Opcode(f.UDP[0]) == 0x06 {
			return append([]byte(nil), f.IP...)
		}
	}
	t.Fatal("no WRITE_FIRST frame")
	return nil
}

// withOptions inserts 8 bytes of IPv4 options into a datagram.
func withOptions(ip []byte) []byte {
	ihl := int(ip[0]&0x0f) * 4
	out := append(append(append([]byte(nil), ip[:ihl]...), 0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00), ip[ihl:]...)
	out[0] += 2
	binary.BigEndian.PutUint16(out[2:], uint16(len(out)))
	return out
}

// TestICRCMasking flips every bit of a packet in turn: the ICRC must stay
// good exactly when the bit is in a masked (variant) field.
func TestICRCMasking(t *testing.T) {
	ipv4 := realIPv4(t)
	ipv4opt := withOptions(ipv4)
	// Fix the ICRC of the options packet, computed the independent way.
	{
		m := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ipv4opt[:len(ipv4opt)-4]...)
		m[8+1], m[8+8], m[8+10], m[8+11] = 0xff, 0xff, 0xff, 0xff
		m[8+28+6], m[8+28+7], m[8+36+4] = 0xff, 0xff, 0xff
		binary.LittleEndian.PutUint32(ipv4opt[len(ipv4opt)-4:], crc32.ChecksumIEEE(m))
	}
	tests := []struct {
		name       string
		pkt        []byte
		verify     func([]byte) ICRCStatus
		masked     map[int]byte // byte offset -> mask of variant bits
		structural map[int]bool // bytes saying what the packet is
	}{
		{"IPv4", ipv4, VerifyICRCv2, map[int]byte{1: 0xff, 8: 0xff, 10: 0xff, 11: 0xff, 20 + 6: 0xff, 20 + 7: 0xff, 28 + 4: 0xff}, map[int]bool{0: true, 9: true}},
		{"IPv4 options", ipv4opt, VerifyICRCv2, map[int]byte{1: 0xff, 8: 0xff, 10: 0xff, 11: 0xff, 28 + 6: 0xff, 28 + 7: 0xff, 36 + 4: 0xff}, map[int]bool{0: true, 9: true}},
		{"IPv6", roceV2IPv6(), VerifyICRCv2, map[int]byte{0: 0x0f, 1: 0xff, 2: 0xff, 3: 0xff, 7: 0xff, 40 + 6: 0xff, 40 + 7: 0xff, 48 + 4: 0xff}, map[int]bool{0: true, 6: true}},
		{"RoCEv1", roceV1(), VerifyICRCv1, map[int]byte{0: 0x0f, 1: 0xff, 2: 0xff, 3: 0xff, 7: 0xff, 40 + 4: 0xff}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if st := tt.verify(tt.pkt); st != ICRCOK {
				t.Fatalf("want ok, got %v", st)
			}
			p := append([]byte(nil), tt.pkt...)
			for i := 0; i < len(p)-ICRCLen; i++ {
				for bit := 0; bit < 8; bit++ {
					p[i] ^= 1 << bit
					want := ICRCBad
					if tt.masked[i]&(1<<bit) != 0 {
						want = ICRCOK
					}
					got := tt.verify(p)
					// Flipping the IP version, IHL or protocol can make it
					// no RoCEv2 packet at all.
					if got == ICRCUnchecked && tt.structural[i] {
						got = want
					}
					if got != want {
						t.Fatalf("byte %d bit %d flipped: want %v, got %v", i, bit, want, got)
					}
					p[i] ^= 1 << bit
				}
			}
			p[len(p)-1] ^= 0x80
			if got := tt.verify(p); got != ICRCBad {
				t.Errorf("ICRC trailer flipped: want bad, got %v", got)
			}
		})
	}
}

func TestICRCPayloadBitFlip(t *testing.T) {
	ip := realIPv4(t)
	if st := VerifyICRCv2(ip); st != ICRCOK {
		t.Fatalf("want ok, got %v", st)
	}
	ip[len(ip)-10] ^= 0x01
	if st := VerifyICRCv2(ip); st != ICRCBad {
		t.Errorf("payload bit flipped: want bad, got %v", st)
	}
}

func TestICRCErrors(t *testing.T) {
	ipv4 := realIPv4(t)
	notUDP := append([]byte(nil), ipv4...)
	notUDP[9] = 6
	badIHL := append([]byte(nil), ipv4...)
	badIHL[0] = 0x44
	v6notUDP := roceV2IPv6()
	v6notUDP[6] = 0
	tests := []struct {
		name    string
		ip      []byte
		short   bool
		notRoCE bool
	}{
		{"empty", nil, true, false},
		{"IPv4 header cut", ipv4[:19], true, false},
		{"no room for BTH and ICRC", ipv4[:20+8+12+3], true, false},
		{"IPv6 header cut", roceV2IPv6()[:39], true, false},
		{"TCP", notUDP, false, true},
		{"IHL 4", badIHL, false, true},
		{"IPv6 next header 0", v6notUDP, false, true},
		{"version 5", []byte{0x50, 1, 2, 3}, false, true},
	}
	for _, tt := range tests {
		_, err := ICRCv2(tt.ip)
		if errors.Is(err, ErrShortHeader) != tt.short || errors.Is(err, ErrNotRoCEv2) != tt.notRoCE {
			t.Errorf("%s: want short=%v notRoCE=%v, got %v", tt.name, tt.short, tt.notRoCE, err)
		}
		if st := VerifyICRCv2(tt.ip); st != ICRCUnchecked {
			t.Errorf("%s: VerifyICRCv2: want unchecked, got %v", tt.name, st)
		}
	}
	if _, err := ICRCv1(roceV1()[:55]); !errors.Is(err, ErrShortHeader) {
		t.Errorf("ICRCv1 short: want ErrShortHeader, got %v", err)
	}
	if st := VerifyICRCv1(roceV1()[:55]); st != ICRCUnchecked {
		t.Errorf("VerifyICRCv1 short: want unchecked, got %v", st)
	}
}

// TestICRCIPv6ExtensionHeaders: the ICRC of an IPv6 RoCEv2 datagram with
// a hop-by-hop or destination options header is left unchecked, whichever
// way its sender computed it: over the extension header as it stands, or
// as if UDP followed the IPv6 header (as Linux rxe would). Annex A17
// defines the masking of the IPv6 header only, so neither can be called
// right, and a frame must not be reported bad on a guess (README, "What it
// reads").
func TestICRCIPv6ExtensionHeaders(t *testing.T) {
	plain := roceV2IPv6()
	for _, nh := range []byte{0, 60} { // hop-by-hop, destination options
		ext := []byte{17, 0, 1, 4, 0, 0, 0, 0} // next header UDP, PadN
		body := plain[40 : len(plain)-ICRCLen]
		ip := append(append(append([]byte(nil), plain[:40]...), ext...), body...)
		ip[6] = nh
		binary.BigEndian.PutUint16(ip[4:], uint16(len(ip)-40+ICRCLen))
		// Covered: the datagram as sent, the IPv6 header's variant fields
		// and those of UDP and the BTH masked.
		m := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ip...)
		m[8+0] |= 0x0f
		m[8+1], m[8+2], m[8+3], m[8+7] = 0xff, 0xff, 0xff, 0xff
		m[8+48+6], m[8+48+7] = 0xff, 0xff
		m[8+56+4] = 0xff
		covered := crc32.ChecksumIEEE(m)
		// Skipped: as if the extension header were not there.
		skipped := binary.LittleEndian.Uint32(plain[len(plain)-ICRCLen:])
		for name, crc := range map[string]uint32{"covered": covered, "skipped": skipped, "wrong": covered ^ skipped ^ 1} {
			pkt := binary.LittleEndian.AppendUint32(append([]byte(nil), ip...), crc)
			if st := VerifyICRCv2(pkt); st != ICRCUnchecked {
				t.Errorf("next header %d, ICRC %s: %v, want unchecked", nh, name, st)
			}
			if _, err := ICRCv2(pkt); !errors.Is(err, ErrNotRoCEv2) {
				t.Errorf("next header %d, ICRC %s: ICRCv2 error %v, want ErrNotRoCEv2", nh, name, err)
			}
		}
	}
}

func TestICRCStatusString(t *testing.T) {
	for st, want := range map[ICRCStatus]string{ICRCUnchecked: "unchecked", ICRCOK: "ok", ICRCBad: "bad", 9: "unchecked"} {
		b, err := st.MarshalText()
		if st.String() != want || string(b) != want || err != nil {
			t.Errorf("ICRCStatus(%d): want %q, got %q / %q %v", st, want, st.String(), b, err)
		}
	}
}
