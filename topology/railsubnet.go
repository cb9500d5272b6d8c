package topology

import (
	"fmt"
	"strings"
)

// AddRailSubnet adds a compute subnet on a rail from a --rail-subnet spec,
// CIDR=RAIL or CIDR:RAIL ("10.0.3.0/24=3", "fd00:0:0:3::/64=3"). Its
// identities have Source "rail-subnet". It joins the file's subnets under
// the same rules: interfaces listed in the file still win, the longest
// prefix wins, a prefix the topology already has with the same rail changes
// nothing, and one it has with another role or rail is an error. Errors are
// *ParseError naming spec.
func (t *Topology) AddRailSubnet(spec string) error {
	bad := func(sentinel error, format string, args ...any) error {
		return &ParseError{Spec: spec, Msg: fmt.Sprintf(format, args...), Err: sentinel}
	}
	if t == nil {
		return bad(ErrBadSpec, "no topology to add it to")
	}
	s := strings.TrimSpace(spec)
	sep := strings.LastIndexByte(s, '=')
	if sep < 0 {
		sep = strings.LastIndexByte(s, ':') // IPv6 colons come before the '/'
	}
	if slash := strings.IndexByte(s, '/'); slash < 0 || sep < slash {
		return bad(ErrBadSpec, "want CIDR=RAIL, e.g. 10.0.3.0/24=3")
	}
	prefix, err := parseCIDR(strings.TrimSpace(s[:sep]))
	if err != nil {
		return bad(ErrBadCIDR, "%v", err)
	}
	rail, err := parseRail(strings.TrimSpace(s[sep+1:]))
	if err != nil {
		return bad(ErrRail, "%v", err)
	}
	id := Identity{Role: RoleCompute, Rail: rail, HasRail: true, Known: true, Source: "rail-subnet"}
	sub := subnet{prefix: prefix, id: id, origin: fmt.Sprintf("--rail-subnet %q", spec)}
	if old := t.addSubnet(sub, true); old != nil {
		return bad(ErrConflict, "%s is already %s (%s)", prefix, describe(old.id), old.origin)
	}
	return nil
}
