package bth

import "strconv"

// opFlags classifies an opcode; opInfo.flags holds them.
type opFlags uint16

const (
	flagKnown opFlags = 1 << iota
	flagRequest
	flagResponse
	flagAck
	flagFirst
	flagMiddle
	flagLast
	flagOnly
	flagSend
	flagWrite
	flagReadRequest
	flagReadResponse
	flagAtomic
	flagEndsRequest // the last packet of a request message

	// flagDecodable says a BTH of the opcode is decoded with the extended
	// headers it carries: a known or a vendor opcode, not a reserved one.
	flagDecodable
)

// opInfo is what the package knows about one of the 256 opcodes but its
// name (opcodeNames). It is 8 bytes, so that the decode of every BTH
// finds it with one scaled index.
type opInfo struct {
	ext   ExtHeaders
	flags opFlags
	hlen  uint32 // BTHLen + the extended headers
}

// operation describes an operation code (bits 4-0) under RC, the transport
// every other one is described against (IBTA vol 1 Table 38).
type operation struct {
	name  string
	ext   ExtHeaders // extended headers under RC
	flags opFlags
}

// operations is indexed by operation code. Names are those of Table 38.
var operations = [32]operation{
	OpSendFirst:          {"SEND_FIRST", 0, flagRequest | flagSend | flagFirst},
	OpSendMiddle:         {"SEND_MIDDLE", 0, flagRequest | flagSend | flagMiddle},
	OpSendLast:           {"SEND_LAST", 0, flagRequest | flagSend | flagLast | flagEndsRequest},
	OpSendLastImm:        {"SEND_LAST_IMM", HasImmDt, flagRequest | flagSend | flagLast | flagEndsRequest},
	OpSendOnly:           {"SEND_ONLY", 0, flagRequest | flagSend | flagOnly | flagEndsRequest},
	OpSendOnlyImm:        {"SEND_ONLY_IMM", HasImmDt, flagRequest | flagSend | flagOnly | flagEndsRequest},
	OpWriteFirst:         {"RDMA_WRITE_FIRST", HasRETH, flagRequest | flagWrite | flagFirst},
	OpWriteMiddle:        {"RDMA_WRITE_MIDDLE", 0, flagRequest | flagWrite | flagMiddle},
	OpWriteLast:          {"RDMA_WRITE_LAST", 0, flagRequest | flagWrite | flagLast | flagEndsRequest},
	OpWriteLastImm:       {"RDMA_WRITE_LAST_IMM", HasImmDt, flagRequest | flagWrite | flagLast | flagEndsRequest},
	OpWriteOnly:          {"RDMA_WRITE_ONLY", HasRETH, flagRequest | flagWrite | flagOnly | flagEndsRequest},
	OpWriteOnlyImm:       {"RDMA_WRITE_ONLY_IMM", HasRETH | HasImmDt, flagRequest | flagWrite | flagOnly | flagEndsRequest},
	OpReadRequest:        {"RDMA_READ_REQUEST", HasRETH, flagRequest | flagReadRequest | flagEndsRequest},
	OpReadResponseFirst:  {"RDMA_READ_RESPONSE_FIRST", HasAETH, flagResponse | flagReadResponse | flagFirst},
	OpReadResponseMiddle: {"RDMA_READ_RESPONSE_MIDDLE", 0, flagResponse | flagReadResponse | flagMiddle},
	OpReadResponseLast:   {"RDMA_READ_RESPONSE_LAST", HasAETH, flagResponse | flagReadResponse | flagLast},
	OpReadResponseOnly:   {"RDMA_READ_RESPONSE_ONLY", HasAETH, flagResponse | flagReadResponse | flagOnly},
	OpAcknowledge:        {"ACKNOWLEDGE", HasAETH, flagResponse | flagAck},
	OpAtomicAcknowledge:  {"ATOMIC_ACKNOWLEDGE", HasAETH | HasAtomicAckETH, flagResponse},
	OpCompareSwap:        {"COMPARE_SWAP", HasAtomicETH, flagRequest | flagAtomic | flagEndsRequest},
	OpFetchAdd:           {"FETCH_ADD", HasAtomicETH, flagRequest | flagAtomic | flagEndsRequest},
	OpResync:             {"RESYNC", 0, flagRequest | flagEndsRequest},
	OpSendLastInv:        {"SEND_LAST_INV", HasIETH, flagRequest | flagSend | flagLast | flagEndsRequest},
	OpSendOnlyInv:        {"SEND_ONLY_INV", HasIETH, flagRequest | flagSend | flagOnly | flagEndsRequest},
	OpFlush:              {"FLUSH", HasFETH | HasRETH, flagRequest | flagEndsRequest},
	OpAtomicWrite:        {"ATOMIC_WRITE", HasRETH, flagRequest | flagEndsRequest},
}

// allowed reports whether Table 38 (and IBTA 1.5 for FLUSH and ATOMIC_WRITE)
// defines operation op under transport t.
func allowed(t Transport, op uint8) bool {
	switch t {
	case TransportRC, TransportXRC:
		return op <= OpFetchAdd || op == OpSendLastInv || op == OpSendOnlyInv ||
			op == OpFlush || op == OpAtomicWrite
	case TransportUC:
		return op <= OpWriteOnlyImm
	case TransportRD:
		return op <= OpResync
	case TransportUD:
		return op == OpSendOnly || op == OpSendOnlyImm
	}
	return false
}

// opcodeTable and opcodeNames describe all 256 opcodes. They are built
// once, at package initialisation, so that String and Headers are table
// lookups that never allocate.
var opcodeTable, opcodeNames = buildOpcodeTable()

func buildOpcodeTable() (tab [256]opInfo, names [256]string) {
	for i := range tab {
		o := Opcode(i)
		t, op := o.Transport(), o.Operation()
		info := &tab[i]
		switch {
		case t == TransportVendor:
			names[i] = "VENDOR_" + hexByte(uint8(i))
			info.flags = flagDecodable
		case o == OpcodeCNP || o == OpcodeCNPLinux:
			names[i] = "CNP"
			info.flags = flagKnown | flagDecodable
		case allowed(t, op):
			rc := operations[op]
			names[i] = t.String() + "_" + rc.name
			info.flags = flagKnown | flagDecodable | rc.flags
			info.ext = rc.ext
			switch t {
			case TransportUD:
				info.ext |= HasDETH
			case TransportRD:
				// IBTA vol 1 §9.3.1-9.3.2: RDETH on every RD packet,
				// DETH on RD requests only.
				info.ext |= HasRDETH
				if rc.flags&flagRequest != 0 {
					info.ext |= HasDETH
				}
			case TransportXRC:
				// Annex A14: XRCETH on XRC requests; responses are as RC.
				if rc.flags&flagRequest != 0 {
					info.ext |= HasXRCETH
				}
			}
		default:
			names[i] = "RESERVED_" + hexByte(uint8(i))
		}
		info.hlen = uint32(BTHLen + info.ext.Len())
	}
	return tab, names
}

// hexByte formats v as "0x" and two lower-case hex digits.
func hexByte(v uint8) string {
	s := strconv.FormatUint(uint64(v), 16)
	if len(s) < 2 {
		s = "0" + s
	}
	return "0x" + s
}

// Transport returns the transport service in bits 7-5 (IBTA vol 1 Table 38).
// 110xxxxx and 111xxxxx are TransportVendor.
func (o Opcode) Transport() Transport {
	t := Transport(o >> 5)
	if t > TransportVendor {
		return TransportVendor
	}
	return t
}

// Operation returns the operation code in bits 4-0, one of the Op constants
// for a known opcode.
func (o Opcode) Operation() uint8 { return uint8(o) & 0x1f }

// String returns the opcode's name: "<TRANSPORT>_<OP>" with the operation
// named as in IBTA vol 1 Table 38 ("RC_RDMA_WRITE_ONLY_IMM", "UD_SEND_ONLY",
// "XRC_SEND_FIRST"), "CNP" for 0x80 and 0x81, "VENDOR_0xNN" for the
// manufacturer-specific 0xc0-0xff and "RESERVED_0xNN" for the rest. It never
// allocates.
func (o Opcode) String() string { return opcodeNames[o] }

// Known reports whether the opcode is defined by IBTA vol 1 Table 38, IBTA
// 1.5 (FLUSH, ATOMIC_WRITE) or RoCEv2 (CNP). Vendor opcodes are not known.
func (o Opcode) Known() bool { return opcodeTable[o].flags&flagKnown != 0 }

// IsVendor reports whether the opcode is manufacturer specific (0xc0-0xff).
func (o Opcode) IsVendor() bool { return o >= 0xc0 }

// IsReserved reports whether the opcode is neither known nor vendor specific.
func (o Opcode) IsReserved() bool { return !o.Known() && !o.IsVendor() }

// IsCNP reports whether the opcode is a RoCEv2 Congestion Notification Packet
// (Annex A17 §A17.9.2): 0x81, or 0x80 as Linux and Wireshark label it.
func (o Opcode) IsCNP() bool { return o == OpcodeCNP || o == OpcodeCNPLinux }

// Headers returns the extended transport headers that follow the BTH of a
// packet with this opcode (IBTA vol 1 §9.2, Table 38 and §9.3). Reserved,
// vendor and CNP opcodes carry none.
func (o Opcode) Headers() ExtHeaders { return opcodeTable[o].ext }

// HeaderLen returns the length of the BTH and the extended headers the
// opcode carries, in bytes: 12 plus the sizes of Headers().
func (o Opcode) HeaderLen() int { return int(opcodeTable[o].hlen) }

func (o Opcode) is(f opFlags) bool { return opcodeTable[o].flags&f != 0 }

// IsRequest reports whether the opcode is sent by a requester: SEND, RDMA
// WRITE, RDMA READ request, atomics, RESYNC, FLUSH or ATOMIC_WRITE.
func (o Opcode) IsRequest() bool { return o.is(flagRequest) }

// IsResponse reports whether the opcode is sent by a responder: RDMA READ
// responses, ACKNOWLEDGE and ATOMIC_ACKNOWLEDGE (all of which carry an AETH).
func (o Opcode) IsResponse() bool { return o.is(flagResponse) }

// IsAck reports whether the opcode is ACKNOWLEDGE (RC, RD or XRC): an ACK,
// RNR NAK or NAK, told apart by the AETH syndrome. ATOMIC_ACKNOWLEDGE and
// RDMA READ responses also carry an AETH but are not ACKNOWLEDGE packets.
func (o Opcode) IsAck() bool { return o.is(flagAck) }

// IsFirst reports whether the opcode starts a multi-packet message: SEND,
// RDMA WRITE or RDMA READ response FIRST.
func (o Opcode) IsFirst() bool { return o.is(flagFirst) }

// IsMiddle reports whether the opcode is a MIDDLE packet of a message.
func (o Opcode) IsMiddle() bool { return o.is(flagMiddle) }

// IsLast reports whether the opcode ends a multi-packet message: SEND_LAST
// (also _IMM and _INV), RDMA_WRITE_LAST (also _IMM) or
// RDMA_READ_RESPONSE_LAST.
func (o Opcode) IsLast() bool { return o.is(flagLast) }

// IsOnly reports whether the opcode is a single-packet SEND, RDMA WRITE or
// RDMA READ response (the _ONLY opcodes). Other single-packet operations
// (READ request, atomics, FLUSH, ATOMIC_WRITE) are not "only" packets; see
// EndsRequest.
func (o Opcode) IsOnly() bool { return o.is(flagOnly) }

// EndsRequest reports whether a packet with this opcode completes a request
// message, which the responder counts in its MSN (IBTA vol 1 §9.7.7.2):
// SEND and RDMA WRITE LAST or ONLY, RDMA READ request, atomics, RESYNC,
// FLUSH and ATOMIC_WRITE.
func (o Opcode) EndsRequest() bool { return o.is(flagEndsRequest) }

// IsSend reports whether the opcode is a SEND of any kind (incl. with
// immediate data or invalidate).
func (o Opcode) IsSend() bool { return o.is(flagSend) }

// IsRDMAWrite reports whether the opcode is an RDMA WRITE of any kind
// (not ATOMIC_WRITE).
func (o Opcode) IsRDMAWrite() bool { return o.is(flagWrite) }

// IsReadRequest reports whether the opcode is an RDMA READ request.
func (o Opcode) IsReadRequest() bool { return o.is(flagReadRequest) }

// IsReadResponse reports whether the opcode is an RDMA READ response.
func (o Opcode) IsReadResponse() bool { return o.is(flagReadResponse) }

// IsAtomic reports whether the opcode is COMPARE_SWAP or FETCH_ADD, the
// requests carrying an AtomicETH.
func (o Opcode) IsAtomic() bool { return o.is(flagAtomic) }

// extSizes is indexed by bit position in ExtHeaders.
var extSizes = [...]uint8{RDETHLen, DETHLen, XRCETHLen, FETHLen, RETHLen,
	AtomicETHLen, AETHLen, AtomicAckETHLen, ImmDtLen, IETHLen}

var extNames = [...]string{"RDETH", "DETH", "XRCETH", "FETH", "RETH",
	"AtomicETH", "AETH", "AtomicAckETH", "ImmDt", "IETH"}

// Has reports whether every header in h is in e.
func (e ExtHeaders) Has(h ExtHeaders) bool { return e&h == h }

// Len returns the total size in bytes of the headers in e.
func (e ExtHeaders) Len() int {
	n := 0
	for i, size := range extSizes {
		if e&(1<<i) != 0 {
			n += int(size)
		}
	}
	return n
}

// String lists the headers in wire order, as "RETH|ImmDt"; "none" for none.
func (e ExtHeaders) String() string {
	if e == 0 {
		return "none"
	}
	s := ""
	for i, name := range extNames {
		if e&(1<<i) != 0 {
			if s != "" {
				s += "|"
			}
			s += name
		}
	}
	if rest := e &^ (1<<len(extNames) - 1); rest != 0 {
		if s != "" {
			s += "|"
		}
		s += "0x" + strconv.FormatUint(uint64(rest), 16)
	}
	return s
}
