package reports

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/rocedump/rocedump/reports/flowtable"
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
// count.
//
// Severity rules: info, saying what is normal (NCCL opens about one QP per
// peer per channel: an AllReduce over 256 GPUs puts ~255 QPs on each HCA);
// warning when an HCA has more than 1024 QPs, or 4× the median QPs of the
// HCAs that talk to at least two others (and at least 64, with at least 4
// such HCAs to compare): a QP leak, a reconnect loop, or a job using far
// more connections than its peers.
func FanOut(in *Input) []Finding {
	type hca struct {
		ip    netip.Addr
		qps   map[uint32]bool
		peers map[netip.Addr]bool
		bytes uint64
	}
	hcas := map[netip.Addr]*hca{}
	get := func(a netip.Addr) *hca {
		h := hcas[a]
		if h == nil {
			h = &hca{ip: a, qps: map[uint32]bool{}, peers: map[netip.Addr]bool{}}
			hcas[a] = h
		}
		return h
	}
	for _, f := range in.Flows {
		s, d := get(f.Key.Src), get(f.Key.Dst)
		s.peers[f.Key.Dst], d.peers[f.Key.Src] = true, true
		s.bytes += f.WireBytes
		d.bytes += f.WireBytes
		if f.Key.DestQP > gsiQPN {
			d.qps[f.Key.DestQP] = true
		}
		if f.HasSrcQP && f.SrcQP > gsiQPN {
			s.qps[f.SrcQP] = true
		}
	}
	for a, h := range hcas {
		if len(h.qps) == 0 {
			delete(hcas, a) // only management datagrams (RDMA CM on QP1)
		}
	}
	if len(hcas) == 0 {
		return nil
	}
	list := slices.SortedFunc(maps.Values(hcas), func(a, b *hca) int {
		if c := cmp.Compare(len(b.qps), len(a.qps)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.bytes, a.bytes); c != 0 {
			return c
		}
		return a.ip.Compare(b.ip)
	})
	var totalQPs int
	var compared []int
	byNode := map[string]int{}
	for _, h := range list {
		totalQPs += len(h.qps)
		byNode[nodeOf(in, h.ip)] += len(h.qps)
		if len(h.peers) >= 2 {
			compared = append(compared, len(h.qps))
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
		n := len(h.qps)
		line := fmt.Sprintf("%s: %s with %s, %s", endpoint(in, h.ip), plural(n, "QP"), plural(len(h.peers), "peer"), flowtable.HumanBytes(h.bytes))
		switch {
		case n > fanOutQPLimit:
			f.Severity = Warning
			why = append(why, fmt.Sprintf("%s has %d QPs, more than %d", h.ip, n, fanOutQPLimit))
			line += " (over the limit)"
		case len(compared) >= fanOutMinPeers && len(h.peers) >= 2 && n >= fanOutOutlierMin && n >= fanOutOutlier*median:
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
		return strings.Compare(a, b)
	})
	f.Evidence = Evidence{Counts: map[string]float64{
		"hcas": float64(len(list)), "qps": float64(totalQPs), "max_qps_per_hca": float64(len(top.qps)),
		"nodes": float64(len(byNode)), "max_qps_per_node": float64(byNode[nodes[0]]),
	}, Details: lines}
	if len(compared) > 0 {
		f.Evidence.Counts["median_qps_per_hca"] = float64(median)
	}
	if in.Topology != nil {
		for i, n := range nodes {
			if i == 5 {
				break
			}
			f.Evidence.Details = append(f.Evidence.Details, fmt.Sprintf("node %s: %s", n, plural(byNode[n], "QP")))
		}
	}
	f.Title = fmt.Sprintf("Up to %s per HCA (busiest %s) across %s", plural(len(top.qps), "QP"), top.ip, plural(len(list), "HCA"))
	f.Detail = fmt.Sprintf("%s active on %s. ", plural(totalQPs, "QP"), plural(len(list), "HCA"))
	if len(compared) > 0 {
		f.Detail += fmt.Sprintf("The median is %d per HCA among the %s that talk to two or more peers. ", median, plural(len(compared), "HCA"))
	}
	f.Detail += "NCCL opens about one QP per peer and channel (times NCCL_IB_QPS_PER_CONNECTION): an AllReduce over 256 GPUs puts ~255 QPs on each HCA, " +
		"so hundreds per HCA are normal for a large job. Thousands on one HCA overflow the NIC's QP context cache and slow every QP on it."
	f.Next = "Nothing to do unless an HCA stands out; then count its QPs on the host (rdma resource show qp) and look for a QP leak or a reconnect loop."
	if len(why) > 0 {
		f.Title = "QP fan-out out of line: " + why[0]
		f.Detail += " Out of line here: " + strings.Join(why, "; ") + "."
		f.Next = "On the hosts of the HCAs named, count QPs (rdma resource show qp) per process, and look for a QP leak, a reconnect loop or " +
			"NCCL_IB_QPS_PER_CONNECTION / NCCL_NCHANNELS set far higher than on other jobs."
	}
	return []Finding{f}
}
