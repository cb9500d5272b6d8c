package topology

import (
	"fmt"
	"slices"
	"strings"
)

// Nodes returns the node names, sorted by CompareNames (dgx-2 before
// dgx-10). Nil for a nil topology.
func (t *Topology) Nodes() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.nodes)
}

// Rails returns the rails that compute interfaces and compute subnets name,
// sorted, each once.
func (t *Topology) Rails() []int {
	if t == nil {
		return nil
	}
	var rails []int
	for _, id := range t.byIP {
		if id.HasRail {
			rails = append(rails, id.Rail)
		}
	}
	for _, s := range t.subnets {
		if s.id.HasRail {
			rails = append(rails, s.id.Rail)
		}
	}
	slices.Sort(rails)
	return slices.Compact(rails)
}

// String summarises the topology in one line, e.g. "4 nodes, 32 compute
// interfaces on 8 rails, 4 storage interfaces, 1 storage subnet".
func (t *Topology) String() string {
	if t == nil {
		return "no topology"
	}
	roles := [...]Role{RoleCompute, RoleStorage, RoleManagement, RoleBMC}
	var ifaces, subnets [len(roles)]int
	var ifaceRails []int
	for _, id := range t.byIP {
		ifaces[slices.Index(roles[:], id.Role)]++
		if id.HasRail {
			ifaceRails = append(ifaceRails, id.Rail)
		}
	}
	for _, s := range t.subnets {
		subnets[slices.Index(roles[:], s.id.Role)]++
	}
	slices.Sort(ifaceRails)
	parts := []string{plural(len(t.nodes), "node")}
	for i, r := range roles {
		if ifaces[i] == 0 {
			continue
		}
		p := plural(ifaces[i], string(r)+" interface")
		if r == RoleCompute {
			p += " on " + plural(len(slices.Compact(ifaceRails)), "rail")
		}
		parts = append(parts, p)
	}
	for i, r := range roles {
		if subnets[i] > 0 {
			parts = append(parts, plural(subnets[i], string(r)+" subnet"))
		}
	}
	return strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
