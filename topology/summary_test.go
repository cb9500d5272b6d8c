package topology

import (
	"slices"
	"testing"
)

func TestSummary(t *testing.T) {
	const file = `nodes:
  - name: dgx-02
    interfaces:
      - {name: mlx5_1, ip: 10.0.1.2, role: compute, rail: 1}
      - {name: mlx5_0, ip: 10.0.0.2, role: compute, rail: 0}
  - name: dgx-01
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}
      - {name: mlx5_8, ip: 10.100.1.1, role: storage}
      - {name: bmc, ip: 192.168.20.1, role: bmc}
subnets:
  - {cidr: 10.100.255.0/24, role: storage}
  - {cidr: 10.3.0.0/16, role: compute, rail: 3}
`
	topo, err := Parse([]byte(file), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topo.Nodes(), []string{"dgx-01", "dgx-02"}; !slices.Equal(got, want) {
		t.Errorf("Nodes = %v, want %v", got, want)
	}
	topo.Nodes()[0] = "changed"
	if got := topo.Nodes()[0]; got != "dgx-01" {
		t.Errorf("Nodes shares its slice: after a caller's write it says %q", got)
	}
	if got, want := topo.Rails(), []int{0, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("Rails = %v, want %v", got, want)
	}
	want := "2 nodes, 3 compute interfaces on 2 rails, 1 storage interface, 1 bmc interface, 1 compute subnet, 1 storage subnet"
	if got := topo.String(); got != want {
		t.Errorf("String =\n%q, want\n%q", got, want)
	}

	rs := New()
	for _, s := range []string{"10.0.0.0/24=0", "10.0.1.0/24=1"} {
		if err := rs.AddRailSubnet(s); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := rs.String(), "0 nodes, 2 compute subnets"; got != want {
		t.Errorf("rail subnets only: String = %q, want %q", got, want)
	}
	if got, want := rs.Rails(), []int{0, 1}; !slices.Equal(got, want) {
		t.Errorf("rail subnets only: Rails = %v, want %v", got, want)
	}
	if got := rs.Nodes(); len(got) != 0 {
		t.Errorf("rail subnets only: Nodes = %v, want none", got)
	}
}

// The summary of the shipped pod, as the CLI would print it.
func TestSummaryDGXPod(t *testing.T) {
	topo, err := Load("../testdata/topology/dgx-pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := "4 nodes, 34 compute interfaces on 8 rails, 4 storage interfaces, 4 management interfaces, 4 bmc interfaces, " +
		"16 compute subnets, 1 storage subnet, 1 management subnet, 1 bmc subnet"
	if got := topo.String(); got != want {
		t.Errorf("String =\n%q, want\n%q", got, want)
	}
	if got, want := topo.Rails(), []int{0, 1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("Rails = %v, want %v", got, want)
	}
}
