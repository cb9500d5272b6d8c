package topology_test

import (
	"fmt"
	"log"
	"net/netip"

	"github.com/rocedump/rocedump/topology"
)

func ExampleParse() {
	file := []byte(`
nodes:
  - name: dgx-01
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}
      - {name: mlx5_8, ip: 10.100.1.1, role: storage}
subnets:
  - {cidr: 10.100.255.0/24, role: storage}
  - {cidr: 10.3.0.0/16, role: compute, rail: 3}
`)
	topo, err := topology.Parse(file, "pod.yaml")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(topo)
	for _, s := range []string{"10.0.0.1", "10.3.4.5", "10.100.255.7", "192.0.2.1"} {
		ip := netip.MustParseAddr(s)
		id := topo.Lookup(ip)
		rail := "-"
		if id.HasRail {
			rail = fmt.Sprint(id.Rail)
		}
		fmt.Printf("%-13s %-8s rail %s  %-13s %s\n", ip, id.Role, rail, topo.NodeOf(ip), id.Source)
	}
	// Output:
	// 1 node, 1 compute interface on 1 rail, 1 storage interface, 1 compute subnet, 1 storage subnet
	// 10.0.0.1      compute  rail 0  dgx-01        interface
	// 10.3.4.5      compute  rail 3  10.3.4.5      subnet
	// 10.100.255.7  storage  rail -  10.100.255.7  subnet
	// 192.0.2.1     unknown  rail -  192.0.2.1
}

func ExampleTopology_AddRailSubnet() {
	topo := topology.New()
	for _, spec := range []string{"10.0.3.0/24=3", "10.0.4.0/24:4", "10.0.5.0/24=five"} {
		if err := topo.AddRailSubnet(spec); err != nil {
			fmt.Println(err)
		}
	}
	id := topo.Lookup(netip.MustParseAddr("10.0.4.9"))
	fmt.Println(id.Role, id.Rail, id.Source)
	// Output:
	// rail subnet "10.0.5.0/24=five": rail "five" is not an integer
	// compute 4 rail-subnet
}

func ExampleParseError() {
	_, err := topology.Parse([]byte(`nodes:
  - name: dgx-01
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}
      - {name: eno1, ip: 10.0.0.1, role: management}
`), "pod.yaml")
	fmt.Println(err)
	// Output:
	// pod.yaml:5: 10.0.0.1 is management here but compute at line 4 (dgx-01 mlx5_0); an address has one role
}
