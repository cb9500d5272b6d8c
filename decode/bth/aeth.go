package bth

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/google/gopacket"
)

// AETH is the ACK Extended Transport Header (IBTA vol 1 §9.3.5), carried by
// ACKs, NAKs and READ and ATOMIC responses.
type AETH struct {
	Syndrome uint8  // bit 7 reserved, bits 6-5 kind, bits 4-0 credits/timer/NAK code
	MSN      uint32 // 24-bit message sequence number
}

// AckKind is what an AETH syndrome says (IBTA vol 1 §9.3.5, Table 42).
type AckKind uint8

// AETH syndrome kinds: bits 6-5 of the syndrome.
const (
	AckKindACK      AckKind = 0 // 00: ACK, low 5 bits are the credit count
	AckKindRNRNAK   AckKind = 1 // 01: receiver not ready, low 5 bits are the RNR timer
	AckKindReserved AckKind = 2 // 10: reserved
	AckKindNAK      AckKind = 3 // 11: NAK, low 5 bits are the NAK code
)

// String returns "ack", "rnr_nak", "reserved" or "nak".
func (k AckKind) String() string {
	switch k {
	case AckKindACK:
		return "ack"
	case AckKindRNRNAK:
		return "rnr_nak"
	case AckKindReserved:
		return "reserved"
	case AckKindNAK:
		return "nak"
	}
	return "ack_kind_" + strconv.Itoa(int(k))
}

// NAKCode is the low 5 bits of a NAK syndrome (IBTA vol 1 §9.3.5, Table 43).
type NAKCode uint8

// NAK codes. 5-31 are reserved.
const (
	NAKPSNSequenceError       NAKCode = 0
	NAKInvalidRequest         NAKCode = 1
	NAKRemoteAccessError      NAKCode = 2
	NAKRemoteOperationalError NAKCode = 3
	NAKInvalidRDRequest       NAKCode = 4
)

// nakNames is built once so that String does not allocate for any 5-bit code.
var nakNames = func() (n [32]string) {
	for i := range n {
		n[i] = "nak_code_" + strconv.Itoa(i)
	}
	n[NAKPSNSequenceError] = "psn_seq_err"
	n[NAKInvalidRequest] = "invalid_request"
	n[NAKRemoteAccessError] = "remote_access_err"
	n[NAKRemoteOperationalError] = "remote_op_err"
	n[NAKInvalidRDRequest] = "invalid_rd_request"
	return n
}()

// String returns "psn_seq_err", "invalid_request", "remote_access_err",
// "remote_op_err", "invalid_rd_request", or "nak_code_N" for the reserved
// codes.
func (c NAKCode) String() string {
	if int(c) < len(nakNames) {
		return nakNames[c]
	}
	return "nak_code_" + strconv.Itoa(int(c))
}

// Kind returns the syndrome's kind, bits 6-5.
func (a AETH) Kind() AckKind { return AckKind(a.Syndrome>>5) & 0x3 }

// Credits returns the credit count of an ACK (low 5 bits; IBTA vol 1 §9.7.7.2.1,
// Table 44 encodes the count, 31 meaning no credit limit). Meaningful only
// when Kind is AckKindACK.
func (a AETH) Credits() uint8 { return a.Syndrome & 0x1f }

// RNRTimer returns the RNR NAK timer field (low 5 bits), meaningful only when
// Kind is AckKindRNRNAK; RNRTimerDuration converts it.
func (a AETH) RNRTimer() uint8 { return a.Syndrome & 0x1f }

// NAKCode returns the NAK code (low 5 bits), meaningful only when Kind is
// AckKindNAK.
func (a AETH) NAKCode() NAKCode { return NAKCode(a.Syndrome & 0x1f) }

// rnrMicros is IBTA vol 1 Table 45 in microseconds, indexed by timer field.
var rnrMicros = [32]uint32{
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

// RNRTimerDuration returns the minimum RNR NAK delay a 5-bit timer field
// encodes (IBTA vol 1 §9.7.5.2.8, Table 45): 0 is 655.36 ms, 1 is 0.01 ms,
// ..., 31 is 491.52 ms. Bits above the low 5 are ignored.
func RNRTimerDuration(t uint8) time.Duration {
	return time.Duration(rnrMicros[t&0x1f]) * time.Microsecond
}

func (a *AETH) decode(data []byte) error {
	if len(data) < AETHLen {
		return shortError("AETH", len(data), AETHLen)
	}
	a.Syndrome = data[0]
	a.MSN = uint24(data[1:4])
	return nil
}

func (a AETH) append(dst []byte) []byte {
	return binary.BigEndian.AppendUint32(dst, uint32(a.Syndrome)<<24|a.MSN&0xffffff)
}

// LayerType returns LayerTypeAETH.
func (a AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// LayerContents returns the header re-encoded from its fields.
func (a AETH) LayerContents() []byte { return a.append(make([]byte, 0, AETHLen)) }

// LayerPayload returns nil: the payload belongs to the BTH layer.
func (a AETH) LayerPayload() []byte { return nil }
