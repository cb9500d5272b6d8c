// Package filter compiles tcpdump capture-filter expressions
// (pcap-filter(7)) in pure Go and matches them against frames as
// captured, with the meaning libpcap 1.10 gives them, without cgo or
// libpcap.
//
// A Filter is compiled for one pcap link type, because the link-layer
// header decides where protocol fields are: Ethernet (1), raw IP (101;
// 228 IPv4; 229 IPv6), LINUX_SLL (113), LINUX_SLL2 (276) and NULL/LOOP
// (0, 108). "len", "less", "greater" and "ether[...]" work on any link
// type.
//
// The language: [src|dst|src or dst|src and dst] host, net (A.B.C.D/len,
// A.B.C, "mask M"), port, portrange for IPv4 and IPv6 addresses; ether
// host/src/dst and ether proto; [ether|ip|ip6] broadcast and multicast;
// ip, ip6, arp, rarp, tcp, udp, sctp, icmp, icmp6, igmp, igrp, pim, vrrp,
// carp, ah, esp, stp, ipx, iso, netbeui, atalk, aarp, decnet, lat, sca,
// mopdl, moprc; [ip|ip6|ether] proto with numbers or \names; vlan [id];
// less, greater; inbound, outbound (LINUX_SLL/SLL2), ifindex (SLL2); byte;
// and relations between arithmetic expressions over len, numbers and
// proto[offset:size] loads (ether, ip, ip6, arp, rarp, tcp, udp, sctp,
// icmp, icmp6, igmp, igrp, pim, vrrp, carp), with libpcap's named
// constants (tcpflags, tcp-syn, icmptype, icmp6-echo, ...).
//
// libpcap's behaviour is followed where it surprises, too:
//   - "and" and "or" have equal precedence and group left to right; "not"
//     binds tighter: "udp or tcp and port 53" is "(udp or tcp) and port 53".
//     An id without qualifiers takes those of the term before it ("host a
//     or b", "port 80 or 443").
//   - In arithmetic, % and ^ have no precedence in libpcap's grammar, so
//     "a % b + c" is "a % (b + c)"; "1 + udp[8] = 2" tests no protocol.
//   - "vlan" moves every later primitive 4 bytes on, in textual order,
//     whatever the parentheses; without "vlan", ip/udp/... match untagged
//     frames only. The tag types are 0x8100, 0x88a8 and 0x9100.
//   - Ports and tcp[]/udp[] apply to the first IPv4 fragment only; for
//     IPv6 only the fixed header's next header is looked at (and one
//     fragment header for "ip6 proto" and "tcp"/"udp").
//   - A load past the captured bytes, or a division by zero, rejects the
//     frame outright, as BPF does, even under "not" - unless libpcap's
//     optimizer would have removed that load, which this package
//     reproduces (see program.go).
//
// Known differences: host, network, Ethernet-host and gateway names are
// not resolved (an error); service and protocol names come from built-in
// tables; NULL headers are taken in either byte order; mpls, pppoes,
// geneve, protochain, 802.11, ATM, MTP and pf primitives are not
// supported; a filter that can never match compiles (libpcap refuses it).
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
