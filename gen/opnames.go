package gen

import "fmt"

// Operation names (IBTA vol 1 Table 38) as used in truth files.
var opNames = [32]string{
	0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST", 0x03: "SEND_LAST_IMM",
	0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM", 0x06: "RDMA_WRITE_FIRST", 0x07: "RDMA_WRITE_MIDDLE",
	0x08: "RDMA_WRITE_LAST", 0x09: "RDMA_WRITE_LAST_IMM", 0x0a: "RDMA_WRITE_ONLY", 0x0b: "RDMA_WRITE_ONLY_IMM",
	0x0c: "RDMA_READ_REQUEST", 0x0d: "RDMA_READ_RESPONSE_FIRST", 0x0e: "RDMA_READ_RESPONSE_MIDDLE",
	0x0f: "RDMA_READ_RESPONSE_LAST", 0x10: "RDMA_READ_RESPONSE_ONLY", 0x11: "ACKNOWLEDGE",
	0x12: "ATOMIC_ACKNOWLEDGE", 0x13: "COMPARE_SWAP", 0x14: "FETCH_ADD", 0x15: "RESYNC",
	0x16: "SEND_LAST_INVALIDATE", 0x17: "SEND_ONLY_INVALIDATE", 0x18: "FLUSH", 0x19: "ATOMIC_WRITE",
}

// OpcodeName is the name a truth file gives an opcode: the transport, an
// underscore and the IBTA operation name, e.g. RC_RDMA_WRITE_FIRST,
// UD_SEND_ONLY_IMM, XRC_ACKNOWLEDGE. CNPs are CNP (0x81) and CNP_0x80;
// anything else is OPCODE_0xNN.
func OpcodeName(op uint8) string { return opcodeNames[op] }

// opcodeNames is the read-only table OpcodeName answers from, so that
// counting opcodes allocates nothing.
var opcodeNames = func() (t [256]string) {
	for i := range t {
		t[i] = opcodeName(uint8(i))
	}
	return t
}()

func opcodeName(op uint8) string {
	switch op {
	case 0x81:
		return "CNP"
	case 0x80:
		return "CNP_0x80"
	}
	var tr string
	switch op >> 5 {
	case 0:
		tr = "RC"
	case 1:
		tr = "UC"
	case 2:
		tr = "RD"
	case 3:
		tr = "UD"
	case 5:
		tr = "XRC"
	}
	if tr != "" && opNames[op&0x1f] != "" {
		return tr + "_" + opNames[op&0x1f]
	}
	return fmt.Sprintf("OPCODE_%#02x", op)
}

// hasAETH reports whether an opcode carries an AETH (IBTA vol 1 Table 38):
// ACKs, READ response first/last/only and atomic ACKs, for RC, RD and XRC.
func hasAETH(op uint8) bool {
	switch op >> 5 {
	case 0, 2, 5:
	default:
		return false
	}
	switch op & 0x1f {
	case 0x0d, 0x0f, 0x10, 0x11, 0x12:
		return true
	}
	return false
}
