package bth

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/google/gopacket"
)

// ethHeader is what the table test needs of each extended header.
type ethHeader interface {
	gopacket.Layer
	append(dst []byte) []byte
}

func TestETHDecode(t *testing.T) {
	tests := []struct {
		name   string
		data   []byte
		decode func([]byte) (ethHeader, error)
		want   ethHeader
		lt     gopacket.LayerType
	}{
		{
			name: "RETH",
			data: []byte{0x00, 0x00, 0x5e, 0x6b, 0x89, 0xb9, 0x60, 0x00, 0x00, 0x00, 0x0c, 0xe6, 0x00, 0x00, 0x0b, 0xb8},
			decode: func(d []byte) (ethHeader, error) {
				var h RETH
				err := h.decode(d)
				return h, err
			},
			want: RETH{VA: 0x5e6b89b96000, RKey: 0xce6, DMALen: 3000},
			lt:   LayerTypeRETH,
		},
		{
			name: "AETH",
			data: []byte{0x1f, 0x00, 0x00, 0x01},
			decode: func(d []byte) (ethHeader, error) {
				var h AETH
				err := h.decode(d)
				return h, err
			},
			want: AETH{Syndrome: 0x1f, MSN: 1},
			lt:   LayerTypeAETH,
		},
		{
			name: "DETH",
			data: []byte{0x80, 0x01, 0x00, 0x00, 0x5a, 0x00, 0x00, 0x01},
			decode: func(d []byte) (ethHeader, error) {
				var h DETH
				err := h.decode(d)
				return h, err
			},
			want: DETH{QKey: 0x80010000, Reserved: 0x5a, SrcQP: 1},
			lt:   LayerTypeDETH,
		},
		{
			name: "RDETH",
			data: []byte{0x00, 0x12, 0x34, 0x56},
			decode: func(d []byte) (ethHeader, error) {
				var h RDETH
				err := h.decode(d)
				return h, err
			},
			want: RDETH{EECnxt: 0x123456},
			lt:   LayerTypeRDETH,
		},
		{
			name: "XRCETH",
			data: []byte{0x01, 0xab, 0xcd, 0xef},
			decode: func(d []byte) (ethHeader, error) {
				var h XRCETH
				err := h.decode(d)
				return h, err
			},
			want: XRCETH{Reserved: 1, XRCSRQ: 0xabcdef},
			lt:   LayerTypeXRCETH,
		},
		{
			name: "FETH",
			data: []byte{0x00, 0x00, 0x00, 0x12},
			decode: func(d []byte) (ethHeader, error) {
				var h FETH
				err := h.decode(d)
				return h, err
			},
			want: FETH{Raw: 0x12},
			lt:   LayerTypeFETH,
		},
		{
			name: "ImmDt",
			data: []byte{0x01, 0x00, 0x00, 0x00},
			decode: func(d []byte) (ethHeader, error) {
				var h ImmDt
				err := h.decode(d)
				return h, err
			},
			want: ImmDt{Data: 0x01000000},
			lt:   LayerTypeImmDt,
		},
		{
			name: "IETH",
			data: []byte{0xde, 0xad, 0xbe, 0xef},
			decode: func(d []byte) (ethHeader, error) {
				var h IETH
				err := h.decode(d)
				return h, err
			},
			want: IETH{RKey: 0xdeadbeef},
			lt:   LayerTypeIETH,
		},
		{
			name: "AtomicETH",
			data: []byte{
				0x00, 0x00, 0x63, 0x20, 0xd6, 0xbe, 0x50, 0x00, // VA
				0x00, 0x00, 0x19, 0x86, // RKey
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, // swap/add
				0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, // compare
			},
			decode: func(d []byte) (ethHeader, error) {
				var h AtomicETH
				err := h.decode(d)
				return h, err
			},
			want: AtomicETH{VA: 0x6320d6be5000, RKey: 0x1986, SwapData: 1, CompareData: 2},
			lt:   LayerTypeAtomicETH,
		},
		{
			name: "AtomicAckETH",
			data: []byte{0x3a, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0xc6},
			decode: func(d []byte) (ethHeader, error) {
				var h AtomicAckETH
				err := h.decode(d)
				return h, err
			},
			want: AtomicAckETH{OrigRemoteData: 0x3a010203040506c6},
			lt:   LayerTypeAtomicAckETH,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.decode(tt.data)
			if err != nil {
				t.Fatalf("decode: want no error, got %v", err)
			}
			if got != tt.want {
				t.Errorf("decode: want %+v, got %+v", tt.want, got)
			}
			if enc := got.append(nil); !bytes.Equal(enc, tt.data) {
				t.Errorf("append: want % x, got % x", tt.data, enc)
			}
			if c := got.LayerContents(); !bytes.Equal(c, tt.data) {
				t.Errorf("LayerContents: want % x, got % x", tt.data, c)
			}
			if got.LayerType() != tt.lt || got.LayerPayload() != nil {
				t.Errorf("LayerType/LayerPayload: want %v/nil, got %v/%v", tt.lt, got.LayerType(), got.LayerPayload())
			}
			_, err = tt.decode(tt.data[:len(tt.data)-1])
			var he *HeaderError
			if !errors.As(err, &he) || !errors.Is(err, ErrShortHeader) {
				t.Fatalf("decode short: want *HeaderError wrapping ErrShortHeader, got %v", err)
			}
			if he.Header != tt.name || he.Have != len(tt.data)-1 || he.Need != len(tt.data) {
				t.Errorf("decode short: want {%s %d %d}, got %+v", tt.name, len(tt.data)-1, len(tt.data), *he)
			}
		})
	}
}

func TestAETH(t *testing.T) {
	tests := []struct {
		name     string
		syndrome uint8
		kind     AckKind
		kindStr  string
		credits  uint8
		nak      NAKCode
		nakStr   string
	}{
		{"ack credits 31", 0x1f, AckKindACK, "ack", 31, 31, "nak_code_31"},
		{"ack credits 0", 0x00, AckKindACK, "ack", 0, 0, "psn_seq_err"},
		{"rnr nak timer 14", 0x2e, AckKindRNRNAK, "rnr_nak", 14, 14, "nak_code_14"},
		{"reserved", 0x40, AckKindReserved, "reserved", 0, 0, "psn_seq_err"},
		{"nak psn seq", 0x60, AckKindNAK, "nak", 0, NAKPSNSequenceError, "psn_seq_err"},
		{"nak invalid request", 0x61, AckKindNAK, "nak", 1, NAKInvalidRequest, "invalid_request"},
		{"nak remote access", 0x62, AckKindNAK, "nak", 2, NAKRemoteAccessError, "remote_access_err"},
		{"nak remote op", 0x63, AckKindNAK, "nak", 3, NAKRemoteOperationalError, "remote_op_err"},
		{"nak invalid rd", 0x64, AckKindNAK, "nak", 4, NAKInvalidRDRequest, "invalid_rd_request"},
		{"nak reserved code", 0x65, AckKindNAK, "nak", 5, 5, "nak_code_5"},
		{"reserved bit 7 ignored", 0x9f, AckKindACK, "ack", 31, 31, "nak_code_31"},
	}
	for _, tt := range tests {
		a := AETH{Syndrome: tt.syndrome}
		if got := a.Kind(); got != tt.kind || got.String() != tt.kindStr {
			t.Errorf("%s: Kind: want %v (%s), got %d (%s)", tt.name, tt.kind, tt.kindStr, got, got)
		}
		if a.Credits() != tt.credits || a.RNRTimer() != tt.credits {
			t.Errorf("%s: Credits/RNRTimer: want %d, got %d/%d", tt.name, tt.credits, a.Credits(), a.RNRTimer())
		}
		if got := a.NAKCode(); got != tt.nak || got.String() != tt.nakStr {
			t.Errorf("%s: NAKCode: want %d (%s), got %d (%s)", tt.name, tt.nak, tt.nakStr, got, got)
		}
	}
	if got := NAKCode(40).String(); got != "nak_code_40" {
		t.Errorf("NAKCode(40): want nak_code_40, got %s", got)
	}
	if got := AckKind(9).String(); got != "ack_kind_9" {
		t.Errorf("AckKind(9): want ack_kind_9, got %s", got)
	}
}

func TestRNRTimerDuration(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	tests := []struct {
		timer uint8
		want  time.Duration
	}{
		{0, ms(655.36)}, {1, ms(0.01)}, {2, ms(0.02)}, {3, ms(0.03)}, {4, ms(0.04)},
		{5, ms(0.06)}, {6, ms(0.08)}, {7, ms(0.12)}, {8, ms(0.16)}, {9, ms(0.24)},
		{10, ms(0.32)}, {11, ms(0.48)}, {12, ms(0.64)}, {13, ms(0.96)}, {14, ms(1.28)},
		{15, ms(1.92)}, {16, ms(2.56)}, {17, ms(3.84)}, {18, ms(5.12)}, {19, ms(7.68)},
		{20, ms(10.24)}, {21, ms(15.36)}, {22, ms(20.48)}, {23, ms(30.72)},
		{24, ms(40.96)}, {25, ms(61.44)}, {26, ms(81.92)}, {27, ms(122.88)},
		{28, ms(163.84)}, {29, ms(245.76)}, {30, ms(327.68)}, {31, ms(491.52)},
		{32 + 1, ms(0.01)}, // only the low 5 bits count
	}
	for _, tt := range tests {
		if got := RNRTimerDuration(tt.timer); got != tt.want {
			t.Errorf("RNRTimerDuration(%d): want %v, got %v", tt.timer, tt.want, got)
		}
	}
}

func TestFETHFields(t *testing.T) {
	f := FETH{Raw: 0x0000_0012}
	if f.PlacementType() != 2 || f.SelectivityLevel() != 1 {
		t.Errorf("FETH 0x12: want placement 2, selectivity 1, got %d, %d", f.PlacementType(), f.SelectivityLevel())
	}
}
