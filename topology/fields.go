package topology

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// The value parsers shared by the file and --rail-subnet. Their errors are
// plain messages; callers wrap them with a position and a sentinel.

// parseRole reads the roles a file may name: every Role but RoleUnknown.
func parseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleCompute, RoleStorage, RoleManagement, RoleBMC:
		return r, nil
	}
	return "", fmt.Errorf("unknown role %q (want compute, storage, management or bmc)", s)
}

// MaxRail is the highest rail a topology may name. A rail is the index of
// a GPU (and its compute HCA) in a node: 0 to 7 on a DGX H100, a few dozen
// on the largest systems; a higher number is a typo.
const MaxRail = 255

// parseRail reads a rail, 0 to MaxRail.
func parseRail(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) || err == nil && n > MaxRail { // ErrRange: digits, but more than an int holds
		return 0, fmt.Errorf("rail %s is out of range (0 to %d: rails count from 0, one per GPU of a node)", s, MaxRail)
	}
	if err != nil {
		return 0, fmt.Errorf("rail %q is not an integer", s)
	}
	if n < 0 {
		return 0, fmt.Errorf("rail %d is negative (rails count from 0)", n)
	}
	return n, nil
}

// parseIP reads an IPv4 or IPv6 address; an IPv4-mapped IPv6 address becomes
// IPv4, as Lookup sees it.
func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		if p, perr := netip.ParsePrefix(s); perr == nil {
			return netip.Addr{}, fmt.Errorf("ip %q is not an IP address: give the interface's address alone (ip: %s); "+
				"a whole prefix goes under subnets (cidr: %s)", s, p.Addr(), p.Masked())
		}
		return netip.Addr{}, fmt.Errorf("ip %q is not an IP address", s)
	}
	if a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("ip %q has a zone; give the address alone", s)
	}
	return a.Unmap(), nil
}

// parseCIDR reads a prefix with no host bits set. An IPv4-mapped IPv6
// prefix (::ffff:10.0.0.0/104) becomes the IPv4 one.
func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("cidr %q is not a CIDR prefix like 10.0.3.0/24", s)
	}
	if p.Addr().Is4In6() {
		if p.Bits() < 96 {
			return netip.Prefix{}, fmt.Errorf("cidr %q mixes IPv4-mapped and other IPv6 addresses", s)
		}
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("cidr %q has host bits set (did you mean %s?)", s, m)
	}
	return p, nil
}
