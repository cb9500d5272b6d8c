package reports

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/topology"
)

const pod = "report_pod.yaml"

// truthBytes sums the wire bytes of the named scenario flows, both ways.
func truthBytes(tr *gen.Truth, names ...string) float64 {
	var n int64
	for _, f := range tr.Flows {
		if slices.Contains(names, f.Flow) {
			n += f.WireBytes
		}
	}
	return float64(n)
}

// TestNoFalseFindings: clean traffic gives nothing at warning or above and
// no cross_rail finding at all, with the topology; without one, only the
// note that cross-rail needs a topology.
func TestNoFalseFindings(t *testing.T) {
	for _, name := range []string{"report_clean_rails", "clean_allreduce"} {
		t.Run(name, func(t *testing.T) {
			fs := runAll(loadGen(t, name, pod))
			for _, f := range fs {
				if f.Severity >= Warning || f.Kind == KindCrossRail || f.Kind != KindFanOut {
					t.Errorf("unexpected finding: %s", summary([]Finding{f}))
				}
			}
			if len(ofKind(fs, KindFanOut)) != 1 {
				t.Errorf("want one fan_out note, got %s", summary(fs))
			}
			fs = runAll(loadGen(t, name, ""))
			if cr := ofKind(fs, KindCrossRail); len(cr) != 1 || cr[0].Severity != Info || !strings.Contains(cr[0].Next, "--topology") {
				t.Errorf("without a topology want one info cross_rail note, got %s", summary(cr))
			}
		})
	}
}

// TestCrossRail checks the cross-rail finding against the scenario.
func TestCrossRail(t *testing.T) {
	tr := genTruth(t, "report_cross_rail")
	fs := ofKind(runAll(loadGen(t, "report_cross_rail", pod)), KindCrossRail)
	if len(fs) != 2 {
		t.Fatalf("want a cross-rail warning and an unknown-endpoint note, got %s", summary(fs))
	}
	f := fs[0]
	if f.Severity != Warning {
		t.Errorf("severity %v, want warning (cross-rail is %v of %v bytes)", f.Severity, f.Evidence.Counts["cross_rail_bytes"], f.Evidence.Counts["compute_bytes"])
	}
	cross := []string{"x-r0-r3-a", "x-r0-r3-b", "x-r5-r6", "x-same-node"}
	wantCounts(t, f, map[string]float64{
		"node_pairs": 3, "connections": 4, "qps": 8, "flows": 8,
		"cross_rail_bytes": truthBytes(tr, cross...),
		"compute_bytes":    truthBytes(tr, append(cross, "same-r0", "same-r1", "same-r2", "same-r3", "same-r0-leaf")...),
	})
	if want := []string{"dgx-01", "dgx-02", "dgx-03", "dgx-04"}; !slices.Equal(f.Nodes, want) {
		t.Errorf("nodes %v, want %v", f.Nodes, want)
	}
	if len(f.Evidence.Details) != 3 || !strings.HasPrefix(f.Evidence.Details[0], "dgx-01 <> dgx-02: 2 connections (4 QPs), 4 flows") ||
		!strings.HasSuffix(f.Evidence.Details[2], "(rail 1-2)") {
		t.Errorf("details %q", f.Evidence.Details)
	}
	u := fs[1]
	if u.Severity != Info || !slices.Equal(u.Nodes, []string{"10.9.9.9"}) || u.Evidence.Details[0] != "10.9.9.9 (unknown)" {
		t.Errorf("unknown endpoints: %+v", u)
	}
}

// TestRDMAOnManagement: RoCE to a management port and from a BMC address
// is a warning naming both addresses, their roles, flows and bytes; the
// compute and storage flows are not in it, and without a topology nothing
// can be said.
func TestRDMAOnManagement(t *testing.T) {
	tr := genTruth(t, "report_rdma_management")
	fs := ofKind(runAll(loadGen(t, "report_rdma_management", pod)), KindRDMAOnManagement)
	if len(fs) != 1 {
		t.Fatalf("want one finding, got %s", summary(fs))
	}
	f := fs[0]
	if f.Severity != Warning || !strings.HasPrefix(f.Title, "RDMA on 1 management address and 1 BMC address (") {
		t.Errorf("got %s", summary(fs))
	}
	var packets int64
	for _, fl := range tr.Flows {
		if fl.Flow == "to-mgmt" || fl.Flow == "from-bmc" {
			packets += fl.Packets
		}
	}
	wantCounts(t, f, map[string]float64{
		"addresses": 2, "management_addresses": 1, "bmc_addresses": 1, "flows": 4,
		"packets": float64(packets), "bytes": truthBytes(tr, "to-mgmt", "from-bmc"),
	})
	if want := []string{"dgx-01", "dgx-02", "dgx-03"}; !slices.Equal(f.Nodes, want) {
		t.Errorf("nodes %v, want %v", f.Nodes, want)
	}
	if len(f.Flows) != 4 || len(f.Evidence.Details) < 2 ||
		!strings.HasPrefix(f.Evidence.Details[0], "192.168.10.2 (dgx-02 eno1, management): 2 RoCE flows") ||
		!strings.HasPrefix(f.Evidence.Details[1], "192.168.20.1 (dgx-01 bmc, bmc): 2 RoCE flows") {
		t.Errorf("flows %v, details %q", f.Flows, f.Evidence.Details)
	}
	if fs := RDMAOnManagement(loadGen(t, "report_rdma_management", "")); len(fs) != 0 {
		t.Errorf("without a topology: %s", summary(fs))
	}
}

// TestFanOutComputeOnly: with a topology only compute HCAs count as HCAs
// and only its nodes as nodes; without one every RoCE address is an HCA
// and nodes are not counted.
func TestFanOutComputeOnly(t *testing.T) {
	fs := FanOut(loadGen(t, "report_rdma_management", pod))
	if len(fs) != 1 {
		t.Fatalf("got %s", summary(fs))
	}
	// 10.0.0.1 (allreduce, to-mgmt) and 10.0.1.1 (to-storage) on dgx-01,
	// 10.0.0.2 on dgx-02, 10.1.0.3 on dgx-03; not the management port, the
	// BMC or the storage server.
	wantCounts(t, fs[0], map[string]float64{"hcas": 4, "qps": 5, "max_qps_per_hca": 2, "nodes": 3, "max_qps_per_node": 3, "non_compute_addresses": 3})
	for _, d := range fs[0].Evidence.Details {
		if strings.Contains(d, "192.168.") || strings.Contains(d, "10.100.255.30") {
			t.Errorf("detail about a non-compute address: %q", d)
		}
	}
	fs = FanOut(loadGen(t, "report_rdma_management", ""))
	if len(fs) != 1 {
		t.Fatalf("no topology: got %s", summary(fs))
	}
	wantCounts(t, fs[0], map[string]float64{"hcas": 7, "qps": 8})
	for _, k := range []string{"nodes", "max_qps_per_node", "non_compute_addresses"} {
		if _, ok := fs[0].Evidence.Counts[k]; ok {
			t.Errorf("no topology: count %s = %v, want none", k, fs[0].Evidence.Counts[k])
		}
	}
}

// TestCrossRailCritical: cross-rail is critical when it is most of the
// compute traffic and at least crossRailCriticalBytes of it is RDMA data
// (QPs other than QP1); below the floor, or when only RDMA CM datagrams
// cross rails, it is still reported, as a warning that says why. A compute
// address without a rail is unknown.
func TestCrossRailCritical(t *testing.T) {
	const cm = `
cm:
  - {client: 10.0.0.1, server: 10.0.3.2, port: 5000, client_qpn: 0x181, server_qpn: 0x281, client_psn: 1, server_psn: 2, disconnect: false}
`
	for _, tt := range []struct {
		name string
		body string // the scenario's cm and flows
		want Severity
	}{
		// 10 MiB written: 10.5 MB of data, over the floor.
		{"above", cm + `flows:
  - {src: 10.0.0.1, dst: 10.0.3.2, src_qpn: 0x181, dest_qpn: 0x281, start_psn: 1, mtu: 4096, start_us: 100, ops: [{op: write, bytes: 1048576, count: 10}]}
`, Critical},
		// 9 MiB: 9.4 MB of data and its headers, under it.
		{"below", cm + `flows:
  - {src: 10.0.0.1, dst: 10.0.3.2, src_qpn: 0x181, dest_qpn: 0x281, start_psn: 1, mtu: 4096, start_us: 100, ops: [{op: write, bytes: 1048576, count: 9}]}
`, Warning},
		// Only the CM handshake: all of the compute bytes, no data.
		{"cm-only", cm, Warning},
		// Over the floor but less than half of the compute bytes.
		{"minority", cm + `flows:
  - {src: 10.0.0.1, dst: 10.0.3.2, src_qpn: 0x181, dest_qpn: 0x281, start_psn: 1, mtu: 4096, start_us: 100, ops: [{op: write, bytes: 1048576, count: 10}]}
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x110, dest_qpn: 0x210, start_psn: 1, mtu: 4096, ops: [{op: write, bytes: 1048576, count: 11}]}
`, Warning},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := gen.ParseScenario([]byte("name: floor\nstart: 2026-11-02T10:00:00Z\n"+tt.body), "floor.yaml")
			if err != nil {
				t.Fatal(err)
			}
			fs := ofKind(CrossRail(loadInput(t, writeScenario(t, s), filepath.Join(topoDir, pod))), KindCrossRail)
			if len(fs) != 1 || fs[0].Severity != tt.want {
				t.Fatalf("want one %v cross_rail finding, got %s", tt.want, summary(fs))
			}
			c := fs[0].Evidence.Counts
			data, cross, compute := c["cross_rail_data_bytes"], c["cross_rail_bytes"], c["compute_bytes"]
			if (data >= crossRailCriticalBytes) != (tt.name == "above" || tt.name == "minority") || (data == 0) != (tt.name == "cm-only") || data >= cross {
				t.Errorf("cross_rail_data_bytes %v, cross_rail_bytes %v: not on the side of the floor the case is for", data, cross)
			}
			why := strings.Contains(fs[0].Detail, "A warning, not critical")
			if want := tt.want == Warning && cross >= compute/2; why != want {
				t.Errorf("detail says why not critical: %v, want %v:\n%s", why, want, fs[0].Detail)
			}
		})
	}

	topo, err := topology.Parse([]byte(`nodes:
  - name: a
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}
  - name: b
    interfaces:
      - {name: mlx5_3, ip: 10.0.3.2, role: compute, rail: 3}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := loadGen(t, "report_cross_rail", "")
	in.Topology = topo
	fs := ofKind(CrossRail(in), KindCrossRail)
	if len(fs) != 2 || fs[0].Severity != Warning || fs[0].Evidence.Counts["connections"] != 2 || fs[1].Evidence.Counts["unknown_endpoints"] == 0 {
		t.Fatalf("got %s", summary(fs))
	}
}

// TestMirrorSameFindings: a mirrored (ERSPAN II, VLAN, truncated: 128 bytes
// for cross-rail, 256 for storage so the CM MADs keep their service ID)
// capture gives the same findings as the plain one, apart from the
// capture_health note about truncation.
func TestMirrorSameFindings(t *testing.T) {
	for _, name := range []string{"report_cross_rail", "report_storage"} {
		t.Run(name, func(t *testing.T) {
			plain := runAll(loadGen(t, name, pod))
			mirror := runAll(loadGen(t, name+"_mirror", pod))
			drop := func(fs []Finding) []Finding {
				var out []Finding
				for _, f := range fs {
					if f.Kind != KindCaptureHealth {
						out = append(out, f)
					}
				}
				return out
			}
			p, m := drop(plain), drop(mirror)
			if len(p) != len(m) {
				t.Fatalf("plain:%s\nmirror:%s", summary(p), summary(m))
			}
			for i := range p {
				if p[i].Kind != m[i].Kind || p[i].Severity != m[i].Severity || p[i].Title != m[i].Title ||
					!slices.Equal(p[i].Nodes, m[i].Nodes) || len(p[i].Flows) != len(m[i].Flows) {
					t.Errorf("finding %d differs:%s%s", i, summary(p[i:i+1]), summary(m[i:i+1]))
				}
				for k, v := range p[i].Evidence.Counts {
					if m[i].Evidence.Counts[k] != v {
						t.Errorf("%s %s: %v plain, %v mirrored", p[i].Kind, k, v, m[i].Evidence.Counts[k])
					}
				}
			}
			h := ofKind(mirror, KindCaptureHealth)
			if len(h) != 1 || h[0].Severity != Info || h[0].Evidence.Counts["cm_mads_cut"] != 0 {
				t.Errorf("mirror capture_health: want one truncation note and no CM MAD cut, got %s %v", summary(h), h)
			}
			if len(ofKind(plain, KindCaptureHealth)) != 0 {
				t.Errorf("plain capture_health: %s", summary(ofKind(plain, KindCaptureHealth)))
			}
		})
	}
}

// TestStorage checks the storage findings of report_storage.
func TestStorage(t *testing.T) {
	tr := genTruth(t, "report_storage")
	in := loadGen(t, "report_storage", pod)
	fs := ofKind(runAll(in), KindStorageOnCompute)
	if len(fs) != 3 {
		t.Fatalf("want RDMA CM, TCP and storage-role findings, got %s", summary(fs))
	}
	cm, ip, role := fs[0], fs[1], fs[2]
	for _, f := range fs[:2] {
		if f.Severity != Critical {
			t.Errorf("%q: %v, want critical (compute HCA addresses)", f.Title, f.Severity)
		}
	}
	wantCounts(t, cm, map[string]float64{
		"cm_requests": 3, "cm_requests_4420": 1, "cm_requests_3260": 1, "cm_requests_20049": 1,
		"flows_4420": 2, "flows_3260": 2, "flows_20049": 0, "flows": 4,
		"bytes": truthBytes(tr, "nvmeof-io", "iser-io"),
	})
	// The evidence spans the connections' traffic, not only their CM
	// requests: the last frame is the last of their QPs' packets.
	var last int
	for _, fl := range in.Flows {
		if slices.Contains(cm.Flows, fl.ID) {
			last = max(last, fl.Last.Frame)
		}
	}
	if cm.Evidence.Last == nil || cm.Evidence.Last.Frame != last {
		t.Errorf("RDMA CM finding: last frame %+v, want frame %d (the last packet of its flows)", cm.Evidence.Last, last)
	}
	// IP lengths: payload, 40 header bytes a segment, and a 4-byte MSS
	// option on the SYN and the SYN-ACK
	ipBytes := func(name string) float64 {
		for _, s := range tr.TCP {
			if s.Name == name {
				return float64(s.ClientBytes + s.ServerBytes + 40*s.Packets + 8)
			}
		}
		t.Fatalf("no TCP session %s", name)
		return 0
	}
	wantCounts(t, ip, map[string]float64{
		"conversations": 3, "nvme_tcp_conversations": 1, "iscsi_conversations": 1, "nfs_conversations": 1,
		"nvme_tcp_bytes": ipBytes("nvme-tcp"), "iscsi_bytes": ipBytes("iscsi"), "nfs_bytes": ipBytes("nfs"),
	})
	// The CM targets' traffic is all named by service (the first finding):
	// what is left is the GDS pair, a storage NIC and a storage server, both
	// ways, on no compute HCA address.
	wantCounts(t, role, map[string]float64{
		"storage_endpoints": 2, "roce_flows": 2, "conversations": 0, "bytes": truthBytes(tr, "gds-read"),
	})
	if role.Severity != Warning || role.Title != "2 storage addresses seen on the captured links" {
		t.Errorf("role finding: %s", summary([]Finding{role}))
	}
	if !slices.Contains(role.Nodes, "dgx-01") || !slices.Contains(role.Nodes, "10.100.255.30") {
		t.Errorf("role finding nodes %v", role.Nodes)
	}
}

// TestStorageReportedOnce: a connection an RDMA CM exchange set up to a
// storage port is reported by the finding that names its service, with the
// CM datagrams of the address pair when every request on it was to a
// storage port; the finding about storage-role addresses reports only the
// rest, so no flow and no byte is counted twice.
func TestStorageReportedOnce(t *testing.T) {
	tr := genTruth(t, "report_storage_once")
	fs := ofKind(runAll(loadGen(t, "report_storage_once", pod)), KindStorageOnCompute)
	if len(fs) != 2 {
		t.Fatalf("want the RDMA CM and the storage-role findings, got %s", summary(fs))
	}
	cm, role := fs[0], fs[1]
	wantCounts(t, cm, map[string]float64{
		"cm_requests": 3, "flows_4420": 4, "flows_20049": 2, "flows": 6,
		"bytes": truthBytes(tr, "nvmeof-io", "nfsrdma-io", "nvmeof-2-io"),
	})
	// An RDMA CM MAD on QP1 is IPv4 20 + UDP 8 + BTH 12 + DETH 8 + MAD 256 +
	// ICRC 4 = 308 bytes long. The QP1 flows of 10.0.3.1 and 10.100.255.13
	// carry a request to port 5000 too, so they are the rest.
	const madBytes = 308
	var mads int
	for _, c := range tr.CM {
		if c.Name == "nvmeof-2" || c.Name == "other-5000" {
			for _, n := range c.Messages {
				mads += n
			}
		}
	}
	wantCounts(t, role, map[string]float64{
		"storage_endpoints": 2, "roce_flows": 6, "conversations": 0,
		"bytes": truthBytes(tr, "no-cm", "other-5000-io") + float64(madBytes*mads),
	})
	if role.Severity != Critical || role.Title != "2 storage addresses talk to compute HCA addresses" {
		t.Errorf("role finding: %s", summary([]Finding{role}))
	}
	for _, id := range role.Flows {
		if slices.Contains(cm.Flows, id) {
			t.Errorf("flow %d is in both findings: CM %v, role %v", id, cm.Flows, role.Flows)
		}
	}
	if want := int(role.Evidence.Counts["roce_flows"]); len(role.Flows) != want {
		t.Errorf("role finding lists %d flows, counts %d", len(role.Flows), want)
	}
}

// TestStorageRoleTitle: the title agrees with the number of addresses.
func TestStorageRoleTitle(t *testing.T) {
	tests := []struct {
		n       uint64
		compute bool
		want    string
	}{
		{1, true, "1 storage address talks to compute HCA addresses"},
		{3, true, "3 storage addresses talk to compute HCA addresses"},
		{1, false, "1 storage address seen on the captured links"},
	}
	for _, tc := range tests {
		if got := storageRoleTitle(tc.n, tc.n, tc.compute); got != tc.want {
			t.Errorf("storageRoleTitle(%d, %d, %v) = %q, want %q", tc.n, tc.n, tc.compute, got, tc.want)
		}
	}
	if got, want := storageRoleTitle(3, 1, true), "1 of 3 storage addresses talks to compute HCA addresses"; got != want {
		t.Errorf("storageRoleTitle(3, 1, true) = %q, want %q", got, want)
	}
	if got, want := storageRoleTitle(3, 2, true), "2 of 3 storage addresses talk to compute HCA addresses"; got != want {
		t.Errorf("storageRoleTitle(3, 2, true) = %q, want %q", got, want)
	}
}

// TestNVMeDiscovery: NVMe/TCP discovery (tcp/8009) is storage over TCP,
// next to NVMe/TCP I/O, and not NCCL bootstrap though it runs between
// compute HCAs on high ports; the real bootstrap still is.
func TestNVMeDiscovery(t *testing.T) {
	tr := genTruth(t, "report_nvme_discovery")
	ipBytes := func(names ...string) float64 {
		var n int
		for _, s := range tr.TCP {
			if slices.Contains(names, s.Name) {
				// payload, 40 header bytes a segment, a 4-byte MSS option on
				// the SYN and the SYN-ACK
				n += s.ClientBytes + s.ServerBytes + 40*s.Packets + 8
			}
		}
		return float64(n)
	}
	fs := runAll(loadGen(t, "report_nvme_discovery", pod))
	st := ofKind(fs, KindStorageOnCompute)
	if len(st) != 1 || st[0].Severity != Critical || st[0].Title != "NVMe/TCP, NVMe/TCP discovery on compute HCA addresses" {
		t.Fatalf("want one critical NVMe/TCP finding, got %s", summary(st))
	}
	wantCounts(t, st[0], map[string]float64{
		"conversations": 3, "nvme_tcp_conversations": 1, "nvme_tcp_discovery_conversations": 2,
		"nvme_tcp_bytes": ipBytes("io-storage"), "nvme_tcp_discovery_bytes": ipBytes("disc-compute", "disc-storage"),
	})
	nr := ofKind(fs, KindNonRDMAOnCompute)
	if len(nr) != 1 || !strings.HasPrefix(nr[0].Title, "NCCL bootstrap") {
		t.Fatalf("want only the NCCL bootstrap finding, got %s", summary(nr))
	}
	wantCounts(t, nr[0], map[string]float64{"conversations": 1, "bytes": ipBytes("nccl-boot")})
}

// TestPerftestExchangeNotBootstrap: perftest (ib_write_bw and the other
// ib_*_bw and ib_*_lat) and ibv_*_pingpong exchange QP numbers over TCP
// on port 18515 between the two HCA addresses under test: a link test,
// not NCCL. It was reported as "NCCL bootstrap TCP on compute links"
// (a warning) with the advice to set NCCL_SOCKET_IFNAME; it is other
// TCP, named for what it is.
func TestPerftestExchangeNotBootstrap(t *testing.T) {
	fs := runAll(loadInput(t, "../testdata/pcaps/real/linlinw5_rdma_write_bw.pcap", ""))
	nr := ofKind(fs, KindNonRDMAOnCompute)
	if len(nr) != 1 || !strings.HasPrefix(nr[0].Title, nonRDMAOther+": tcp/18515") || nr[0].Severity != Info ||
		!strings.Contains(nr[0].Detail, "perftest") {
		t.Fatalf("want one info finding of other TCP naming perftest's tcp/18515, got %s", summary(nr))
	}
	wantCounts(t, nr[0], map[string]float64{"conversations": 1, "packets": 40})
}

// TestStorageNoTopology: the older storage scenario without a topology
// gives warnings (storage on the captured links, roles unknown).
func TestStorageNoTopology(t *testing.T) {
	tr := genTruth(t, "storage")
	fs := ofKind(runAll(loadGen(t, "storage", "")), KindStorageOnCompute)
	if len(fs) != 2 || fs[0].Severity != Warning || fs[1].Severity != Warning {
		t.Fatalf("want RDMA CM and TCP warnings, got %s", summary(fs))
	}
	wantCounts(t, fs[0], map[string]float64{"cm_requests": float64(len(tr.CM)), "flows": 4})
	wantCounts(t, fs[1], map[string]float64{"conversations": 3})
}

// TestNonRDMA checks SSH, bootstrap and other TCP on compute links.
func TestNonRDMA(t *testing.T) {
	tr := genTruth(t, "report_ssh_bootstrap")
	pk := func(names ...string) float64 {
		var n int
		for _, s := range tr.TCP {
			if slices.Contains(names, s.Name) {
				n += s.Packets
			}
		}
		return float64(n)
	}
	fs := runAll(loadGen(t, "report_ssh_bootstrap", pod))
	nr := ofKind(fs, KindNonRDMAOnCompute)
	if len(nr) != 3 {
		t.Fatalf("want SSH, bootstrap and other, got %s", summary(nr))
	}
	ssh, boot, other := nr[0], nr[1], nr[2]
	if ssh.Severity != Warning || boot.Severity != Warning || other.Severity != Info {
		t.Errorf("severities: %s", summary(nr))
	}
	wantCounts(t, ssh, map[string]float64{"conversations": 2, "packets": pk("ssh-compute", "ssh-jump")})
	wantCounts(t, boot, map[string]float64{"conversations": 2, "packets": pk("nccl-boot-1", "nccl-boot-2")})
	wantCounts(t, other, map[string]float64{"conversations": 1, "packets": pk("rsync")})
	if !strings.Contains(boot.Next, "NCCL_SOCKET_IFNAME") || !strings.Contains(other.Title, "tcp/873") {
		t.Errorf("bootstrap next %q, other title %q", boot.Next, other.Title)
	}
	for _, f := range fs {
		if f.Severity >= Warning && f.Kind != KindNonRDMAOnCompute {
			t.Errorf("unexpected: %s", summary([]Finding{f}))
		}
	}
	// Without a topology the RoCE endpoints (rails 0 and 1 here) stand for
	// compute addresses: the management SSH and the rsync on rail 2, which
	// carries no RoCE in this capture, are left out.
	nr = ofKind(runAll(loadGen(t, "report_ssh_bootstrap", "")), KindNonRDMAOnCompute)
	if len(nr) != 2 || nr[0].Evidence.Counts["conversations"] != 2 || nr[1].Evidence.Counts["conversations"] != 2 {
		t.Errorf("without topology: %s", summary(nr))
	}
}

// TestCongestionTruth checks the congestion findings of the congestion
// scenario against its truth.
func TestCongestionTruth(t *testing.T) {
	tr := genTruth(t, "congestion")
	var cnps, ce, fecn, becn, notActed, data, notECT float64
	for _, f := range tr.Flows {
		cnps += float64(f.CNPs)
		ce += float64(f.CEMarked)
		fecn += float64(f.FECN)
		becn += float64(f.BECN)
		data += float64(f.Packets - int64(f.CNPs))
		// CE marks on a direction whose way back carries no CNP
		if f.CEMarked > 0 {
			if back := tr.Flow(f.Flow, map[string]string{"requester": "responder", "responder": "requester"}[f.Role]); back.CNPs == 0 {
				notActed += float64(f.CEMarked)
			}
		}
	}
	notECT = float64(tr.Flow("flow-dscp-0", "requester").Packets)
	in := loadGen(t, "congestion", "")
	fs := Congestion(in)
	kinds := map[Kind][]Finding{}
	for _, f := range fs {
		f.normalize()
		kinds[f.Kind] = append(kinds[f.Kind], f)
	}
	if len(kinds[KindCongestion]) != 1 || len(kinds[KindECNNotActed]) != 2 || len(kinds[KindDSCPMismatch]) != 1 || len(kinds[KindPFC]) != 1 {
		t.Fatalf("got %s", summary(fs))
	}
	wantCounts(t, kinds[KindCongestion][0], map[string]float64{"cnps": cnps, "ce_marked": ce, "fecn": fecn, "becn": becn, "data_packets": data, "notified_qps": 3})
	wantCounts(t, kinds[KindECNNotActed][0], map[string]float64{"not_acted": notActed, "ce_marked": ce, "undecided": 0})
	wantCounts(t, kinds[KindECNNotActed][1], map[string]float64{"not_ect_packets": notECT, "flows": 1})
	// data off DSCP 26: message 2 of wrong-dscp, and flow-dscp-0 both ways
	wrong := float64(tr.Flow("wrong-dscp", "requester").DSCP["0"] + tr.Flow("flow-dscp-0", "requester").DSCP["0"] + tr.Flow("flow-dscp-0", "responder").DSCP["0"])
	wantCounts(t, kinds[KindDSCPMismatch][0], map[string]float64{"wrong_packets": wrong, "data_packets": data, "flows": 3})
	p := kinds[KindPFC][0]
	wantCounts(t, p, map[string]float64{"pfc_frames": float64(tr.PFC.Frames), "storms": 0,
		"priority_3_frames": float64(tr.PFC.Priorities["3"]), "priority_4_frames": float64(tr.PFC.Priorities["4"])})
	if p.Severity != Warning {
		t.Errorf("pfc: %v, want warning (paused most of this short capture)", p.Severity)
	}
}

// TestCongestionECN checks report_ecn: every congestion finding, with the
// PFC storm critical.
func TestCongestionECN(t *testing.T) {
	tr := genTruth(t, "report_ecn")
	fs := runAll(loadGen(t, "report_ecn", pod))
	type want struct {
		kind   Kind
		sev    Severity
		counts map[string]float64
	}
	cnps := float64(tr.Flow("ce-acted", "responder").CNPs)
	wants := []want{
		{KindCongestion, Warning, map[string]float64{"cnps": cnps, "ce_marked": 4 + 3 + 2 + 2}},
		{KindECNNotActed, Warning, map[string]float64{"not_acted": 3 + 2, "undecided": 2, "directions": 1}},
		{KindECNNotActed, Warning, map[string]float64{"not_ect_packets": float64(tr.Flow("not-ect", "requester").Packets)}},
		{KindDSCPMismatch, Warning, map[string]float64{"wrong_packets": float64(tr.Flow("dscp-0", "requester").DSCP["0"]), "expected_dscp": 26}},
		{KindDSCPMismatch, Warning, map[string]float64{"wrong_packets": cnps, "cnp_packets": cnps, "expected_dscp": 48}},
		{KindPFC, Critical, map[string]float64{"storms": 1, "priority_3_storms": 1, "priority_4_storms": 0,
			"pfc_frames": float64(tr.PFC.Frames), "priority_3_xoff": 30, "priority_4_xoff": 3}},
	}
	var got []Finding
	for _, f := range fs {
		if f.Kind != KindFanOut {
			got = append(got, f)
		}
	}
	if len(got) != len(wants) {
		t.Fatalf("got %s", summary(got))
	}
	for i, w := range wants {
		if got[i].Kind != w.kind || got[i].Severity != w.sev {
			t.Errorf("finding %d: %s, want %s %s", i, summary(got[i:i+1]), w.kind, w.sev)
		}
		wantCounts(t, got[i], w.counts)
	}
	if !strings.Contains(got[5].Title, "priority 3") || !strings.Contains(got[5].Evidence.Details[0], "longest 1.53 ms") {
		t.Errorf("pfc: %q %q", got[5].Title, got[5].Evidence.Details)
	}
}

// TestCaptureHealth covers each rule.
func TestCaptureHealth(t *testing.T) {
	t.Run("malformed and cut off", func(t *testing.T) {
		tr := genTruth(t, "malformed")
		fs := CaptureHealth(loadGen(t, "malformed", ""))
		if len(fs) != 4 {
			t.Fatalf("got %s", summary(fs))
		}
		icrc, cut, bad := fs[0], fs[1], fs[2]
		// The frames to QP 0xbad go one way, nothing back: one of the
		// capture's two connections is seen one way.
		if ow := fs[3]; ow.Severity != Info || ow.Evidence.Counts["one_way_flows"] != 1 || ow.Evidence.Counts["connections"] != 2 {
			t.Errorf("one direction: %s %v", summary(fs[3:]), ow.Evidence.Counts)
		}
		if icrc.Severity != Critical || icrc.Evidence.Counts["icrc_bad"] != float64(tr.ICRCBadFrames) || icrc.Evidence.First == nil {
			t.Errorf("ICRC: %s %v", summary(fs[:1]), icrc.Evidence.Counts)
		}
		if cut.Severity != Warning || cut.Evidence.Counts["cut_off"] != 1 {
			t.Errorf("cut off: %s", summary(fs[1:2]))
		}
		if bad.Severity != Warning || bad.Evidence.Counts["malformed"] != float64(tr.MalformedFrames-tr.ICRCBadFrames) {
			t.Errorf("malformed: %s %v", summary(fs[2:]), bad.Evidence.Counts)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		tr := genTruth(t, "mirror_erspan2_vlan_trunc")
		fs := CaptureHealth(loadGen(t, "mirror_erspan2_vlan_trunc", ""))
		if len(fs) != 1 || fs[0].Severity != Info || fs[0].Evidence.Counts["truncated_frames"] != float64(tr.TruncatedFrames) {
			t.Errorf("got %s", summary(fs))
		}
	})
	t.Run("clean", func(t *testing.T) {
		if fs := CaptureHealth(loadGen(t, "clean_allreduce", "")); len(fs) != 0 {
			t.Errorf("got %s", summary(fs))
		}
	})
	tests := []struct {
		name  string
		info  CaptureInfo
		sev   []Severity
		title string
	}{
		{"drops", CaptureInfo{Packets: 100, RoCE: 100, Drops: &Drops{Kernel: 3}}, []Severity{Critical}, "dropped 3 packets"},
		{"no drops", CaptureInfo{Packets: 100, RoCE: 100, Drops: &Drops{}}, nil, ""},
		{"empty", CaptureInfo{}, []Severity{Warning}, "no packets"},
		{"no RoCE", CaptureInfo{Packets: 40}, []Severity{Warning}, "No RoCE traffic in 40 packets"},
		{"ICRC few", CaptureInfo{Packets: 10000, RoCE: 10000, ICRCChecked: 10000, ICRCBad: 5}, []Severity{Warning}, "5 RoCE frames failed"},
		{"ICRC many", CaptureInfo{Packets: 10000, RoCE: 10000, ICRCChecked: 10000, ICRCBad: 100}, []Severity{Critical}, "100 RoCE frames failed"},
		// The share is of the frames checked: truncated TCP frames do not
		// shrink it (one finding for the ICRC, one for the truncation).
		{"ICRC few, TCP cut", CaptureInfo{Packets: 30000, RoCE: 10000, Truncated: 20000, ICRCChecked: 10000, ICRCBad: 5},
			[]Severity{Warning, Info}, "5 RoCE frames failed"},
		{"ICRC few, RoCE cut", CaptureInfo{Packets: 10000, RoCE: 10000, Truncated: 9900, ICRCChecked: 100, ICRCBad: 5},
			[]Severity{Critical, Info}, "5 RoCE frames failed"},
		{"malformed few", CaptureInfo{Packets: 10000, RoCE: 10000, Malformed: 3}, []Severity{Info}, "3 frames on the RoCE port"},
		{"malformed some", CaptureInfo{Packets: 10000, RoCE: 6000, Malformed: 4000}, []Severity{Warning}, "4000 frames on the RoCE port"},
		// Random bytes on UDP 4791 (a corrupted mirror): a frame in 27 or
		// so passes as a BTH, and its random opcode, NAK code and DSCP
		// make critical findings of their own; the capture's health says
		// first that they are in doubt.
		{"malformed most", CaptureInfo{Packets: 500000, RoCE: 18200, Malformed: 481800}, []Severity{Critical}, "481800 frames on the RoCE port"},
		{"unsupported", CaptureInfo{Packets: 10, RoCE: 5, Unsupported: 5}, []Severity{Warning}, "5 frames of a link type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := CaptureHealth(&Input{Capture: tc.info})
			var sev []Severity
			for _, f := range fs {
				sev = append(sev, f.Severity)
			}
			if !slices.Equal(sev, tc.sev) || len(fs) > 0 && !strings.Contains(fs[0].Title, tc.title) {
				t.Errorf("got %s, want %v %q", summary(fs), tc.sev, tc.title)
			}
			if doubt := len(fs) > 0 && strings.Contains(fs[0].Detail, "every other finding of this capture is in doubt"); doubt != (tc.name == "malformed most") {
				t.Errorf("%s: says the other findings are in doubt: %v: %s", tc.name, doubt, fs[0].Detail)
			}
		})
	}
}

// TestFanOut: what is normal is info; a QP count past 1024 or far above
// the peers' is a warning.
func TestFanOut(t *testing.T) {
	mk := func(hcas, peersEach, qpsEach int, extra map[int]int) *Input {
		in := &Input{}
		id := 0
		for h := range hcas {
			n := qpsEach
			if e, ok := extra[h]; ok {
				n = e
			}
			for q := range n {
				id++
				src := netip.AddrFrom4([4]byte{10, 0, byte(h), 1})
				dst := netip.AddrFrom4([4]byte{10, 1, byte(q % peersEach), byte(1 + q/peersEach%200)})
				in.Flows = append(in.Flows, flowOf(id, dst, src, uint32(0x100+q), 1000))
			}
		}
		return in
	}
	tests := []struct {
		name string
		in   *Input
		sev  Severity
		max  float64
	}{
		{"256-GPU allreduce", mk(8, 255, 255, nil), Info, 255},
		{"one HCA past 1024", mk(4, 200, 100, map[int]int{2: 1100}), Warning, 1100},
		{"one HCA 5x its peers", mk(8, 50, 100, map[int]int{5: 500}), Warning, 500},
		{"3x is fine", mk(8, 50, 100, map[int]int{5: 300}), Info, 300},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := FanOut(tc.in)
			if len(fs) != 1 || fs[0].Severity != tc.sev || fs[0].Evidence.Counts["max_qps_per_hca"] != tc.max {
				t.Errorf("got %s %v", summary(fs), fs)
			}
		})
	}
	if fs := FanOut(&Input{}); len(fs) != 0 {
		t.Errorf("no flows: %s", summary(fs))
	}
}

// flowOf builds a flow by hand, for module tests without a capture.
func flowOf(id int, src, dst netip.Addr, qp uint32, bytes uint64) *flows.Flow {
	return &flows.Flow{ID: id, Key: flows.Key{Src: src, Dst: dst, DestQP: qp}, Packets: 1, WireBytes: bytes}
}

// TestVerdictPlurals: one of a thing is said in the singular.
func TestVerdictPlurals(t *testing.T) {
	f := []Finding{{Title: "X"}}
	tests := []struct {
		s    Summary
		want string
	}{
		{Summary{Flows: 1, Warning: 1}, "No critical findings; 1 warning across 1 QP flow. Start with: X"},
		{Summary{Flows: 3, Warning: 2}, "No critical findings; 2 warnings across 3 QP flows. Start with: X"},
		{Summary{Flows: 1, Critical: 1}, "1 critical finding across 1 QP flow. Start with: X"},
		{Summary{Flows: 3, Critical: 2, Warning: 1}, "2 critical findings and 1 warning across 3 QP flows. Start with: X"},
		{Summary{Flows: 1, Hosts: 1}, "No problems found in 1 QP flow between 1 host."},
	}
	for _, tc := range tests {
		if got := verdict(tc.s, f); got != tc.want {
			t.Errorf("verdict(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestVerdictNoRoCE: without RoCE traffic the verdict still points at what
// the rest of the capture shows (storage on a compute link), and says
// "nothing to judge" only when there is nothing else.
func TestVerdictNoRoCE(t *testing.T) {
	noRoCE := Finding{Kind: KindCaptureHealth, Severity: Warning, Title: "No RoCE traffic"}
	storage := Finding{Kind: KindStorageOnCompute, Severity: Critical, Title: "NVMe/TCP on compute HCA addresses"}
	got := verdict(Summary{Critical: 1, Warning: 1}, []Finding{storage, noRoCE})
	if want := "No RoCE traffic in the capture (check that the mirror sees the compute links, UDP 4791), but 2 findings (1 critical, 1 warning) on its other traffic. Start with: NVMe/TCP on compute HCA addresses"; got != want {
		t.Errorf("with a storage finding:\ngot  %q\nwant %q", got, want)
	}
	got = verdict(Summary{Warning: 1}, []Finding{noRoCE})
	if !strings.HasPrefix(got, "No RoCE traffic in the capture: nothing to judge.") {
		t.Errorf("with nothing else: got %q", got)
	}
}

// TestCrossRailCMOnly: when only RDMA CM datagrams (QP1) cross rails, the
// title names them rather than "0 QP connections", and its verb agrees
// with its count.
func TestCrossRailCMOnly(t *testing.T) {
	const scenario = `name: cm-cross-rail
start: 2026-11-02T10:00:00Z
cm:
  - {client: 10.0.0.1, server: 10.0.3.2, port: 5000, client_qpn: 0x181, server_qpn: 0x281, client_psn: 1, server_psn: 2, disconnect: false}
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x110, dest_qpn: 0x210, start_psn: 1, ops: [{op: write, bytes: 4096}]}
`
	s, err := gen.ParseScenario([]byte(scenario), "cm-cross-rail.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := writeScenario(t, s)
	fs := ofKind(runAll(loadInput(t, path, filepath.Join(topoDir, pod))), KindCrossRail)
	if len(fs) != 1 {
		t.Fatalf("want one cross_rail finding, got %s", summary(fs))
	}
	if want := "2 RDMA CM flows cross rails between 1 node pair (924 B)"; fs[0].Title != want {
		t.Errorf("title %q, want %q", fs[0].Title, want)
	}
	wantCounts(t, fs[0], map[string]float64{"connections": 0, "qps": 0, "flows": 2, "node_pairs": 1})
	if got := crossRailTitle(1, 2, 1, 1000); got != "1 QP connection crosses rails between 1 node pair (1.00 KB)" {
		t.Errorf("title of one connection: %q", got)
	}
}

// TestTopologyNamesNoEndpoint: a topology that names none of the RoCE
// endpoints (another fabric's file) makes non_rdma_on_compute and fan_out
// silent, as they count compute HCAs only; the cross_rail note says so
// instead of only that cross-rail was not judged.
func TestTopologyNamesNoEndpoint(t *testing.T) {
	other := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(other, []byte("subnets:\n  - {cidr: 172.31.0.0/16, role: compute, rail: 0}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fs := runAll(loadInput(t, genCapture(t, "report_ssh_bootstrap"), other))
	if n := len(ofKind(fs, KindNonRDMAOnCompute)) + len(ofKind(fs, KindFanOut)); n != 0 {
		t.Fatalf("want no compute-only findings with a topology naming no endpoint, got %s", summary(fs))
	}
	cr := ofKind(fs, KindCrossRail)
	if len(cr) != 1 || cr[0].Severity != Info || !strings.HasPrefix(cr[0].Title, "The topology names none of the ") ||
		!strings.Contains(cr[0].Detail, "non_rdma_on_compute") || !strings.Contains(cr[0].Detail, "fan_out") {
		t.Fatalf("want a note that the topology names no endpoint, got %s", summary(cr))
	}
	wantCounts(t, cr[0], map[string]float64{"unknown_endpoints": cr[0].Evidence.Counts["roce_endpoints"]})
	// --rail-subnet alone is a topology too, with no file to blame: the
	// advice names both ways of giving one, not only --topology.
	if !strings.Contains(cr[0].Next, "--rail-subnet") {
		t.Errorf("next step %q names only the topology file; --rail-subnet alone does the same", cr[0].Next)
	}
	// Some endpoints named: the usual note, which says what else it means.
	cr = ofKind(runAll(loadGen(t, "report_cross_rail", pod)), KindCrossRail)
	if u := cr[len(cr)-1]; u.Title != "1 RoCE endpoint not placed on a rail by the topology" || !strings.Contains(u.Detail, "fan_out") {
		t.Errorf("unknown-endpoint note: %s: %s", u.Title, u.Detail)
	}
}

// TestBTHCut: a mirror that cuts frames inside their BTH (ERSPAN II and a
// VLAN tag take 96 bytes before the UDP payload: 100-byte snaps) leaves
// RoCE frames in no flow. The truncation finding says how many and is a
// warning, and the verdict says why there is nothing to judge rather than
// "No RoCE traffic in the capture".
func TestBTHCut(t *testing.T) {
	sc, err := gen.ParseScenario([]byte(`
name: bth_cut
snaplen: 100
encap: [{erspan2: {session: 7}}, {vlan: 100}]
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x100, dest_qpn: 0x200, ops: [{op: write, bytes: 8192}]}
`), "bth_cut.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := writeScenario(t, sc)
	in := loadInput(t, path, "")
	if len(in.Flows) != 0 || in.Capture.RoCE == 0 {
		t.Fatalf("%d flows and %d RoCE frames; want none and some", len(in.Flows), in.Capture.RoCE)
	}
	fs := runAll(in)
	h := ofKind(fs, KindCaptureHealth)
	if len(h) != 1 || h[0].Severity != Warning || h[0].Evidence.Counts["bth_cut"] != float64(in.Capture.RoCE) {
		t.Fatalf("capture_health: want one warning with bth_cut %d, got %s %v", in.Capture.RoCE, summary(h), h)
	}
	if v := summarize(in, fs).Verdict; strings.HasPrefix(v, "No RoCE traffic") || !strings.Contains(v, "snap length") {
		t.Errorf("verdict %q: want the snap length named", v)
	}
}

// TestHeadersCut: frames the snap length cut before their UDP header
// (ERSPAN III over IPv6 with its platform subheader is 136 bytes to the
// end of the inner IPv6 header: live's default 128-byte snaps) may be
// RoCE: the report does not say there is no RoCE, as if the mirror
// watched the wrong port, and the truncation finding is a warning that
// counts them. Frames cut after their headers count none.
func TestHeadersCut(t *testing.T) {
	sc, err := gen.ParseScenario([]byte(`
name: headers_cut
snaplen: 128
encap: [{erspan3: {src: "2001:db8:ffff::1", dst: "2001:db8:ffff::100", session: 300, hw_id: 5, subheader: true}}]
flows:
  - {src: "fd00:0:0:1::1", dst: "fd00:0:0:1::2", src_qpn: 0x131, dest_qpn: 0x231, mtu: 1024, ops: [{op: write, bytes: 4096}]}
`), "headers_cut.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := loadInput(t, writeScenario(t, sc), "")
	if in.Capture.RoCE != 0 || in.Capture.Truncated == 0 || in.Capture.Truncated != in.Capture.Packets {
		t.Fatalf("%d RoCE of %d frames, %d truncated; want none RoCE, all truncated", in.Capture.RoCE, in.Capture.Packets, in.Capture.Truncated)
	}
	fs := runAll(in)
	var cut *Finding
	for i, f := range ofKind(fs, KindCaptureHealth) {
		if strings.Contains(f.Title, "cut by the snap length") {
			cut = &ofKind(fs, KindCaptureHealth)[i]
		} else if !strings.Contains(f.Detail, "snap length") || !strings.Contains(f.Next, "snap length") {
			t.Errorf("%s: %s / %s: want the snap length named", f.Title, f.Detail, f.Next)
		}
	}
	if cut == nil || cut.Severity != Warning || cut.Evidence.Counts["headers_cut"] != float64(in.Capture.Packets) {
		t.Fatalf("truncation finding: want a warning with headers_cut %d, got %v", in.Capture.Packets, cut)
	}
	if v := summarize(in, fs).Verdict; strings.HasPrefix(v, "No RoCE traffic") || !strings.Contains(v, "snap length") {
		t.Errorf("verdict %q: want the snap length named", v)
	}
	for _, name := range []string{"snaplen64", "mirror_erspan2_vlan_trunc"} {
		for _, f := range ofKind(runAll(loadInput(t, genCapture(t, name), "")), KindCaptureHealth) {
			if n, ok := f.Evidence.Counts["headers_cut"]; ok {
				t.Errorf("%s: headers_cut %v, want none: its frames are cut after their headers", name, n)
			}
		}
	}
}

// TestStorageRoleConversationOnce: a TCP conversation between a compute
// HCA and a storage-role address on a port that names no storage service
// (an S3 object store on tcp/443 here) is storage on compute, reported by
// storage_on_compute's storage-role finding. It was also in non_rdma_on_compute's
// "Other TCP/UDP on compute links", so one conversation counted in two
// findings, as storage ports never do; TCP between compute HCAs still is
// non_rdma_on_compute's.
func TestStorageRoleConversationOnce(t *testing.T) {
	s, err := gen.ParseScenario([]byte(`name: s3-on-compute
start: 2026-11-02T10:00:00Z
flows:
  - {src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 0x110, dest_qpn: 0x210, start_psn: 1, ops: [{op: write, bytes: 4096}]}
tcp:
  - {name: s3, client: 10.0.1.1, server: 10.100.255.30, port: 443, client_port: 50001, bytes: 3000, resp_bytes: 300, at_us: 10}
  - {name: rsync, client: 10.0.2.1, server: 10.0.2.2, port: 873, client_port: 50002, bytes: 300, resp_bytes: 300, at_us: 20}
`), "s3-on-compute.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fs := runAll(loadInput(t, writeScenario(t, s), filepath.Join(topoDir, pod)))
	st := ofKind(fs, KindStorageOnCompute)
	if len(st) != 1 || st[0].Severity != Critical || st[0].Title != "1 storage address talks to compute HCA addresses" {
		t.Fatalf("want the storage-role finding, got %s", summary(st))
	}
	wantCounts(t, st[0], map[string]float64{"storage_endpoints": 1, "roce_flows": 0, "conversations": 1})
	nr := ofKind(fs, KindNonRDMAOnCompute)
	if len(nr) != 1 || nr[0].Title != nonRDMAOther+": tcp/873 (1)" {
		t.Fatalf("want only rsync between compute HCAs as other TCP, got %s", summary(nr))
	}
	wantCounts(t, nr[0], map[string]float64{"conversations": 1})
}

// TestStorageSMB: SMB is storage like NFS: SMB Direct (MS-SMBD: SMB 3 over
// RDMA, an RDMA CM connection to port 5445) by its CM service, with the
// RDMA of that connection, and SMB over TCP (tcp/445) by its port, here
// between two compute HCAs, where it is no "other TCP" of
// non_rdma_on_compute.
func TestStorageSMB(t *testing.T) {
	s, err := gen.ParseScenario([]byte(`name: smb
start: 2026-11-02T10:00:00Z
cm:
  - {name: smbd, client: 10.0.1.1, server: 10.0.1.2, port: 5445, client_qpn: 0x181, server_qpn: 0x281, client_psn: 1000, server_psn: 2000, at_us: 0, disconnect: false}
flows:
  - {name: smbd-io, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x181, dest_qpn: 0x281, start_psn: 1000, mtu: 4096, start_us: 100, ops: [{op: send, bytes: 64}, {op: write, bytes: 8192}]}
tcp:
  - {name: smb, client: 10.0.2.1, server: 10.0.2.2, port: 445, client_port: 50001, bytes: 3000, resp_bytes: 300, at_us: 10}
`), "smb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := loadInput(t, writeScenario(t, s), filepath.Join(topoDir, pod))
	fs := runAll(in)
	st := ofKind(fs, KindStorageOnCompute)
	if len(st) != 2 {
		t.Fatalf("want the RDMA CM and the TCP storage findings, got %s", summary(st))
	}
	cm, ip := st[0], st[1]
	if cm.Severity != Critical || cm.Title != "Storage over RDMA on compute HCA addresses: SMB Direct (5445)" {
		t.Errorf("RDMA CM finding: %s", summary(st[:1]))
	}
	wantCounts(t, cm, map[string]float64{"cm_requests": 1, "cm_requests_5445": 1, "flows_5445": 2, "flows": 2})
	if ip.Severity != Critical || ip.Title != "SMB on compute HCA addresses" {
		t.Errorf("TCP finding: %s", summary(st[1:]))
	}
	wantCounts(t, ip, map[string]float64{"conversations": 1, "smb_conversations": 1})
	if ip.Evidence.Counts["smb_bytes"] != ip.Evidence.Counts["bytes"] || ip.Evidence.Counts["bytes"] < 3300 {
		t.Errorf("TCP finding bytes: %v", ip.Evidence.Counts)
	}
	if nr := ofKind(fs, KindNonRDMAOnCompute); len(nr) != 0 {
		t.Errorf("SMB is storage, not other TCP on compute links: %s", summary(nr))
	}
}

// TestRoCEv1MappedGIDs: a RoCEv1 GRH carries IPv4-mapped GIDs
// (::ffff:a.b.c.d); the decoder unmaps them, so a host that talks RoCEv1
// and RoCEv2 is one endpoint (fan_out's HCAs, cross_rail's roce_endpoints)
// and the topology's IPv4 addresses place its RoCEv1 flows.
func TestRoCEv1MappedGIDs(t *testing.T) {
	s, err := gen.ParseScenario([]byte(`name: v1-mix
start: 2026-11-02T10:00:00Z
flows:
  - {src: 10.0.0.1, dst: 10.0.3.2, src_qpn: 0x110, dest_qpn: 0x210, start_psn: 1, mtu: 1024, roce: v1, ops: [{op: write, bytes: 4096}]}
  - {src: 10.0.0.1, dst: 10.0.3.2, src_qpn: 0x111, dest_qpn: 0x211, start_psn: 1, mtu: 1024, start_us: 50, ops: [{op: write, bytes: 4096}]}
  - {src: 10.0.0.1, dst: 10.9.9.9, src_qpn: 0x112, dest_qpn: 0x212, start_psn: 1, mtu: 1024, roce: v1, start_us: 80, ops: [{op: write, bytes: 4096}]}
`), "v1-mix.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := loadInput(t, writeScenario(t, s), filepath.Join(topoDir, pod))
	for _, f := range in.Flows {
		if !f.Key.Src.Is4() || !f.Key.Dst.Is4() {
			t.Fatalf("flow %d keyed %s > %s: want IPv4 addresses", f.ID, f.Key.Src, f.Key.Dst)
		}
	}
	fs := runAll(in)
	cr := ofKind(fs, KindCrossRail)
	if len(cr) != 2 {
		t.Fatalf("want cross_rail and the unplaced note, got %s", summary(cr))
	}
	wantCounts(t, cr[0], map[string]float64{"flows": 4, "connections": 2, "node_pairs": 1})
	wantCounts(t, cr[1], map[string]float64{"unknown_endpoints": 1, "roce_endpoints": 3})
	fo := ofKind(fs, KindFanOut)
	if len(fo) != 1 {
		t.Fatalf("fan_out: got %s", summary(fo))
	}
	wantCounts(t, fo[0], map[string]float64{"hcas": 2, "nodes": 2})
}

// TestNodesNaturalOrder: node names sort with their numbers compared as
// numbers (node2 before node10), in a finding's nodes, in cross_rail's
// node pairs and in fan_out's tie between equally busy nodes.
func TestNodesNaturalOrder(t *testing.T) {
	topo, err := topology.Parse([]byte(`nodes:
  - name: node10
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.10, role: compute, rail: 0}
  - name: node2
    interfaces:
      - {name: mlx5_1, ip: 10.0.1.2, role: compute, rail: 1}
  - name: node9
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.9, role: compute, rail: 0}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topo.Nodes(), []string{"node2", "node9", "node10"}; !slices.Equal(got, want) {
		t.Errorf("topology nodes %q, want %q", got, want)
	}
	s, err := gen.ParseScenario([]byte(`name: natural
start: 2026-11-02T10:00:00Z
flows:
  - {src: 10.0.0.10, dst: 10.0.1.2, src_qpn: 0x110, dest_qpn: 0x210, start_psn: 1, mtu: 1024, ops: [{op: write, bytes: 1024}]}
  - {src: 10.0.0.9, dst: 10.0.1.2, src_qpn: 0x111, dest_qpn: 0x211, start_psn: 1, mtu: 1024, ops: [{op: write, bytes: 1024}]}
`), "natural.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := loadInput(t, writeScenario(t, s), "")
	in.Topology = topo
	r := Run(in, "test")
	cr := ofKind(r.Findings, KindCrossRail)
	if len(cr) != 1 {
		t.Fatalf("cross_rail: got %s", summary(cr))
	}
	if want := []string{"node2", "node9", "node10"}; !slices.Equal(cr[0].Nodes, want) {
		t.Errorf("cross_rail nodes %q, want %q", cr[0].Nodes, want)
	}
	// Equal bytes: the pairs in node order, each pair's lower node first.
	if len(cr[0].Evidence.Details) != 2 || !strings.HasPrefix(cr[0].Evidence.Details[0], "node2 <> node9:") ||
		!strings.HasPrefix(cr[0].Evidence.Details[1], "node2 <> node10:") {
		t.Errorf("cross_rail details %q, want node2 <> node9 then node2 <> node10", cr[0].Evidence.Details)
	}
	fo := ofKind(r.Findings, KindFanOut)
	if len(fo) != 1 || !slices.Equal(fo[0].Nodes, []string{"node2", "node9", "node10"}) {
		t.Errorf("fan_out: got %s, nodes %q", summary(fo), fo[0].Nodes)
	}
}

// TestCMMadsCutAgree: the truncation note says "1 management datagram on
// QP1 was cut", "2 ... were cut".
func TestCMMadsCutAgree(t *testing.T) {
	for n, want := range map[uint64]string{1: "1 management datagram on QP1 was cut", 2: "2 management datagrams on QP1 were cut"} {
		c := NewCollector(flows.NewTable(flows.Config{}), Config{})
		c.c.health.mgmtCut = n
		fs := CaptureHealth(&Input{Capture: CaptureInfo{Packets: 10, RoCE: 10, Truncated: 10}, Collect: c})
		if len(fs) != 1 || !strings.Contains(fs[0].Detail, want) {
			t.Errorf("%d cut: got %s, want %q in the detail", n, summary(fs), want)
			for _, f := range fs {
				t.Log(f.Detail)
			}
		}
	}
}
