package topology

import (
	"net/netip"
	"slices"
)

// New returns an empty topology, for --rail-subnet mappings without a file.
func New() *Topology {
	return &Topology{byIP: make(map[netip.Addr]Identity)}
}

// Lookup says what ip is. An interface listed in the file wins over any
// subnet; among subnets the longest matching prefix wins. An IPv4-mapped
// IPv6 address is looked up as IPv4. An address nothing names, and every
// address of a nil topology, is Identity{Role: RoleUnknown}: never guessed.
func (t *Topology) Lookup(ip netip.Addr) Identity {
	if t == nil || !ip.IsValid() {
		return Identity{Role: RoleUnknown}
	}
	ip = ip.Unmap().WithZone("")
	if id, ok := t.byIP[ip]; ok {
		return id
	}
	for i := range t.subnets { // longest prefix first
		if t.subnets[i].prefix.Contains(ip) {
			return t.subnets[i].id
		}
	}
	return Identity{Role: RoleUnknown}
}

// NodeOf is the name of the node ip belongs to, or the address itself when
// the topology names no node for it (unknown, or known only by a subnet):
// reports group endpoints by it.
func (t *Topology) NodeOf(ip netip.Addr) string {
	if id := t.Lookup(ip); id.Node != "" {
		return id.Node
	}
	return ip.Unmap().WithZone("").String()
}

// addSubnet adds s, keeping the subnets longest prefix first. A subnet with
// the same prefix, role and rail as one already there changes nothing; one
// with the same prefix and a different role or rail is returned as the
// conflict, and s is not added. (Two different prefixes of one length never
// overlap, so equal-length conflicts are always the same prefix.)
func (t *Topology) addSubnet(s subnet) (conflict *subnet) {
	for i := range t.subnets {
		old := &t.subnets[i]
		if old.prefix != s.prefix {
			continue
		}
		if old.id.Role == s.id.Role && old.id.HasRail == s.id.HasRail && old.id.Rail == s.id.Rail {
			return nil
		}
		return old
	}
	i, _ := slices.BinarySearchFunc(t.subnets, s, compareSubnets)
	t.subnets = slices.Insert(t.subnets, i, s)
	return nil
}

// compareSubnets orders longest prefix first, then by address, so the
// order (and every output that follows it) does not depend on input order.
func compareSubnets(a, b subnet) int {
	if a.prefix.Bits() != b.prefix.Bits() {
		return b.prefix.Bits() - a.prefix.Bits()
	}
	return a.prefix.Addr().Compare(b.prefix.Addr())
}
