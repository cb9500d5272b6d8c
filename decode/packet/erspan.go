package packet

import "encoding/binary"

// ERSPAN header sizes and versions (draft-foschiano-erspan-03 §4.1-§4.3).
const (
	erspan2HeaderLen    = 8
	erspan3HeaderLen    = 12
	erspan3SubheaderLen = 8 // platform-specific subheader, present when O is set
	erspan2Version      = 1
	erspan3Version      = 2
	erspanTruncated     = 0x04 // T bit in byte 2: the mirrored frame was cut
	erspan3FrameEther   = 0    // FT: Ethernet frame
	erspan3FrameIP      = 2    // FT: IP packet, no Ethernet header
)

// erspan2 decodes an ERSPAN type II header: Ver(4) VLAN(12), COS(3) En(2)
// T(1) Session ID(10), Reserved(12) Index(20); then the mirrored Ethernet
// frame.
func (w *walker) erspan2(b []byte) {
	if len(b) < erspan2HeaderLen {
		w.short(ReasonBadERSPAN)
		return
	}
	if b[0]>>4 != erspan2Version {
		w.malformed(ReasonBadERSPAN)
		return
	}
	w.p.pushEncap(EncapERSPAN2, uint32(binary.BigEndian.Uint16(b[2:])&0x03ff))
	w.erspanTruncated(b[2])
	w.innerFrame()
	w.ethernet(b[erspan2HeaderLen:])
}

// erspan3 decodes an ERSPAN type III header: Ver(4) VLAN(12), COS(3) BSO(2)
// T(1) Session ID(10), Timestamp(32), SGT(16) P(1) FT(5) HW ID(6) D(1)
// Gra(2) O(1), then the optional 8-byte platform-specific subheader, then
// the mirrored frame: of frame type 0 an Ethernet frame, of frame type 2
// an IP packet (IPv4 or IPv6, as its version nibble says), §4.3. Other
// (reserved) frame types are not decoded further.
func (w *walker) erspan3(b []byte) {
	if len(b) < erspan3HeaderLen {
		w.short(ReasonBadERSPAN)
		return
	}
	if b[0]>>4 != erspan3Version {
		w.malformed(ReasonBadERSPAN)
		return
	}
	w.p.pushEncap(EncapERSPAN3, uint32(binary.BigEndian.Uint16(b[2:])&0x03ff))
	w.erspanTruncated(b[2])
	hl := erspan3HeaderLen
	if b[11]&0x01 != 0 {
		hl += erspan3SubheaderLen
	}
	ft := b[10] >> 2 & 0x1f
	if ft != erspan3FrameEther && ft != erspan3FrameIP {
		w.p.Note = ReasonERSPANFrameType
		return
	}
	if len(b) < hl {
		w.short(ReasonBadERSPAN)
		return
	}
	w.innerFrame()
	if ft == erspan3FrameIP {
		w.rawIP(b[hl:])
		return
	}
	w.ethernet(b[hl:])
}

// erspanTruncated records the T bit of an ERSPAN II or III header: the
// switch cut the mirrored frame, so a short inner header is truncation.
func (w *walker) erspanTruncated(b2 byte) {
	if b2&erspanTruncated != 0 {
		w.cut = true
		w.p.Truncated = true
	}
}
