package reports

import (
	"net/netip"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/decode/rpcbind"
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
	// synPort is the service port of each TCP connection whose SYN or
	// SYN-ACK named another one than servicePort picks (a listener on a
	// high port, reached from a lower ephemeral one: NCCL's bootstrap):
	// the connection's later packets are on that service too.
	synPort map[connKey]uint16
	// recent is, per conversation, the signatures of its latest packets
	// (copyRing): a mirror's second copy of one is counted in Copies, a
	// parallel file's in FileCopies, not in Packets and Bytes, as the RoCE
	// flows leave theirs out.
	recent map[*Conversation]*copyRing
	copies uint64 // over every conversation
	// par says which input files were taken in parallel (nil: none);
	// fileCopies counts the packets one held again, over every
	// conversation.
	par        flows.ParallelFiles
	fileCopies uint64
	// rpc is what rpcbind's exchanges taught, read from the payloads
	// payloads gives (nil: none are read).
	rpc      rpcbindTable
	payloads PayloadSource
}

// copySig is what a mirror's copy of a TCP or UDP packet repeats and the
// conversation's next packet, in the same direction, almost never does:
// the IP Identification (IPv4's, or an IPv6 fragment's) and the TCP or
// UDP checksum (a switch changes neither, only TTL, MACs, and perhaps
// DSCP or ECN), the IP length and the TCP flags. Informative only when
// the ID or the checksum is not 0: an IPv6 packet that is no fragment
// has no ID, and a later fragment no checksum.
type copySig struct {
	toHi       bool // the packet goes from the conversation's lower address to the higher
	ipID       uint32
	sum        uint16
	length     int
	flags      uint8
	fragOff    uint16 // the fragment offset: a datagram's later fragments share its ID, the middle ones their length
	nanos      int64
	file       int  // the input file that held it (flows.FrameRef.File)
	recognised bool // a copy was already matched to it
}

// copyRingLen is how many of a conversation's latest packets a copy is
// looked for among: on a busy conversation other packets come between a
// packet and its copy, a switch's latency plus queueing after it. A copy
// further behind (a second mirror session, or another switch's ERSPAN
// path, several µs late on a conversation at line rate) counts as a
// packet (README, known limit).
const copyRingLen = 8

// copyRing is the latest copyRingLen signatures of a conversation.
type copyRing struct {
	sigs [copyRingLen]copySig
	next int
}

// Kinds of copy copyOf tells.
const (
	notCopy    = iota
	mirrorCopy // a mirror's copy, in the same file
	fileCopy   // the same packet in another file taken in parallel
)

// copyOf says whether s repeats a packet of the ring within
// flows.MirrorWindow before it in the same file (a mirror's copy), or
// within flows.MaxFileOffset either side of it in another file that par
// says overlaps that one in time (the packet captured at its other end,
// by a clock that differs); if not, it joins the ring. A packet's copy
// is matched once: a third identical packet is not a second copy but the
// next packet.
func (r *copyRing) copyOf(s copySig, par flows.ParallelFiles) int {
	for i := range r.sigs {
		o := &r.sigs[i]
		if o.nanos == 0 || o.recognised || o.toHi != s.toHi || o.ipID != s.ipID || o.sum != s.sum || o.length != s.length || o.flags != s.flags || o.fragOff != s.fragOff {
			continue
		}
		d := s.nanos - o.nanos
		if o.file == s.file && d >= 0 && d <= int64(flows.MirrorWindow) {
			o.recognised = true
			return mirrorCopy
		}
		if o.file != s.file && par != nil && d >= -int64(flows.MaxFileOffset) && d <= int64(flows.MaxFileOffset) && par.Parallel(o.file, s.file) {
			o.recognised = true
			return fileCopy
		}
	}
	r.sigs[r.next] = s
	r.next = (r.next + 1) % copyRingLen
	return notCopy
}

// copyKind says whether p, a packet of conversation c whose lower address
// is lo, is a mirror's second copy of one c carried just before, or a
// parallel file's capture of one (copyOf).
func (t *convTable) copyKind(c *Conversation, lo netip.Addr, p *packet.Packet, at *flows.FrameRef) int {
	if p.IPID == 0 && p.L4Checksum == 0 {
		return notCopy // nothing tells a copy from the next packet
	}
	r := t.recent[c]
	if r == nil {
		if t.recent == nil {
			t.recent = map[*Conversation]*copyRing{}
		}
		r = new(copyRing)
		t.recent[c] = r
	}
	ns := at.Time.UnixNano()
	if ns == 0 {
		ns = 1 // a time 0 (a frame with none) is still a time, not an empty slot
	}
	s := copySig{toHi: p.Src == lo, ipID: p.IPID, sum: p.L4Checksum, length: p.IPTotalLen, flags: p.TCPFlags, fragOff: p.FragOffset, nanos: ns, file: at.File}
	return r.copyOf(s, t.par)
}

// lowerOf is the lower of two addresses (convKey.lo).
func lowerOf(a, b netip.Addr) netip.Addr {
	if b.Less(a) {
		return b
	}
	return a
}

// copied says whether p, a packet of conversation c whose lower address
// is lo, is a copy (copyKind), and counts it if so.
func (t *convTable) copied(c *Conversation, lo netip.Addr, p *packet.Packet, at *flows.FrameRef) bool {
	switch t.copyKind(c, lo, p, at) {
	case mirrorCopy:
		c.Copies++
		t.copies++
		return true
	case fileCopy:
		c.FileCopies++
		t.fileCopies++
		return true
	}
	return false
}

// maxSYNPorts bounds synPort (a SYN scan names a service per probe): the
// connections past it keep the lower-port rule.
const maxSYNPorts = 1 << 16

// connKey is one TCP connection: its two ends, the lower first.
type connKey struct{ lo, hi netip.AddrPort }

func connOf(p *packet.Packet) connKey {
	a, b := netip.AddrPortFrom(p.Src, p.SrcPort), netip.AddrPortFrom(p.Dst, p.DstPort)
	if b.Compare(a) < 0 {
		a, b = b, a
	}
	return connKey{a, b}
}

// tcpService is servicePort for a TCP packet, but that a SYN names the
// service (its destination port; a SYN-ACK's source port), and the rest
// of that connection follows it.
func (t *convTable) tcpService(p *packet.Packet, port uint16, srcIsClient bool) (uint16, bool) {
	var named uint16
	switch p.TCPFlags & (tcpSYN | tcpACK) {
	case tcpSYN:
		named = p.DstPort
	case tcpSYN | tcpACK:
		named = p.SrcPort
	}
	if named != 0 && named != port && len(t.synPort) < maxSYNPorts {
		if t.synPort == nil {
			t.synPort = map[connKey]uint16{}
		}
		t.synPort[connOf(p)] = named
	}
	if len(t.synPort) == 0 {
		return port, srcIsClient
	}
	if s, ok := t.synPort[connOf(p)]; ok {
		return s, p.DstPort == s
	}
	return port, srcIsClient
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
	case portSSH, portNFS, portISCSI, portNVMeOF, portNVMeDisc, portNFSRDMA, portSMB, portSMBDirect, portRPCBind, portMountd, portNLM:
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

// add accounts one non-RoCE IP packet. Its service port is a known
// service's (knownService), else one rpcbind was seen to hand out
// (rpcbindTable), else the lower; a TCP SYN names it over these. The
// client is the side that sent a SYN without ACK, else the side not on
// the service port, else the first sender.
func (t *convTable) add(p *packet.Packet, at *flows.FrameRef) {
	if laterFragment(p) {
		// The conversation of the datagram's first fragment, if it was
		// seen; else its service is unknown and it is in none.
		if c := t.frag[fragKey{p.Src, p.Dst, p.Proto}]; c != nil && !t.copied(c, lowerOf(c.Src, c.Dst), p, at) {
			c.Packets++
			c.Bytes += uint64(p.IPTotalLen)
			c.Last = *at
		}
		return
	}
	var port uint16
	var prog uint32 // the RPC program rpcbind said listens on port
	srcIsClient := true
	if p.Proto == protoTCP || p.Proto == protoUDP {
		if t.payloads != nil && (p.SrcPort == rpcbind.Port || p.DstPort == rpcbind.Port) {
			t.rpc.observe(p, t.payloads.TransportPayload())
		}
		port, srcIsClient = servicePort(p.SrcPort, p.DstPort)
		if t.rpc.learnt != nil && !knownService(p.SrcPort) && !knownService(p.DstPort) {
			if s, c, pr, ok := t.rpc.service(p, port); ok {
				port, srcIsClient, prog = s, c, pr
			}
		}
		if p.Proto == protoTCP {
			rpcPort := port
			if port, srcIsClient = t.tcpService(p, port, srcIsClient); port != rpcPort {
				prog = 0 // a SYN named another
			}
		}
	}
	k := convKey{lo: p.Src, hi: p.Dst, proto: p.Proto, port: port}
	if k.hi.Less(k.lo) {
		k.lo, k.hi = k.hi, k.lo
	}
	c := t.byKey[k]
	if c == nil {
		c = &Conversation{Src: p.Src, Dst: p.Dst, Proto: p.Proto, ServicePort: port, RPCProgram: prog, First: *at}
		if !srcIsClient {
			c.Src, c.Dst = p.Dst, p.Src
		}
		t.byKey[k] = c
		t.list = append(t.list, c)
	}
	if p.Proto == protoTCP && p.TCPFlags&(tcpSYN|tcpACK) == tcpSYN {
		c.Src, c.Dst = p.Src, p.Dst // the SYN says who the client is
	}
	if prog != 0 {
		c.RPCProgram = prog // learnt after its first packet
	}
	if t.copied(c, k.lo, p, at) {
		return
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
