package flows

import (
	"net/netip"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// Opcodes the synthetic tests use.
const (
	opSendOnly  bth.Opcode = 0x04
	opWriteFrst bth.Opcode = 0x06
	opWriteMid  bth.Opcode = 0x07
	opWriteLast bth.Opcode = 0x08
	opWriteOnly bth.Opcode = 0x0a
	opReadReq   bth.Opcode = 0x0c
	opReadFirst bth.Opcode = 0x0d
	opReadMid   bth.Opcode = 0x0e
	opReadLast  bth.Opcode = 0x0f
	opReadOnly  bth.Opcode = 0x10
	opAck       bth.Opcode = 0x11
	opAtomicAck bth.Opcode = 0x12
	opUCSend    bth.Opcode = 0x24
	opUDSend    bth.Opcode = 0x64
)

// roce returns a well-formed RoCEv2 IPv4 packet as packet.Decoder would
// fill it: op to dest QP qp at psn, carrying payload bytes of RDMA data.
func roce(src, dst string, op bth.Opcode, qp, psn uint32, payload int) *packet.Packet {
	p := &packet.Packet{
		Kind: packet.KindRoCE, HasBTH: true, RoCEVersion: 2, IPVersion: 4,
		Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
		DSCP: 26, ECN: 2, Proto: 17, SrcPort: 0xc000, DstPort: 4791,
		ICRC: bth.ICRCOK, PayloadLen: payload,
	}
	p.BTH.Opcode, p.BTH.PKey, p.BTH.DestQP, p.BTH.PSN = op, 0xffff, qp, psn
	p.BTH.Ext = op.Headers()
	if op.IsCNP() {
		// 16 reserved bytes on the wire, no RDMA payload (bth.PayloadLen).
		p.BTH.BECN = true
		payload, p.PayloadLen = bth.CNPPayloadLen, 0
	}
	p.UDPLen = 8 + op.HeaderLen() + payload + (4-payload%4)%4 + 4
	p.IPTotalLen = 20 + p.UDPLen
	p.OrigLen, p.CapLen = 14+p.IPTotalLen, 14+p.IPTotalLen
	if op.Headers()&bth.HasAETH != 0 {
		p.BTH.AETH.Syndrome = 0x1f // ACK, credits invalid
	}
	return p
}

// readReq is an RDMA READ request for n bytes at va.
func readReq(src, dst string, qp, psn uint32, va uint64, n uint32) *packet.Packet {
	p := roce(src, dst, opReadReq, qp, psn, 0)
	p.BTH.RETH = bth.RETH{VA: va, RKey: 0x1234, DMALen: n}
	return p
}

// nak is a NAK with code c, or with rnr an RNR NAK with timer c.
func nak(src, dst string, qp, psn uint32, c uint8, rnr bool) *packet.Packet {
	p := roce(src, dst, opAck, qp, psn, 0)
	p.BTH.AETH.Syndrome = 0x60 | c
	if rnr {
		p.BTH.AETH.Syndrome = 0x20 | c
	}
	return p
}

// clock feeds packets to a table at increasing capture times, and when
// tape is set records them there too.
type clock struct {
	tab   *Table
	now   time.Time
	frame int
	tape  *[]taped
}

// taped is a packet a clock fed, with its frame.
type taped struct {
	p  packet.Packet
	at FrameRef
}

func newClock(cfg Config) *clock {
	return &clock{tab: NewTable(cfg), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// add feeds p, dt after the previous packet; a nil p only lets time pass.
func (c *clock) add(dt time.Duration, p *packet.Packet) {
	c.now = c.now.Add(dt)
	if p == nil {
		return
	}
	c.frame++
	at := FrameRef{Frame: c.frame, Time: c.now}
	if c.tape != nil {
		*c.tape = append(*c.tape, taped{*p, at})
	}
	c.tab.Add(p, at)
}

// flows finishes the table and returns the flows of key k, in epoch order.
func (c *clock) flows(k Key) []*Flow {
	c.tab.Finish()
	var out []*Flow
	for _, f := range c.tab.Flows() {
		if f.Key == k {
			out = append(out, f)
		}
	}
	return out
}

func key(src, dst string, qp uint32) Key {
	return Key{Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst), DestQP: qp}
}
