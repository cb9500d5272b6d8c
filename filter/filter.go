// Package filter compiles tcpdump capture-filter expressions
// (pcap-filter(7)) in pure Go and matches them against frames as
// captured, with the meaning libpcap gives them, without cgo or libpcap.
//
// A Filter is compiled for one pcap link type, because the link-layer
// header decides where protocol fields are. Supported link types are
// Ethernet (1), raw IP (101, 228, 229), LINUX_SLL (113), LINUX_SLL2 (276)
// and NULL/LOOP (0, 108); length and "ether[...]" tests work on any.
//
// Supported primitives: [src|dst|src or dst|src and dst] host, net
// (A.B.C.D/len, A.B.C, "mask"), port, portrange, gateway-less IPv4 and
// IPv6 addresses; ether host/src/dst, ether proto, ether/ip/ip6
// broadcast and multicast; ip, ip6, arp, rarp, tcp, udp, sctp, icmp,
// icmp6, igmp, pim, vrrp, ah, esp, stp, ipx, iso and friends; ip proto,
// ip6 proto, proto; vlan [id]; less, greater; inbound, outbound and
// ifindex on LINUX_SLL/SLL2; and arithmetic relations on
// ether/ip/ip6/arp/rarp/tcp/udp/icmp/icmp6/... [offset:size] with len.
//
// Semantics follow libpcap 1.10 (grammar.y and gencode.c), quirks
// included:
//   - "and" and "or" have equal precedence and group left to right; "not"
//     binds tighter: "udp or tcp and port 53" is "(udp or tcp) and port 53".
//   - "vlan" moves every later primitive 4 bytes on, in textual order,
//     whatever the parentheses; without "vlan", ip/udp/... match untagged
//     frames only.
//   - Ports and tcp[]/udp[] offsets apply to the first IPv4 fragment only;
//     for IPv6 only the fixed header's next header is looked at (plus one
//     fragment header for "ip6 proto").
//   - A load past the captured bytes, or a division by zero, rejects the
//     frame outright, as BPF does, even under "not".
//   - Host, network and Ethernet host names are not resolved; service and
//     protocol names come from built-in tables.
package filter

import "math"

// Filter matches captured frames of one link type. It is immutable and
// safe for concurrent use.
type Filter struct {
	expr     string
	linkType uint32
	prog     *program
}

// Compile parses expr (pcap-filter(7) syntax) for frames of the given pcap
// LINKTYPE value. An empty expression matches every frame. Errors are
// *Error values that name the offending token and wrap ErrSyntax,
// ErrInvalid, ErrLinkType or ErrUnsupported.
//
// Compile does a little work (lexing, a syntax tree); callers that see
// many frames of a few link types should compile once per link type.
func Compile(expr string, linkType uint32) (*Filter, error) {
	tree, err := parse(expr)
	if err != nil {
		return nil, err
	}
	root, err := compileTree(tree, expr, linkType)
	if err != nil {
		return nil, err
	}
	return &Filter{expr: expr, linkType: linkType, prog: newProgram(root)}, nil
}

// Match reports whether frame, the bytes of one captured frame, matches.
// The frame is taken to be complete: "len", "less" and "greater" see
// len(frame). Use MatchLen for frames cut short by a snap length.
// Match allocates nothing and never panics.
func (f *Filter) Match(frame []byte) bool {
	return f.MatchLen(frame, len(frame))
}

// MatchLen is Match for a frame whose length on the wire was wireLen
// (the pcap record's original length), which "len", "less" and
// "greater" test, as in libpcap.
func (f *Filter) MatchLen(frame []byte, wireLen int) bool {
	w := uint32(math.MaxUint32)
	if wireLen >= 0 && uint64(wireLen) < math.MaxUint32 {
		w = uint32(wireLen)
	}
	if wireLen < 0 {
		w = 0
	}
	return f.prog.run(frame, w)
}

// String returns the expression the filter was compiled from.
func (f *Filter) String() string { return f.expr }

// LinkType returns the link type the filter was compiled for.
func (f *Filter) LinkType() uint32 { return f.linkType }
