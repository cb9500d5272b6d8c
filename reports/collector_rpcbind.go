package reports

import (
	"net/netip"
	"strconv"

	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/decode/rpcbind"
)

// ONC RPC program numbers (RFC 5531 Appendix C; /etc/rpc) of the services
// rpcbind hands ports to that the reports name.
const (
	rpcPortmap = rpcbind.Program // 100000
	rpcNFS     = 100003          // RFC 1813
	rpcMountd  = 100005          // RFC 1813 Appendix I
	rpcRquotad = 100011
	rpcNLM     = 100021 // network lock manager
	rpcNSM     = 100024 // status monitor (statd)
	rpcNFSACL  = 100227
)

// rpcProgramName names an RPC program as /etc/rpc does, or "rpc program N".
func rpcProgramName(prog uint32) string {
	switch prog {
	case rpcPortmap:
		return "rpcbind"
	case rpcNFS:
		return "nfs"
	case rpcMountd:
		return "mountd"
	case rpcRquotad:
		return "rquotad"
	case rpcNLM:
		return "nlockmgr"
	case rpcNSM:
		return "status"
	case rpcNFSACL:
		return "nfs_acl"
	}
	return "rpc program " + strconv.FormatUint(uint64(prog), 10)
}

// PayloadSource gives the TCP or UDP payload of the frame being added
// (packet.Decoder.TransportPayload, of the Decoder that decoded it).
type PayloadSource interface {
	TransportPayload() []byte
}

// ReadPayloadsFrom has the Collector read, through src, the payloads of
// the TCP and UDP packets to and from rpcbind's port (111) that AddFrame
// is given, to learn the ports rpcbind hands out (see rpcbindTable). src
// is asked during AddFrame of such a packet only, never of a RoCE one.
// Without a source nothing is learnt.
func (c *Collector) ReadPayloadsFrom(src PayloadSource) { c.c.conv.payloads = src }

// Bounds of the rpcbind table.
const (
	// maxPendingCalls is how many GETPORT/GETADDR calls wait for their
	// reply at once; a call is forgotten when this many came after it.
	maxPendingCalls = 64
	// maxLearntPorts bounds the ports learnt: past it, a new one is not
	// (under 64 bytes each with the map's own: 256 KB at most).
	maxLearntPorts = 4096
)

// rpcService is one TCP or UDP port of an address.
type rpcService struct {
	addr  netip.Addr
	proto uint8
	port  uint16
}

// pendingCall is a GETPORT or GETADDR call that waits for its reply: from
// client to server over proto, with its XID and what it asked.
type pendingCall struct {
	client, server netip.AddrPort
	proto          uint8
	xid            uint32
	q              rpcbind.Query
}

// rpcbindTable learns, from the rpcbind exchanges seen (RFC 1833: version
// 2 GETPORT, versions 3 and 4 GETADDR, over UDP or TCP to port 111),
// which RPC program listens on which port of which address: mountd, NLM
// and statd take ports rpcbind hands out, which no port rule names. A
// reply is matched to its call by XID and the two ends; a call without
// its reply, or a reply of port 0 (not registered), teaches nothing. Its
// memory is bounded: maxPendingCalls calls and maxLearntPorts ports.
type rpcbindTable struct {
	pending [maxPendingCalls]pendingCall
	next    int                   // the slot the next call takes
	learnt  map[rpcService]uint32 // the program on each port
}

// observe reads p, a TCP or UDP packet to or from port 111, whose payload
// is b: a call waits for its reply, a reply to a waiting call teaches its
// port.
func (r *rpcbindTable) observe(p *packet.Packet, b []byte) {
	if p.Proto == protoTCP {
		var ok bool
		if b, ok = rpcbind.Record(b); !ok {
			return
		}
	}
	src, dst := netip.AddrPortFrom(p.Src, p.SrcPort), netip.AddrPortFrom(p.Dst, p.DstPort)
	if p.DstPort == rpcbind.Port {
		if xid, q, ok := rpcbind.ParseCall(b); ok {
			r.pending[r.next] = pendingCall{client: src, server: dst, proto: p.Proto, xid: xid, q: q}
			r.next = (r.next + 1) % maxPendingCalls
			return
		}
	}
	if p.SrcPort != rpcbind.Port {
		return
	}
	xid, res, ok := rpcbind.ParseReply(b)
	if !ok {
		return
	}
	for i := range r.pending {
		c := &r.pending[i]
		if c.xid != xid || c.proto != p.Proto || c.client != dst || c.server != src { // a reply goes back
			continue
		}
		q := c.q
		*c = pendingCall{}
		host, port, ok := q.Port(res)
		if !ok {
			return // not registered
		}
		if !host.IsValid() || host.IsUnspecified() {
			host = p.Src // version 2 names no host: rpcbind's own
		}
		r.learn(rpcService{host, q.Proto, port}, q.Prog)
		return
	}
}

func (r *rpcbindTable) learn(s rpcService, prog uint32) {
	if r.learnt == nil {
		r.learnt = map[rpcService]uint32{}
	}
	if _, ok := r.learnt[s]; ok || len(r.learnt) < maxLearntPorts {
		r.learnt[s] = prog
	}
}

// service is the service port of p, a TCP or UDP packet whose ports are
// not services the reports know (knownService), when rpcbind handed out
// one of them: that port, whether the sender is the client, and the
// program. When rpcbind handed out both (two RPC servers), the one the
// port rules picked (port) is kept. ok is false when it handed out
// neither.
func (r *rpcbindTable) service(p *packet.Packet, port uint16) (_ uint16, srcIsClient bool, prog uint32, ok bool) {
	dProg, dOK := r.learnt[rpcService{p.Dst, p.Proto, p.DstPort}]
	sProg, sOK := r.learnt[rpcService{p.Src, p.Proto, p.SrcPort}]
	switch {
	case dOK && (!sOK || port == p.DstPort):
		return p.DstPort, true, dProg, true
	case sOK:
		return p.SrcPort, false, sProg, true
	}
	return 0, false, 0, false
}
