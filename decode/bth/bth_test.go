package bth

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/gopacket"
)

// feedback counts SetTruncated calls.
type feedback struct{ truncated int }

func (f *feedback) SetTruncated() { f.truncated++ }

// Hand-built extended headers and the values they decode to.
var (
	tRDETH     = []byte{0x00, 0x00, 0x0a, 0xbc}
	wantRDETH  = RDETH{EECnxt: 0xabc}
	tDETH      = []byte{0x11, 0x11, 0x11, 0x11, 0x00, 0x00, 0x00, 0x23}
	wantDETH   = DETH{QKey: 0x11111111, SrcQP: 0x23}
	tXRCETH    = []byte{0x00, 0x00, 0x04, 0x56}
	wantXRCETH = XRCETH{XRCSRQ: 0x456}
	tFETH      = []byte{0x00, 0x00, 0x00, 0x11}
	wantFETH   = FETH{Raw: 0x11}
	tRETH      = []byte{0x00, 0x00, 0x5e, 0x6b, 0x89, 0xb9, 0x60, 0x00, 0x00, 0x00, 0x0c, 0xe6, 0x00, 0x00, 0x0b, 0xb8}
	wantRETH   = RETH{VA: 0x5e6b89b96000, RKey: 0xce6, DMALen: 3000}
	tAtomicETH = []byte{
		0x00, 0x00, 0x63, 0x20, 0xd6, 0xbe, 0x50, 0x00, 0x00, 0x00, 0x19, 0x86,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
	}
	wantAtomicETH    = AtomicETH{VA: 0x6320d6be5000, RKey: 0x1986, SwapData: 7, CompareData: 5}
	tAETH            = []byte{0x1f, 0x53, 0x5e, 0x01}
	wantAETH         = AETH{Syndrome: 0x1f, MSN: 0x535e01}
	tAtomicAckETH    = []byte{0x3a, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0xc6}
	wantAtomicAckETH = AtomicAckETH{OrigRemoteData: 0x3a010203040506c6}
	tImmDt           = []byte{0x01, 0x02, 0x03, 0x04}
	wantImmDt        = ImmDt{Data: 0x01020304}
	tIETH            = []byte{0x00, 0x00, 0x12, 0x34}
	wantIETH         = IETH{RKey: 0x1234}
	tPayload         = []byte{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xc0, 0xc1, 0xc2, 0xc3}
)

// bthBytes hand-encodes a BTH: pad count 0, P_Key 0xffff, DestQP 0x00001b,
// AckReq set, PSN 0x533a2f.
func bthBytes(op Opcode) []byte {
	return []byte{byte(op), 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x1b, 0x80, 0x53, 0x3a, 0x2f}
}

// wantBTH is what bthBytes decodes to before extended headers.
func wantBTH(op Opcode) BTH {
	return BTH{Opcode: op, PKey: 0xffff, DestQP: 0x1b, AckReq: true, PSN: 0x533a2f}
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// fields returns b without its BaseLayer, for comparing decoded values.
func fields(b BTH) BTH {
	b.BaseLayer.Contents, b.BaseLayer.Payload = nil, nil
	return b
}

func TestBTHDecodeFlags(t *testing.T) {
	data := []byte{0x0a, 0xf0, 0x12, 0x34, 0xff, 0x12, 0x34, 0x56, 0xff, 0xab, 0xcd, 0xef}
	data = append(data, tRETH...)
	var b BTH
	if err := b.DecodeFromBytes(data, nil); err != nil {
		t.Fatalf("want no error, got %v", err)
	}
	want := BTH{
		Opcode: 0x0a, SolicitedEvent: true, MigReq: true, PadCount: 3, TransportVersion: 0,
		PKey: 0x1234, FECN: true, BECN: true, Reserved6: 0x3f, DestQP: 0x123456,
		AckReq: true, Reserved7: 0x7f, PSN: 0xabcdef, Ext: HasRETH, RETH: wantRETH,
	}
	if got := fields(b); !reflect.DeepEqual(got, want) {
		t.Errorf("want %+v\n got %+v", want, got)
	}
	if enc := b.AppendHeaders(nil); !bytes.Equal(enc, data) {
		t.Errorf("AppendHeaders: want % x, got % x", data, enc)
	}
}

func TestBTHDecodeOpcodes(t *testing.T) {
	with := func(op Opcode, set func(*BTH)) BTH {
		b := wantBTH(op)
		set(&b)
		return b
	}
	tests := []struct {
		name    string
		data    []byte
		want    BTH
		payload int
	}{
		{"RC_SEND_FIRST", cat(bthBytes(0x00), tPayload), wantBTH(0x00), 12},
		{"RC_SEND_LAST_IMM", cat(bthBytes(0x03), tImmDt, tPayload),
			with(0x03, func(b *BTH) { b.Ext, b.ImmDt = HasImmDt, wantImmDt }), 12},
		{"RC_RDMA_WRITE_FIRST", cat(bthBytes(0x06), tRETH, tPayload),
			with(0x06, func(b *BTH) { b.Ext, b.RETH = HasRETH, wantRETH }), 12},
		{"RC_RDMA_WRITE_ONLY_IMM", cat(bthBytes(0x0b), tRETH, tImmDt, tPayload),
			with(0x0b, func(b *BTH) { b.Ext, b.RETH, b.ImmDt = HasRETH|HasImmDt, wantRETH, wantImmDt }), 12},
		{"RC_RDMA_READ_REQUEST", cat(bthBytes(0x0c), tRETH, tPayload[8:]),
			with(0x0c, func(b *BTH) { b.Ext, b.RETH = HasRETH, wantRETH }), 4},
		{"RC_RDMA_READ_RESPONSE_MIDDLE", cat(bthBytes(0x0e), tPayload),
			wantBTH(0x0e), 12},
		{"RC_RDMA_READ_RESPONSE_LAST", cat(bthBytes(0x0f), tAETH, tPayload),
			with(0x0f, func(b *BTH) { b.Ext, b.AETH = HasAETH, wantAETH }), 12},
		{"RC_ACKNOWLEDGE", cat(bthBytes(0x11), tAETH, tPayload[8:]),
			with(0x11, func(b *BTH) { b.Ext, b.AETH = HasAETH, wantAETH }), 4},
		{"RC_ATOMIC_ACKNOWLEDGE", cat(bthBytes(0x12), tAETH, tAtomicAckETH, tPayload[8:]),
			with(0x12, func(b *BTH) {
				b.Ext, b.AETH, b.AtomicAckETH = HasAETH|HasAtomicAckETH, wantAETH, wantAtomicAckETH
			}), 4},
		{"RC_COMPARE_SWAP", cat(bthBytes(0x13), tAtomicETH, tPayload[8:]),
			with(0x13, func(b *BTH) { b.Ext, b.AtomicETH = HasAtomicETH, wantAtomicETH }), 4},
		{"RC_SEND_LAST_INV", cat(bthBytes(0x16), tIETH, tPayload),
			with(0x16, func(b *BTH) { b.Ext, b.IETH = HasIETH, wantIETH }), 12},
		{"RC_FLUSH", cat(bthBytes(0x1c), tFETH, tRETH, tPayload[8:]),
			with(0x1c, func(b *BTH) { b.Ext, b.FETH, b.RETH = HasFETH|HasRETH, wantFETH, wantRETH }), 4},
		{"RC_ATOMIC_WRITE", cat(bthBytes(0x1d), tRETH, tPayload),
			with(0x1d, func(b *BTH) { b.Ext, b.RETH = HasRETH, wantRETH }), 12},
		{"UC_SEND_ONLY_IMM", cat(bthBytes(0x25), tImmDt, tPayload),
			with(0x25, func(b *BTH) { b.Ext, b.ImmDt = HasImmDt, wantImmDt }), 12},
		{"UC_RDMA_WRITE_FIRST", cat(bthBytes(0x26), tRETH, tPayload),
			with(0x26, func(b *BTH) { b.Ext, b.RETH = HasRETH, wantRETH }), 12},
		{"UC_RDMA_WRITE_LAST_IMM", cat(bthBytes(0x29), tImmDt, tPayload),
			with(0x29, func(b *BTH) { b.Ext, b.ImmDt = HasImmDt, wantImmDt }), 12},
		{"RD_SEND_ONLY", cat(bthBytes(0x44), tRDETH, tDETH, tPayload),
			with(0x44, func(b *BTH) { b.Ext, b.RDETH, b.DETH = HasRDETH|HasDETH, wantRDETH, wantDETH }), 12},
		{"RD_RDMA_WRITE_ONLY_IMM", cat(bthBytes(0x4b), tRDETH, tDETH, tRETH, tImmDt, tPayload),
			with(0x4b, func(b *BTH) {
				b.Ext = HasRDETH | HasDETH | HasRETH | HasImmDt
				b.RDETH, b.DETH, b.RETH, b.ImmDt = wantRDETH, wantDETH, wantRETH, wantImmDt
			}), 12},
		{"RD_RDMA_READ_RESPONSE_FIRST", cat(bthBytes(0x4d), tRDETH, tAETH, tPayload),
			with(0x4d, func(b *BTH) { b.Ext, b.RDETH, b.AETH = HasRDETH|HasAETH, wantRDETH, wantAETH }), 12},
		{"RD_RDMA_READ_RESPONSE_MIDDLE", cat(bthBytes(0x4e), tRDETH, tPayload),
			with(0x4e, func(b *BTH) { b.Ext, b.RDETH = HasRDETH, wantRDETH }), 12},
		{"RD_ATOMIC_ACKNOWLEDGE", cat(bthBytes(0x52), tRDETH, tAETH, tAtomicAckETH, tPayload[8:]),
			with(0x52, func(b *BTH) {
				b.Ext = HasRDETH | HasAETH | HasAtomicAckETH
				b.RDETH, b.AETH, b.AtomicAckETH = wantRDETH, wantAETH, wantAtomicAckETH
			}), 4},
		{"RD_FETCH_ADD", cat(bthBytes(0x54), tRDETH, tDETH, tAtomicETH, tPayload[8:]),
			with(0x54, func(b *BTH) {
				b.Ext = HasRDETH | HasDETH | HasAtomicETH
				b.RDETH, b.DETH, b.AtomicETH = wantRDETH, wantDETH, wantAtomicETH
			}), 4},
		{"RD_RESYNC", cat(bthBytes(0x55), tRDETH, tDETH, tPayload[8:]),
			with(0x55, func(b *BTH) { b.Ext, b.RDETH, b.DETH = HasRDETH|HasDETH, wantRDETH, wantDETH }), 4},
		{"UD_SEND_ONLY", cat(bthBytes(0x64), tDETH, tPayload),
			with(0x64, func(b *BTH) { b.Ext, b.DETH = HasDETH, wantDETH }), 12},
		{"UD_SEND_ONLY_IMM", cat(bthBytes(0x65), tDETH, tImmDt, tPayload),
			with(0x65, func(b *BTH) { b.Ext, b.DETH, b.ImmDt = HasDETH|HasImmDt, wantDETH, wantImmDt }), 12},
		{"XRC_SEND_FIRST", cat(bthBytes(0xa0), tXRCETH, tPayload),
			with(0xa0, func(b *BTH) { b.Ext, b.XRCETH = HasXRCETH, wantXRCETH }), 12},
		{"XRC_RDMA_WRITE_ONLY_IMM", cat(bthBytes(0xab), tXRCETH, tRETH, tImmDt, tPayload),
			with(0xab, func(b *BTH) {
				b.Ext = HasXRCETH | HasRETH | HasImmDt
				b.XRCETH, b.RETH, b.ImmDt = wantXRCETH, wantRETH, wantImmDt
			}), 12},
		{"XRC_RDMA_READ_REQUEST", cat(bthBytes(0xac), tXRCETH, tRETH, tPayload[8:]),
			with(0xac, func(b *BTH) { b.Ext, b.XRCETH, b.RETH = HasXRCETH|HasRETH, wantXRCETH, wantRETH }), 4},
		{"XRC_RDMA_READ_RESPONSE_ONLY", cat(bthBytes(0xb0), tAETH, tPayload),
			with(0xb0, func(b *BTH) { b.Ext, b.AETH = HasAETH, wantAETH }), 12},
		{"XRC_ACKNOWLEDGE", cat(bthBytes(0xb1), tAETH, tPayload[8:]),
			with(0xb1, func(b *BTH) { b.Ext, b.AETH = HasAETH, wantAETH }), 4},
		{"XRC_FETCH_ADD", cat(bthBytes(0xb4), tXRCETH, tAtomicETH, tPayload[8:]),
			with(0xb4, func(b *BTH) { b.Ext, b.XRCETH, b.AtomicETH = HasXRCETH|HasAtomicETH, wantXRCETH, wantAtomicETH }), 4},
		{"XRC_SEND_ONLY_INV", cat(bthBytes(0xb7), tXRCETH, tIETH, tPayload),
			with(0xb7, func(b *BTH) { b.Ext, b.XRCETH, b.IETH = HasXRCETH|HasIETH, wantXRCETH, wantIETH }), 12},
		{"XRC_FLUSH", cat(bthBytes(0xbc), tXRCETH, tFETH, tRETH, tPayload[8:]),
			with(0xbc, func(b *BTH) {
				b.Ext = HasXRCETH | HasFETH | HasRETH
				b.XRCETH, b.FETH, b.RETH = wantXRCETH, wantFETH, wantRETH
			}), 4},
		{"CNP", cat(bthBytes(0x81), make([]byte, 16), tPayload[8:]), wantBTH(0x81), 20},
		{"CNP_0x80", cat(bthBytes(0x80), make([]byte, 16), tPayload[8:]), wantBTH(0x80), 20},
		{"VENDOR_0xc5", cat(bthBytes(0xc5), tPayload), wantBTH(0xc5), 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.want.Opcode.String(); !strings.HasPrefix(tt.name, got) {
				t.Fatalf("test case names opcode %s, got %s", tt.name, got)
			}
			var fb feedback
			var b BTH
			if err := b.DecodeFromBytes(tt.data, &fb); err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if got := fields(b); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("want %+v\n got %+v", tt.want, got)
			}
			hl := len(tt.data) - tt.payload
			if b.HeaderLen() != hl || b.Opcode.HeaderLen() != hl {
				t.Errorf("HeaderLen: want %d, got %d (opcode %d)", hl, b.HeaderLen(), b.Opcode.HeaderLen())
			}
			if !bytes.Equal(b.LayerContents(), tt.data[:hl]) || !bytes.Equal(b.LayerPayload(), tt.data[hl:]) {
				t.Errorf("Contents/Payload: want %d/%d bytes, got %d/%d", hl, tt.payload, len(b.LayerContents()), len(b.LayerPayload()))
			}
			if fb.truncated != 0 || b.Truncated {
				t.Errorf("want not truncated, got Truncated=%v, SetTruncated calls %d", b.Truncated, fb.truncated)
			}
			if enc := b.AppendHeaders(nil); !bytes.Equal(enc, tt.data[:hl]) {
				t.Errorf("AppendHeaders: want % x\n got % x", tt.data[:hl], enc)
			}
		})
	}
}

func TestBTHDecodeTruncated(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		wantExt ExtHeaders
	}{
		{"WRITE_FIRST cut in RETH", cat(bthBytes(0x06), tRETH[:9]), 0},
		{"WRITE_FIRST RETH only", cat(bthBytes(0x06), tRETH[:0]), 0},
		{"WRITE_ONLY_IMM cut in ImmDt", cat(bthBytes(0x0b), tRETH, tImmDt[:2]), HasRETH},
		{"RD WRITE_ONLY_IMM cut in RETH", cat(bthBytes(0x4b), tRDETH, tDETH, tRETH[:15]), HasRDETH | HasDETH},
		{"UD SEND_ONLY cut in DETH", cat(bthBytes(0x64), tDETH[:7]), 0},
		{"ATOMIC_ACK cut in AtomicAckETH", cat(bthBytes(0x12), tAETH, tAtomicAckETH[:1]), HasAETH},
		{"XRC FLUSH cut in RETH", cat(bthBytes(0xbc), tXRCETH, tFETH, tRETH[:4]), HasXRCETH | HasFETH},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fb feedback
			var b BTH
			if err := b.DecodeFromBytes(tt.data, &fb); err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if !b.Truncated || fb.truncated != 1 {
				t.Errorf("want Truncated and one SetTruncated, got %v and %d", b.Truncated, fb.truncated)
			}
			if b.Ext != tt.wantExt {
				t.Errorf("Ext: want %v, got %v", tt.wantExt, b.Ext)
			}
			hl := BTHLen + tt.wantExt.Len()
			if b.HeaderLen() != hl || len(b.LayerContents()) != hl || len(b.LayerPayload()) != len(tt.data)-hl {
				t.Errorf("HeaderLen/Contents/Payload: want %d/%d/%d, got %d/%d/%d", hl, hl, len(tt.data)-hl,
					b.HeaderLen(), len(b.LayerContents()), len(b.LayerPayload()))
			}
			if b.PSN != 0x533a2f || b.DestQP != 0x1b {
				t.Errorf("BTH fields: want PSN 0x533a2f QP 0x1b, got %#x %#x", b.PSN, b.DestQP)
			}
			if nt := b.NextLayerType(); nt != gopacket.LayerTypePayload {
				t.Errorf("NextLayerType: want Payload, got %v", nt)
			}
		})
	}
	// A nil DecodeFeedback is allowed.
	var b BTH
	if err := b.DecodeFromBytes(cat(bthBytes(0x06), tRETH[:3]), nil); err != nil || !b.Truncated {
		t.Errorf("nil feedback: want truncated, no error, got %v, %v", b.Truncated, err)
	}
}

func TestBTHDecodeErrors(t *testing.T) {
	t.Run("short", func(t *testing.T) {
		for n := 0; n < BTHLen; n++ {
			var b BTH
			err := b.DecodeFromBytes(bthBytes(0x11)[:n], nil)
			var he *HeaderError
			if !errors.As(err, &he) || !errors.Is(err, ErrShortHeader) {
				t.Fatalf("%d bytes: want *HeaderError wrapping ErrShortHeader, got %v", n, err)
			}
			if he.Header != "BTH" || he.Have != n || he.Need != BTHLen {
				t.Errorf("%d bytes: want {BTH %d 12}, got %+v", n, n, *he)
			}
		}
		var b BTH
		err := b.DecodeFromBytes(make([]byte, 9), nil)
		if want := "bth: short BTH (have 9 bytes, need 12)"; err == nil || err.Error() != want {
			t.Errorf("want %q, got %v", want, err)
		}
	})
	t.Run("version", func(t *testing.T) {
		data := cat(bthBytes(0x11), tAETH)
		data[1] |= 3
		var b BTH
		err := b.DecodeFromBytes(data, nil)
		if !errors.Is(err, ErrBadVersion) {
			t.Fatalf("want ErrBadVersion, got %v", err)
		}
		if err != ErrBadVersion {
			t.Errorf("want the ErrBadVersion sentinel itself (no allocation), got %q", err)
		}
		if b.TransportVersion != 3 || b.Opcode != 0x11 || b.PSN != 0x533a2f || b.Ext != 0 {
			t.Errorf("want BTH fields filled and no Ext, got %+v", fields(b))
		}
	})
	for _, op := range []Opcode{0x15, 0x1a, 0x1f, 0x2c, 0x56, 0x60, 0x82, 0xb5} {
		t.Run(op.String(), func(t *testing.T) {
			data := cat(bthBytes(op), tRETH)
			var b BTH
			err := b.DecodeFromBytes(data, nil)
			if !errors.Is(err, ErrReservedOpcode) {
				t.Fatalf("want ErrReservedOpcode, got %v", err)
			}
			if err != ErrReservedOpcode {
				t.Errorf("want the ErrReservedOpcode sentinel itself (no allocation), got %q", err)
			}
			if b.Opcode != op || b.DestQP != 0x1b || b.PSN != 0x533a2f || b.PKey != 0xffff {
				t.Errorf("want BTH fields filled, got %+v", fields(b))
			}
			if len(b.LayerContents()) != BTHLen {
				t.Errorf("Contents: want 12 bytes, got %d", len(b.LayerContents()))
			}
		})
	}
}

// TestBTHReuse decodes packets into one struct in turn and checks that each
// result equals a decode into a fresh struct.
func TestBTHReuse(t *testing.T) {
	pkts := [][]byte{
		cat(bthBytes(0x4b), tRDETH, tDETH, tRETH, tImmDt, tPayload),
		cat(bthBytes(0x11), tAETH),
		[]byte{0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, // version 15
		cat(bthBytes(0x12), tAETH, tAtomicAckETH),
		cat(bthBytes(0x06), tRETH[:5]),
		bthBytes(0x11)[:5],
		cat(bthBytes(0xb7), tXRCETH, tIETH),
		cat(bthBytes(0x81), make([]byte, 20)),
	}
	var reused BTH
	for i, p := range pkts {
		var fresh BTH
		errFresh := fresh.DecodeFromBytes(p, nil)
		errReused := reused.DecodeFromBytes(p, nil)
		if (errFresh == nil) != (errReused == nil) {
			t.Errorf("packet %d: errors differ: %v vs %v", i, errFresh, errReused)
		}
		if !reflect.DeepEqual(reused, fresh) {
			t.Errorf("packet %d: reused struct\n %+v\nwant\n %+v", i, reused, fresh)
		}
	}
}

func TestBTHPayloadLen(t *testing.T) {
	tests := []struct {
		name string
		op   Opcode
		pad  uint8
		udp  int
		want int
	}{
		{"ACK", 0x11, 0, 12 + 4 + 4, 0},
		{"WRITE_FIRST 1024", 0x06, 0, 12 + 16 + 1024 + 4, 1024},
		{"SEND_ONLY 13 with pad 3", 0x04, 3, 12 + 13 + 3 + 4, 13},
		{"UD SEND_ONLY 256", 0x64, 0, 12 + 8 + 256 + 4, 256},
		{"RD FETCH_ADD", 0x54, 0, 52 + 4, 0},
		{"XRC WRITE_ONLY_IMM 64", 0xab, 0, 12 + 4 + 16 + 4 + 64 + 4, 64},
		{"too short clamps", 0x06, 0, 20, 0},
		{"CNP", 0x81, 0, 32, 0},
		{"vendor", 0xc0, 0, 12 + 100 + 4, 100},
	}
	for _, tt := range tests {
		b := BTH{Opcode: tt.op, PadCount: tt.pad}
		if got := b.PayloadLen(tt.udp); got != tt.want {
			t.Errorf("%s: PayloadLen(%d): want %d, got %d", tt.name, tt.udp, tt.want, got)
		}
	}
}

func TestBTHCheckLength(t *testing.T) {
	tests := []struct {
		name string
		op   Opcode
		pad  uint8
		udp  int
		ok   bool
	}{
		{"ACK exact", 0x11, 0, 20, true},
		{"ACK short", 0x11, 0, 19, false},
		{"WRITE_FIRST no payload", 0x06, 0, 32, true},
		{"WRITE_FIRST short", 0x06, 0, 31, false},
		{"SEND pad 2 no room", 0x04, 2, 17, false},
		{"SEND pad 2", 0x04, 2, 18, true},
		{"CNP 32", 0x81, 0, 32, true},
		{"CNP 0x80 32", 0x80, 0, 32, true},
		{"CNP 36", 0x81, 0, 36, false},
		{"CNP 28", 0x81, 0, 28, false},
		{"UD SEND_ONLY 24", 0x64, 0, 24, true},
		{"UD SEND_ONLY 23", 0x64, 0, 23, false},
	}
	for _, tt := range tests {
		b := BTH{Opcode: tt.op, PadCount: tt.pad}
		err := b.CheckLength(tt.udp)
		if tt.ok && err != nil {
			t.Errorf("%s: want no error, got %v", tt.name, err)
		}
		if !tt.ok && !errors.Is(err, ErrBadLength) {
			t.Errorf("%s: want ErrBadLength, got %v", tt.name, err)
		}
	}
}

func TestBTHNextLayerType(t *testing.T) {
	ud := func(qp byte, n int) []byte {
		p := cat(bthBytes(0x64), tDETH, make([]byte, 40))
		p[7] = qp
		return p[:n]
	}
	tests := []struct {
		name string
		data []byte
		want gopacket.LayerType
	}{
		{"UD SEND_ONLY to QP1", ud(1, 60), LayerTypeCMMAD},
		{"UD SEND_ONLY to QP1, DETH cut", ud(1, 19), gopacket.LayerTypePayload},
		{"UD SEND_ONLY to QP2", ud(2, 60), gopacket.LayerTypePayload},
		{"CNP", cat(bthBytes(0x81), make([]byte, 20)), LayerTypeCNP},
		{"RC SEND_ONLY", cat(bthBytes(0x04), tPayload), gopacket.LayerTypePayload},
	}
	for _, tt := range tests {
		var b BTH
		_ = b.DecodeFromBytes(tt.data, nil)
		if got := b.NextLayerType(); got != tt.want {
			t.Errorf("%s: want %v, got %v", tt.name, tt.want, got)
		}
	}
	var b BTH
	if b.LayerType() != LayerTypeBTH || b.CanDecode() != LayerTypeBTH {
		t.Errorf("LayerType/CanDecode: want BTH, got %v/%v", b.LayerType(), b.CanDecode())
	}
}

func TestBTHSerializeTo(t *testing.T) {
	b := BTH{
		Opcode: 0x4b, SolicitedEvent: true, PadCount: 1, PKey: 0x8001, BECN: true,
		DestQP: 0xabcdef, AckReq: true, PSN: 0xffffff,
		RDETH: wantRDETH, DETH: wantDETH, RETH: wantRETH, ImmDt: wantImmDt,
		AETH: wantAETH, // not carried by 0x4b: must not be written
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &b, gopacket.Payload(tPayload)); err != nil {
		t.Fatal(err)
	}
	want := cat([]byte{0x4b, 0x90, 0x80, 0x01, 0x40, 0xab, 0xcd, 0xef, 0x80, 0xff, 0xff, 0xff},
		tRDETH, tDETH, tRETH, tImmDt, tPayload)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("want % x\n got % x", want, buf.Bytes())
	}
	if got := b.AppendHeaders([]byte{0xee}); !bytes.Equal(got, cat([]byte{0xee}, want[:len(want)-len(tPayload)])) {
		t.Errorf("AppendHeaders after prefix: got % x", got)
	}
	var back BTH
	if err := back.DecodeFromBytes(buf.Bytes(), nil); err != nil {
		t.Fatal(err)
	}
	b.AETH = AETH{}
	b.Ext = HasRDETH | HasDETH | HasRETH | HasImmDt
	if !reflect.DeepEqual(fields(back), b) {
		t.Errorf("round trip: want %+v\n got %+v", b, fields(back))
	}
}
