package reports

import (
	"net/netip"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// IP protocol numbers the conversations name.
const (
	protoTCP = 6
	protoUDP = 17
)

// tcpSYN and tcpACK are TCP flag bits (RFC 9293 §3.1).
const (
	tcpSYN = 0x02
	tcpACK = 0x10
)

// convKey identifies a conversation whichever way its packets go: the two
// addresses in order, the protocol and the service port.
type convKey struct {
	lo, hi netip.Addr
	proto  uint8
	port   uint16
}

type convTable struct {
	byKey map[convKey]*Conversation
	list  []*Conversation // in order of first packet
	// frag is, per direction and protocol, the conversation of the last
	// first fragment of a TCP or UDP datagram: the later fragments carry
	// no ports and follow it, as a sender emits a datagram's fragments
	// back to back (the IP ID that would tie them is not decoded). RoCE
	// is sent with DF set: its first fragments are not looked at, so
	// that shard 0 of a sharded pass, which keeps the conversations but
	// sees no RoCE but its own, decides as a single pass does.
	frag map[fragKey]*Conversation
}

// fragKey is one direction of one protocol between two addresses.
type fragKey struct {
	src, dst netip.Addr
	proto    uint8
}

func (t *convTable) init() { t.byKey = map[convKey]*Conversation{} }

// laterFragment says p is a TCP or UDP fragment without its ports: one
// after the first, which carries the transport header.
func laterFragment(p *packet.Packet) bool {
	return p.Fragment && (p.Proto == protoTCP || p.Proto == protoUDP) && p.SrcPort == 0 && p.DstPort == 0
}

// knownService says whether port is a service the reports name, which
// wins over the lower-port rule: NFS clients, for one, bind reserved
// ports below 1024 to reach 2049.
func knownService(port uint16) bool {
	switch port {
	case portSSH, portNFS, portISCSI, portNVMeOF, portNVMeDisc, portNFSRDMA, portSMB, portSMBDirect:
		return true
	}
	return false
}

// servicePort picks the service port of a TCP or UDP packet: a known
// service port, else the lower (well-known) one; and says whether the
// sender is the client (on the other port; the sender when both match).
func servicePort(sport, dport uint16) (port uint16, srcIsClient bool) {
	switch ks, kd := knownService(sport), knownService(dport); {
	case kd && !ks:
		return dport, true
	case ks && !kd:
		return sport, false
	}
	if dport <= sport {
		return dport, true
	}
	return sport, false
}

// add accounts one non-RoCE IP packet. The client is the side that sent a
// SYN without ACK, else the side not on the service port, else the first
// sender.
func (t *convTable) add(p *packet.Packet, at *flows.FrameRef) {
	if laterFragment(p) {
		// The conversation of the datagram's first fragment, if it was
		// seen; else its service is unknown and it is in none.
		if c := t.frag[fragKey{p.Src, p.Dst, p.Proto}]; c != nil {
			c.Packets++
			c.Bytes += uint64(p.IPTotalLen)
			c.Last = *at
		}
		return
	}
	var port uint16
	srcIsClient := true
	if p.Proto == protoTCP || p.Proto == protoUDP {
		port, srcIsClient = servicePort(p.SrcPort, p.DstPort)
	}
	k := convKey{lo: p.Src, hi: p.Dst, proto: p.Proto, port: port}
	if k.hi.Less(k.lo) {
		k.lo, k.hi = k.hi, k.lo
	}
	c := t.byKey[k]
	if c == nil {
		c = &Conversation{Src: p.Src, Dst: p.Dst, Proto: p.Proto, ServicePort: port, First: *at}
		if !srcIsClient {
			c.Src, c.Dst = p.Dst, p.Src
		}
		t.byKey[k] = c
		t.list = append(t.list, c)
	}
	if p.Proto == protoTCP && p.TCPFlags&(tcpSYN|tcpACK) == tcpSYN {
		c.Src, c.Dst = p.Src, p.Dst // the SYN says who the client is
	}
	c.Packets++
	c.Bytes += uint64(p.IPTotalLen)
	c.Last = *at
	if p.Fragment && (p.Proto == protoTCP || p.Proto == protoUDP) {
		if t.frag == nil {
			t.frag = map[fragKey]*Conversation{}
		}
		t.frag[fragKey{p.Src, p.Dst, p.Proto}] = c
	}
}
