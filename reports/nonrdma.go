package reports

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/rocedump/rocedump/reports/flowtable"
	"github.com/rocedump/rocedump/topology"
)

// Thresholds of NonRDMAOnCompute.
const (
	// socketTransportBytes is how much "bootstrap" TCP between compute
	// addresses makes it look like NCCL's socket transport carrying the
	// collective itself (NCCL_IB_DISABLE, or IB init failed) rather than
	// the few kilobytes of a bootstrap.
	socketTransportBytes = 100e6
	// otherWarnBytes is how much other TCP/UDP on compute links makes it a
	// warning rather than a note.
	otherWarnBytes = 10e6
	portSSH        = 22
	// portPerftest is where perftest (ib_write_bw, ib_read_lat, ...) and
	// ibv_rc_pingpong and its siblings exchange QP numbers over TCP by
	// default: a link test between the HCA addresses, not NCCL.
	portPerftest = 18515
)

// NonRDMAOnCompute reports TCP and UDP traffic on compute links, grouped by
// what it is: SSH, NCCL bootstrap (TCP between two compute addresses, both
// on ports ≥ 1024: NCCL's bootstrap and socket transport; not perftest's
// QP exchange on 18515) and other TCP/UDP by protocol and port. Storage
// protocols, and with a topology every conversation with a storage-role
// end, are left to StorageOnCompute, so that a conversation is in one
// finding only; ICMP and ICMPv6 (reachability, neighbour discovery) are
// not reported.
//
// A conversation is on a compute link when an end is a compute address:
// one with the compute role in the topology, or, without a topology, one
// that is also a RoCE endpoint of the capture (its traffic reaches that
// address, so it crosses that HCA's link). NCCL bootstrap needs both ends
// to be compute addresses.
//
// Severity rules: SSH: warning. NCCL bootstrap: warning; critical when it
// carries ≥ 100 MB (the collective itself over TCP sockets). Other TCP/UDP:
// info; warning from 10 MB.
func NonRDMAOnCompute(in *Input) []Finding {
	if in.Collect == nil {
		return nil
	}
	defer in.scanning()()
	computeEnd := func(a netip.Addr) bool {
		if in.Topology == nil { // the RoCE endpoints
			_, ok := in.flowScan().hosts[a]
			return ok
		}
		return identity(in, a).Role == topology.RoleCompute
	}
	var ssh, boot, other []*Conversation
	for _, c := range in.Collect.Conversations() {
		if c.Proto != protoTCP && c.Proto != protoUDP || storageConvService(c) != "" ||
			isStorage(in, c.Src) || isStorage(in, c.Dst) {
			continue // storage_on_compute's, by its port or by a storage-role end
		}
		s, d := computeEnd(c.Src), computeEnd(c.Dst)
		if !s && !d {
			continue
		}
		switch {
		case c.Proto == protoTCP && c.ServicePort == portSSH:
			ssh = append(ssh, c)
		case c.Proto == protoTCP && s && d && c.ServicePort >= 1024 && c.ServicePort != portPerftest:
			boot = append(boot, c)
		default:
			other = append(other, c)
		}
	}
	var out []Finding
	where := "compute HCA addresses"
	if in.Topology == nil {
		where = "addresses that also carry RoCE (no topology: taken for compute links)"
	}
	if len(ssh) > 0 {
		f := convFinding(in, ssh, Warning)
		f.Title = nonRDMATitle(nonRDMASSH, uint64(len(ssh)))
		f.Detail = fmt.Sprintf("SSH sessions run over %s. Interactive and scp traffic on a compute rail is not in the lossless class "+
			"and competes with the AllReduce; it usually means a host resolves node names to compute addresses.", where)
		f.Next = "Check `/etc/hosts` and DNS for the node names (they should resolve to the management addresses) and the ssh configuration of the job launcher (mpirun, Slurm)."
		out = append(out, f)
	}
	if len(boot) > 0 {
		f := convFinding(in, boot, Warning)
		bytes := f.Evidence.Counts["bytes"]
		f.Severity = bootstrapSeverity(bytes)
		f.Title = nonRDMATitle(nonRDMABootstrap, uint64(len(boot)))
		f.Detail = fmt.Sprintf("TCP between two %s on high ports on both sides: NCCL's bootstrap (rank exchange, ring set-up) and its socket "+
			"transport use TCP on the interface NCCL_SOCKET_IFNAME names, or the first suitable one when it is unset. The bootstrap belongs on "+
			"the management network; on a compute rail it shares the HCA with the RDMA traffic outside the lossless class.", where)
		if f.Severity == Critical {
			f.Detail += fmt.Sprintf(" %s is far more than a bootstrap: NCCL is likely moving the collective itself over TCP sockets "+
				"(NCCL_IB_DISABLE=1, NCCL_NET=Socket, or the IB plugin failed to initialise).", flowtable.HumanBytes(uint64(bytes)))
		}
		f.Next = "Set NCCL_SOCKET_IFNAME to the management interface (e.g. NCCL_SOCKET_IFNAME=eno1) in the job environment; with NCCL_DEBUG=INFO " +
			"the log shows the bootstrap interface and whether NET/IB was chosen."
		out = append(out, f)
	}
	if len(other) > 0 {
		f := convFinding(in, other, Info)
		f.Severity = otherTCPSeverity(f.Evidence.Counts["bytes"])
		f.Title = nonRDMAOther + ": " + servicesSummary(other)
		f.Detail = fmt.Sprintf("Non-RDMA traffic runs over %s. It is not in the lossless class and takes bandwidth and buffer from the RoCE traffic; "+
			"compute rails should carry RDMA only.", where)
		if slices.ContainsFunc(other, func(c *Conversation) bool { return c.Proto == protoTCP && c.ServicePort == portPerftest }) {
			f.Detail += fmt.Sprintf(" tcp/%d is where perftest (ib_write_bw, ib_read_lat, ...) and ibv_rc_pingpong exchange QP numbers "+
				"by default: an RDMA link test ran between these addresses.", portPerftest)
		}
		f.Next = "Find the services on those ports on the nodes listed (`ss -tunap`) and move them to the management or storage network."
		out = append(out, f)
	}
	return out
}

// The three non_rdma_on_compute findings' titles start with these: the
// module makes them here, and merge tells them apart by them and rebuilds
// the first two's from their counts (the third names its services, which
// its counts do not).
const (
	nonRDMASSH       = "SSH on compute links"
	nonRDMABootstrap = "NCCL bootstrap TCP on compute links"
	nonRDMAOther     = "Other TCP/UDP on compute links"
)

// nonRDMATitle is "SSH on compute links: 2 conversations".
func nonRDMATitle(what string, conversations uint64) string {
	return fmt.Sprintf("%s: %s", what, plural(conversations, "conversation"))
}

// bootstrapSeverity: warning; critical from socketTransportBytes, the
// collective itself over TCP sockets.
func bootstrapSeverity(bytes float64) Severity {
	if bytes >= socketTransportBytes {
		return Critical
	}
	return Warning
}

// otherTCPSeverity: info; warning from otherWarnBytes.
func otherTCPSeverity(bytes float64) Severity {
	if bytes >= otherWarnBytes {
		return Warning
	}
	return Info
}

// convFinding builds the common part of a finding about conversations:
// nodes, counts, span and one detail line per conversation.
func convFinding(in *Input, cs []*Conversation, sev Severity) Finding {
	f := Finding{Kind: KindNonRDMAOnCompute, Severity: sev}
	var span frameSpan
	var packets, bytes uint64
	var lines []string
	for _, c := range cs {
		packets += c.Packets
		bytes += c.Bytes
		span.add(c.First)
		span.add(c.Last)
		f.Nodes = append(f.Nodes, nodeOf(in, c.Src), nodeOf(in, c.Dst))
		lines = append(lines, fmt.Sprintf("%s: %s > %s, %s, %s", convPort(c), endpoint(in, c.Src), endpoint(in, c.Dst),
			plural(c.Packets, "packet"), flowtable.HumanBytes(c.Bytes)))
	}
	f.Evidence = Evidence{Counts: map[string]float64{
		"conversations": float64(len(cs)), "packets": float64(packets), "bytes": float64(bytes),
	}, Details: capped(lines)}
	span.set(in, &f.Evidence)
	return f
}

// servicesSummary is "tcp/8080 (2), udp/123 (1)", busiest first, capped.
func servicesSummary(cs []*Conversation) string {
	n := map[string]int{}
	b := map[string]uint64{}
	for _, c := range cs {
		k := convPort(c)
		n[k]++
		b[k] += c.Bytes
	}
	return servicesText(n, b)
}

// servicesText is servicesSummary's text for n conversations and b bytes
// per service: busiest by bytes first (ties by name), five at most.
func servicesText[B cmp.Ordered](n map[string]int, b map[string]B) string {
	keys := slices.SortedFunc(maps.Keys(n), func(x, y string) int {
		if c := cmp.Compare(b[y], b[x]); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	var parts []string
	for i, k := range keys {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(keys)-5))
			break
		}
		parts = append(parts, fmt.Sprintf("%s (%d)", k, n[k]))
	}
	return strings.Join(parts, ", ")
}
