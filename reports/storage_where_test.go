package reports

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/gen"
)

// storageWhereFindings runs every module over a scenario on the report pod
// (testdata/topology/report_pod.yaml) and returns its storage findings.
func storageWhereFindings(t *testing.T, scenario string) []Finding {
	t.Helper()
	s, err := gen.ParseScenario([]byte(scenario), "storage-where.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := loadInput(t, writeScenario(t, s), filepath.Join(topoDir, pod))
	return ofKind(runAll(in), KindStorageOnCompute)
}

// TestStorageOnManagementNet: NFS from a node's management port (eno1,
// 192.168.10.1) to a storage server is the in-band management network's
// (home directories), not storage on compute links; nor is other TCP from
// a management port to a storage server. NFS from a compute HCA to the
// same server is, and its finding counts it alone. Before, the management
// port's NFS was one more conversation "on compute HCA addresses" and its
// other TCP a storage address "seen on the captured links".
func TestStorageOnManagementNet(t *testing.T) {
	st := storageWhereFindings(t, `name: nfs-mgmt
start: 2026-11-02T10:00:00Z
tcp:
  - {name: nfs-mgmt, client: 192.168.10.1, server: 10.100.255.22, port: 2049, client_port: 901, bytes: 200, resp_bytes: 2000, at_us: 10}
  - {name: ssh-mgmt, client: 192.168.10.2, server: 10.100.255.22, port: 22, client_port: 50000, bytes: 100, resp_bytes: 300, at_us: 15}
  - {name: nfs-compute, client: 10.0.1.1, server: 10.100.255.22, port: 2049, client_port: 902, bytes: 300, resp_bytes: 2000, at_us: 20}
`)
	if len(st) != 1 || st[0].Severity != Critical || st[0].Title != "NFS on compute HCA addresses" {
		t.Fatalf("want only the NFS of the compute HCA, got %s", summary(st))
	}
	wantCounts(t, st[0], map[string]float64{"conversations": 1, "nfs_conversations": 1, "on_compute_conversations": 1})
	if b := st[0].Evidence.Counts["bytes"]; b != st[0].Evidence.Counts["on_compute_bytes"] || b == 0 {
		t.Errorf("bytes %v: want those of the compute HCA's conversation only", st[0].Evidence.Counts)
	}
	for _, l := range st[0].Evidence.Details {
		if strings.Contains(l, "192.168.10.") {
			t.Errorf("detail names the management port: %q", l)
		}
	}
	for _, n := range st[0].Nodes {
		if n != "dgx-01" && n != "10.100.255.22" {
			t.Errorf("node %q: want dgx-01 and the server only", n)
		}
	}
}

// TestStorageOnComputeShare: a storage finding made critical by one
// compute HCA's traffic says how much of what it counts has a compute end,
// and lists that first. Here dgx-01's storage NIC (mlx5_8) reads over
// NVMe-oF/RDMA and NFS, as it should, next to one NVMe-oF connection and
// one NFS mount from a compute HCA: before, all of it was "on compute HCA
// addresses" (70.5 KB of NVMe-oF for the compute HCA's 4.20 KB).
func TestStorageOnComputeShare(t *testing.T) {
	st := storageWhereFindings(t, `name: storage-share
start: 2026-11-02T10:00:00Z
cm:
  - {name: gds, client: 10.100.1.1, server: 10.100.255.10, port: 4420, client_qpn: 0x181, server_qpn: 0x281, client_psn: 1000, server_psn: 2000, at_us: 0, disconnect: false}
  - {name: bad, client: 10.0.1.1, server: 10.100.255.10, port: 4420, client_qpn: 0x182, server_qpn: 0x282, client_psn: 3000, server_psn: 4000, at_us: 10, disconnect: false}
flows:
  - {name: gds-io, src: 10.100.1.1, dst: 10.100.255.10, src_qpn: 0x181, dest_qpn: 0x281, start_psn: 1000, mtu: 4096, start_us: 100, ops: [{op: read, bytes: 65536}]}
  - {name: bad-io, src: 10.0.1.1, dst: 10.100.255.10, src_qpn: 0x182, dest_qpn: 0x282, start_psn: 3000, mtu: 4096, start_us: 110, ops: [{op: read, bytes: 4096}]}
tcp:
  - {name: nfs-storage-nic, client: 10.100.1.2, server: 10.100.255.22, port: 2049, client_port: 901, bytes: 9000, resp_bytes: 20000, at_us: 200}
  - {name: nfs-compute, client: 10.0.2.2, server: 10.100.255.22, port: 2049, client_port: 902, bytes: 300, resp_bytes: 2000, at_us: 300}
`)
	if len(st) != 2 {
		t.Fatalf("want the RDMA CM and the TCP findings, got %s", summary(st))
	}
	cm, ip := st[0], st[1]
	if cm.Severity != Critical || ip.Severity != Critical {
		t.Errorf("a compute HCA end makes each critical: %s", summary(st))
	}
	wantCounts(t, cm, map[string]float64{"cm_requests": 2, "flows": 4, "on_compute_cm_requests": 1, "on_compute_flows": 2})
	wantCounts(t, ip, map[string]float64{"conversations": 2, "on_compute_conversations": 1})
	for _, f := range st {
		c := f.Evidence.Counts
		if c["on_compute_bytes"] == 0 || c["on_compute_bytes"]*4 > c["bytes"] {
			t.Errorf("%s: on_compute_bytes %v of bytes %v: want the compute HCA's small share", f.Title, c["on_compute_bytes"], c["bytes"])
		}
		if !strings.Contains(f.Detail, "compute HCA address") || strings.Contains(f.Detail, "run on compute HCA addresses") ||
			strings.Contains(f.Detail, "connections on compute HCA addresses") {
			t.Errorf("%s: detail must say what share has a compute end, not that all of it does: %q", f.Title, f.Detail)
		}
	}
	if len(ip.Evidence.Details) == 0 || !strings.Contains(ip.Evidence.Details[0], "compute rail") {
		t.Errorf("the compute HCA's conversation comes first: %q", ip.Evidence.Details)
	}
}

// TestStorageRoleShare: the storage-role finding made critical by one
// storage address that talks to a compute HCA says how many of its
// storage addresses do, and how much of its traffic has a compute end,
// and lists those addresses first. Here dgx-01's storage NIC reads from
// a storage server, as it should, while another server has a RoCE flow
// and a TCP conversation with compute HCAs: before, the title said "3
// storage addresses talk to compute HCA addresses".
func TestStorageRoleShare(t *testing.T) {
	st := storageWhereFindings(t, `name: storage-role-share
start: 2026-11-02T10:00:00Z
flows:
  - {name: gds, src: 10.100.1.1, dst: 10.100.255.30, src_qpn: 0x181, dest_qpn: 0x281, mtu: 4096, start_us: 0, ops: [{op: write, bytes: 65536}]}
  - {name: bad, src: 10.0.1.1, dst: 10.100.255.31, src_qpn: 0x182, dest_qpn: 0x282, mtu: 4096, start_us: 10, ops: [{op: write, bytes: 4096}]}
tcp:
  - {name: bad-tcp, client: 10.0.2.2, server: 10.100.255.31, port: 5000, client_port: 50000, bytes: 300, resp_bytes: 2000, at_us: 300}
`)
	if len(st) != 1 {
		t.Fatalf("want the storage-role finding, got %s", summary(st))
	}
	f := st[0]
	if f.Severity != Critical || f.Title != "1 of 3 storage addresses talks to compute HCA addresses" {
		t.Errorf("role finding: %s", summary(st))
	}
	wantCounts(t, f, map[string]float64{
		"storage_endpoints": 3, "roce_flows": 4, "conversations": 1,
		"on_compute_endpoints": 1, "on_compute_roce_flows": 2, "on_compute_conversations": 1,
	})
	c := f.Evidence.Counts
	if c["on_compute_bytes"] == 0 || c["on_compute_bytes"] >= c["bytes"]/2 {
		t.Errorf("on_compute_bytes %v of bytes %v: want the compute flow's and conversation's only (a small share)", c["on_compute_bytes"], c["bytes"])
	}
	if len(f.Evidence.Details) == 0 || !strings.HasPrefix(f.Evidence.Details[0], "10.100.255.31") {
		t.Errorf("details %q: want the storage address that talks to compute HCAs first", f.Evidence.Details)
	}
	if !strings.Contains(f.Detail, "1 of 3 storage addresses") {
		t.Errorf("detail %q", f.Detail)
	}
}

// TestStorageNFSHelpers: an NFS mount first asks rpcbind (port 111) for
// mountd and reaches mountd (20048, where nfs-utils pins it) from a
// reserved port; the NFS lock manager listens on 4045 (lockd). From a
// compute HCA to a storage server they are NFS's storage traffic, not
// "other TCP/UDP": before, they were other TCP on compute links, mountd
// under the client's reserved port 706.
func TestStorageNFSHelpers(t *testing.T) {
	in := loadInput(t, writeScenarioText(t, `name: nfs-helpers
start: 2026-11-02T10:00:00Z
tcp:
  - {name: rpcbind, client: 10.0.1.1, server: 10.100.255.22, port: 111, client_port: 50000, bytes: 100, resp_bytes: 100, at_us: 10}
  - {name: mountd, client: 10.0.1.1, server: 10.100.255.22, port: 20048, client_port: 706, bytes: 200, resp_bytes: 300, at_us: 20}
  - {name: nlm, client: 10.0.1.1, server: 10.100.255.22, port: 4045, client_port: 707, bytes: 200, resp_bytes: 300, at_us: 30}
  - {name: nfs, client: 10.0.1.1, server: 10.100.255.22, port: 2049, client_port: 708, bytes: 300, resp_bytes: 2000, at_us: 40}
`), filepath.Join(topoDir, pod))
	fs := runAll(in)
	st := ofKind(fs, KindStorageOnCompute)
	if len(st) != 1 || st[0].Title != "NFS, NFS helpers on compute HCA addresses" {
		t.Fatalf("want one NFS finding, got %s", summary(st))
	}
	wantCounts(t, st[0], map[string]float64{"conversations": 4, "nfs_conversations": 1, "nfs_helpers_conversations": 3, "on_compute_conversations": 4})
	for _, f := range ofKind(fs, KindNonRDMAOnCompute) {
		t.Errorf("non_rdma_on_compute: %s", summary([]Finding{f}))
	}
}

// writeScenarioText generates the scenario in text into a capture file
// and returns its path.
func writeScenarioText(t *testing.T, text string) string {
	t.Helper()
	s, err := gen.ParseScenario([]byte(text), "scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return writeScenario(t, s)
}
