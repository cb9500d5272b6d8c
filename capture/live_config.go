package capture

import (
	"errors"
	"strings"
	"time"
)

// Live capture defaults.
const (
	// DefaultLiveSnapLen keeps every RoCE header stack of a plain or
	// ERSPAN-over-IPv4 mirror: outer Ethernet 14 + IPv4 20 + GRE 8 +
	// ERSPAN II 8 + inner Ethernet 14 + 802.1Q 4 + IPv4 20 + UDP 8 + BTH 12
	// + RETH 16 = 124 bytes. ERSPAN over IPv6 (40-byte outer header,
	// ERSPAN III with its 8-byte platform subheader, inner IPv6) needs up to
	// about 190 bytes: use 256 there.
	DefaultLiveSnapLen = 128
	// DefaultLiveBufferSize is the kernel capture buffer: 64 MiB holds about
	// half a second of a 100 Gb/s mirror cut to 128 bytes.
	DefaultLiveBufferSize = 64 << 20
	// DefaultLiveTimeout is the packet buffer timeout: the kernel hands
	// packets over in blocks (TPACKET_V3) when a block fills or this
	// timeout expires.
	DefaultLiveTimeout = 100 * time.Millisecond
)

// liveFilterTargets are the frames the default live filter keeps, in
// pcap-filter(7) syntax, untagged.
func liveFilterTargets() []string {
	return []string{
		"udp dst port 4791",  // RoCEv2
		"ether proto 0x8915", // RoCEv1
		"ip proto 47",        // GRE and ERSPAN from a mirror, IPv4
		"ip6 proto 47",       // the same over IPv6
		"udp dst port 4789",  // VXLAN-encapsulated mirrors
		"ether proto 0x8808", // MAC control: PFC pause frames
		"tcp port 4420",      // NVMe/TCP
		"tcp port 8009",      // NVMe/TCP discovery
		"tcp port 3260",      // iSCSI
		"tcp port 2049",      // NFS
		"udp port 2049",      // NFS over UDP
		"tcp port 445",       // SMB
		"tcp port 22",        // SSH, for the non-RDMA report
	}
}

// DefaultLiveFilter returns the BPF filter of a live capture unless told
// otherwise: RoCEv2 (UDP destination port 4791), RoCEv1 (EtherType
// 0x8915), GRE/ERSPAN mirror traffic over IPv4 and IPv6, VXLAN mirrors
// (UDP destination port 4789), PFC (EtherType
// 0x8808), the storage ports (NVMe/TCP 4420 and its discovery 8009, iSCSI
// 3260, NFS 2049 over TCP and UDP, SMB 445) and SSH, untagged, with one 802.1Q tag, or with two (QinQ).
// The "vlan" part comes last because in pcap-filter(7) "vlan" moves every
// later primitive 4 bytes on.
func DefaultLiveFilter() string {
	untagged := strings.Join(liveFilterTargets(), " or ")
	return untagged + " or (vlan and (" + untagged + " or (vlan and (" + untagged + "))))"
}

// liveFilterFor is the filter to compile for a capture whose frames are of
// link type lt. pcap-filter(7) has "vlan" on Ethernet only, so on any other
// link type (the Linux cooked frames of the "any" device above all) the
// default filter did not compile ("no VLAN support for Linux cooked v1")
// and "rocedump live -i any" could not start. There the default keeps its
// untagged part: Linux takes the 802.1Q tag off a frame before a packet
// socket's filter sees it (and hands the tag over beside it), so that part
// keeps tagged frames too. A filter the user gave is compiled as given.
func liveFilterFor(filter string, lt LinkType) string {
	if lt != LinkTypeEthernet && filter == DefaultLiveFilter() {
		return strings.Join(liveFilterTargets(), " or ")
	}
	return filter
}

// LiveConfig says how to open a live capture.
type LiveConfig struct {
	Interface string // e.g. "eth1", or "any" (Linux cooked frames)
	// SnapLen is the bytes kept of each frame; 0 means no limit (262144).
	SnapLen int
	// Promisc puts the interface into promiscuous mode, as a mirror
	// (SPAN) port needs: mirrored frames are not addressed to this host.
	Promisc bool
	// BufferSize is the kernel capture buffer in bytes; 0 means
	// DefaultLiveBufferSize.
	BufferSize int
	// Filter is a BPF filter in pcap-filter(7) syntax, compiled by
	// libpcap and run in the kernel; "" keeps every frame.
	Filter string
	// Timeout is the packet buffer timeout; 0 means DefaultLiveTimeout.
	// It also bounds how long Next waits before returning ErrLiveTimeout.
	Timeout time.Duration
	// Immediate hands each packet over as it arrives instead of in
	// blocks: lower latency, but many more wake-ups, which cost drops at
	// high packet rates.
	Immediate bool
}

// LiveStats are a live capture's counters since it was opened
// (pcap_stats).
type LiveStats struct {
	Received       uint64 // packets that passed the filter (ps_recv)
	KernelDrops    uint64 // dropped because the capture buffer was full (ps_drop)
	InterfaceDrops uint64 // dropped by the interface or its driver (ps_ifdrop)
	// Down says the interface was down when the counters were read: not
	// up, or up with no link (no carrier). Nothing is captured then, and
	// no drop counter counts what a mirror sent to it. Never set for
	// pseudo-devices such as "any".
	Down bool
}

// Errors of a live capture. OpenLive's errors are *LiveError values
// wrapping one of the first four, or none for other failures.
var (
	// ErrNoLiveCapture: this build has no libpcap (it was built without cgo).
	ErrNoLiveCapture = errors.New("live capture needs a build with cgo and libpcap: CGO_ENABLED=1 and libpcap-dev")
	// ErrLivePermission: the process may not open a packet socket.
	ErrLivePermission = errors.New("live capture needs root or CAP_NET_RAW")
	// ErrNoSuchInterface: there is no interface of that name.
	ErrNoSuchInterface = errors.New("no such interface")
	// ErrLiveFilter: libpcap could not compile the filter.
	ErrLiveFilter = errors.New("bad capture filter")
	// ErrLiveTimeout is returned by LiveHandle.Next when no packet arrived
	// within the buffer timeout. It is not an error: call Next again.
	ErrLiveTimeout = errors.New("capture: no packet within the buffer timeout")
)

// LiveError reports why a live capture could not be opened.
type LiveError struct {
	Interface string
	Reason    string // what libpcap said, e.g. "socket: Operation not permitted"
	Err       error  // ErrNoLiveCapture, ErrLivePermission, ErrNoSuchInterface, ErrLiveFilter or nil
	// Available lists the interfaces that do exist, for ErrNoSuchInterface.
	Available []string
}

// Error names the interface and what is wrong, and lists the interfaces
// there are when the one asked for is missing.
func (e *LiveError) Error() string {
	var b strings.Builder
	b.WriteString("capture: ")
	if e.Interface != "" {
		b.WriteString(e.Interface + ": ")
	}
	switch {
	case e.Err != nil && e.Reason != "":
		b.WriteString(e.Err.Error() + " (" + e.Reason + ")")
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString(e.Reason)
	}
	if len(e.Available) > 0 {
		b.WriteString("; interfaces: " + strings.Join(e.Available, ", "))
	}
	return b.String()
}

// Unwrap returns the sentinel, if any.
func (e *LiveError) Unwrap() error { return e.Err }
