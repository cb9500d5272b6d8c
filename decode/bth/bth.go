package bth

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// BTH is the InfiniBand Base Transport Header (IBTA vol 1 §9.2) together with
// the extended transport headers its opcode carries (§9.3). It is a gopacket
// layer: DecodeFromBytes decodes the BTH and every extended header that
// follows it, so one call walks the whole IB transport header stack.
//
// LayerContents is the BTH and its extended headers; LayerPayload is
// everything after them as captured (payload, pad bytes and the 4-byte ICRC
// when the frame was captured whole).
type BTH struct {
	layers.BaseLayer

	Opcode           Opcode
	SolicitedEvent   bool   // SE
	MigReq           bool   // M: migration state
	PadCount         uint8  // 2 bits: pad bytes before the ICRC
	TransportVersion uint8  // 4 bits: TVer, 0 for IBTA 1.x
	PKey             uint16 // partition key
	FECN             bool   // forward explicit congestion notification
	BECN             bool   // backward explicit congestion notification
	Reserved6        uint8  // 6 reserved bits beside FECN/BECN (resv8a)
	DestQP           uint32 // 24-bit destination QP number
	AckReq           bool   // A: acknowledge request
	Reserved7        uint8  // 7 reserved bits before the PSN
	PSN              uint32 // 24-bit packet sequence number

	// Ext says which extended headers were decoded into the fields below.
	// A header the opcode carries but that was cut off by the snap length is
	// not in Ext, and Truncated is set.
	Ext       ExtHeaders
	Truncated bool

	RDETH        RDETH
	DETH         DETH
	XRCETH       XRCETH
	FETH         FETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
}

// CMQPN is the queue pair that general services MADs, the CM's among them,
// are sent to (IBTA vol 1 §13.5.1: QP1, the GSI).
const CMQPN = 1

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns LayerTypeCMMAD for a MAD on QP1 (a UD SEND_ONLY to
// DestQP 1 whose DETH was decoded), LayerTypeCNP for a CNP, and
// gopacket.LayerTypePayload otherwise.
func (b *BTH) NextLayerType() gopacket.LayerType {
	switch {
	case b.Opcode == OpcodeUDSendOnly && b.DestQP == CMQPN && b.Ext&HasDETH != 0:
		return LayerTypeCMMAD
	case b.Opcode.IsCNP():
		return LayerTypeCNP
	}
	return gopacket.LayerTypePayload
}

// HeaderLen returns the length of the headers decoded: the BTH and the
// extended headers in Ext. It is Opcode.HeaderLen() unless the packet was
// truncated.
func (b *BTH) HeaderLen() int { return BTHLen + b.Ext.Len() }

// DecodeFromBytes decodes the 12-byte BTH (IBTA vol 1 §9.2, Figure 98) and
// the extended headers its opcode carries, in wire order, into b. Every
// field is reset first, so a reused BTH keeps nothing from the last packet.
//
// Fewer than 12 bytes is a *HeaderError (ErrShortHeader). An extended
// header cut off by the end of data is not an error: the ones that fit are
// decoded, Truncated is set and df.SetTruncated is called. A transport
// version other than 0 returns ErrBadVersion, and a reserved opcode
// ErrReservedOpcode; in both cases the BTH fields are filled first, so the
// caller can print them. Vendor opcodes decode the BTH only. Nothing but
// the short-BTH error allocates, so a decoder that checks len(data) >= 12
// first can reject garbage on port 4791 without allocating.
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*b = BTH{}
	err := b.decode(data, 0)
	if b.Truncated && df != nil {
		df.SetTruncated()
	}
	return err
}

// DecodeReused is DecodeFromBytes(data, nil) (IBTA vol 1 §9.2, §9.3) for a
// BTH that holds the zero value or what DecodeFromBytes or DecodeReused last
// left in it (or a copy of that): it gives the same BTH and error, but
// instead of zeroing the whole struct first it writes every field a decode
// sets and clears only the extended headers b.Ext names, the only ones such
// a BTH can hold. It is for decoders that reuse one BTH for every packet, at
// line rate; a BTH whose extended headers were set by hand, without their
// bit in Ext, must go through DecodeFromBytes. It allocates nothing but the
// short-BTH error.
func (b *BTH) DecodeReused(data []byte) error {
	return b.decode(data, b.Ext&allExtHeaders)
}

// extSizeByBit is extSizes indexed by any bit position of an ExtHeaders,
// so that indexing it needs no bounds check.
var extSizeByBit = func() (s [16]uint8) {
	copy(s[:], extSizes[:])
	return s
}()

// opcodeExts is, for each opcode, the extended headers decode takes after
// its BTH, or -1 for a reserved opcode, which it does not decode: one
// load of a 4-byte entry for what opcodeTable says in two fields.
var opcodeExts = func() (t [256]int32) {
	for op, info := range opcodeTable {
		t[op] = -1
		if info.flags&flagDecodable != 0 {
			t[op] = int32(info.ext)
		}
	}
	return t
}()

// allExtHeaders is every extended header bit.
const allExtHeaders = ExtHeaders(1)<<len(extSizes) - 1

// decode does the work of DecodeFromBytes and DecodeReused but for the
// DecodeFeedback, whose SetTruncated is due when it sets Truncated. It
// writes every field but the extended headers; of those it decodes the ones
// the opcode carries (each decode writes every field of its header) and
// then clears those of stale, the ones b holds, that it did not decode, so
// that they are zero as DecodeFromBytes leaves them: on a stream of one
// opcode, none.
//
// Every call it makes on the way, but the decodes of the RETH and AETH,
// which are inlined, is its last act (a tail call, or one followed only by
// return nil), so that nothing it holds lives across a call: the compiler
// then keeps it all in registers, where a value that outlives a call would
// be saved on the stack on entry, on every packet.
func (b *BTH) decode(data []byte, stale ExtHeaders) error {
	if len(data) < BTHLen {
		return b.decodeShort(len(data))
	}
	// The 12 bytes (Figure 98): the bytes of bit fields loaded alone, the
	// P_Key, DestQP and PSN from their words. The first 8 bytes are read
	// before any store (the compiler would read data again after each
	// store into b, which might alias it), the last 4 after the stores of
	// the fields of the first 8, so that fewer values are held at once.
	op, b1, b4 := Opcode(data[0]), data[1], data[4]
	pkey, qp := binary.BigEndian.Uint16(data[2:4]), binary.BigEndian.Uint32(data[4:8])&0xffffff
	tver := b1 & 0x0f
	b.Opcode = op
	b.SolicitedEvent = b1&0x80 != 0
	b.MigReq = b1&0x40 != 0
	b.PadCount = b1 >> 4 & 0x3
	b.TransportVersion = tver
	b.PKey = pkey
	b.FECN = b4&0x80 != 0
	b.BECN = b4&0x40 != 0
	b.Reserved6 = b4 & 0x3f
	b.DestQP = qp
	b8, psn := data[8], binary.BigEndian.Uint32(data[8:BTHLen])&0xffffff
	b.AckReq = b8&0x80 != 0
	b.Reserved7 = b8 & 0x7f
	b.PSN = psn
	b.Ext, b.Truncated = 0, false

	want := ExtHeaders(opcodeExts[op])
	if tver != 0 || opcodeExts[op] < 0 {
		return b.decodeInvalid(data, tver, stale)
	}

	// The commonest extended headers, the RETH of RDMA WRITEs and READ
	// requests and the AETH of ACKs and READ responses, alone and
	// captured whole, are decoded here; decodeExts takes the others.
	switch {
	case want == 0:
		b.Contents, b.Payload = data[:BTHLen], data[BTHLen:]
	case want == HasRETH && len(data) >= BTHLen+RETHLen:
		_ = b.RETH.decode(data[BTHLen : BTHLen+RETHLen])
		b.Ext = want
		b.Contents, b.Payload = data[:BTHLen+RETHLen], data[BTHLen+RETHLen:]
	case want == HasAETH && len(data) >= BTHLen+AETHLen:
		_ = b.AETH.decode(data[BTHLen : BTHLen+AETHLen])
		b.Ext = want
		b.Contents, b.Payload = data[:BTHLen+AETHLen], data[BTHLen+AETHLen:]
	default:
		return b.decodeExts(data, want, stale)
	}
	if stale &^= want; stale != 0 { // want is b.Ext now
		b.clearExts(stale)
	}
	return nil
}

// decodeShort is decode for a BTH cut short at n bytes: it zeroes b and
// returns the *HeaderError.
func (b *BTH) decodeShort(n int) error {
	*b = BTH{}
	return shortError("BTH", n, BTHLen)
}

// decodeInvalid is the end of decode for a BTH of transport version tver
// other than 0 or of a reserved opcode, whose fields decode has written:
// it carries no extended headers, so those b held (stale) are cleared.
func (b *BTH) decodeInvalid(data []byte, tver uint8, stale ExtHeaders) error {
	b.clearExts(stale)
	b.Contents, b.Payload = data[:BTHLen], data[BTHLen:]
	if tver != 0 {
		return ErrBadVersion
	}
	return ErrReservedOpcode
}

// decodeExts is the end of decode for the extended headers it does not
// take itself: it decodes those want names from data, after the BTH, into
// b and b.Ext, as far as they were captured, then clears those of stale it
// did not decode and sets Contents and Payload.
func (b *BTH) decodeExts(data []byte, want, stale ExtHeaders) error {
	// In wire order, which is the order of their bits in ExtHeaders: one
	// iteration per header the opcode carries.
	off := BTHLen
	for ; want != 0; want &= want - 1 {
		i := bits.TrailingZeros16(uint16(want))
		size := int(extSizeByBit[i&15])
		if len(data)-off < size {
			b.Truncated = true
			break
		}
		h := ExtHeaders(1) << i
		b.decodeExt(h, data[off:off+size])
		b.Ext |= h
		off += size
	}
	if stale &^= b.Ext; stale != 0 {
		b.clearExts(stale)
	}
	b.Contents, b.Payload = data[:off], data[off:]
	return nil
}

// clearExts zeroes the extended headers exts names.
func (b *BTH) clearExts(exts ExtHeaders) {
	for ; exts != 0; exts &= exts - 1 {
		b.clearExt(ExtHeaders(1) << bits.TrailingZeros16(uint16(exts)))
	}
}

// clearExt zeroes extended header h.
func (b *BTH) clearExt(h ExtHeaders) {
	switch h {
	case HasRDETH:
		b.RDETH = RDETH{}
	case HasDETH:
		b.DETH = DETH{}
	case HasXRCETH:
		b.XRCETH = XRCETH{}
	case HasFETH:
		b.FETH = FETH{}
	case HasRETH:
		b.RETH = RETH{}
	case HasAtomicETH:
		b.AtomicETH = AtomicETH{}
	case HasAETH:
		b.AETH = AETH{}
	case HasAtomicAckETH:
		b.AtomicAckETH = AtomicAckETH{}
	case HasImmDt:
		b.ImmDt = ImmDt{}
	case HasIETH:
		b.IETH = IETH{}
	}
}

// decodeExt decodes extended header h from data, which holds exactly its
// bytes, so the decode cannot fail.
func (b *BTH) decodeExt(h ExtHeaders, data []byte) {
	switch h {
	case HasRDETH:
		_ = b.RDETH.decode(data)
	case HasDETH:
		_ = b.DETH.decode(data)
	case HasXRCETH:
		_ = b.XRCETH.decode(data)
	case HasFETH:
		_ = b.FETH.decode(data)
	case HasRETH:
		_ = b.RETH.decode(data)
	case HasAtomicETH:
		_ = b.AtomicETH.decode(data)
	case HasAETH:
		_ = b.AETH.decode(data)
	case HasAtomicAckETH:
		_ = b.AtomicAckETH.decode(data)
	case HasImmDt:
		_ = b.ImmDt.decode(data)
	case HasIETH:
		_ = b.IETH.decode(data)
	}
}

// PayloadLen returns the RDMA payload length of a packet whose UDP payload
// (the UDP header's length minus 8) is udpPayloadLen bytes: that length less
// the headers the opcode carries, the pad count and the ICRC, clamped at 0.
// Because it works from the UDP length rather than the bytes captured, it
// is right on frames cut by the snap length. A CNP has no RDMA payload: its
// 16 reserved bytes are not counted.
func (b *BTH) PayloadLen(udpPayloadLen int) int {
	if b.Opcode.IsCNP() {
		return 0
	}
	n := udpPayloadLen - b.Opcode.HeaderLen() - int(b.PadCount) - ICRCLen
	if n < 0 {
		return 0
	}
	return n
}

// CheckLength returns an error wrapping ErrBadLength when a UDP payload of
// udpPayloadLen bytes cannot hold this opcode's headers, pad and ICRC, or is
// a CNP other than 12+16+4 bytes: usually something that is not RoCE sent to
// port 4791.
func (b *BTH) CheckLength(udpPayloadLen int) error {
	if b.LengthOK(udpPayloadLen) {
		return nil
	}
	if b.Opcode.IsCNP() {
		return fmt.Errorf("%w: CNP of %d bytes, want %d", ErrBadLength,
			udpPayloadLen, BTHLen+CNPPayloadLen+ICRCLen)
	}
	return fmt.Errorf("%w: %s in %d bytes, need at least %d", ErrBadLength,
		b.Opcode, udpPayloadLen, b.Opcode.HeaderLen()+int(b.PadCount)+ICRCLen)
}

// LengthOK is CheckLength without the error (and so without allocating):
// whether udpPayloadLen bytes can hold this opcode's headers, pad and ICRC,
// and for a CNP whether they are exactly 12+16+4.
func (b *BTH) LengthOK(udpPayloadLen int) bool {
	if b.Opcode.IsCNP() {
		return udpPayloadLen == BTHLen+CNPPayloadLen+ICRCLen
	}
	return udpPayloadLen >= b.Opcode.HeaderLen()+int(b.PadCount)+ICRCLen
}

// AppendHeaders appends the BTH and the extended headers b.Opcode carries,
// encoded from the field values whatever Ext says, to dst and returns the
// extended slice. Field values wider than their wire fields are truncated.
func (b *BTH) AppendHeaders(dst []byte) []byte {
	var b1, b4 byte
	if b.SolicitedEvent {
		b1 |= 0x80
	}
	if b.MigReq {
		b1 |= 0x40
	}
	b1 |= (b.PadCount & 0x3) << 4
	b1 |= b.TransportVersion & 0x0f
	if b.FECN {
		b4 |= 0x80
	}
	if b.BECN {
		b4 |= 0x40
	}
	b4 |= b.Reserved6 & 0x3f
	b8 := b.Reserved7 & 0x7f
	if b.AckReq {
		b8 |= 0x80
	}
	dst = append(dst, byte(b.Opcode), b1, byte(b.PKey>>8), byte(b.PKey),
		b4, byte(b.DestQP>>16), byte(b.DestQP>>8), byte(b.DestQP),
		b8, byte(b.PSN>>16), byte(b.PSN>>8), byte(b.PSN))
	ext := b.Opcode.Headers()
	if ext&HasRDETH != 0 {
		dst = b.RDETH.append(dst)
	}
	if ext&HasDETH != 0 {
		dst = b.DETH.append(dst)
	}
	if ext&HasXRCETH != 0 {
		dst = b.XRCETH.append(dst)
	}
	if ext&HasFETH != 0 {
		dst = b.FETH.append(dst)
	}
	if ext&HasRETH != 0 {
		dst = b.RETH.append(dst)
	}
	if ext&HasAtomicETH != 0 {
		dst = b.AtomicETH.append(dst)
	}
	if ext&HasAETH != 0 {
		dst = b.AETH.append(dst)
	}
	if ext&HasAtomicAckETH != 0 {
		dst = b.AtomicAckETH.append(dst)
	}
	if ext&HasImmDt != 0 {
		dst = b.ImmDt.append(dst)
	}
	if ext&HasIETH != 0 {
		dst = b.IETH.append(dst)
	}
	return dst
}

// SerializeTo prepends the BTH and the extended headers b.Opcode carries,
// encoded from the field values whatever Ext says (see AppendHeaders). It
// implements gopacket.SerializableLayer; opts are not used: the pad count is
// written as given and the ICRC is the caller's to append.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	n := b.Opcode.HeaderLen()
	bytes, err := buf.PrependBytes(n)
	if err != nil {
		return err
	}
	b.AppendHeaders(bytes[:0:n])
	return nil
}
