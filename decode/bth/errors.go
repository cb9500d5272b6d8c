package bth

import (
	"errors"
	"strconv"
)

// Sentinel errors. Decoders return them wrapped, so callers test with
// errors.Is and print messages such as
// "bth: short RETH (have 9 bytes, need 16)".
var (
	// ErrShortHeader: fewer bytes than a header needs. Returned as a
	// *HeaderError, which says which header and by how much.
	ErrShortHeader = errors.New("bth: short header")

	// ErrBadVersion: a BTH transport version (TVer) other than 0
	// (IBTA vol 1 §9.2.1: "transport header version").
	ErrBadVersion = errors.New("bth: unsupported transport version")

	// ErrReservedOpcode: an opcode that IBTA vol 1 Table 38 and RoCEv2
	// (Annex A17 §A17.9.2) leave reserved, such as RDMA READ on UC.
	ErrReservedOpcode = errors.New("bth: reserved opcode")

	// ErrBadLength: a UDP payload too short for the headers, pad and ICRC
	// its opcode needs, or a CNP of the wrong size: usually something other
	// than RoCE on UDP port 4791.
	ErrBadLength = errors.New("bth: bad length")

	// ErrNotRoCEv2: ICRCv2 was given something other than an IPv4 or IPv6
	// datagram carrying UDP, or an IPv6 one with extension headers, whose
	// ICRC the RoCEv2 annex does not define (see ICRCv2).
	ErrNotRoCEv2 = errors.New("bth: not a RoCEv2 datagram")
)

// HeaderError says that a header was cut short: Header is its name ("BTH",
// "RETH", "GRH", "MAD", ...), Have the bytes there were and Need the bytes
// it takes. It unwraps to ErrShortHeader.
type HeaderError struct {
	Header string
	Have   int
	Need   int
}

// Error reads like "bth: short BTH (have 9 bytes, need 12)".
func (e *HeaderError) Error() string {
	return "bth: short " + e.Header + " (have " + strconv.Itoa(e.Have) +
		" bytes, need " + strconv.Itoa(e.Need) + ")"
}

// Unwrap returns ErrShortHeader.
func (e *HeaderError) Unwrap() error { return ErrShortHeader }

// shortError builds the *HeaderError for header h.
func shortError(h string, have, need int) error {
	return &HeaderError{Header: h, Have: have, Need: need}
}
