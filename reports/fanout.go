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

// Fan-out thresholds.
const (
	// fanOutQPLimit is the QPs on one HCA past which its QP context no
	// longer fits the NIC's cache comfortably: several thousand active QPs
	// per ConnectX port start to miss it, and 1024 is far beyond what one
	// collective needs (a 1024-GPU AllReduce is ~1023 peers).
	fanOutQPLimit = 1024
	// fanOutOutlier: an HCA with this many times the median QPs of its
	// peers (HCAs that talk to at least two others) stands out...
	fanOutOutlier = 4
	// ...when it also has at least this many QPs, and there are at least
	// fanOutMinPeers HCAs to compare.
	fanOutOutlierMin = 64
	fanOutMinPeers   = 4
)

// FanOut reports the active QPs per HCA (IP address) and per node, and the
// busiest HCAs. A QP of an HCA is a destination QPN of a flow to it, or the
// source QPN of a flow from it when known; QP0 and QP1 (management) do not
// count. With a topology the HCAs are the addresses it gives the compute
// role, and the nodes its named nodes (a storage server, a management port
// or an unknown address is not an HCA, and an address known only by a
// subnet is in no node); without one every RoCE address counts as an HCA,
// and nodes are not counted.
//
// Severity rules: info, saying what is normal (NCCL opens about one QP per
// peer per channel: an AllReduce over 256 GPUs puts ~255 QPs on each HCA);
// warning when an HCA has more than 1024 QPs, or 4× the median QPs of the
// HCAs that talk to at least two others (and at least 64, with at least 4
// such HCAs to compare): a QP leak, a reconnect loop, or a job using far
// more connections than its peers.
func FanOut(in *Input) []Finding {
	defer in.scanning()()
	list := fanOutHCAs(in.scan)
	others := 0 // addresses with QPs that are not compute HCAs
	if in.Topology != nil {
		n := len(list)
		list = slices.DeleteFunc(list, func(h *fanOutHCA) bool { return !isCompute(in, h.ip) })
		others = n - len(list)
	}
	if len(list) == 0 {
		return nil
	}
	var totalQPs int
	var compared []int
	byNode := map[string]int{}
	for _, h := range list {
		totalQPs += h.qps
		if node := identity(in, h.ip).Node; node != "" {
			byNode[node] += h.qps
		}
		if h.peers >= 2 {
			compared = append(compared, h.qps)
		}
	}
	median := 0
	if len(compared) > 0 {
		slices.Sort(compared)
		median = compared[len(compared)/2]
	}
	f := Finding{Kind: KindFanOut, Severity: Info}
	var lines, why []string
	for i, h := range list {
		n := h.qps
		line := fmt.Sprintf("%s: %s with %s, %s", endpoint(in, h.ip), plural(n, "QP"), plural(h.peers, "peer"), flowtable.HumanBytes(h.bytes))
		switch {
		case n > fanOutQPLimit:
			f.Severity = Warning
			why = append(why, fmt.Sprintf("%s has %d QPs, more than %d", h.ip, n, fanOutQPLimit))
			line += " (over the limit)"
		case len(compared) >= fanOutMinPeers && h.peers >= 2 && n >= fanOutOutlierMin && n >= fanOutOutlier*median:
			f.Severity = Warning
			why = append(why, fmt.Sprintf("%s has %d QPs, %d× the median of %d", h.ip, n, n/max(median, 1), median))
			line += " (outlier)"
		case i >= maxDetails:
			continue
		}
		f.Nodes = append(f.Nodes, nodeOf(in, h.ip))
		lines = append(lines, line)
	}
	if len(list) > len(lines) {
		lines = append(lines, fmt.Sprintf("and %d more HCAs", len(list)-len(lines)))
	}
	top := list[0]
	nodes := slices.SortedFunc(maps.Keys(byNode), func(a, b string) int {
		if c := cmp.Compare(byNode[b], byNode[a]); c != 0 {
			return c
		}
		return topology.CompareNames(a, b)
	})
	f.Evidence = Evidence{Counts: map[string]float64{
		"hcas": float64(len(list)), "qps": float64(totalQPs), "max_qps_per_hca": float64(top.qps),
	}, Details: lines}
	if len(nodes) > 0 {
		f.Evidence.Counts["nodes"] = float64(len(nodes))
		f.Evidence.Counts["max_qps_per_node"] = float64(byNode[nodes[0]])
	}
	if len(compared) > 0 {
		f.Evidence.Counts["median_qps_per_hca"] = float64(median)
	}
	if others > 0 {
		f.Evidence.Counts["non_compute_addresses"] = float64(others)
	}
	for i, n := range nodes {
		if i == 5 {
			break
		}
		f.Evidence.Details = append(f.Evidence.Details, fmt.Sprintf("node %s: %s", n, plural(byNode[n], "QP")))
	}
	f.Title = fmt.Sprintf("Up to %s per HCA (busiest %s) across %s", plural(top.qps, "QP"), top.ip, plural(len(list), "HCA"))
	f.Detail = fmt.Sprintf("%s active on %s", plural(totalQPs, "QP"), plural(len(list), "HCA"))
	if len(nodes) > 0 {
		f.Detail += fmt.Sprintf(" of %s", plural(len(nodes), "node"))
	}
	f.Detail += ". "
	switch {
	case others > 0:
		f.Detail += fmt.Sprintf("The QPs of %s that the topology does not give the compute role (storage, management, BMC or unknown) "+
			"are not counted. ", plural(others, "other RoCE address"))
	case in.Topology == nil:
		f.Detail += "Without a topology every RoCE address counts as an HCA. "
	}
	if len(compared) > 0 {
		f.Detail += fmt.Sprintf("The median is %d per HCA among the %s that %s to two or more peers. ", median,
			plural(len(compared), "HCA"), verb(len(compared), "talks", "talk"))
	}
	f.Detail += "NCCL opens about one QP per peer and channel (times NCCL_IB_QPS_PER_CONNECTION): an AllReduce over 256 GPUs puts ~255 QPs on each HCA, " +
		"so hundreds per HCA are normal for a large job. Thousands on one HCA overflow the NIC's QP context cache and slow every QP on it."
	f.Next = "Nothing to do unless an HCA stands out; then count its QPs on the host (`rdma resource show qp`) and look for a QP leak or a reconnect loop."
	if len(why) > 0 {
		f.Title = "QP fan-out out of line: " + why[0]
		f.Detail += " Out of line here: " + strings.Join(why, "; ") + "."
		f.Next = "On the hosts of the HCAs named, count QPs (`rdma resource show qp`) per process, and look for a QP leak, a reconnect loop or " +
			"NCCL_IB_QPS_PER_CONNECTION / NCCL_NCHANNELS set far higher than on other jobs."
	}
	return []Finding{f}
}

// fanOutHCA is one HCA (address) with its distinct QPs and peers.
type fanOutHCA struct {
	ip         netip.Addr
	qps, peers int
	bytes      uint64
}

// fanOutHCAs lists the HCAs with QPs, most QPs first (then bytes, then
// address). Per host number it sums the bytes and counts the distinct QPs
// and peers of its (host, QPN) and (host, peer) pairs (hostGroups).
func fanOutHCAs(sc *flowScan) []*fanOutHCA {
	n := len(sc.addrs)
	bytes := make([]uint64, n)
	qps, peers := newHostGroups(n), newHostGroups(n)
	// Two passes over the flows: the first sums the bytes and counts each
	// host's values, the second places them (hostGroups).
	for pass := range 2 {
		for i, b := range sc.brief {
			if pass == 0 {
				bytes[b.src] += b.bytes
				bytes[b.dst] += b.bytes
			}
			if i == 0 || b.src != sc.brief[i-1].src || b.dst != sc.brief[i-1].dst { // the QPs of a host pair often follow each other
				peers.add(pass, b.src, uint32(b.dst))
				peers.add(pass, b.dst, uint32(b.src))
			}
			if b.destQP > gsiQPN {
				qps.add(pass, b.dst, b.destQP)
			}
			if b.srcQP > gsiQPN {
				qps.add(pass, b.src, b.srcQP)
			}
		}
		if pass == 0 {
			qps.place()
			peers.place()
		}
	}
	nqps, npeers := qps.distinct(false), peers.distinct(true)
	var list []*fanOutHCA
	for i, a := range sc.addrs {
		if nqps[i] > 0 { // else only management datagrams (RDMA CM on QP1)
			list = append(list, &fanOutHCA{ip: a, qps: nqps[i], peers: npeers[i], bytes: bytes[i]})
		}
	}
	slices.SortFunc(list, func(a, b *fanOutHCA) int {
		if c := cmp.Compare(b.qps, a.qps); c != 0 {
			return c
		}
		if c := cmp.Compare(b.bytes, a.bytes); c != 0 {
			return c
		}
		return a.ip.Compare(b.ip)
	})
	return list
}

// hostGroups gathers values by host number (0 to n-1) with a counting
// sort, to count each host's distinct values (distinct): add every
// (host, value) pair once with pass 0, which counts them, call place, then
// add the same pairs in the same order with pass 1, which places them.
// Host h's values are then vals[start[h]:start[h+1]]. Counting this way
// rather than sorting every pair packed into a number (127k of them at
// 63k flows) costs a pass over the pairs and a sort of each host's few
// hundred values.
type hostGroups struct {
	start, next []int32
	vals        []uint32
}

func newHostGroups(n int) *hostGroups { return &hostGroups{start: make([]int32, n+1)} }

// add counts (pass 0) or places (pass 1) value v of host h.
func (g *hostGroups) add(pass int, h int32, v uint32) {
	if pass == 0 {
		g.start[h+1]++
		return
	}
	g.vals[g.next[h]] = v
	g.next[h]++
}

// place makes room for the values counted.
func (g *hostGroups) place() {
	n := len(g.start) - 1
	for h := range n {
		g.start[h+1] += g.start[h]
	}
	g.next = make([]int32, n)
	copy(g.next, g.start)
	g.vals = make([]uint32, g.start[n])
}

// distinct counts each host's distinct values: values below n (peers,
// which are host numbers) by marking them, others (QPNs) by sorting each
// host's values.
func (g *hostGroups) distinct(peers bool) []int {
	n := len(g.start) - 1
	out := make([]int, n)
	if peers {
		seen := make([]int32, n) // host+1 that last counted each value
		for h := range n {
			for _, v := range g.vals[g.start[h]:g.start[h+1]] {
				if seen[v] != int32(h+1) {
					seen[v] = int32(h + 1)
					out[h]++
				}
			}
		}
		return out
	}
	for h := range n {
		out[h] = countDistinct32(g.vals[g.start[h]:g.start[h+1]])
	}
	return out
}

// countDistinct32 sorts v and counts its distinct values.
func countDistinct32(v []uint32) int {
	slices.Sort(v)
	n := 0
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			n++
		}
	}
	return n
}
