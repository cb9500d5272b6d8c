package bth

import (
	"strings"
	"testing"
)

func TestOpcodeString(t *testing.T) {
	tests := []struct {
		op   Opcode
		want string
	}{
		{0x00, "RC_SEND_FIRST"},
		{0x01, "RC_SEND_MIDDLE"},
		{0x02, "RC_SEND_LAST"},
		{0x03, "RC_SEND_LAST_IMM"},
		{0x04, "RC_SEND_ONLY"},
		{0x05, "RC_SEND_ONLY_IMM"},
		{0x06, "RC_RDMA_WRITE_FIRST"},
		{0x07, "RC_RDMA_WRITE_MIDDLE"},
		{0x08, "RC_RDMA_WRITE_LAST"},
		{0x09, "RC_RDMA_WRITE_LAST_IMM"},
		{0x0a, "RC_RDMA_WRITE_ONLY"},
		{0x0b, "RC_RDMA_WRITE_ONLY_IMM"},
		{0x0c, "RC_RDMA_READ_REQUEST"},
		{0x0d, "RC_RDMA_READ_RESPONSE_FIRST"},
		{0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE"},
		{0x0f, "RC_RDMA_READ_RESPONSE_LAST"},
		{0x10, "RC_RDMA_READ_RESPONSE_ONLY"},
		{0x11, "RC_ACKNOWLEDGE"},
		{0x12, "RC_ATOMIC_ACKNOWLEDGE"},
		{0x13, "RC_COMPARE_SWAP"},
		{0x14, "RC_FETCH_ADD"},
		{0x15, "RESERVED_0x15"},
		{0x16, "RC_SEND_LAST_INV"},
		{0x17, "RC_SEND_ONLY_INV"},
		{0x18, "RESERVED_0x18"},
		{0x1a, "RESERVED_0x1a"},
		{0x1b, "RESERVED_0x1b"},
		{0x1c, "RC_FLUSH"},
		{0x1d, "RC_ATOMIC_WRITE"},
		{0x1e, "RESERVED_0x1e"},
		{0x1f, "RESERVED_0x1f"},
		{0x20, "UC_SEND_FIRST"},
		{0x24, "UC_SEND_ONLY"},
		{0x2a, "UC_RDMA_WRITE_ONLY"},
		{0x2b, "UC_RDMA_WRITE_ONLY_IMM"},
		{0x2c, "RESERVED_0x2c"},
		{0x31, "RESERVED_0x31"},
		{0x36, "RESERVED_0x36"},
		{0x40, "RD_SEND_FIRST"},
		{0x4c, "RD_RDMA_READ_REQUEST"},
		{0x51, "RD_ACKNOWLEDGE"},
		{0x53, "RD_COMPARE_SWAP"},
		{0x55, "RD_RESYNC"},
		{0x56, "RESERVED_0x56"},
		{0x5c, "RESERVED_0x5c"},
		{0x60, "RESERVED_0x60"},
		{0x64, "UD_SEND_ONLY"},
		{0x65, "UD_SEND_ONLY_IMM"},
		{0x66, "RESERVED_0x66"},
		{0x80, "CNP"},
		{0x81, "CNP"},
		{0x82, "RESERVED_0x82"},
		{0x9f, "RESERVED_0x9f"},
		{0xa0, "XRC_SEND_FIRST"},
		{0xac, "XRC_RDMA_READ_REQUEST"},
		{0xb1, "XRC_ACKNOWLEDGE"},
		{0xb5, "RESERVED_0xb5"},
		{0xb6, "XRC_SEND_LAST_INV"},
		{0xb7, "XRC_SEND_ONLY_INV"},
		{0xbc, "XRC_FLUSH"},
		{0xbd, "XRC_ATOMIC_WRITE"},
		{0xc0, "VENDOR_0xc0"},
		{0xe5, "VENDOR_0xe5"},
		{0xff, "VENDOR_0xff"},
	}
	for _, tt := range tests {
		if got := tt.op.String(); got != tt.want {
			t.Errorf("Opcode(0x%02x).String(): want %q, got %q", uint8(tt.op), tt.want, got)
		}
	}
}

// TestOpcodeNamesComplete checks every opcode's name against its class:
// known opcodes are "<TRANSPORT>_<OP>" (or CNP), the rest reserved or vendor.
func TestOpcodeNamesComplete(t *testing.T) {
	counts := map[Transport]int{}
	for i := 0; i < 256; i++ {
		o := Opcode(i)
		name := o.String()
		switch {
		case o.IsVendor():
			if o.Known() || !strings.HasPrefix(name, "VENDOR_0x") {
				t.Errorf("0x%02x: want unknown VENDOR_, got %q known=%v", i, name, o.Known())
			}
		case !o.Known():
			if !strings.HasPrefix(name, "RESERVED_0x") || !o.IsReserved() {
				t.Errorf("0x%02x: want RESERVED_, got %q", i, name)
			}
		case o.IsCNP():
			if name != "CNP" {
				t.Errorf("0x%02x: want CNP, got %q", i, name)
			}
		default:
			if want := o.Transport().String() + "_"; !strings.HasPrefix(name, want) {
				t.Errorf("0x%02x: want prefix %q, got %q", i, want, name)
			}
			if o.IsRequest() == o.IsResponse() {
				t.Errorf("%v: want exactly one of request/response", o)
			}
		}
		if o.Known() {
			counts[o.Transport()]++
		}
	}
	// IBTA vol 1 Table 38: RC and XRC 21+2 (INV) +2 (1.5: FLUSH, ATOMIC
	// WRITE), UC 12, RD 22, UD 2; RoCEv2 CNP 2 (0x80 and 0x81).
	want := map[Transport]int{TransportRC: 25, TransportUC: 12, TransportRD: 22,
		TransportUD: 2, TransportCNP: 2, TransportXRC: 25}
	for tr, n := range want {
		if counts[tr] != n {
			t.Errorf("%v: want %d known opcodes, got %d", tr, n, counts[tr])
		}
	}
}

func TestOpcodeTransport(t *testing.T) {
	tests := []struct {
		op   Opcode
		want Transport
	}{
		{0x04, TransportRC}, {0x24, TransportUC}, {0x44, TransportRD},
		{0x64, TransportUD}, {0x81, TransportCNP}, {0xa4, TransportXRC},
		{0xc0, TransportVendor}, {0xff, TransportVendor},
	}
	for _, tt := range tests {
		if got := tt.op.Transport(); got != tt.want {
			t.Errorf("%v.Transport(): want %v, got %v", tt.op, tt.want, got)
		}
		if got := tt.op.Operation(); got != uint8(tt.op)&0x1f {
			t.Errorf("%v.Operation(): want 0x%02x, got 0x%02x", tt.op, uint8(tt.op)&0x1f, got)
		}
	}
}

func TestOpcodeHeaders(t *testing.T) {
	tests := []struct {
		op   Opcode
		want ExtHeaders
	}{
		// RC (IBTA vol 1 Table 38).
		{0x00, 0}, {0x01, 0}, {0x02, 0}, {0x03, HasImmDt}, {0x04, 0}, {0x05, HasImmDt},
		{0x06, HasRETH}, {0x07, 0}, {0x08, 0}, {0x09, HasImmDt}, {0x0a, HasRETH},
		{0x0b, HasRETH | HasImmDt}, {0x0c, HasRETH}, {0x0d, HasAETH}, {0x0e, 0},
		{0x0f, HasAETH}, {0x10, HasAETH}, {0x11, HasAETH},
		{0x12, HasAETH | HasAtomicAckETH}, {0x13, HasAtomicETH}, {0x14, HasAtomicETH},
		{0x15, 0}, {0x16, HasIETH}, {0x17, HasIETH},
		{0x1c, HasFETH | HasRETH}, {0x1d, HasRETH},
		// UC.
		{0x20, 0}, {0x23, HasImmDt}, {0x26, HasRETH}, {0x2b, HasRETH | HasImmDt}, {0x2c, 0},
		// RD: RDETH always, DETH on requests.
		{0x40, HasRDETH | HasDETH}, {0x41, HasRDETH | HasDETH},
		{0x43, HasRDETH | HasDETH | HasImmDt},
		{0x46, HasRDETH | HasDETH | HasRETH},
		{0x4b, HasRDETH | HasDETH | HasRETH | HasImmDt},
		{0x4c, HasRDETH | HasDETH | HasRETH},
		{0x4d, HasRDETH | HasAETH}, {0x4e, HasRDETH}, {0x4f, HasRDETH | HasAETH},
		{0x50, HasRDETH | HasAETH}, {0x51, HasRDETH | HasAETH},
		{0x52, HasRDETH | HasAETH | HasAtomicAckETH},
		{0x53, HasRDETH | HasDETH | HasAtomicETH}, {0x54, HasRDETH | HasDETH | HasAtomicETH},
		{0x55, HasRDETH | HasDETH}, {0x56, 0},
		// UD.
		{0x64, HasDETH}, {0x65, HasDETH | HasImmDt}, {0x60, 0},
		// CNP.
		{0x80, 0}, {0x81, 0},
		// XRC: XRCETH on requests, responses as RC.
		{0xa0, HasXRCETH}, {0xa1, HasXRCETH}, {0xa3, HasXRCETH | HasImmDt},
		{0xa6, HasXRCETH | HasRETH}, {0xab, HasXRCETH | HasRETH | HasImmDt},
		{0xac, HasXRCETH | HasRETH}, {0xad, HasAETH}, {0xae, 0}, {0xb1, HasAETH},
		{0xb2, HasAETH | HasAtomicAckETH}, {0xb3, HasXRCETH | HasAtomicETH},
		{0xb6, HasXRCETH | HasIETH}, {0xbc, HasXRCETH | HasFETH | HasRETH},
		{0xbd, HasXRCETH | HasRETH},
		// Vendor.
		{0xc0, 0}, {0xff, 0},
	}
	for _, tt := range tests {
		if got := tt.op.Headers(); got != tt.want {
			t.Errorf("%v.Headers(): want %v, got %v", tt.op, tt.want, got)
		}
		if want, got := BTHLen+tt.want.Len(), tt.op.HeaderLen(); got != want {
			t.Errorf("%v.HeaderLen(): want %d, got %d", tt.op, want, got)
		}
	}
}

func TestOpcodeHeaderLen(t *testing.T) {
	tests := []struct {
		op   Opcode
		want int
	}{
		{0x11, 16}, {0x06, 28}, {0x0b, 32}, {0x12, 24}, {0x13, 40}, {0x64, 20},
		{0x65, 24}, {0x53, 52}, {0xbc, 36}, {0x81, 12}, {0xc5, 12},
	}
	for _, tt := range tests {
		if got := tt.op.HeaderLen(); got != tt.want {
			t.Errorf("%v.HeaderLen(): want %d, got %d", tt.op, tt.want, got)
		}
	}
	max := 0
	for i := 0; i < 256; i++ {
		max = maxInt(max, Opcode(i).HeaderLen())
	}
	if max != MaxHeaderLen {
		t.Errorf("MaxHeaderLen: want %d, got %d", max, MaxHeaderLen)
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func TestOpcodePredicates(t *testing.T) {
	type preds struct{ req, resp, ack, first, middle, last, only, send, write, readReq, readResp, atomic, ends bool }
	tests := []struct {
		op   Opcode
		want preds
	}{
		{0x00, preds{req: true, first: true, send: true}},
		{0x01, preds{req: true, middle: true, send: true}},
		{0x03, preds{req: true, last: true, send: true, ends: true}},
		{0x04, preds{req: true, only: true, send: true, ends: true}},
		{0x17, preds{req: true, only: true, send: true, ends: true}},
		{0x06, preds{req: true, first: true, write: true}},
		{0x08, preds{req: true, last: true, write: true, ends: true}},
		{0x0b, preds{req: true, only: true, write: true, ends: true}},
		{0x0c, preds{req: true, readReq: true, ends: true}},
		{0x0d, preds{resp: true, first: true, readResp: true}},
		{0x0e, preds{resp: true, middle: true, readResp: true}},
		{0x0f, preds{resp: true, last: true, readResp: true}},
		{0x10, preds{resp: true, only: true, readResp: true}},
		{0x11, preds{resp: true, ack: true}},
		{0x12, preds{resp: true}},
		{0x13, preds{req: true, atomic: true, ends: true}},
		{0x14, preds{req: true, atomic: true, ends: true}},
		{0x1c, preds{req: true, ends: true}},
		{0x1d, preds{req: true, ends: true}},
		{0x55, preds{req: true, ends: true}},
		{0x64, preds{req: true, only: true, send: true, ends: true}},
		{0xb1, preds{resp: true, ack: true}},
		{0x81, preds{}},
		{0x15, preds{}},
		{0xc4, preds{}},
	}
	for _, tt := range tests {
		o := tt.op
		got := preds{o.IsRequest(), o.IsResponse(), o.IsAck(), o.IsFirst(), o.IsMiddle(),
			o.IsLast(), o.IsOnly(), o.IsSend(), o.IsRDMAWrite(), o.IsReadRequest(),
			o.IsReadResponse(), o.IsAtomic(), o.EndsRequest()}
		if got != tt.want {
			t.Errorf("%v: want %+v, got %+v", o, tt.want, got)
		}
	}
}

func TestOpcodeKnown(t *testing.T) {
	tests := []struct {
		op                   Opcode
		known, cnp, reserved bool
	}{
		{0x04, true, false, false},
		{0x80, true, true, false},
		{0x81, true, true, false},
		{0x82, false, false, true},
		{0x2c, false, false, true},
		{0x60, false, false, true},
		{0xc0, false, false, false},
	}
	for _, tt := range tests {
		if got := tt.op.Known(); got != tt.known {
			t.Errorf("%v.Known(): want %v, got %v", tt.op, tt.known, got)
		}
		if got := tt.op.IsCNP(); got != tt.cnp {
			t.Errorf("%v.IsCNP(): want %v, got %v", tt.op, tt.cnp, got)
		}
		if got := tt.op.IsReserved(); got != tt.reserved {
			t.Errorf("%v.IsReserved(): want %v, got %v", tt.op, tt.reserved, got)
		}
	}
}

func TestExtHeadersString(t *testing.T) {
	tests := []struct {
		e    ExtHeaders
		want string
	}{
		{0, "none"},
		{HasRETH | HasImmDt, "RETH|ImmDt"},
		{HasRDETH | HasDETH | HasAtomicETH, "RDETH|DETH|AtomicETH"},
		{HasIETH | 1<<12, "IETH|0x1000"},
	}
	for _, tt := range tests {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("ExtHeaders(%#x).String(): want %q, got %q", uint16(tt.e), tt.want, got)
		}
	}
	if !(HasRETH | HasImmDt).Has(HasImmDt) || HasRETH.Has(HasRETH|HasImmDt) {
		t.Error("ExtHeaders.Has: wrong answer")
	}
}

func TestTransportString(t *testing.T) {
	want := []string{"RC", "UC", "RD", "UD", "CNP", "XRC", "VENDOR", "Transport(7)"}
	for i, w := range want {
		if got := Transport(i).String(); got != w {
			t.Errorf("Transport(%d): want %q, got %q", i, w, got)
		}
	}
}
