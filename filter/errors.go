package filter

import (
	"errors"
	"fmt"
)

// Sentinel errors wrapped by every *Error that Compile returns, so that
// callers can tell the kinds apart with errors.Is.
var (
	// ErrSyntax: the expression is not valid pcap-filter(7) syntax, or a
	// value has no qualifier to give it a meaning (libpcap says "syntax
	// error" for both).
	ErrSyntax = errors.New("syntax error")
	// ErrInvalid: the syntax is right but a value is not: a port above
	// 65535, a mask with host bits set, an unknown name, division by zero.
	ErrInvalid = errors.New("invalid value")
	// ErrLinkType: the primitive cannot apply to frames of this link type,
	// such as "ether host" or "vlan" on LINUX_SLL frames.
	ErrLinkType = errors.New("not valid for link type")
	// ErrUnsupported: valid pcap-filter(7) that this package does not
	// implement (mpls, pppoes, protochain, 802.11, ATM, ...).
	ErrUnsupported = errors.New("not supported")
)

// Error is a compile error. It names the token it is about.
type Error struct {
	Expr  string // the expression given to Compile
	Pos   int    // 1-based byte position of the token in Expr
	Token string // the offending token; "" at the end of the expression
	Msg   string // what is wrong, in libpcap's words where it has them
	Err   error  // one of ErrSyntax, ErrInvalid, ErrLinkType, ErrUnsupported
}

func (e *Error) Error() string {
	where := fmt.Sprintf("at %q", e.Token)
	if e.Token == "" {
		where = "at end of expression"
	}
	return fmt.Sprintf("filter: %s %s (position %d) in %q", e.Msg, where, e.Pos, e.Expr)
}

// Unwrap returns the sentinel error for the kind of failure.
func (e *Error) Unwrap() error { return e.Err }

// errAt builds an *Error about token t of expression src.
func errAt(src string, t token, kind error, format string, args ...any) *Error {
	msg := kind.Error()
	if format != "" {
		msg = fmt.Sprintf(format, args...)
	}
	return &Error{Expr: src, Pos: t.pos + 1, Token: t.text, Msg: msg, Err: kind}
}
