package bth

import (
	"encoding/binary"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// MgmtClassCM is the MAD management class of the Communication Manager
// (IBTA vol 1 §13.4.4, Table 146).
const MgmtClassCM = 0x07

// MAD methods (IBTA vol 1 §13.4.5, Table 147). The CM sends its messages
// (REQ to APR) with Send and reads or writes its ClassPortInfo with Get,
// Set and GetResp (§12.6: CM attributes and the methods each takes).
const (
	MethodGet     = 0x01
	MethodSet     = 0x02
	MethodSend    = 0x03
	MethodGetResp = 0x81
)

// MADBaseVersion is the base version of every MAD this format describes
// (IBTA vol 1 §13.4.3); a MAD of another version is not decoded further
// than its header.
const MADBaseVersion = 1

// CMMAD is a management datagram (IBTA vol 1 §13.4) as a UD SEND to QP1
// carries it, decoded for the Communication Manager (MgmtClass 0x07, §12.6).
// The common MAD header is always decoded. For CM MADs (IsCMMessage) the
// fields below it that the message has and that were captured are filled
// and listed in Captured; the rest stay zero. For any other MAD (another
// management class, or a class-0x07 MAD whose base version, method or
// attribute is not one the CM sends) only the MAD header is decoded.
//
// LayerContents is the 256-byte MAD (or as much as was captured);
// LayerPayload is what follows it: the ICRC, when captured.
type CMMAD struct {
	layers.BaseLayer

	// Common MAD header (IBTA vol 1 §13.4.3, Figure 148).
	BaseVersion       uint8
	MgmtClass         uint8
	ClassVersion      uint8
	Method            uint8 // R bit (bit 7, set in responses) and method
	Status            uint16
	ClassSpecific     uint16
	TransactionID     uint64
	AttributeID       CMAttribute // for non-CM classes, that class's attribute ID
	AttributeModifier uint32

	// Truncated: the MAD is shorter than 256 bytes as captured. Fields
	// beyond the end are zero and missing from Captured.
	Truncated bool

	// Captured lists the CM message fields below that the message has and
	// that were captured whole: test it (Has) before trusting a field of a
	// Truncated MAD.
	Captured CMFields

	// CM message fields (IBTA vol 1 §12.6.5-§12.6.13); which ones a message
	// has is said on CMAttribute's constants.
	LocalCommID          uint32
	RemoteCommID         uint32
	ServiceID            uint64
	LocalCAGUID          uint64
	LocalQKey            uint32
	LocalQPN             uint32 // 24 bits
	StartingPSN          uint32 // 24 bits
	PKey                 uint16
	ResponderResources   uint8
	InitiatorDepth       uint8
	TransportServiceType uint8  // REQ: 0 RC, 1 UC, 2 RD, 3 XRC (§12.6.5)
	RemoteQPN            uint32 // DREQ: remote QPN/EECN, 24 bits
	MsgRejected          uint8  // REJ: 0 REQ, 1 REP, 2 other (§12.6.7)
	RejectReason         uint16 // REJ (§12.6.7.2, Table 103)

	// IP is the IP CM private data of a REQ for the RDMA IP CM service
	// (Annex A11); IP.Valid is false for anything else.
	IP IPCMData
}

// LayerType returns LayerTypeCMMAD.
func (m *CMMAD) LayerType() gopacket.LayerType { return LayerTypeCMMAD }

// CanDecode returns LayerTypeCMMAD.
func (m *CMMAD) CanDecode() gopacket.LayerClass { return LayerTypeCMMAD }

// NextLayerType returns gopacket.LayerTypeZero: only the ICRC follows a MAD.
func (m *CMMAD) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// IsCM reports whether the MAD belongs to the Communication Manager class;
// IsCMMessage says whether it is one the CM sends.
func (m *CMMAD) IsCM() bool { return m.MgmtClass == MgmtClassCM }

// IsCMMessage reports whether the MAD is one the Communication Manager
// sends (IBTA vol 1 §12.6, §13.4): base version 1, class 0x07, and either a
// CM message (REQ 0x0010 to APR 0x001A) with method Send, or ClassPortInfo
// with Get, Set or GetResp. A class-0x07 MAD of any other base version,
// method or attribute is not decoded as a CM message (tshark names every
// class-0x07 MAD after its attribute, whatever its method and version).
func (m *CMMAD) IsCMMessage() bool {
	if m.BaseVersion != MADBaseVersion || m.MgmtClass != MgmtClassCM {
		return false
	}
	if m.AttributeID == CMAttrClassPortInfo {
		return m.Method == MethodGet || m.Method == MethodSet || m.Method == MethodGetResp
	}
	return m.Method == MethodSend && m.AttributeID >= CMAttrREQ && m.AttributeID <= CMAttrAPR
}

// DecodeFromBytes decodes a MAD: the 24-byte common header and, for a CM
// MAD (IsCMMessage), the message its AttributeID names. Every field is reset first.
// Fewer than 24 bytes is a *HeaderError; a MAD cut off later decodes as far
// as it goes, sets Truncated and calls df.SetTruncated. It does not allocate.
func (m *CMMAD) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*m = CMMAD{}
	if len(data) < MADHeaderLen {
		return shortError("MAD", len(data), MADHeaderLen)
	}
	m.BaseVersion = data[0]
	m.MgmtClass = data[1]
	m.ClassVersion = data[2]
	m.Method = data[3]
	m.Status = binary.BigEndian.Uint16(data[4:6])
	m.ClassSpecific = binary.BigEndian.Uint16(data[6:8])
	m.TransactionID = binary.BigEndian.Uint64(data[8:16])
	m.AttributeID = CMAttribute(binary.BigEndian.Uint16(data[16:18]))
	m.AttributeModifier = binary.BigEndian.Uint32(data[20:24])

	end := min(len(data), MADLen)
	m.Contents, m.Payload = data[:end], data[end:]
	m.Truncated = end < MADLen
	if m.IsCMMessage() {
		r := fieldReader{b: data[MADHeaderLen:end]}
		m.decodeCM(&r)
		m.Captured = r.got
		m.Truncated = m.Truncated || r.short
	}
	if m.Truncated && df != nil {
		df.SetTruncated()
	}
	return nil
}

// fieldReader reads big-endian fields at offsets in b. A field that does not
// fit reads as zero and sets short; one that fits is added to got. Nothing
// panics.
type fieldReader struct {
	b     []byte
	short bool
	got   CMFields
}

// fits reports whether n bytes at off were captured.
func (r *fieldReader) fits(off, n int) bool {
	if off < 0 || off+n > len(r.b) {
		r.short = true
		return false
	}
	return true
}

// field reports whether field f, n bytes at off, was captured, and if so
// adds it to got.
func (r *fieldReader) field(f CMFields, off, n int) bool {
	if !r.fits(off, n) {
		return false
	}
	r.got |= f
	return true
}

func (r *fieldReader) u8(f CMFields, off int) uint8 {
	if !r.field(f, off, 1) {
		return 0
	}
	return r.b[off]
}

func (r *fieldReader) u16(f CMFields, off int) uint16 {
	if !r.field(f, off, 2) {
		return 0
	}
	return binary.BigEndian.Uint16(r.b[off:])
}

// u24 reads the 24-bit field in the top three bytes at off.
func (r *fieldReader) u24(f CMFields, off int) uint32 {
	if !r.field(f, off, 3) {
		return 0
	}
	return uint24(r.b[off:])
}

func (r *fieldReader) u32(f CMFields, off int) uint32 {
	if !r.field(f, off, 4) {
		return 0
	}
	return binary.BigEndian.Uint32(r.b[off:])
}

func (r *fieldReader) u64(f CMFields, off int) uint64 {
	if !r.field(f, off, 8) {
		return 0
	}
	return binary.BigEndian.Uint64(r.b[off:])
}
