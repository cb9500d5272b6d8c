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

// crossRailCriticalBytes is the least cross-rail RDMA data (IP bytes of
// flows on QPs other than QP1) of a critical cross_rail finding: 10 MB is
// 0.2 ms of one 400 Gb/s link at line rate (2 ms at a tenth of it), which
// a mis-cabled HCA or a job that crosses rails moves many times over in any
// capture that sees it, and which a QP handshake, a perftest probe or a few
// stray packets do not reach.
const crossRailCriticalBytes = 10e6

// CrossRail reports compute-to-compute RoCE flows whose two ends are on
// different rails of a rail-optimised fabric, per node pair. Flows between
// the same rail of different nodes (on one leaf or on different leaves) are
// what the fabric is built for and are never flagged.
//
// Severity rules:
//   - no topology (no --topology, no --rail-subnet): one info finding that
//     says cross-rail cannot be judged; nothing is guessed;
//   - cross-rail flows: warning; critical when they carry half or more of
//     the compute-to-compute bytes (the job as a whole is crossing rails)
//     and their RDMA data (QPs other than QP1: RDMA CM and other MADs do
//     not count) is at least crossRailCriticalBytes, so that a capture
//     whose only cross-rail traffic is a few CM datagrams, or a few data
//     packets, stays a warning;
//   - RoCE endpoints the topology does not name, or compute addresses
//     without a rail: one info finding listing them as unknown.
func CrossRail(in *Input) []Finding {
	if len(in.Flows) == 0 {
		return nil
	}
	if in.Topology == nil {
		return []Finding{{
			Kind:     KindCrossRail,
			Severity: Info,
			Title:    "Cross-rail traffic not judged: no topology given",
			Detail: "Which rail an address is on is not in the packets. Without a topology rocedump does not guess, " +
				"so cross-rail flows, if any, are not reported.",
			Next: "Run again with `--topology FILE` (nodes, interfaces, roles, rails) or `--rail-subnet CIDR=RAIL` for each rail.",
		}}
	}
	type pairKey struct{ a, b string } // node names, a before b in topology.CompareNames
	type pair struct {
		key   pairKey
		bytes uint64
		flows []*flows.Flow
		qps   map[flows.Key]bool
		conns map[int]bool // lower flow ID of each connection (a flow and its partner)
		rails map[[2]int]bool
	}
	pairs := map[pairKey]*pair{}
	var computeBytes, crossBytes, crossDataBytes uint64
	unknown := map[netip.Addr]topology.Identity{}
	endpoints := map[netip.Addr]bool{}
	var span frameSpan
	for _, f := range in.Flows {
		s, d := identity(in, f.Key.Src), identity(in, f.Key.Dst)
		for _, e := range []struct {
			ip netip.Addr
			id topology.Identity
		}{{f.Key.Src, s}, {f.Key.Dst, d}} {
			endpoints[e.ip] = true
			if !e.id.Known || e.id.Role == topology.RoleCompute && !e.id.HasRail {
				unknown[e.ip] = e.id
			}
		}
		if s.Role != topology.RoleCompute || d.Role != topology.RoleCompute || !s.HasRail || !d.HasRail {
			continue
		}
		computeBytes += f.WireBytes
		if s.Rail == d.Rail {
			continue
		}
		crossBytes += f.WireBytes
		na, nb := nodeOf(in, f.Key.Src), nodeOf(in, f.Key.Dst)
		ra, rb := s.Rail, d.Rail
		if c := topology.CompareNames(na, nb); c > 0 || c == 0 && rb < ra {
			na, nb, ra, rb = nb, na, rb, ra
		}
		k := pairKey{na, nb}
		p := pairs[k]
		if p == nil {
			p = &pair{key: k, qps: map[flows.Key]bool{}, conns: map[int]bool{}, rails: map[[2]int]bool{}}
			pairs[k] = p
		}
		p.bytes += f.WireBytes
		p.flows = append(p.flows, f)
		if f.Key.DestQP > gsiQPN {
			crossDataBytes += f.WireBytes
			p.qps[flows.Key{Dst: f.Key.Dst, DestQP: f.Key.DestQP}] = true
			if f.HasSrcQP {
				p.qps[flows.Key{Dst: f.Key.Src, DestQP: f.SrcQP}] = true
			}
			id := f.ID
			if f.Partner != nil {
				id = min(id, f.Partner.ID)
			}
			p.conns[id] = true
		}
		p.rails[[2]int{ra, rb}] = true
		span.add(f.First)
		span.add(f.Last)
	}
	var out []Finding
	if len(pairs) > 0 {
		list := slices.Collect(maps.Values(pairs))
		slices.SortFunc(list, func(x, y *pair) int {
			if c := cmp.Compare(y.bytes, x.bytes); c != 0 {
				return c
			}
			if c := topology.CompareNames(x.key.a, y.key.a); c != 0 {
				return c
			}
			return topology.CompareNames(x.key.b, y.key.b)
		})
		f := Finding{Kind: KindCrossRail, Severity: Warning}
		var nflows, nqps, nconns int
		var lines []string
		for _, p := range list {
			nflows += len(p.flows)
			nqps += len(p.qps)
			nconns += len(p.conns)
			var rails []string
			for _, r := range slices.SortedFunc(maps.Keys(p.rails), func(x, y [2]int) int {
				if c := cmp.Compare(x[0], y[0]); c != 0 {
					return c
				}
				return cmp.Compare(x[1], y[1])
			}) {
				rails = append(rails, fmt.Sprintf("rail %d-%d", r[0], r[1]))
			}
			lines = append(lines, fmt.Sprintf("%s <> %s: %s (%s), %s, %s (%s)", p.key.a, p.key.b, plural(len(p.conns), "connection"),
				plural(len(p.qps), "QP"), plural(len(p.flows), "flow"), flowtable.HumanBytes(p.bytes), strings.Join(rails, ", ")))
			f.Nodes = append(f.Nodes, p.key.a, p.key.b)
			for _, fl := range p.flows {
				f.Flows = append(f.Flows, fl.ID)
			}
		}
		most := computeBytes > 0 && float64(crossBytes) >= 0.5*float64(computeBytes)
		if most && crossDataBytes >= crossRailCriticalBytes {
			f.Severity = Critical
		}
		f.Title = crossRailTitle(nconns, nflows, len(list), crossBytes)
		f.Detail = fmt.Sprintf("On a rail-optimised fabric GPU n of every node talks to GPU n of the others over rail n, one hop through the rail's leaf. "+
			"These %s connect HCAs on different rails, so their traffic climbs to the spine and competes with the AllReduce for uplinks "+
			"(%s of the %s of compute-to-compute RoCE traffic). NCCL normally keeps traffic on a rail and moves it between GPUs over NVLink (PXN).",
			plural(nflows, "flow"), percent(float64(crossBytes), float64(computeBytes)), flowtable.HumanBytes(computeBytes))
		switch {
		case !most || f.Severity == Critical:
		case crossDataBytes == 0:
			f.Detail += " It is half or more of the compute traffic, but all of it RDMA CM (QP1) datagrams, no RDMA data: " +
				"connections set up across rails whose data the capture does not hold. A warning, not critical."
		default:
			f.Detail += fmt.Sprintf(" It is half or more of the compute traffic, but only %s of it is RDMA data (QPs other than QP1), "+
				"less than the %s that a data path crossing rails moves in a fraction of a millisecond at 400 Gb/s. A warning, not critical.",
				flowtable.HumanBytes(crossDataBytes), flowtable.HumanBytes(crossRailCriticalBytes))
		}
		f.Evidence = Evidence{
			Counts: map[string]float64{
				"node_pairs": float64(len(list)), "flows": float64(nflows), "qps": float64(nqps), "connections": float64(nconns),
				"cross_rail_bytes": float64(crossBytes), "cross_rail_data_bytes": float64(crossDataBytes), "compute_bytes": float64(computeBytes),
			},
			Details: capped(lines),
		}
		span.set(in, &f.Evidence)
		f.Next = "Check the job's NCCL settings (NCCL_CROSS_NIC, NCCL_PXN_DISABLE, NCCL_IB_HCA order, NCCL_TOPO_FILE) and `nvidia-smi topo -m` " +
			"on the nodes listed; then the HCA cabling and the rail addresses in the topology file."
		out = append(out, f)
	}
	if len(unknown) > 0 {
		out = append(out, unplacedFinding(unknown, len(endpoints)))
	}
	return out
}

// unplacedFinding is the note on the RoCE endpoints the topology places on
// no rail, out of endpoints in all. An address the topology does
// not name is no compute HCA either, so the other modules leave it out
// too (non-RDMA traffic on compute links, QPs per HCA): the note says so,
// and says it loudest when the topology names none of the endpoints (the
// file of another fabric, or a capture of one), which would otherwise
// make those findings vanish without a word.
func unplacedFinding(unknown map[netip.Addr]topology.Identity, endpoints int) Finding {
	ips := slices.SortedFunc(maps.Keys(unknown), netip.Addr.Compare)
	var lines, nodes []string
	named := endpoints
	for _, a := range ips {
		nodes = append(nodes, a.String())
		if id := unknown[a]; id.Known {
			lines = append(lines, a.String()+" (compute, no rail)")
		} else {
			lines = append(lines, a.String()+" (unknown)")
			named--
		}
	}
	f := Finding{
		Kind:     KindCrossRail,
		Severity: Info,
		Title:    fmt.Sprintf("%s not placed on a rail by the topology", plural(len(ips), "RoCE endpoint")),
		Detail: "The topology does not name these addresses (or names them compute without a rail), so flows to and from them " +
			"were not judged for cross-rail traffic. An address it does not name is not a compute HCA either: its other TCP/UDP " +
			"(non_rdma_on_compute) and its QPs (fan_out) are not reported.",
		Nodes: nodes,
		Evidence: Evidence{Counts: map[string]float64{"unknown_endpoints": float64(len(ips)), "roce_endpoints": float64(endpoints)},
			Details: capped(lines)},
		Next: "Add the addresses to the topology file (or a `--rail-subnet` covering them).",
	}
	if named == 0 {
		f.Title = fmt.Sprintf("The topology names none of the %s", plural(endpoints, "RoCE endpoint"))
		f.Detail = "No address of the capture's RoCE flows is in the topology, by interface or subnet: it may be another fabric's file, " +
			"or the capture another fabric's. rocedump does not guess roles, so no flow was judged for cross-rail traffic, and " +
			"none of these addresses counts as a compute HCA: their non-RDMA traffic (non_rdma_on_compute) and their QPs (fan_out) " +
			"are not reported."
		f.Next = "Check that the topology (the `--topology` file, and the `--rail-subnet` mappings: they alone are one too) is this fabric's; " +
			"run without them to see the findings that need no roles."
	}
	return f
}

// crossRailTitle is the cross_rail finding's headline. It counts QP
// connections; when only QP1 flows cross rails (RDMA CM datagrams setting
// up a connection whose data the capture does not hold), there is none to
// count, and it names those flows instead of "0 QP connections".
func crossRailTitle(conns, nflows, pairs int, bytes uint64) string {
	n, what := conns, "QP connection"
	if conns == 0 {
		n, what = nflows, "RDMA CM flow"
	}
	return fmt.Sprintf("%s %s rails between %s (%s)", plural(n, what), verb(n, "crosses", "cross"), plural(pairs, "node pair"), flowtable.HumanBytes(bytes))
}
