package packet

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocedump/rocedump/decode/bth"
)

// RoCEv1 GRH (IBTA vol 1 §8.3, Annex A16 §A16.4.1): IPVer(4) TClass(8)
// FlowLabel(20), PayLen(16) NxtHdr(8) HopLmt(8), SGID(128), DGID(128).
const (
	grhIPVersion = 6
	grhNextBTH   = 0x1b // NxtHdr of an IBA transport header
)

// noFeedback is a gopacket.DecodeFeedback that ignores SetTruncated: the
// walk records truncation itself. It keeps gopacket out of this package.
type noFeedback struct{}

// SetTruncated does nothing.
func (noFeedback) SetTruncated() {}

// roceV1 decodes a RoCEv1 frame after its EtherType: the GRH, then the IB
// transport. The GRH PayLen counts the bytes from the BTH to the ICRC.
func (w *walker) roceV1(b []byte) {
	p := w.p
	p.Kind, p.RoCEVersion = KindRoCE, 1
	if len(b) < bth.GRHLen {
		w.short(ReasonBadGRH)
		return
	}
	if b[0]>>4 != grhIPVersion || b[6] != grhNextBTH {
		w.malformed(ReasonBadGRH)
		return
	}
	p.IPVersion = 6
	tc := b[0]<<4 | b[1]>>4
	p.DSCP, p.ECN = tc>>2, tc&0x03
	p.TTL, p.FlowLabel = b[7], flowLabel(b) // HopLmt and FlowLabel, where IPv6 has them
	payLen := int(binary.BigEndian.Uint16(b[4:]))
	p.IPTotalLen = bth.GRHLen + payLen
	p.Proto = grhNextBTH
	p.Src = netip.AddrFrom16([16]byte(b[8:24])).Unmap()
	p.Dst = netip.AddrFrom16([16]byte(b[24:40])).Unmap()
	b = w.trim(b, p.IPTotalLen)
	w.ip, w.ipWhole = b, !w.cut
	w.transport(b[bth.GRHLen:], payLen)
}

// transport decodes the IB transport headers (IBTA vol 1 §9.2, §9.3) of a
// RoCE frame from b, the captured bytes from the BTH on; declLen is the
// length from the BTH to the ICRC inclusive that the UDP length or GRH
// PayLen declares. It checks the ICRC when the datagram was captured whole
// and decodes a CM MAD sent to QP1. bth rejects a bad version or reserved
// opcode with sentinel errors (no allocation) after filling the BTH fields.
func (w *walker) transport(b []byte, declLen int) {
	p := w.p
	if w.ipWhole {
		if p.RoCEVersion == 1 {
			p.ICRC = bth.VerifyICRCv1(w.ip)
		} else {
			p.ICRC = bth.VerifyICRCv2(w.ip)
		}
	}
	if len(b) < bth.BTHLen {
		w.short(ReasonShortBTH) // checked here: bth's short-header error allocates
		return
	}
	p.HasBTH = true
	switch err := p.BTH.DecodeFromBytes(b, noFeedback{}); err {
	case nil:
	case bth.ErrBadVersion:
		w.malformed(ReasonBadVersion)
		return
	case bth.ErrReservedOpcode:
		w.malformed(ReasonReservedOpcode)
		return
	default:
		w.malformed(ReasonBadTransport)
		return
	}
	if !p.BTH.LengthOK(declLen) {
		w.malformed(ReasonBadLength)
		return
	}
	// The length is whole (LengthOK), so extended headers can be missing
	// (BTH.Truncated) only where the capture was cut.
	p.PayloadLen = p.BTH.PayloadLen(declLen)
	if p.BTH.Opcode == bth.OpcodeUDSendOnly && p.BTH.DestQP == bth.CMQPN && p.BTH.Ext&bth.HasDETH != 0 {
		w.cm(p.BTH.Payload)
	}
}

// cm decodes the MAD at the start of a QP1 datagram's payload as far as it
// was captured: its header (HasMAD) and, for a CM MAD (HasCM, see
// bth.CMMAD.IsCMMessage), its message.
func (w *walker) cm(b []byte) {
	if len(b) < bth.MADHeaderLen {
		return // bth would return an allocated *HeaderError
	}
	if err := w.p.CM.DecodeFromBytes(b, noFeedback{}); err == nil {
		w.p.HasMAD = true
		w.p.HasCM = w.p.CM.IsCMMessage()
	}
}
