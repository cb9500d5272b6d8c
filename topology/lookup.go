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
	bits := t.bits6
	if ip.Is4() {
		bits = t.bits4
	}
	// One map probe per prefix length the topology has, longest first, not
	// one test per subnet: a routed rail fabric lists a /31 per HCA, tens
	// of thousands of subnets, and reports look up every flow's ends.
	for _, b := range bits {
		p, _ := ip.Prefix(b)
		if s, ok := t.byPrefix[p]; ok {
			return s.id
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
// overlap, so equal-length conflicts are always the same prefix.) With
// sorted false, s is appended and the caller sorts the subnets once it has
// added them all (sortSubnets): a file of tens of thousands of subnets
// then takes no time in proportion to their square.
func (t *Topology) addSubnet(s subnet, sorted bool) (conflict *subnet) {
	if old, ok := t.byPrefix[s.prefix]; ok {
		if old.id.Role == s.id.Role && old.id.HasRail == s.id.HasRail && old.id.Rail == s.id.Rail {
			return nil
		}
		return &old
	}
	if t.byPrefix == nil {
		t.byPrefix = make(map[netip.Prefix]subnet)
	}
	t.byPrefix[s.prefix] = s
	bits := &t.bits6
	if s.prefix.Addr().Is4() {
		bits = &t.bits4
	}
	if i, found := slices.BinarySearchFunc(*bits, s.prefix.Bits(), func(a, b int) int { return b - a }); !found {
		*bits = slices.Insert(*bits, i, s.prefix.Bits())
	}
	if !sorted {
		t.subnets = append(t.subnets, s)
		return nil
	}
	i, _ := slices.BinarySearchFunc(t.subnets, s, compareSubnets)
	t.subnets = slices.Insert(t.subnets, i, s)
	return nil
}

// sortSubnets puts the subnets addSubnet appended unsorted in order.
func (t *Topology) sortSubnets() { slices.SortFunc(t.subnets, compareSubnets) }

// compareSubnets orders longest prefix first, then by address, so the
// order (and every output that follows it) does not depend on input order.
func compareSubnets(a, b subnet) int {
	if a.prefix.Bits() != b.prefix.Bits() {
		return b.prefix.Bits() - a.prefix.Bits()
	}
	return a.prefix.Addr().Compare(b.prefix.Addr())
}
