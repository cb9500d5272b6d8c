// Package topology says which IP address is which identity of a GPU node:
// a compute HCA on rail n, a storage or in-band NIC, the management port or
// the BMC. It reads the user's topology file (YAML) and --rail-subnet
// mappings; reports use it to judge cross-rail and storage traffic.
package topology

import "net/netip"

// Role is what an interface is for.
type Role string

// Roles. Unknown is an address that neither the file nor a subnet names:
// reports say so rather than guess.
const (
	RoleCompute    Role = "compute"
	RoleStorage    Role = "storage"
	RoleManagement Role = "management"
	RoleBMC        Role = "bmc"
	RoleUnknown    Role = "unknown"
)

// Identity is what the topology says about one IP address.
type Identity struct {
	Node      string // node name ("dgx-01"); empty when known only by subnet
	Interface string // interface name ("mlx5_0"); empty when known only by subnet
	Role      Role
	Rail      int // compute rail, when HasRail
	HasRail   bool
	Known     bool   // false: Role is RoleUnknown
	Source    string // "interface", "subnet" or "rail-subnet": which entry matched
}

// Topology maps IP addresses to identities. The zero value and nil know no
// address.
type Topology struct {
	byIP     map[netip.Addr]Identity
	subnets  []subnet                // longest prefix first
	byPrefix map[netip.Prefix]subnet // the same subnets, for Lookup and duplicates
	bits4    []int                   // the lengths of the IPv4 prefixes, longest first, each once
	bits6    []int                   // and of the IPv6 ones
	nodes    []string                // sorted
}

type subnet struct {
	prefix netip.Prefix
	id     Identity
	origin string // "topo.yaml:12" or `--rail-subnet "10.0.3.0/24=3"`, for conflict messages
}
