package packet

import (
	"encoding/binary"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// padDatagram returns a RoCEv2 datagram whose IP length outlasts its UDP
// datagram by pad bytes, with the ICRC where Annex A17 §A17.8 puts it: at
// the end of the UDP payload, computed over the headers as sent (the IP
// length included) up to there. mk builds the IP datagram around a payload.
func padDatagram(mk func(payload []byte) []byte, hl, pad int) []byte {
	u := udp(49152, 4791, ibPayload(rcWrite, payload64))
	d := mk(cat(u, make([]byte, pad)))
	end := hl + len(u)
	crc, err := bth.ICRCv2(d[:end])
	if err != nil {
		panic(err)
	}
	binary.LittleEndian.PutUint32(d[end-4:], crc)
	return d
}

// TestICRCAtUDPEnd: the ICRC is read where the UDP payload ends, not where
// the IP datagram does, on the fast path and the walk alike (they read it
// at the IP end: such a packet's good ICRC read bad).
func TestICRCAtUDPEnd(t *testing.T) {
	v4 := func(b []byte) []byte { return ip4("10.0.0.1", "10.0.0.2", 17, b) }
	v6 := func(b []byte) []byte { return ip6("fd00::1", "fd00::2", 17, b) }
	padded4 := padDatagram(v4, 20, 4)
	padded6 := padDatagram(v6, 40, 4)
	e2 := func(b []byte) []byte { return erspan2(5, false, b) }
	frames := []struct {
		name string
		data []byte
	}{
		{"plain ipv4", eth(0x0800, padded4)},
		{"ipv4 vlan", eth(0x0800, padded4, vtag{0x8100, 3, 100})},
		{"ipv6", eth(0x86dd, padded6)},
		{"erspan ii", eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(fS, 0x88be, 0, e2(eth(0x0800, padded4)))))},
		{"erspan ii vlan inside", eth(0x0800, ip4("192.168.0.1", "192.168.0.2", 47, gre(fS, 0x88be, 0, e2(eth(0x0800, padded4, vtag{0x8100, 3, 100})))))},
	}
	used := dirtyPacket()
	for _, f := range frames {
		checkFast(t, f.name, capture.LinkTypeEthernet, f.data, len(f.data), &used)
		if used.Kind != KindRoCE || used.ICRC != bth.ICRCOK {
			t.Errorf("%s: kind %v ICRC %v, want RoCE with a good ICRC", f.name, used.Kind, used.ICRC)
		}
		// The same frame with its ICRC broken reads bad.
		bad := cat(f.data)
		bad[len(bad)-5] ^= 0x5a // the ICRC's last byte, before 4 bytes of padding
		checkFast(t, f.name+" bad", capture.LinkTypeEthernet, bad, len(bad), &used)
		if used.ICRC != bth.ICRCBad {
			t.Errorf("%s with a broken ICRC: ICRC %v, want bad", f.name, used.ICRC)
		}
	}
}
