package gen

import (
	"encoding/binary"
	"fmt"
)

// walked is what the test walker found in a frame. The walker is the tests'
// own, minimal and independent of decode/packet: it checks the generator's
// lengths and checksums and finds the RoCE packet inside every wrapper.
type walked struct {
	roce     bool   // a whole BTH was found
	v1       bool   // RoCEv1 (GRH)
	datagram []byte // the IP datagram (v2) or GRH packet (v1), as captured
	whole    bool   // the datagram was captured whole
	opcode   uint8
	destQP   uint32
	psn      uint32
	udpLen   int // UDP length field (RoCEv2)
	udpRoom  int // bytes the IP header says follow the UDP header start
	ipv4Sum  bool
}

func (w *walked) String() string {
	return fmt.Sprintf("roce=%v v1=%v op=%#x qp=%#x psn=%d", w.roce, w.v1, w.opcode, w.destQP, w.psn)
}

// walk follows a frame of the given link type to its RoCE packet.
func walk(link string, b []byte, origLen int) (*walked, error) {
	w := &walked{}
	switch link {
	case "ethernet":
		return w, w.ether(b, origLen)
	case "sll":
		if len(b) < 16 {
			return w, fmt.Errorf("short SLL")
		}
		return w, w.etherType(binary.BigEndian.Uint16(b[14:]), b[16:], origLen-16)
	case "sll2":
		if len(b) < 20 {
			return w, fmt.Errorf("short SLL2")
		}
		return w, w.etherType(binary.BigEndian.Uint16(b[0:]), b[20:], origLen-20)
	case "raw":
		if len(b) < 1 {
			return w, fmt.Errorf("empty")
		}
		if b[0]>>4 == 4 {
			return w, w.etherType(etherIPv4, b, origLen)
		}
		return w, w.etherType(etherIPv6, b, origLen)
	}
	return w, fmt.Errorf("link %s", link)
}

func (w *walked) ether(b []byte, orig int) error {
	if len(b) < 14 {
		return nil // cut by the snap length
	}
	o := 12
	for {
		if len(b) < o+2 {
			return nil
		}
		et := binary.BigEndian.Uint16(b[o:])
		if et == etherVLAN || et == etherQinQ {
			o += 4
			continue
		}
		return w.etherType(et, b[o+2:], orig-o-2)
	}
}

func (w *walked) etherType(et uint16, b []byte, orig int) error {
	switch et {
	case etherIPv4, etherIPv6:
		return w.ip(b, orig)
	case etherRoCEv1:
		w.v1 = true
		w.datagram = b
		w.whole = len(b) == orig
		if len(b) < 40 {
			return nil
		}
		if n := int(binary.BigEndian.Uint16(b[4:])); n+40 != orig {
			return fmt.Errorf("GRH payload length %d, packet %d", n, orig-40)
		}
		return w.bth(b[40:])
	case etherMACCtl:
		return nil
	}
	return fmt.Errorf("unexpected EtherType %#04x", et)
}

func (w *walked) ip(b []byte, orig int) error {
	if len(b) < 1 {
		return nil
	}
	var hl, total int
	var proto uint8
	switch b[0] >> 4 {
	case 4:
		if len(b) < 20 {
			return nil
		}
		hl = int(b[0]&0xf) * 4
		total = int(binary.BigEndian.Uint16(b[2:]))
		proto = b[9]
		w.ipv4Sum = csumFold(csumAdd(0, b[:hl])) == 0
		if !w.ipv4Sum {
			return fmt.Errorf("bad IPv4 header checksum")
		}
	case 6:
		if len(b) < 40 {
			return nil
		}
		hl = 40
		total = 40 + int(binary.BigEndian.Uint16(b[4:]))
		proto = b[6]
	default:
		return fmt.Errorf("IP version %d", b[0]>>4)
	}
	if total != orig {
		return fmt.Errorf("IP total length %d, frame leaves %d", total, orig)
	}
	p := b[hl:]
	switch proto {
	case protoGRE:
		if len(p) < 4 {
			return nil
		}
		flags := binary.BigEndian.Uint16(p)
		gp := binary.BigEndian.Uint16(p[2:])
		o := 4
		if flags&0x1000 != 0 {
			o += 4
		}
		switch gp {
		case etherERSPAN:
			if flags&0x1000 != 0 {
				o += 8 // type II
			}
		case etherERSPN3:
			if len(p) < o+12 {
				return nil
			}
			if p[o+11]&1 != 0 {
				o += 8
			}
			o += 12
		case etherTEB:
		default:
			return fmt.Errorf("GRE protocol %#04x", gp)
		}
		if len(p) < o {
			return nil
		}
		return w.ether(p[o:], orig-hl-o)
	case protoUDP:
		if len(p) < 8 {
			return nil
		}
		w.udpLen = int(binary.BigEndian.Uint16(p[4:]))
		w.udpRoom = total - hl
		dport := binary.BigEndian.Uint16(p[2:])
		switch dport {
		case portVXLAN:
			if len(p) < 16 {
				return nil
			}
			return w.ether(p[16:], orig-hl-16)
		case portRoCEv2:
			w.datagram = b
			w.whole = len(b) == orig
			return w.bth(p[8:])
		}
		return fmt.Errorf("UDP port %d", dport)
	case protoTCP:
		return nil
	}
	return fmt.Errorf("IP protocol %d", proto)
}

func (w *walked) bth(b []byte) error {
	if len(b) < 12 {
		return nil
	}
	w.roce = true
	w.opcode = b[0]
	w.destQP = binary.BigEndian.Uint32(b[4:]) & psnMask
	w.psn = binary.BigEndian.Uint32(b[8:]) & psnMask
	return nil
}
