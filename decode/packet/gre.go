package packet

import "encoding/binary"

// GRE flag bits in the first 16 bits of the header (RFC 2784 §2.1, RFC 2890
// §2; R is RFC 1701's routing-present bit).
const (
	greChecksum = 0x8000 // C: checksum and reserved1 present
	greRouting  = 0x4000 // R: RFC 1701 routing, unsupported
	greKey      = 0x2000 // K: key present (RFC 2890 §2.1)
	greSequence = 0x1000 // S: sequence number present (RFC 2890 §2.2)
	greVersion  = 0x0007
)

const greMinHeaderLen = 4

// gre decodes a GRE header and what it carries: Ethernet (0x6558), ERSPAN
// (0x88BE, 0x22EB) or any other protocol type as an EtherType.
func (w *walker) gre(b []byte) {
	p := w.p
	if len(b) < greMinHeaderLen {
		w.short(ReasonBadGRE)
		return
	}
	flags := binary.BigEndian.Uint16(b)
	proto := binary.BigEndian.Uint16(b[2:])
	if flags&greVersion != 0 {
		p.Note = ReasonGREVersion
		return
	}
	if flags&greRouting != 0 {
		w.malformed(ReasonBadGRE)
		return
	}
	hl := greMinHeaderLen
	if flags&greChecksum != 0 {
		hl += 4
	}
	keyAt := hl
	if flags&greKey != 0 {
		hl += 4
	}
	if flags&greSequence != 0 {
		hl += 4
	}
	if len(b) < hl {
		w.short(ReasonBadGRE)
		return
	}
	var key uint32
	if flags&greKey != 0 {
		key = binary.BigEndian.Uint32(b[keyAt:])
	}
	p.pushEncap(EncapGRE, key)
	b = b[hl:]
	switch proto {
	case etherTypeTEB:
		w.innerFrame()
		w.ethernet(b)
	case etherTypeERSPAN12:
		if flags&greSequence != 0 {
			w.erspan2(b)
		} else {
			// Type I has no ERSPAN header: the mirrored frame follows.
			p.pushEncap(EncapERSPAN1, 0)
			w.innerFrame()
			w.ethernet(b)
		}
	case etherTypeERSPAN3:
		w.erspan3(b)
	default:
		w.innerFrame()
		w.etherType(proto, b)
	}
}
