package bth

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/google/gopacket"
)

// refDecode is DecodeFromBytes as it was before it iterated over the set
// bits of the opcode's headers: the tests hold the new one to it.
func refDecode(b *BTH, data []byte, df gopacket.DecodeFeedback) error {
	*b = BTH{}
	if len(data) < BTHLen {
		return shortError("BTH", len(data), BTHLen)
	}
	b.Opcode = Opcode(data[0])
	b.SolicitedEvent = data[1]&0x80 != 0
	b.MigReq = data[1]&0x40 != 0
	b.PadCount = data[1] >> 4 & 0x3
	b.TransportVersion = data[1] & 0x0f
	b.PKey = binary.BigEndian.Uint16(data[2:4])
	b.FECN = data[4]&0x80 != 0
	b.BECN = data[4]&0x40 != 0
	b.Reserved6 = data[4] & 0x3f
	b.DestQP = uint24(data[5:8])
	b.AckReq = data[8]&0x80 != 0
	b.Reserved7 = data[8] & 0x7f
	b.PSN = uint24(data[9:12])
	b.Contents, b.Payload = data[:BTHLen], data[BTHLen:]
	if b.TransportVersion != 0 {
		return ErrBadVersion
	}
	if b.Opcode.IsReserved() {
		return ErrReservedOpcode
	}
	off := BTHLen
	want := b.Opcode.Headers()
	for i, size := range extSizes {
		h := ExtHeaders(1) << i
		if want&h == 0 {
			continue
		}
		if len(data)-off < int(size) {
			b.Truncated = true
			if df != nil {
				df.SetTruncated()
			}
			break
		}
		b.decodeExt(h, data[off:off+int(size)])
		b.Ext |= h
		off += int(size)
	}
	b.Contents, b.Payload = data[:off], data[off:]
	return nil
}

// checkDecodeRef decodes data with DecodeFromBytes into a used BTH, and
// with DecodeReused into reused (which holds what its last decode left) and
// into a BTH full of dirtyBTH's fields, and with refDecode: fields, error and
// feedback must agree.
func checkDecodeRef(t *testing.T, data []byte, reused *BTH) {
	t.Helper()
	var got, dirty, want BTH
	var fbGot, fbWant feedback
	_ = got.DecodeFromBytes(dirtyBTH, nil)
	errGot := got.DecodeFromBytes(data, &fbGot)
	errWant := refDecode(&want, data, &fbWant)
	if !reflect.DeepEqual(got, want) || fbGot != fbWant || !sameError(errGot, errWant) {
		t.Fatalf("% x:\ngot  %+v (%v, %d)\nwant %+v (%v, %d)", data, got, errGot, fbGot.truncated, want, errWant, fbWant.truncated)
	}
	_ = dirty.DecodeFromBytes(dirtyBTH, nil)
	for _, b := range []*BTH{reused, &dirty} {
		if err := b.DecodeReused(data); !reflect.DeepEqual(*b, want) || !sameError(err, errWant) {
			t.Fatalf("% x: DecodeReused:\ngot  %+v (%v)\nwant %+v (%v)", data, *b, err, want, errWant)
		}
	}
}

// sameError reports whether two decode errors are the same.
func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	return errors.Is(a, b) || a.Error() == b.Error()
}

// TestDecodeMatchesReference decodes every opcode, with every extended
// header present, cut at every length, and every real RoCE frame, every way,
// DecodeReused into one BTH throughout.
func TestDecodeMatchesReference(t *testing.T) {
	var reused BTH
	for op := range 256 {
		full := cat(bthBytes(Opcode(op)), tRDETH, tDETH, tXRCETH, tRETH, tAtomicETH, tAETH, tPayload)
		for _, v := range []byte{0, 1} {
			d := append([]byte(nil), full...)
			d[1] |= v
			for n := 0; n <= len(d); n++ {
				checkDecodeRef(t, d[:n], &reused)
			}
		}
	}
	for _, name := range realCaptures(t) {
		for _, f := range roceFrames(t, name) {
			checkDecodeRef(t, f.UDP, &reused)
		}
	}
}

func TestDecodeReusedAllocs(t *testing.T) {
	write := cat(bthBytes(0x06), tRETH, tPayload)
	ack := cat(bthBytes(0x11), tAETH)
	var b BTH
	if n := testing.AllocsPerRun(100, func() {
		_ = b.DecodeReused(write)
		_ = b.DecodeReused(ack)
	}); n != 0 {
		t.Errorf("DecodeReused: want 0 allocs, got %v", n)
	}
}
