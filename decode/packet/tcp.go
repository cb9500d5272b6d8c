package packet

import "encoding/binary"

const (
	tcpMinHeaderLen   = 20
	tcpFlagsOffset    = 13
	tcpChecksumOffset = 16
)

// tcp decodes the ports and flags of a TCP header (RFC 9293 §3.1), for the
// storage and non-RDMA reports; its payload is not decoded, but kept for
// Decoder.TransportPayload.
func (w *walker) tcp(b []byte) {
	p := w.p
	if len(b) < 4 {
		w.short(ReasonBadTCP)
		return
	}
	p.SrcPort = binary.BigEndian.Uint16(b)
	p.DstPort = binary.BigEndian.Uint16(b[2:])
	if len(b) < tcpMinHeaderLen {
		if len(b) > tcpFlagsOffset {
			p.TCPFlags = b[tcpFlagsOffset]
		}
		if len(b) >= tcpChecksumOffset+2 {
			p.L4Checksum = binary.BigEndian.Uint16(b[tcpChecksumOffset:])
		}
		w.short(ReasonBadTCP)
		return
	}
	p.TCPFlags = b[tcpFlagsOffset]
	p.L4Checksum = binary.BigEndian.Uint16(b[tcpChecksumOffset:])
	switch off := int(b[12]>>4) * 4; {
	case off < tcpMinHeaderLen:
		w.malformed(ReasonBadTCP)
	case off <= len(b):
		w.payload = b[off:]
	}
}
