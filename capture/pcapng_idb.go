package capture

import "bytes"

// Interface Description Block options (draft-ietf-opsawg-pcapng §4.2).
const (
	optEndOfOpt  = 0
	optIfName    = 2
	optIfDescr   = 3
	optIfFCSLen  = 13
	optIfTSResol = 9
	optIfTSOff   = 14
)

// decodeIDB decodes an Interface Description Block body (link type,
// reserved, snap length, options) and adds the interface to the section.
func (r *Reader) decodeIDB(body []byte, num int) error {
	o := r.order
	ifc := Interface{
		LinkType:       LinkType(o.Uint16(body)),
		SnapLen:        int(o.Uint32(body[4:])),
		FCSLen:         -1,
		TicksPerSecond: 1e6,
	}
	opts := body[8:]
	for len(opts) >= 4 {
		code, olen := o.Uint16(opts), int(o.Uint16(opts[2:]))
		if code == optEndOfOpt {
			break
		}
		padded := (olen + 3) &^ 3
		if padded > len(opts)-4 {
			return r.badRecord(num, "Interface Description Block option %d (length %d) overruns the block", code, olen)
		}
		val := opts[4 : 4+olen]
		opts = opts[4+padded:]
		switch {
		case code == optIfName:
			ifc.Name = string(bytes.TrimRight(val, "\x00"))
		case code == optIfDescr:
			ifc.Description = string(bytes.TrimRight(val, "\x00"))
		case code == optIfTSResol && olen == 1:
			tps, err := ticksPerSecond(val[0])
			if err != nil {
				return r.recordErr(num, ErrUnsupported, "%v", err)
			}
			ifc.TicksPerSecond = tps
		case code == optIfFCSLen && olen == 1:
			ifc.FCSLen = int(val[0])
		case code == optIfTSOff && olen == 8:
			ifc.TSOffset = int64(o.Uint64(val))
		}
	}
	r.addInterface(ifc)
	return nil
}
