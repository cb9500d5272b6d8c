package topology

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
)

// precedenceFile has one address at each level: an interface inside a /24
// inside a /16, IPv6 alike, and a storage /24 inside a compute /16.
const precedenceFile = `nodes:
  - name: dgx-01
    interfaces:
      - {name: mlx5_3, ip: 10.3.0.1, role: compute, rail: 3}
      - {name: mlx5_8, ip: 10.3.200.1, role: storage}
      - {name: mlx5_0, ip: "fd00:0:0:3::1", role: compute, rail: 3}
subnets:
  - {cidr: 10.3.0.0/16, role: compute, rail: 3}
  - {cidr: 10.3.7.0/24, role: compute, rail: 7}
  - {cidr: 10.3.200.0/24, role: storage}
  - {cidr: 10.0.0.0/8, role: management}
  - {cidr: "fd00::/16", role: compute, rail: 1}
  - {cidr: "fd00:0:0:3::/64", role: compute, rail: 3}
`

func TestLookupPrecedence(t *testing.T) {
	topo, err := Parse([]byte(precedenceFile), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	iface := func(name string, role Role, rail int, hasRail bool) Identity {
		return Identity{Node: "dgx-01", Interface: name, Role: role, Rail: rail, HasRail: hasRail, Known: true, Source: "interface"}
	}
	sub := func(role Role, rail int, hasRail bool) Identity {
		return Identity{Role: role, Rail: rail, HasRail: hasRail, Known: true, Source: "subnet"}
	}
	unknown := Identity{Role: RoleUnknown}
	tests := []struct {
		name string
		ip   netip.Addr
		want Identity
	}{
		{"interface beats every subnet", netip.MustParseAddr("10.3.0.1"), iface("mlx5_3", RoleCompute, 3, true)},
		{"storage interface in storage /24", netip.MustParseAddr("10.3.200.1"), iface("mlx5_8", RoleStorage, 0, false)},
		{"/16 when no /24 matches", netip.MustParseAddr("10.3.0.2"), sub(RoleCompute, 3, true)},
		{"/24 beats /16", netip.MustParseAddr("10.3.7.9"), sub(RoleCompute, 7, true)},
		{"storage /24 inside compute /16", netip.MustParseAddr("10.3.200.2"), sub(RoleStorage, 0, false)},
		{"/8 when nothing longer", netip.MustParseAddr("10.9.9.9"), sub(RoleManagement, 0, false)},
		{"unknown ipv4", netip.MustParseAddr("192.0.2.1"), unknown},
		{"mapped ipv4 unmapped", netip.MustParseAddr("::ffff:10.3.0.1"), iface("mlx5_3", RoleCompute, 3, true)},
		{"mapped ipv4 in subnet", netip.MustParseAddr("::ffff:10.3.7.9"), sub(RoleCompute, 7, true)},
		{"ipv6 interface", netip.MustParseAddr("fd00:0:0:3::1"), iface("mlx5_0", RoleCompute, 3, true)},
		{"ipv6 zone ignored", netip.MustParseAddr("fd00:0:0:3::1%mlx5_0"), iface("mlx5_0", RoleCompute, 3, true)},
		{"ipv6 /64 beats /16", netip.MustParseAddr("fd00:0:0:3::2"), sub(RoleCompute, 3, true)},
		{"ipv6 /16", netip.MustParseAddr("fd00:0:0:4::2"), sub(RoleCompute, 1, true)},
		{"unknown ipv6", netip.MustParseAddr("2001:db8::1"), unknown},
		{"ipv4 prefix never matches ipv6", netip.MustParseAddr("::a03:1"), unknown},
		{"invalid address", netip.Addr{}, unknown},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := topo.Lookup(tc.ip); got != tc.want {
				t.Errorf("Lookup(%s) = %+v, want %+v", tc.ip, got, tc.want)
			}
		})
	}
}

func TestSubnetOrderDoesNotMatter(t *testing.T) {
	a := New()
	b := New()
	for _, s := range []string{"10.0.0.0/8=1", "10.3.0.0/16=3", "10.3.7.0/24=7", "10.3.7.128/25=8"} {
		if err := a.AddRailSubnet(s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"10.3.7.128/25=8", "10.3.7.0/24=7", "10.0.0.0/8=1", "10.3.0.0/16=3"} {
		if err := b.AddRailSubnet(s); err != nil {
			t.Fatal(err)
		}
	}
	for ip, rail := range map[string]int{"10.1.1.1": 1, "10.3.1.1": 3, "10.3.7.1": 7, "10.3.7.200": 8} {
		for _, topo := range []*Topology{a, b} {
			if got := topo.Lookup(netip.MustParseAddr(ip)); got.Rail != rail || !got.HasRail {
				t.Errorf("Lookup(%s) = %+v, want rail %d", ip, got, rail)
			}
		}
	}
}

func TestNilAndZeroTopology(t *testing.T) {
	ip := netip.MustParseAddr("10.0.0.1")
	var nilTopo *Topology
	if got := nilTopo.Lookup(ip); got != (Identity{Role: RoleUnknown}) {
		t.Errorf("nil Lookup = %+v, want unknown", got)
	}
	if got := nilTopo.NodeOf(ip); got != "10.0.0.1" {
		t.Errorf("nil NodeOf = %q, want the address", got)
	}
	if got := nilTopo.Nodes(); got != nil {
		t.Errorf("nil Nodes = %v, want nil", got)
	}
	if got := nilTopo.Rails(); got != nil {
		t.Errorf("nil Rails = %v, want nil", got)
	}
	if got := nilTopo.String(); got != "no topology" {
		t.Errorf("nil String = %q", got)
	}
	if err := nilTopo.AddRailSubnet("10.0.0.0/24=0"); err == nil {
		t.Error("AddRailSubnet on nil succeeded")
	}

	var zero Topology
	if got := zero.Lookup(ip); got.Known || got.Role != RoleUnknown {
		t.Errorf("zero Lookup = %+v, want unknown", got)
	}
	if err := zero.AddRailSubnet("10.0.0.0/24=0"); err != nil {
		t.Fatalf("AddRailSubnet on the zero value: %v", err)
	}
	if got := zero.Lookup(ip); got.Rail != 0 || !got.HasRail || got.Source != "rail-subnet" {
		t.Errorf("zero Lookup after AddRailSubnet = %+v", got)
	}
}

func TestNodeOf(t *testing.T) {
	topo, err := Parse([]byte(precedenceFile), "p.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ ip, want string }{
		{"10.3.0.1", "dgx-01"},
		{"::ffff:10.3.0.1", "dgx-01"},
		{"fd00:0:0:3::1", "dgx-01"},
		{"10.3.7.9", "10.3.7.9"},            // known by subnet only
		{"::ffff:192.0.2.1", "192.0.2.1"},   // unknown, shown unmapped
		{"fd00:0:0:3::1%eth0", "dgx-01"},    // zone ignored
		{"2001:db8::1%eth0", "2001:db8::1"}, // and not shown
	}
	for _, tc := range tests {
		if got := topo.NodeOf(netip.MustParseAddr(tc.ip)); got != tc.want {
			t.Errorf("NodeOf(%s) = %q, want %q", tc.ip, got, tc.want)
		}
	}
}

// Reports look up both ends of every packet's flow: no allocation.
func TestLookupAllocs(t *testing.T) {
	topo, err := Load("../testdata/topology/dgx-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ips := []netip.Addr{
		netip.MustParseAddr("10.0.3.2"), netip.MustParseAddr("10.0.4.5"),
		netip.MustParseAddr("::ffff:10.1.0.1"), netip.MustParseAddr("fd00:0:0:2::1"),
		netip.MustParseAddr("203.0.113.9"),
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, ip := range ips {
			_ = topo.Lookup(ip)
		}
	})
	if allocs != 0 {
		t.Errorf("Lookup allocates %.1f times per run, want 0", allocs)
	}
}

func BenchmarkLookup(b *testing.B) {
	topo, err := Load("../testdata/topology/dgx-pod.yaml")
	if err != nil {
		b.Fatal(err)
	}
	ips := []netip.Addr{netip.MustParseAddr("10.0.3.2"), netip.MustParseAddr("10.0.4.5"), netip.MustParseAddr("203.0.113.9")}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_ = topo.Lookup(ips[i%len(ips)])
	}
}

// TestManySubnets: a routed rail fabric gives each HCA its own /31 to its
// leaf, so a topology of a large pod lists tens of thousands of subnets.
// Each of 60,000 /31s, given out of address order, and a /8 around them
// are found by Lookup. (Parsing them took time in proportion to their
// square, each new subnet compared with every one before it and inserted
// in place, and each Lookup tried every subnet in turn: this test took 52
// s so; BenchmarkManySubnets measures it.)
func TestManySubnets(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 60,000-subnet topology")
	}
	const n = 60000
	addr := func(i int) netip.Addr {
		return netip.AddrFrom4([4]byte{10, byte(i % 8), byte(i / 8 / 128), byte(i / 8 % 128 * 2)})
	}
	var b strings.Builder
	b.WriteString("subnets:\n")
	for k := range n {
		i := (k * 7919) % n // not in address order
		fmt.Fprintf(&b, "  - {cidr: %s/31, role: compute, rail: %d}\n", addr(i), i%8)
	}
	b.WriteString("  - {cidr: 10.0.0.0/8, role: storage}\n  - {cidr: \"fd00::/16\", role: compute, rail: 1}\n")
	topo, err := Parse([]byte(b.String()), "big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		ip := addr(i).Next()
		if id := topo.Lookup(ip); id.Role != RoleCompute || id.Rail != i%8 {
			t.Fatalf("Lookup(%s) = %+v, want compute rail %d", ip, id, i%8)
		}
		if id := topo.Lookup(netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)})); id.Role != RoleStorage {
			t.Fatalf("Lookup(10.9.x.x) = %+v, want the storage /8", id)
		}
	}
	if id := topo.Lookup(netip.MustParseAddr("fd00::1")); id.Role != RoleCompute || id.Rail != 1 {
		t.Fatalf("Lookup(fd00::1) = %+v", id)
	}
}

// BenchmarkManySubnets measures Parse of a topology of 10,000 /31 subnets
// and a Lookup of an address in each.
func BenchmarkManySubnets(b *testing.B) {
	const n = 10000
	var y strings.Builder
	y.WriteString("subnets:\n")
	for i := range n {
		fmt.Fprintf(&y, "  - {cidr: 10.%d.%d.%d/31, role: compute, rail: %d}\n", i%8, i/8/128, i/8%128*2, i%8)
	}
	data := []byte(y.String())
	for b.Loop() {
		topo, err := Parse(data, "big.yaml")
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if id := topo.Lookup(netip.AddrFrom4([4]byte{10, byte(i % 8), byte(i / 8 / 128), byte(i/8%128*2 + 1)})); id.Rail != i%8 {
				b.Fatalf("address %d: %+v", i, id)
			}
		}
	}
}
