package reports

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
	"github.com/rocedump/rocedump/topology"
)

// Storage service ports.
const (
	portNVMeOF = 4420 // NVMe over Fabrics: RDMA CM service and NVMe/TCP
	portISCSI  = 3260 // iSCSI over TCP, iSER over RDMA CM
	portNFS    = 2049 // NFS over TCP or UDP
	// NFS's helper services (RFC 1813 §5, RFC 1833): rpcbind, which
	// tells a client mountd's port; mountd where nfs-utils pins it (IANA
	// "mountd"); the lock manager where lockd is pinned (IANA "lockd").
	// Elsewhere mountd, NLM and statd take ports rpcbind hands out, known
	// only from the GETPORT or GETADDR exchange the capture holds
	// (rpcbindTable: Conversation.RPCProgram, storageConvService).
	portRPCBind = 111
	portMountd  = 20048
	portNLM     = 4045
	portNFSRDMA = 20049 // NFS over RDMA (RDMA CM service)
	portSMB     = 445   // SMB over TCP (MS-SMB2 2.1)
	// portSMBDirect is SMB Direct's port (MS-SMBD 2.1): SMB 3 over RDMA,
	// an RDMA CM service on RoCE and InfiniBand.
	portSMBDirect = 5445
	// portNVMeDisc is the NVMe/TCP discovery controller's port (IANA
	// "nvme-disc", tcp/8009; NVMe/TCP Transport Specification 1.0): hosts
	// connect to it first (nvme discover) to learn the subsystems, then to
	// 4420 for I/O.
	portNVMeDisc = 8009
	storageWhy   = "Storage on the compute fabric takes QPs, switch buffer and link bandwidth from the AllReduce: " +
		"a checkpoint write or a dataset read bursts into the same lossless queues as the collective, and the incast " +
		"at a storage target is a classic start of PFC storms."
)

// storageCMService names an RDMA CM service port, or "" for others.
func storageCMService(port uint16) string {
	switch port {
	case portNVMeOF:
		return "NVMe-oF/RDMA"
	case portISCSI:
		return "iSER"
	case portNFSRDMA:
		return "NFS/RDMA"
	case portSMBDirect:
		return "SMB Direct"
	}
	return ""
}

// storageIPService names a TCP or UDP storage service, or "".
func storageIPService(proto uint8, port uint16) string {
	switch {
	case proto == protoTCP && port == portNVMeOF:
		return svcNVMeTCP
	case proto == protoTCP && port == portNVMeDisc:
		return svcNVMeDisc
	case proto == protoTCP && port == portISCSI:
		return svcISCSI
	case (proto == protoTCP || proto == protoUDP) && port == portNFS:
		return svcNFS
	case (proto == protoTCP || proto == protoUDP) && (port == portRPCBind || port == portMountd || port == portNLM):
		return svcNFSHelpers
	case proto == protoTCP && port == portSMB:
		return svcSMB
	}
	return ""
}

// storageConvService names the storage service of conversation c: by its
// port (storageIPService), else by the RPC program an rpcbind exchange
// said listens on it: NFS, or one of its helpers (mountd, NLM, statd,
// rquotad, nfs_acl). "" for other conversations.
func storageConvService(c *Conversation) string {
	if s := storageIPService(c.Proto, c.ServicePort); s != "" {
		return s
	}
	switch c.RPCProgram {
	case rpcNFS:
		return svcNFS
	case rpcMountd, rpcNLM, rpcNSM, rpcRquotad, rpcNFSACL:
		return svcNFSHelpers
	}
	return ""
}

// The TCP/UDP storage services storageIPService names.
const (
	svcNVMeTCP  = "NVMe/TCP"
	svcNVMeDisc = "NVMe/TCP discovery"
	svcISCSI    = "iSCSI"
	svcNFS      = "NFS"
	// svcNFSHelpers is rpcbind, mountd and NLM (portRPCBind, portMountd,
	// portNLM).
	svcNFSHelpers = "NFS helpers"
	svcSMB        = "SMB"
)

var storageIPNames = []string{svcNVMeTCP, svcNVMeDisc, svcISCSI, svcNFS, svcNFSHelpers, svcSMB}

// storageIPKey is the prefix of a TCP/UDP storage service's counts:
// "nvme_tcp" for NVMe/TCP, "nvme_tcp_discovery" for NVMe/TCP discovery.
func storageIPKey(name string) string {
	f := strings.FieldsFunc(strings.ToLower(name), func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') })
	return strings.Join(f, "_")
}

// StorageOnCompute reports storage traffic seen on a compute capture, one
// finding per kind of evidence: RDMA CM connections to storage services
// (NVMe-oF 4420, iSER 3260, NFS/RDMA 20049, SMB Direct 5445), storage
// protocols over TCP or UDP (NVMe/TCP 4420 and its discovery 8009, iSCSI
// 3260, NFS 2049, SMB 445), and
// the other RoCE flows and conversations of addresses the topology gives
// the storage role. Each flow and conversation is in one finding only: the
// one that names its service if any, so that bytes and flows are never
// counted twice.
//
// Severity rules: critical when the storage traffic rides compute-role
// addresses (either end is a compute HCA in the topology); warning
// otherwise (storage on the captured links, but not on compute HCAs, or no
// topology to tell).
func StorageOnCompute(in *Input) []Finding {
	defer in.scanning()()
	var out []Finding
	unclassified := cmUnclassified(in)
	if f, ok := storageCM(in, unclassified); ok {
		out = append(out, f)
	} else if unclassified > 0 {
		out = append(out, storageCMCut(unclassified))
	}
	if f, ok := storageIP(in); ok {
		out = append(out, f)
	}
	if f, ok := storageRole(in); ok {
		out = append(out, f)
	}
	return out
}

// cmUnclassified counts the RDMA CM connection requests cut by the snap
// length before their service ID (CMConnect.Unclassified).
func cmUnclassified(in *Input) int {
	if in.Collect == nil {
		return 0
	}
	n := 0
	for _, c := range in.Collect.CMConnects() {
		if c.Unclassified {
			n++
		}
	}
	return n
}

// storageCMCut is the info finding that storage over RDMA CM was not
// judged: n connection requests were cut before their service ID, and no
// other named a storage service.
func storageCMCut(n int) Finding {
	return Finding{
		Kind:     KindStorageOnCompute,
		Severity: Info,
		Title:    storageCMCutTitle(uint64(n)),
		Detail: fmt.Sprintf("The snap length cut %s before %s service ID: whether %s to a storage service (NVMe-oF, iSER, NFS/RDMA, "+
			"SMB Direct) cannot be told, so storage over RDMA CM is not judged for %s.", plural(n, "RDMA CM connection request"),
			verb(n, "its", "their"), verb(n, "it was", "they were"), verb(n, "it", "them")),
		Evidence: Evidence{Counts: map[string]float64{"cm_requests_unclassified": float64(n)}},
		Next:     "Capture with a snap length of 256 bytes or more (`tcpdump -s 256`, or the mirror session's truncation) to keep RDMA CM requests whole.",
	}
}

// storageCMCutTitle is storageCMCut's title.
func storageCMCutTitle(n uint64) string {
	return fmt.Sprintf("Storage over RDMA CM not judged: %s cut before %s service ID", plural(n, "connection request"), verb(n, "its", "their"))
}

func isCompute(in *Input, ip netip.Addr) bool {
	return identity(in, ip).Role == topology.RoleCompute
}

func isStorage(in *Input, ip netip.Addr) bool {
	return identity(in, ip).Role == topology.RoleStorage
}

// onManagementNet says a conversation between a and b runs on the in-band
// management network, not on compute links: the topology gives an end the
// management or BMC role and neither end the compute role. NFS home
// directories and the like belong there (a DGX pod mounts them over its
// management port), so its storage protocols are no storage on compute.
func onManagementNet(in *Input, a, b netip.Addr) bool {
	if in.Topology == nil {
		return false
	}
	ra, rb := identity(in, a).Role, identity(in, b).Role
	mgmt := func(r topology.Role) bool { return r == topology.RoleManagement || r == topology.RoleBMC }
	return ra != topology.RoleCompute && rb != topology.RoleCompute && (mgmt(ra) || mgmt(rb))
}

// storageCM reports RDMA CM connection requests to storage service ports,
// with the RDMA flows those connections carried, and says how many more
// (unclassified) were cut before their service ID.
func storageCM(in *Input, unclassified int) (Finding, bool) {
	type svc struct {
		name  string
		port  uint16
		reqs  int
		pairs map[[2]netip.Addr]bool
		flows map[int]*flows.Flow
	}
	svcs := map[uint16]*svc{}
	var span frameSpan
	compute := false
	var computeReqs, computeFlows int // of those, with a compute end
	var computeBytes uint64
	f := Finding{Kind: KindStorageOnCompute}
	get := func(port uint16) *svc {
		s := svcs[port]
		if s == nil {
			s = &svc{name: storageCMService(port), port: port, pairs: map[[2]netip.Addr]bool{}, flows: map[int]*flows.Flow{}}
			svcs[port] = s
		}
		return s
	}
	note := func(s *svc, client, server netip.Addr) {
		s.pairs[[2]netip.Addr{client, server}] = true
		compute = compute || isCompute(in, client) || isCompute(in, server)
		f.Nodes = append(f.Nodes, nodeOf(in, client), nodeOf(in, server))
	}
	if in.Collect != nil {
		for _, c := range in.Collect.CMConnects() {
			if c.PortSpace != bth.PortSpaceTCP || storageCMService(c.Port) == "" {
				continue
			}
			s := get(c.Port)
			s.reqs++
			note(s, c.Src, c.Dst)
			span.add(c.Frame)
			if isCompute(in, c.Src) || isCompute(in, c.Dst) {
				computeReqs++
			}
		}
	}
	// The flows of those connections, from the CM exchange the flow table
	// tied to them; this also finds connections whose REQ the collector
	// did not see as such.
	for _, fl := range in.flowScan().cm { // the flows with an RDMA CM exchange
		port, ok := storageCMPort(fl)
		if !ok {
			continue
		}
		s := get(port)
		s.flows[fl.ID] = fl
		span.add(fl.First)
		span.add(fl.Last)
		if isCompute(in, fl.Key.Src) || isCompute(in, fl.Key.Dst) {
			compute = true
			computeFlows++
			computeBytes += fl.WireBytes
		}
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
	}
	if len(svcs) == 0 {
		return f, false
	}
	counts := map[string]float64{}
	var lines []string
	var reqs int
	var bytes uint64
	ports := slices.Sorted(maps.Keys(svcs))
	for _, port := range ports {
		s := svcs[port]
		var b uint64
		for _, fl := range s.flows {
			b += fl.WireBytes
		}
		bytes += b
		reqs += s.reqs
		counts[fmt.Sprintf("cm_requests_%d", port)] = float64(s.reqs)
		counts[fmt.Sprintf("flows_%d", port)] = float64(len(s.flows))
		pairs := slices.SortedFunc(maps.Keys(s.pairs), comparePair)
		for _, p := range pairs {
			lines = append(lines, fmt.Sprintf("%s: %s > %s", s.name, endpoint(in, p[0]), endpoint(in, p[1])))
		}
		for _, id := range slices.Sorted(maps.Keys(s.flows)) {
			fl := s.flows[id]
			f.Flows = append(f.Flows, id)
			lines = append(lines, fmt.Sprintf("%s flow %d %s: %s, %s", s.name, id, flowName(fl), plural(fl.Packets, "packet"), flowtable.HumanBytes(fl.WireBytes)))
		}
	}
	counts["cm_requests"] = float64(reqs)
	counts["flows"] = float64(len(f.Flows))
	counts["bytes"] = float64(bytes)
	counts["on_compute_cm_requests"] = float64(computeReqs)
	counts["on_compute_flows"] = float64(computeFlows)
	counts["on_compute_bytes"] = float64(computeBytes)
	f.Severity = Warning
	where := "on the captured links"
	if compute {
		f.Severity = Critical
		where = "on compute HCA addresses"
	}
	f.Title = storageCMTitle(ports, compute)
	f.Detail = fmt.Sprintf("%s to storage service ports set up RDMA connections %s, and their QPs carried %s. %s",
		plural(reqs, "RDMA CM connection request"), where, flowtable.HumanBytes(bytes), storageWhy)
	if compute && (computeReqs < reqs || computeFlows < len(f.Flows)) {
		f.Detail = fmt.Sprintf("%s to storage service ports set up RDMA connections on the captured links, and their QPs carried %s; "+
			"of those, %s and %s (%s) have a compute HCA address at an end. %s",
			plural(reqs, "RDMA CM connection request"), flowtable.HumanBytes(bytes), plural(computeReqs, "request"),
			plural(computeFlows, "flow"), flowtable.HumanBytes(computeBytes), storageWhy)
	}
	f.Evidence = Evidence{Counts: counts, Details: capped(lines)}
	if unclassified > 0 {
		f.Evidence.Counts["cm_requests_unclassified"] = float64(unclassified)
		f.Detail += fmt.Sprintf(" %d more connection %s cut by the snap length before %s service ID: whether %s to a storage service "+
			"cannot be told (a snap length of 256 bytes keeps it).", unclassified, verb(unclassified, "request was", "requests were"),
			verb(unclassified, "its", "their"), verb(unclassified, "it was", "they were"))
	}
	span.set(in, &f.Evidence)
	f.Next = "Find which hosts mount storage over the compute HCAs (`nvme list-subsys`, `iscsiadm -m session`, `mount -t nfs`), and move them to the " +
		"storage NICs or a separate storage fabric; if storage must share it, give it its own priority and DSCP."
	return f, true
}

// storageCMPort is the storage service port the RDMA CM exchange that set
// up fl's connection asked for (an IP CM service in the TCP port space,
// RDMA CM Annex A11), if any.
func storageCMPort(fl *flows.Flow) (uint16, bool) {
	if fl.CM == nil || !fl.CM.IPService || fl.CM.PortSpace != bth.PortSpaceTCP || storageCMService(fl.CM.Port) == "" {
		return 0, false
	}
	return fl.CM.Port, true
}

// addrPair is two addresses in order, whichever way a packet went.
type addrPair struct{ lo, hi netip.Addr }

func pairOf(a, b netip.Addr) addrPair {
	if b.Less(a) {
		a, b = b, a
	}
	return addrPair{a, b}
}

// storageCMNamed is the set of flows (by ID) that storageCM accounts for:
// those of connections an RDMA CM exchange set up to a storage service port
// (its flows), and the CM datagrams on QP1 between two addresses whose
// every connection request was to one (its cm_requests: the exchanges that
// set those connections up).
// storageRole leaves them out, so that a connection is reported once, by
// the finding that names its service.
func storageCMNamed(in *Input) map[int]bool {
	named := map[int]bool{}
	for _, fl := range in.flowScan().cm {
		if _, ok := storageCMPort(fl); ok {
			named[fl.ID] = true
		}
	}
	if in.Collect == nil {
		return named
	}
	storage := map[addrPair]bool{} // false: a request to another service too
	for _, c := range in.Collect.CMConnects() {
		p := pairOf(c.Src, c.Dst)
		is := c.PortSpace == bth.PortSpaceTCP && storageCMService(c.Port) != ""
		if was, seen := storage[p]; !seen || was {
			storage[p] = is
		}
	}
	for _, fl := range in.Flows {
		if fl.Key.DestQP == gsiQPN && storage[pairOf(fl.Key.Src, fl.Key.Dst)] {
			named[fl.ID] = true
		}
	}
	return named
}

func comparePair(a, b [2]netip.Addr) int {
	if c := a[0].Compare(b[0]); c != 0 {
		return c
	}
	return a[1].Compare(b[1])
}

// storageIP reports NVMe/TCP (I/O and discovery), iSCSI, NFS and SMB
// conversations, and NFS's helpers: by port, or on a port rpcbind handed
// out (storageConvService).
func storageIP(in *Input) (Finding, bool) {
	if in.Collect == nil {
		return Finding{}, false
	}
	f := Finding{Kind: KindStorageOnCompute, Severity: Warning}
	byName := map[string]*struct{ convs, packets, bytes uint64 }{}
	var lines, otherLines []string // those with a compute end first
	var span frameSpan
	var computeConvs, computeBytes uint64
	for _, c := range in.Collect.Conversations() {
		name := storageConvService(c)
		if name == "" || onManagementNet(in, c.Src, c.Dst) {
			continue
		}
		s := byName[name]
		if s == nil {
			s = &struct{ convs, packets, bytes uint64 }{}
			byName[name] = s
		}
		s.convs++
		s.packets += c.Packets
		s.bytes += c.Bytes
		span.add(c.First)
		span.add(c.Last)
		f.Nodes = append(f.Nodes, nodeOf(in, c.Src), nodeOf(in, c.Dst))
		line := fmt.Sprintf("%s (%s): %s > %s, %s, %s", name, programPort(c),
			endpoint(in, c.Src), endpoint(in, c.Dst), plural(c.Packets, "packet"), flowtable.HumanBytes(c.Bytes))
		if isCompute(in, c.Src) || isCompute(in, c.Dst) {
			computeConvs++
			computeBytes += c.Bytes
			lines = append(lines, line)
		} else {
			otherLines = append(otherLines, line)
		}
	}
	if len(byName) == 0 {
		return f, false
	}
	compute := computeConvs > 0
	lines = append(lines, otherLines...)
	counts := map[string]float64{}
	var names []string
	var convs, bytes uint64
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		s := byName[name]
		key := storageIPKey(name)
		counts[key+"_conversations"] = float64(s.convs)
		counts[key+"_bytes"] = float64(s.bytes)
		convs += s.convs
		bytes += s.bytes
		names = append(names, name)
	}
	counts["conversations"] = float64(convs)
	counts["bytes"] = float64(bytes)
	counts["on_compute_conversations"] = float64(computeConvs)
	counts["on_compute_bytes"] = float64(computeBytes)
	where := "on the captured links"
	if compute {
		f.Severity = Critical
		where = "on compute HCA addresses"
		if computeConvs < convs {
			where = fmt.Sprintf("on the captured links, %d of them (%s) on compute HCA addresses", computeConvs, flowtable.HumanBytes(computeBytes))
		}
	}
	f.Title = storageIPTitle(names, compute)
	f.Detail = fmt.Sprintf("%s of storage protocols over TCP/UDP (%s, %s) run %s. %s", plural(convs, "conversation"),
		strings.Join(names, ", "), flowtable.HumanBytes(bytes), where, storageWhy)
	if compute {
		f.Detail += " Over TCP it is also not in the lossless class: its drops and retransmits share the links with RDMA."
	}
	f.Evidence = Evidence{Counts: counts, Details: capped(lines)}
	span.set(in, &f.Evidence)
	f.Next = "Check the storage mounts and initiators on the nodes listed (`nvme list-subsys`, `iscsiadm -m session`, `mount -t nfs`) and their " +
		"routes: the storage target should be reached through the storage NIC, not a compute HCA address."
	return f, true
}

// storageRole reports RoCE flows and conversations with an endpoint the
// topology gives the storage role, except those already named by their
// service: TCP/UDP conversations on a storage port (storageIP) and RoCE
// flows of an RDMA CM connection to a storage service (storageCM).
func storageRole(in *Input) (Finding, bool) {
	if in.Topology == nil {
		return Finding{}, false
	}
	type ep struct {
		flows, convs int
		bytes        uint64
		peers        map[netip.Addr]bool
		compute      bool // a peer is a compute HCA address
	}
	eps := map[netip.Addr]*ep{}
	f := Finding{Kind: KindStorageOnCompute, Severity: Warning}
	var span frameSpan
	compute := false
	get := func(a netip.Addr) *ep {
		e := eps[a]
		if e == nil {
			e = &ep{peers: map[netip.Addr]bool{}}
			eps[a] = e
		}
		return e
	}
	named := storageCMNamed(in)
	var nflows, computeFlows, computeConvs int // computeX: of those, with a compute end
	var bytes, computeBytes uint64
	onCompute := func(a, b netip.Addr) bool { return isCompute(in, a) || isCompute(in, b) }
	for _, fl := range in.Flows {
		if named[fl.ID] || !isStorage(in, fl.Key.Src) && !isStorage(in, fl.Key.Dst) {
			continue
		}
		nflows++
		bytes += fl.WireBytes
		if onCompute(fl.Key.Src, fl.Key.Dst) {
			computeFlows++
			computeBytes += fl.WireBytes
		}
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		span.add(fl.First)
		span.add(fl.Last)
		for _, pr := range [][2]netip.Addr{{fl.Key.Src, fl.Key.Dst}, {fl.Key.Dst, fl.Key.Src}} {
			if !isStorage(in, pr[0]) {
				continue
			}
			e := get(pr[0])
			e.flows++
			e.bytes += fl.WireBytes
			e.peers[pr[1]] = true
			e.compute = e.compute || isCompute(in, pr[1])
			compute = compute || e.compute
		}
	}
	var convs []*Conversation // distinct conversations with a storage end
	if in.Collect != nil {
		for _, c := range in.Collect.Conversations() {
			if storageConvService(c) != "" {
				continue // reported by service
			}
			if onManagementNet(in, c.Src, c.Dst) {
				continue // the management network's, not the compute links'
			}
			if isStorage(in, c.Src) || isStorage(in, c.Dst) {
				convs = append(convs, c)
				if onCompute(c.Src, c.Dst) {
					computeConvs++
					computeBytes += c.Bytes
				}
			}
			for _, pr := range [][2]netip.Addr{{c.Src, c.Dst}, {c.Dst, c.Src}} {
				if !isStorage(in, pr[0]) {
					continue
				}
				e := get(pr[0])
				e.convs++
				e.bytes += c.Bytes
				e.peers[pr[1]] = true
				e.compute = e.compute || isCompute(in, pr[1])
				compute = compute || e.compute
				f.Nodes = append(f.Nodes, nodeOf(in, c.Src), nodeOf(in, c.Dst))
				span.add(c.First)
				span.add(c.Last)
			}
		}
	}
	if len(eps) == 0 {
		return f, false
	}
	var lines []string
	// Those that talk to compute HCA addresses first, then by bytes.
	addrs := slices.SortedFunc(maps.Keys(eps), func(a, b netip.Addr) int {
		if ea, eb := eps[a].compute, eps[b].compute; ea != eb {
			if ea {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(eps[b].bytes, eps[a].bytes); c != 0 {
			return c
		}
		return a.Compare(b)
	})
	var computeEps int
	for _, a := range addrs {
		e := eps[a]
		if e.compute {
			computeEps++
		}
		var peers []string
		for _, p := range slices.SortedFunc(maps.Keys(e.peers), netip.Addr.Compare) {
			peers = append(peers, endpoint(in, p))
		}
		lines = append(lines, fmt.Sprintf("%s: %s, %s, %s with %s", endpoint(in, a), plural(e.flows, "RoCE flow"),
			plural(e.convs, "other conversation"), flowtable.HumanBytes(e.bytes), strings.Join(peers, ", ")))
	}
	for _, c := range convs {
		bytes += c.Bytes
	}
	where := "on this capture"
	if compute {
		f.Severity = Critical
		where = "with compute HCA addresses on this capture"
	}
	f.Title = storageRoleTitle(uint64(len(addrs)), uint64(computeEps), compute)
	f.Detail = fmt.Sprintf("Addresses the topology gives the storage role exchange %s (%s, %s) %s, besides the connections named by "+
		"their storage service.", flowtable.HumanBytes(bytes), plural(nflows, "RoCE flow"), plural(len(convs), "other conversation"), where)
	if compute && computeEps < len(addrs) {
		f.Detail = fmt.Sprintf("Addresses the topology gives the storage role exchange %s (%s, %s) on this capture, besides the connections named by "+
			"their storage service; of those, %d of %s talk to compute HCA addresses: %s and %s (%s).",
			flowtable.HumanBytes(bytes), plural(nflows, "RoCE flow"), plural(len(convs), "other conversation"),
			computeEps, plural(len(addrs), "storage address"), plural(computeFlows, "RoCE flow"), plural(computeConvs, "other conversation"),
			flowtable.HumanBytes(computeBytes))
	}
	f.Detail += " " + storageWhy
	f.Evidence = Evidence{Counts: map[string]float64{
		"storage_endpoints": float64(len(addrs)), "roce_flows": float64(nflows), "conversations": float64(len(convs)), "bytes": float64(bytes),
		"on_compute_endpoints": float64(computeEps), "on_compute_roce_flows": float64(computeFlows),
		"on_compute_conversations": float64(computeConvs), "on_compute_bytes": float64(computeBytes),
	}, Details: capped(lines)}
	span.set(in, &f.Evidence)
	f.Next = "Check the routes of the storage traffic (`ip route get <storage ip>` on the nodes listed, GPUDirect Storage / cufile.json NIC selection): " +
		"storage should leave through the storage NICs."
	return f, true
}

// The titles of the storage_on_compute findings, from what their counts
// say (compute: the traffic rides compute HCA addresses, which makes the
// finding critical): the module makes them here, and so does merge for
// the findings it combines (titleFromCounts).

// storageCMTitle names the RDMA CM storage services by port, in port order.
func storageCMTitle(ports []uint16, compute bool) string {
	var names []string
	for _, p := range slices.Sorted(slices.Values(ports)) {
		names = append(names, fmt.Sprintf("%s (%d)", storageCMService(p), p))
	}
	return fmt.Sprintf("Storage over RDMA %s: %s", storageWhere(compute), strings.Join(names, ", "))
}

// storageIPTitle names the TCP/UDP storage services, in name order.
func storageIPTitle(names []string, compute bool) string {
	return fmt.Sprintf("%s %s", strings.Join(slices.Sorted(slices.Values(names)), ", "), storageWhere(compute))
}

func storageWhere(compute bool) string {
	if compute {
		return "on compute HCA addresses"
	}
	return "on the captured links"
}

// storageRoleTitle is the title of storageRole's finding: n storage
// addresses, onCompute of which talk to compute HCA addresses (compute:
// some do).
func storageRoleTitle(n, onCompute uint64, compute bool) string {
	if compute && onCompute > 0 && onCompute < n {
		return fmt.Sprintf("%d of %s %s to compute HCA addresses", onCompute, plural(n, "storage address"), verb(onCompute, "talks", "talk"))
	}
	if compute {
		return fmt.Sprintf("%s %s to compute HCA addresses", plural(n, "storage address"), verb(n, "talks", "talk"))
	}
	return fmt.Sprintf("%s seen on the captured links", plural(n, "storage address"))
}
