package reports

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/reports/flowtable"
	"github.com/rocedump/rocedump/topology"
)

// RDMAOnManagement reports RoCE flows to or from addresses the topology
// gives the management or BMC role. RDMA belongs on the compute HCAs (and
// the storage NICs): a management port is not set up for RoCE (no lossless
// priority, no ECN or PFC on its switch), and a BMC is no RDMA device at
// all, so such a flow is a QP set up with the wrong address (a GID, an
// RDMA CM address or a host name that resolves to the management
// interface), an interface configured with an address of the management
// or BMC range, or a topology file that gives the address the wrong role.
//
// Severity: warning. Without a topology nothing is reported: the role of
// an address is not in the packets.
func RDMAOnManagement(in *Input) []Finding {
	if in.Topology == nil {
		return nil
	}
	defer in.scanning()()
	sc := in.flowScan()
	// The role of each address once, not of each flow's two ends.
	roles := make([]topology.Role, len(sc.addrs))
	found := false
	for i, a := range sc.addrs {
		if r := identity(in, a).Role; r == topology.RoleManagement || r == topology.RoleBMC {
			roles[i], found = r, true
		}
	}
	if !found {
		return nil
	}
	type addr struct {
		flows int
		bytes uint64
		peers map[netip.Addr]bool
	}
	addrs := map[netip.Addr]*addr{}
	f := Finding{Kind: KindRDMAOnManagement, Severity: Warning}
	var hit []*flows.Flow
	var packets, bytes uint64
	var span frameSpan
	for i, b := range sc.brief {
		if roles[b.src] == "" && roles[b.dst] == "" {
			continue
		}
		fl := sc.flows[i]
		hit = append(hit, fl)
		packets += fl.Packets
		bytes += fl.WireBytes
		span.add(fl.First)
		span.add(fl.Last)
		f.Flows = append(f.Flows, fl.ID)
		f.Nodes = append(f.Nodes, nodeOf(in, fl.Key.Src), nodeOf(in, fl.Key.Dst))
		for _, e := range [][2]int32{{b.src, b.dst}, {b.dst, b.src}} {
			if roles[e[0]] == "" {
				continue
			}
			a := addrs[sc.addrs[e[0]]]
			if a == nil {
				a = &addr{peers: map[netip.Addr]bool{}}
				addrs[sc.addrs[e[0]]] = a
			}
			a.flows++
			a.bytes += fl.WireBytes
			a.peers[sc.addrs[e[1]]] = true
		}
	}
	ips := slices.SortedFunc(maps.Keys(addrs), func(x, y netip.Addr) int {
		if c := cmp.Compare(addrs[y].bytes, addrs[x].bytes); c != 0 {
			return c
		}
		return x.Compare(y)
	})
	var nmgmt, nbmc uint64
	var lines detailLines
	for _, ip := range ips {
		if identity(in, ip).Role == topology.RoleBMC {
			nbmc++
		} else {
			nmgmt++
		}
		a := addrs[ip]
		lines.add(func() string {
			var peers []string
			for _, p := range slices.SortedFunc(maps.Keys(a.peers), netip.Addr.Compare) {
				peers = append(peers, endpoint(in, p))
			}
			return fmt.Sprintf("%s: %s, %s with %s", endpoint(in, ip), plural(a.flows, "RoCE flow"), flowtable.HumanBytes(a.bytes), strings.Join(peers, ", "))
		})
	}
	slices.SortStableFunc(hit, func(x, y *flows.Flow) int { return cmp.Compare(y.WireBytes, x.WireBytes) })
	for _, fl := range hit {
		lines.add(func() string {
			return fmt.Sprintf("flow %d %s: %s, %s", fl.ID, flowName(fl), plural(fl.Packets, "packet"), flowtable.HumanBytes(fl.WireBytes))
		})
	}
	f.Title = fmt.Sprintf("RDMA on %s (%s)", managementAddresses(nmgmt, nbmc), flowtable.HumanBytes(bytes))
	f.Detail = fmt.Sprintf("%s (%s, %s) %s addresses the topology gives the management or BMC role. RDMA belongs on "+
		"the compute HCAs and storage NICs: a management port is not set up for RoCE (no lossless priority, no ECN or PFC on its "+
		"switch) and a BMC is no RDMA device at all. So a QP was set up with the wrong address (a GID index, an RDMA CM address or "+
		"a host name that resolves to the management interface), an interface holds an address of the management or BMC range, "+
		"or the topology file gives these addresses the wrong role.",
		plural(len(hit), "RoCE flow"), plural(packets, "packet"), flowtable.HumanBytes(bytes), verb(len(hit), "goes to or comes from", "go to or come from"))
	f.Evidence = Evidence{Counts: map[string]float64{
		"addresses": float64(len(ips)), "management_addresses": float64(nmgmt), "bmc_addresses": float64(nbmc),
		"flows": float64(len(hit)), "packets": float64(packets), "bytes": float64(bytes),
	}, Details: lines.capped()}
	span.set(in, &f.Evidence)
	f.Next = "On the nodes listed, find which interface holds each address (`ip -br addr`; `rdma link` and `show_gids` for the GIDs RoCE uses) " +
		"and which process owns the QPs (`rdma resource show qp`); check the job's HCA and GID choice (NCCL_IB_HCA, NCCL_IB_GID_INDEX) " +
		"and name resolution, and that the topology file gives these addresses their real role."
	return []Finding{f}
}

// managementAddresses is "1 management address", "2 BMC addresses" or
// "1 management address and 1 BMC address".
func managementAddresses(mgmt, bmc uint64) string {
	var parts []string
	if mgmt > 0 {
		parts = append(parts, plural(mgmt, "management address"))
	}
	if bmc > 0 {
		parts = append(parts, plural(bmc, "BMC address"))
	}
	return strings.Join(parts, " and ")
}
