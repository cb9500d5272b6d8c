package topology

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error from Parse, Load's parsing and AddRailSubnet
// is a *ParseError that unwraps to one of these, so callers and tests can use
// errors.Is.
var (
	ErrSyntax      = errors.New("not a topology file") // YAML does not parse, or a value has the wrong shape
	ErrEmpty       = errors.New("empty topology")      // no document, or no nodes and no subnets
	ErrUnknownKey  = errors.New("unknown key")         // a key the format does not have (strict)
	ErrMissing     = errors.New("missing value")       // a required key is absent or empty
	ErrBadIP       = errors.New("bad IP address")      // ip is not an address
	ErrBadCIDR     = errors.New("bad CIDR")            // cidr is not a prefix, or has host bits set
	ErrUnknownRole = errors.New("unknown role")        // role is not compute, storage, management or bmc
	ErrRail        = errors.New("bad rail")            // rail missing on compute, present elsewhere, not an integer, not 0 to MaxRail
	ErrDuplicate   = errors.New("duplicate")           // node name, IP address or key given twice
	ErrConflict    = errors.New("conflict")            // two subnets of one prefix, or two addresses of one interface, that disagree
	ErrBadSpec     = errors.New("bad rail subnet")     // a --rail-subnet spec that is not CIDR=RAIL
)

// ParseError is a mistake in a topology file or a --rail-subnet spec, with
// its position. Error reads "file:line: message", or for a --rail-subnet
// spec `rail subnet "SPEC": message`.
type ParseError struct {
	File string // file name as given to Parse; empty for a --rail-subnet spec
	Line int    // 1-based line; 0 for a --rail-subnet spec
	Spec string // the --rail-subnet spec, when the error is about one
	Msg  string
	Err  error // the sentinel
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("rail subnet %q: %s", e.Spec, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Unwrap returns the sentinel error.
func (e *ParseError) Unwrap() error { return e.Err }
