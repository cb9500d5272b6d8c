package topology

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// scenarioEndpoints reads the flow, RDMA CM and TCP endpoints of a generator
// scenario (testdata/scenarios/NAME.yaml), ignoring everything else in it.
type scenarioEndpoints struct {
	Flows []struct {
		Name     string `yaml:"name"`
		Src, Dst string
	} `yaml:"flows"`
	CM []struct {
		Name           string `yaml:"name"`
		Client, Server string
	} `yaml:"cm"`
	TCP []struct {
		Name           string `yaml:"name"`
		Client, Server string
	} `yaml:"tcp"`
}

func loadScenario(t *testing.T, name string) scenarioEndpoints {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var s scenarioEndpoints
	if err := yaml.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s
}

func loadPod(t *testing.T, name string) *Topology {
	t.Helper()
	topo, err := Load(filepath.Join("..", "testdata", "topology", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

// The shipped pod makes the clean all-reduce what it is: every flow is
// compute to compute on one rail, between two different named nodes.
func TestDGXPodCleanAllReduceIsSameRail(t *testing.T) {
	topo := loadPod(t, "dgx-pod")
	s := loadScenario(t, "clean_allreduce")
	if len(s.Flows) == 0 {
		t.Fatal("clean_allreduce.yaml has no flows")
	}
	for _, f := range s.Flows {
		src := topo.Lookup(netip.MustParseAddr(f.Src))
		dst := topo.Lookup(netip.MustParseAddr(f.Dst))
		if src.Role != RoleCompute || dst.Role != RoleCompute || src.Source != "interface" || dst.Source != "interface" {
			t.Errorf("%s: %s is %+v, %s is %+v; want two compute interfaces", f.Name, f.Src, src, f.Dst, dst)
			continue
		}
		if !src.HasRail || !dst.HasRail || src.Rail != dst.Rail {
			t.Errorf("%s: rails %d and %d, want one rail", f.Name, src.Rail, dst.Rail)
		}
		if src.Node == dst.Node {
			t.Errorf("%s: both ends on %s, want two nodes", f.Name, src.Node)
		}
	}
}

// Every RDMA flow of the general scenarios runs between two addresses the
// pod knows (by interface or subnet) with one role, and a compute flow
// stays on one rail. (The report_* scenarios have their own pod.)
func TestDGXPodKnowsScenarioFlows(t *testing.T) {
	topo := loadPod(t, "dgx-pod")
	for _, name := range []string{
		"clean_allreduce", "congestion", "erspan1_qinq", "formats_pcap_ns_be", "formats_pcapng_2if",
		"formats_pcapng_gz", "formats_sll_be", "gre_teb", "malformed", "mirror_erspan2_vlan_trunc",
		"mirror_erspan3_ipv6", "retransmissions", "snaplen64", "storage", "transports",
	} {
		for _, f := range loadScenario(t, name).Flows {
			src := topo.Lookup(netip.MustParseAddr(f.Src))
			dst := topo.Lookup(netip.MustParseAddr(f.Dst))
			if !src.Known || src.Role != dst.Role || src.HasRail != dst.HasRail || src.Rail != dst.Rail {
				t.Errorf("%s %s: %s is %+v, %s is %+v; want one known role and rail", name, f.Name, f.Src, src, f.Dst, dst)
			}
		}
	}
}

// The storage scenario's RDMA CM and TCP endpoints are storage: the
// clients are the nodes' storage NICs, the servers are on the storage
// network.
func TestDGXPodStorageScenario(t *testing.T) {
	topo := loadPod(t, "dgx-pod")
	s := loadScenario(t, "storage")
	for _, c := range s.CM {
		if id := topo.Lookup(netip.MustParseAddr(c.Client)); id.Role != RoleStorage || id.Interface != "mlx5_8" {
			t.Errorf("cm %s: client %s is %+v, want a node's storage NIC", c.Name, c.Client, id)
		}
		if id := topo.Lookup(netip.MustParseAddr(c.Server)); id.Role != RoleStorage {
			t.Errorf("cm %s: server %s is %+v, want storage", c.Name, c.Server, id)
		}
	}
	for _, c := range s.TCP {
		for _, ip := range []string{c.Client, c.Server} {
			if id := topo.Lookup(netip.MustParseAddr(ip)); id.Role != RoleStorage {
				t.Errorf("tcp %s: %s is %+v, want storage", c.Name, ip, id)
			}
		}
	}
}

// report_pod.yaml says what the report scenarios' comments claim: the clean
// ring is same-rail everywhere, the cross-rail scenario crosses rails
// exactly in its x-* flows and has one unknown peer, and the storage
// scenario's servers are storage.
func TestReportPodMatchesReportScenarios(t *testing.T) {
	topo := loadPod(t, "report_pod")
	ends := func(src, dst string) (Identity, Identity) {
		return topo.Lookup(netip.MustParseAddr(src)), topo.Lookup(netip.MustParseAddr(dst))
	}
	for _, f := range loadScenario(t, "report_clean_rails").Flows {
		s, d := ends(f.Src, f.Dst)
		if s.Source != "interface" || d.Source != "interface" || s.Role != RoleCompute || d.Role != RoleCompute ||
			s.Rail != d.Rail || s.Node == d.Node {
			t.Errorf("report_clean_rails %s: %+v -> %+v, want one rail between two nodes", f.Name, s, d)
		}
	}
	for _, name := range []string{"report_cross_rail", "report_cross_rail_mirror"} {
		for _, f := range loadScenario(t, name).Flows {
			s, d := ends(f.Src, f.Dst)
			switch {
			case strings.HasPrefix(f.Name, "x-"):
				if s.Role != RoleCompute || d.Role != RoleCompute || s.Rail == d.Rail {
					t.Errorf("%s %s: %+v -> %+v, want compute across rails", name, f.Name, s, d)
				}
			case strings.HasPrefix(f.Name, "unknown"):
				if s.Known == d.Known {
					t.Errorf("%s %s: %+v -> %+v, want one end unknown", name, f.Name, s, d)
				}
			default:
				if s.Role != RoleCompute || d.Role != RoleCompute || s.Rail != d.Rail {
					t.Errorf("%s %s: %+v -> %+v, want compute on one rail", name, f.Name, s, d)
				}
			}
		}
	}
	for _, name := range []string{"report_storage", "report_storage_mirror"} {
		sc := loadScenario(t, name)
		for _, c := range sc.CM {
			if s, d := ends(c.Client, c.Server); s.Role != RoleCompute || d.Role != RoleStorage {
				t.Errorf("%s cm %s: %+v -> %+v, want compute to storage", name, c.Name, s, d)
			}
		}
		for _, c := range sc.TCP {
			if s, d := ends(c.Client, c.Server); s.Role != RoleCompute || d.Role != RoleStorage {
				t.Errorf("%s tcp %s: %+v -> %+v, want compute to storage", name, c.Name, s, d)
			}
		}
	}
}
