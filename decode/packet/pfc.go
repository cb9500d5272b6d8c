package packet

import "encoding/binary"

// MAC Control opcodes (IEEE 802.3 Annex 31A).
const (
	MACControlPause uint16 = 0x0001 // PAUSE (802.3 Annex 31B)
	MACControlPFC   uint16 = 0x0101 // priority-based flow control (IEEE 802.1Qbb §36.1.3)
)

// PFCFrame is a MAC Control frame (EtherType 0x8808) that pauses traffic.
type PFCFrame struct {
	Opcode uint16 // MACControlPause or MACControlPFC
	// ClassEnable has bit n set when Quanta[n] is valid (PFC only; the
	// high byte is reserved). A PAUSE frame leaves it 0.
	ClassEnable uint16
	// Quanta are the pause times in units of 512 bit times, per priority
	// for PFC; a PAUSE frame has its single pause time in Quanta[0].
	Quanta [8]uint16
	// Src is the source MAC address of the Ethernet header carrying the
	// frame: the port that asks its link partner to pause (zero on a link
	// type without Ethernet headers).
	Src [6]byte
}

// macControl decodes a MAC Control frame after its EtherType.
func (w *walker) macControl(b []byte) {
	if len(b) < 2 {
		w.short(ReasonBadMACControl)
		return
	}
	p := w.p
	var src [6]byte
	copy(src[:], w.ethSrc)
	switch op := binary.BigEndian.Uint16(b); op {
	case MACControlPause:
		if len(b) < 4 {
			w.short(ReasonBadMACControl)
			return
		}
		p.PFC.Opcode, p.PFC.Src = op, src
		p.PFC.Quanta[0] = binary.BigEndian.Uint16(b[2:])
		p.HasPFC = true
	case MACControlPFC:
		if len(b) < 4+2*len(p.PFC.Quanta) {
			w.short(ReasonBadMACControl)
			return
		}
		p.PFC.Opcode, p.PFC.Src = op, src
		p.PFC.ClassEnable = binary.BigEndian.Uint16(b[2:])
		for i := range p.PFC.Quanta {
			p.PFC.Quanta[i] = binary.BigEndian.Uint16(b[4+2*i:])
		}
		p.HasPFC = true
	}
}
