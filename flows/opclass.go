package flows

import "github.com/rocedump/rocedump/decode/bth"

// opBits is what the per-packet path asks about an opcode, answered by one
// load from opClass instead of one bth table lookup per question.
type opBits uint16

const (
	opCNP          opBits = 1 << iota // bth.Opcode.IsCNP
	opRequest                         // IsRequest
	opResponse                        // IsResponse
	opReadRequest                     // IsReadRequest
	opReadResponse                    // IsReadResponse
	opEndsRequest                     // EndsRequest
	opOpens                           // IsFirst or IsOnly: a READ response that may open a new run
	opShowsMTU                        // IsFirst or IsMiddle: the payload is one path MTU (learnMTU)
)

// opClass holds the opBits of every opcode, from package bth's predicates.
var opClass = func() (c [256]opBits) {
	for i := range c {
		op := bth.Opcode(i)
		for _, q := range []struct {
			is  bool
			bit opBits
		}{
			{op.IsCNP(), opCNP},
			{op.IsRequest(), opRequest},
			{op.IsResponse(), opResponse},
			{op.IsReadRequest(), opReadRequest},
			{op.IsReadResponse(), opReadResponse},
			{op.EndsRequest(), opEndsRequest},
			{op.IsFirst() || op.IsOnly(), opOpens},
			{op.IsFirst() || op.IsMiddle(), opShowsMTU},
		} {
			if q.is {
				c[i] |= q.bit
			}
		}
	}
	return c
}()
