package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// one is a one-node file whose single interface is iface (a flow mapping).
func one(iface string) string {
	return "nodes:\n  - name: dgx-01\n    interfaces:\n      - " + iface + "\n"
}

// parseErrorCases are files that must fail, with the line and sentinel the
// error must carry and a piece of its message. FuzzParse seeds from them.
var parseErrorCases = []struct {
	name string
	in   string
	line int
	err  error
	msg  string
}{
	{"empty file", "", 1, ErrEmpty, "empty file"},
	{"comments only", "# nothing yet\n\n", 1, ErrEmpty, "empty file"},
	{"null document", "---\n~\n", 1, ErrEmpty, "empty file"},
	{"no nodes no subnets", "nodes: []\nsubnets:\n", 1, ErrEmpty, "no nodes and no subnets"},
	{"yaml syntax", "nodes:\n  - name: a\n  x: y\n", 2, ErrSyntax, "YAML: did not find expected '-' indicator"},
	{"yaml tab", "nodes:\n\t- name: a\n", 2, ErrSyntax, "YAML: found character that cannot start any token"},
	{"unclosed flow mapping", one("{name: e, ip: 1.2.3.4, role: storage"), 4, ErrSyntax, "did not find expected ',' or '}'"},
	{"two documents", "nodes: []\n---\nsubnets: []\n", 2, ErrSyntax, "more than one YAML document"},
	{"top is a list", "- nodes\n", 1, ErrSyntax, "the topology must be a mapping of nodes, subnets"},
	{"nodes not a list", "nodes: {name: a}\n", 1, ErrSyntax, "nodes must be a list"},
	{"interface not a mapping", "nodes:\n  - name: a\n    interfaces:\n      - eth0\n", 4, ErrSyntax, "interface must be a mapping"},
	{"alias", "nodes:\n  - &n {name: a, interfaces: [{name: e, ip: 1.2.3.4, role: bmc}]}\n  - *n\n", 3, ErrSyntax, "aliases (*n) are not supported"},
	{"unknown top key", "nodes: []\nswitches: []\n", 2, ErrUnknownKey, `unknown key "switches" in the topology (want nodes, subnets)`},
	{"unknown node key", "nodes:\n  - name: a\n    gpus: 8\n", 3, ErrUnknownKey, `unknown key "gpus" in node (want name, interfaces)`},
	{"unknown interface key", one("{name: e, ip: 1.2.3.4, role: storage, vlan: 3}"), 4, ErrUnknownKey, `unknown key "vlan" in interface (want name, ip, role, rail)`},
	{"unknown subnet key", "subnets:\n  - cidr: 10.0.0.0/8\n    role: storage\n    gateway: 10.0.0.1\n", 4, ErrUnknownKey, `unknown key "gateway" in subnet`},
	{"key twice", "nodes:\n  - name: a\n    interfaces:\n      - name: e\n        ip: 1.2.3.4\n        ip: 1.2.3.5\n        role: bmc\n", 6, ErrDuplicate, `key "ip" given twice in interface (also line 5)`},
	{"node without name", "nodes:\n  - interfaces: [{name: e, ip: 1.2.3.4, role: bmc}]\n", 2, ErrMissing, "node has no name"},
	{"node without interfaces", "nodes:\n  - name: a\n", 2, ErrMissing, `node "a" has no interfaces`},
	{"interface without name", one("{ip: 1.2.3.4, role: bmc}"), 4, ErrMissing, "interface has no name"},
	{"interface without ip", one("{name: e, role: bmc}"), 4, ErrMissing, "interface dgx-01 e has no ip"},
	{"null ip", one("{name: e, ip: , role: bmc}"), 4, ErrMissing, "interface dgx-01 e has no ip"},
	{"empty ip", one(`{name: e, ip: "", role: bmc}`), 4, ErrMissing, "ip of interface dgx-01 e is empty"},
	{"ip is a list", one("{name: e, ip: [1.2.3.4], role: bmc}"), 4, ErrSyntax, "ip of interface dgx-01 e must be a single value"},
	{"bad ip", "nodes:\n  - name: a\n    interfaces:\n      - name: e\n        ip: 10.0.0.300\n        role: bmc\n", 5, ErrBadIP, `ip "10.0.0.300" is not an IP address`},
	{"ip with zone", one(`{name: e, ip: "fe80::1%eth0", role: bmc}`), 4, ErrBadIP, "has a zone"},
	{"ip is a cidr", one("{name: e, ip: 10.0.0.1/24, role: bmc}"), 4, ErrBadIP,
		`ip "10.0.0.1/24" is not an IP address: give the interface's address alone (ip: 10.0.0.1); a whole prefix goes under subnets (cidr: 10.0.0.0/24)`},
	{"interface without role", one("{name: e, ip: 1.2.3.4}"), 4, ErrMissing, "interface dgx-01 e has no role"},
	{"unknown role", "nodes:\n  - name: a\n    interfaces:\n      - name: e\n        ip: 1.2.3.4\n        role: gpu\n", 6, ErrUnknownRole, `unknown role "gpu" (want compute, storage, management or bmc)`},
	{"role unknown", one("{name: e, ip: 1.2.3.4, role: unknown}"), 4, ErrUnknownRole, `unknown role "unknown"`},
	{"role case", one("{name: e, ip: 1.2.3.4, role: Compute, rail: 0}"), 4, ErrUnknownRole, `unknown role "Compute"`},
	{"compute without rail", "nodes:\n  - name: a\n    interfaces:\n      - name: mlx5_0\n        ip: 10.0.0.1\n        role: compute\n", 4, ErrRail, "compute interface a mlx5_0 needs a rail"},
	{"compute with null rail", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: }"), 4, ErrRail, "needs a rail"},
	{"rail on storage", "nodes:\n  - name: a\n    interfaces:\n      - name: mlx5_8\n        ip: 10.1.0.1\n        role: storage\n        rail: 2\n", 7, ErrRail, "interface a mlx5_8 is storage: only compute has a rail"},
	{"rail on bmc", one("{name: bmc, ip: 1.2.3.4, role: bmc, rail: 0}"), 4, ErrRail, "only compute has a rail"},
	{"negative rail", "nodes:\n  - name: a\n    interfaces:\n      - name: mlx5_0\n        ip: 10.0.0.1\n        role: compute\n        rail: -1\n", 7, ErrRail, "rail -1 is negative"},
	{"rail not an integer", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: two}"), 4, ErrRail, `rail "two" is not an integer`},
	{"rail a float", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 3.0}"), 4, ErrRail, `rail "3.0" is not an integer`},
	{"rail too large", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 99999999999999999999}"), 4, ErrRail, "rail 99999999999999999999 is out of range"},
	{"rail above 255", "nodes:\n  - name: a\n    interfaces:\n      - name: mlx5_0\n        ip: 10.0.0.1\n        role: compute\n        rail: 1000000\n", 7, ErrRail, "rail 1000000 is out of range (0 to 255"},
	{"rail 256", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 256}"), 4, ErrRail, "rail 256 is out of range (0 to 255"},
	{"subnet rail above 255", "subnets:\n  - {cidr: 10.3.0.0/16, role: compute, rail: 3}\n  - cidr: 10.4.0.0/16\n    role: compute\n    rail: 1000\n", 5, ErrRail, "rail 1000 is out of range (0 to 255"},
	{"rail with a leading zero", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 010}"), 4, ErrRail, "rail 010 has a leading zero"},
	{"rail a list", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: [3]}"), 4, ErrRail, "must be a single integer"},
	{"duplicate ip two roles", "nodes:\n  - name: a\n    interfaces:\n      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}\n  - name: b\n    interfaces:\n      - {name: eno1, ip: 10.0.0.1, role: management}\n",
		7, ErrDuplicate, "10.0.0.1 is management here but compute at line 4 (a mlx5_0); an address has one role"},
	{"duplicate ip same role", "nodes:\n  - name: a\n    interfaces:\n      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}\n      - {name: mlx5_1, ip: 10.0.0.1, role: compute, rail: 1}\n",
		5, ErrDuplicate, "10.0.0.1 is listed twice (also line 4, a mlx5_0); list each address once"},
	{"duplicate ip mapped form", "nodes:\n  - name: a\n    interfaces:\n      - {name: e, ip: 10.0.0.1, role: bmc}\n      - {name: f, ip: \"::ffff:10.0.0.1\", role: bmc}\n",
		5, ErrDuplicate, "10.0.0.1 is listed twice (also line 4"},
	{"duplicate ipv6 spelled differently", "nodes:\n  - name: a\n    interfaces:\n      - {name: e, ip: \"fd00::1\", role: bmc}\n      - {name: f, ip: \"fd00:0:0:0::1\", role: storage}\n",
		5, ErrDuplicate, "fd00::1 is storage here but bmc at line 4"},
	// One HCA's IPv4 and IPv6 addresses on two rails: traffic from one
	// would be judged same-rail, from the other cross-rail.
	// Names are printed in reports as they are: a newline made a line of
	// its own in the text report, a right-to-left override reversed one.
	{"newline in a node name", "nodes:\n  - name: \"dgx-01\\n [CRITICAL] fake\"\n    interfaces: [{name: e, ip: 1.2.3.4, role: bmc}]\n", 2, ErrSyntax, `node name "dgx-01\n [CRITICAL] fake" has a control character (U+000A)`},
	{"escape in an interface name", one(`{name: "mlx5_0\e[31m", ip: 10.0.0.1, role: compute, rail: 0}`), 4, ErrSyntax, `interface name "mlx5_0\x1b[31m" has a control character (U+001B)`},
	{"bidi override in an interface name", one(`{name: "mlx5_0\u202e", ip: 10.0.0.1, role: compute, rail: 0}`), 4, ErrSyntax, "has a control character (U+202E)"},
	{"interface on two rails", "nodes:\n  - name: a\n    interfaces:\n      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}\n      - {name: mlx5_1, ip: 10.0.1.1, role: compute, rail: 1}\n      - {name: mlx5_0, ip: \"fd00:0:0:1::1\", role: compute, rail: 1}\n",
		6, ErrConflict, "interface a mlx5_0 is compute rail 1 here but compute rail 0 at line 4; an interface's addresses share its role and rail"},
	{"interface in two roles", "nodes:\n  - name: a\n    interfaces:\n      - {name: mlx5_8, ip: 10.100.1.1, role: storage}\n      - {name: mlx5_8, ip: 10.0.8.1, role: compute, rail: 8}\n",
		5, ErrConflict, "interface a mlx5_8 is compute rail 8 here but storage at line 4"},
	{"duplicate node", "nodes:\n  - name: dgx-01\n    interfaces: [{name: e, ip: 1.2.3.4, role: bmc}]\n  - name: dgx-01\n    interfaces: [{name: e, ip: 1.2.3.5, role: bmc}]\n",
		4, ErrDuplicate, `node "dgx-01" is also at line 2`},
	{"subnet without cidr", "subnets:\n  - {role: storage}\n", 2, ErrMissing, "subnet has no cidr"},
	{"bad cidr", "subnets:\n  - {cidr: 10.0.0.0/33, role: storage}\n", 2, ErrBadCIDR, `cidr "10.0.0.0/33" is not a CIDR prefix`},
	{"cidr without length", "subnets:\n  - {cidr: 10.0.3.0, role: storage}\n", 2, ErrBadCIDR, "is not a CIDR prefix"},
	{"cidr host bits", "subnets:\n  - {cidr: 10.0.3.7/24, role: compute, rail: 3}\n", 2, ErrBadCIDR, `cidr "10.0.3.7/24" has host bits set (did you mean 10.0.3.0/24?)`},
	{"cidr short mapped", "subnets:\n  - {cidr: \"::ffff:0:0/80\", role: storage}\n", 2, ErrBadCIDR, "mixes IPv4-mapped"},
	{"subnet unknown role", "subnets:\n  - {cidr: 10.0.0.0/8, role: san}\n", 2, ErrUnknownRole, `unknown role "san"`},
	{"compute subnet without rail", "subnets:\n  - {cidr: 10.3.0.0/16, role: compute}\n", 2, ErrRail, "compute subnet 10.3.0.0/16 needs a rail"},
	{"rail on storage subnet", "subnets:\n  - cidr: 10.100.0.0/16\n    role: storage\n    rail: 1\n", 4, ErrRail, "subnet 10.100.0.0/16 is storage: only compute has a rail"},
	{"negative subnet rail", "subnets:\n  - {cidr: 10.3.0.0/16, role: compute, rail: -3}\n", 2, ErrRail, "rail -3 is negative"},
	{"same prefix two roles", "subnets:\n  - {cidr: 10.3.0.0/16, role: compute, rail: 3}\n  - {cidr: 10.100.0.0/16, role: storage}\n  - {cidr: 10.3.0.0/16, role: storage}\n",
		4, ErrConflict, "10.3.0.0/16 is storage here but compute rail 3 at t.yaml:2"},
	{"same prefix two rails", "subnets:\n  - {cidr: 10.3.0.0/16, role: compute, rail: 3}\n  - {cidr: 10.3.0.0/16, role: compute, rail: 4}\n",
		3, ErrConflict, "10.3.0.0/16 is compute rail 4 here but compute rail 3 at t.yaml:2"},
	{"same prefix after masking ipv6", "subnets:\n  - {cidr: \"fd00:0:0:3::/64\", role: compute, rail: 3}\n  - {cidr: \"fd00:0000:0000:0003::/64\", role: bmc}\n",
		3, ErrConflict, "fd00:0:0:3::/64 is bmc here but compute rail 3 at t.yaml:2"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorCases {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := Parse([]byte(tc.in), "t.yaml")
			if err == nil {
				t.Fatalf("Parse succeeded (%v), want an error at line %d", topo, tc.line)
			}
			if topo != nil {
				t.Errorf("Parse returned a topology with its error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is a %T, want *ParseError", err, err)
			}
			if pe.Line != tc.line {
				t.Errorf("line %d, want %d (%v)", pe.Line, tc.line, err)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error %q does not match %v", err, tc.err)
			}
			if prefix := fmt.Sprintf("t.yaml:%d: ", tc.line); !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q, want it to start with %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to contain %q", err, tc.msg)
			}
		})
	}
}

// TestParseAccepts covers files that are odd but valid, and the decisions
// about what a repeat means.
func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ip   string
		want Identity
	}{
		{"one interface, two addresses", "nodes:\n  - name: a\n    interfaces:\n      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}\n      - {name: mlx5_0, ip: \"fd00::1\", role: compute, rail: 0}\n",
			"fd00::1", Identity{Node: "a", Interface: "mlx5_0", Role: RoleCompute, Rail: 0, HasRail: true, Known: true, Source: "interface"}},
		{"unquoted ipv6 in a flow mapping", one("{name: e, ip: 2001:db8::7, role: storage}"),
			"2001:db8::7", Identity{Node: "dgx-01", Interface: "e", Role: RoleStorage, Known: true, Source: "interface"}},
		{"mapped ipv4 stored as ipv4", one(`{name: e, ip: "::ffff:192.168.20.1", role: bmc}`),
			"192.168.20.1", Identity{Node: "dgx-01", Interface: "e", Role: RoleBMC, Known: true, Source: "interface"}},
		{"rail 255, the highest", one("{name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 255}"),
			"10.0.0.1", Identity{Node: "dgx-01", Interface: "mlx5_0", Role: RoleCompute, Rail: 255, HasRail: true, Known: true, Source: "interface"}},
		{"quoted rail", one(`{name: mlx5_3, ip: 10.0.3.1, role: compute, rail: "3"}`),
			"10.0.3.1", Identity{Node: "dgx-01", Interface: "mlx5_3", Role: RoleCompute, Rail: 3, HasRail: true, Known: true, Source: "interface"}},
		{"empty rail on storage is no rail", one("{name: mlx5_8, ip: 10.1.0.1, role: storage, rail: }"),
			"10.1.0.1", Identity{Node: "dgx-01", Interface: "mlx5_8", Role: RoleStorage, Known: true, Source: "interface"}},
		{"identical subnets merge", "subnets:\n  - {cidr: 10.3.0.0/16, role: compute, rail: 3}\n  - {cidr: 10.3.0.0/16, role: compute, rail: 3}\n",
			"10.3.9.9", Identity{Role: RoleCompute, Rail: 3, HasRail: true, Known: true, Source: "subnet"}},
		{"mapped ipv4 cidr", "subnets:\n  - {cidr: \"::ffff:10.100.0.0/112\", role: storage}\n",
			"10.100.7.7", Identity{Role: RoleStorage, Known: true, Source: "subnet"}},
		{"subnets only", "subnets:\n  - {cidr: 10.100.255.0/24, role: storage}\n",
			"10.100.255.9", Identity{Role: RoleStorage, Known: true, Source: "subnet"}},
		{"unicode names", "nodes:\n  - name: \"gpu-日本-ü 1\"\n    interfaces: [{name: \"mlx5_0·a\", ip: 10.0.0.1, role: compute, rail: 0}]\n",
			"10.0.0.1", Identity{Node: "gpu-日本-ü 1", Interface: "mlx5_0·a", Role: RoleCompute, Rail: 0, HasRail: true, Known: true, Source: "interface"}},
		{"explicit document and comments", "---\n# pod A\nnodes:  # the DGXs\n  - name: a\n    interfaces: [{name: bmc, ip: 192.168.20.1, role: bmc}]\n...\n",
			"192.168.20.1", Identity{Node: "a", Interface: "bmc", Role: RoleBMC, Known: true, Source: "interface"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			topo, err := Parse([]byte(tc.in), "t.yaml")
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if got := topo.Lookup(netip.MustParseAddr(tc.ip)); got != tc.want {
				t.Errorf("Lookup(%s) = %+v, want %+v", tc.ip, got, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	topo, err := Load("../testdata/topology/dgx-pod.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got := topo.Lookup(netip.MustParseAddr("10.0.5.3")); got.Node != "dgx-03" || got.Rail != 5 {
		t.Errorf("Lookup(10.0.5.3) = %+v, want dgx-03 rail 5", got)
	}
	if _, err := Load("../testdata/topology/no-such-file.yaml"); err == nil || !strings.Contains(err.Error(), "no-such-file.yaml") {
		t.Errorf("Load of a missing file: error %v, want one naming the file", err)
	}
}
