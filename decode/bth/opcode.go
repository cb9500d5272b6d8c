package bth

import "fmt"

// Opcode is the 8-bit BTH OpCode field (IBTA vol 1 §9.2, Table 38).
// Bits 7-5 select the transport service and bits 4-0 the operation.
type Opcode uint8

// Transport is the transport service named by an opcode's top three bits
// (IBTA vol 1 §9.2, Table 38).
type Transport uint8

// Transport services. CNP is not an IBTA transport: RoCEv2 (Annex A17 §A17.9.2)
// puts the Congestion Notification Packet in the 100xxxxx range.
const (
	TransportRC     Transport = 0 // Reliable Connection
	TransportUC     Transport = 1 // Unreliable Connection
	TransportRD     Transport = 2 // Reliable Datagram
	TransportUD     Transport = 3 // Unreliable Datagram
	TransportCNP    Transport = 4 // Congestion Notification Packet (RoCEv2)
	TransportXRC    Transport = 5 // Extended Reliable Connection (Annex A14)
	TransportVendor Transport = 6 // manufacturer specific (110xxxxx and 111xxxxx)
)

// String returns the transport's short name: RC, UC, RD, UD, CNP, XRC or VENDOR.
func (t Transport) String() string {
	switch t {
	case TransportRC:
		return "RC"
	case TransportUC:
		return "UC"
	case TransportRD:
		return "RD"
	case TransportUD:
		return "UD"
	case TransportCNP:
		return "CNP"
	case TransportXRC:
		return "XRC"
	case TransportVendor:
		return "VENDOR"
	}
	return fmt.Sprintf("Transport(%d)", uint8(t))
}

// Operation codes in bits 4-0 of the opcode (IBTA vol 1 Table 38). The same
// operation code means the same thing under every transport that allows it.
const (
	OpSendFirst          uint8 = 0x00
	OpSendMiddle         uint8 = 0x01
	OpSendLast           uint8 = 0x02
	OpSendLastImm        uint8 = 0x03
	OpSendOnly           uint8 = 0x04
	OpSendOnlyImm        uint8 = 0x05
	OpWriteFirst         uint8 = 0x06
	OpWriteMiddle        uint8 = 0x07
	OpWriteLast          uint8 = 0x08
	OpWriteLastImm       uint8 = 0x09
	OpWriteOnly          uint8 = 0x0a
	OpWriteOnlyImm       uint8 = 0x0b
	OpReadRequest        uint8 = 0x0c
	OpReadResponseFirst  uint8 = 0x0d
	OpReadResponseMiddle uint8 = 0x0e
	OpReadResponseLast   uint8 = 0x0f
	OpReadResponseOnly   uint8 = 0x10
	OpAcknowledge        uint8 = 0x11
	OpAtomicAcknowledge  uint8 = 0x12
	OpCompareSwap        uint8 = 0x13
	OpFetchAdd           uint8 = 0x14
	OpResync             uint8 = 0x15 // RD only
	OpSendLastInv        uint8 = 0x16
	OpSendOnlyInv        uint8 = 0x17
	OpFlush              uint8 = 0x1c // RDMA FLUSH, IBTA 1.5 (RC, XRC); Linux IB_OPCODE_FLUSH
	OpAtomicWrite        uint8 = 0x1d // RDMA ATOMIC WRITE, IBTA 1.5 (RC, XRC); Linux IB_OPCODE_ATOMIC_WRITE
)

// Frequently used full opcodes.
const (
	OpcodeRCSendOnly    Opcode = 0x04
	OpcodeRCWriteOnly   Opcode = 0x0a
	OpcodeRCReadRequest Opcode = 0x0c
	OpcodeRCAcknowledge Opcode = 0x11
	OpcodeUDSendOnly    Opcode = 0x64
	OpcodeUDSendOnlyImm Opcode = 0x65
	OpcodeCNP           Opcode = 0x81 // what ConnectX NICs send
	OpcodeCNPLinux      Opcode = 0x80 // labelled CNP by Linux and Wireshark
)

// ExtHeaders is a set of extended transport headers (IBTA vol 1 §9.3), one bit
// per header kind.
type ExtHeaders uint16

// Extended header kinds. The bits are in the order the headers follow the BTH
// on the wire (IBTA vol 1 §9.2 and Table 38; Linux rxe_opcode.c offsets):
// RDETH, DETH, XRCETH, FETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
// FETH precedes RETH in a FLUSH; RETH precedes ImmDt in a WRITE_ONLY_IMM; no
// opcode carries both AETH and ImmDt or IETH.
const (
	HasRDETH        ExtHeaders = 1 << iota // Reliable Datagram ETH, 4 bytes (§9.3.1)
	HasDETH                                // Datagram ETH, 8 bytes (§9.3.2)
	HasXRCETH                              // XRC ETH, 4 bytes (Annex A14)
	HasFETH                                // Flush ETH, 4 bytes (IBTA 1.5, RDMA FLUSH)
	HasRETH                                // RDMA ETH, 16 bytes (§9.3.3)
	HasAtomicETH                           // Atomic ETH, 28 bytes (§9.3.4)
	HasAETH                                // ACK ETH, 4 bytes (§9.3.5)
	HasAtomicAckETH                        // Atomic ACK ETH, 8 bytes (§9.3.6)
	HasImmDt                               // Immediate Data, 4 bytes (§9.3.7)
	HasIETH                                // Invalidate ETH, 4 bytes (§9.3.8)
)
