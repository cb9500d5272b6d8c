package topology

import (
	"fmt"
	"net/netip"
	"os"
	"slices"
	"unicode"

	"gopkg.in/yaml.v3"
)

// Load reads and parses the topology file at path.
func Load(path string) (*Topology, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("topology: %w", err)
	}
	return Parse(data, path)
}

// Parse reads a topology file; name is the file name used in errors. The
// format (testdata/topology/README.md):
//
//	nodes:
//	  - name: dgx-01
//	    interfaces:
//	      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}
//	      - {name: mlx5_8, ip: 10.100.1.1, role: storage}
//	subnets:
//	  - {cidr: 10.3.0.0/16, role: compute, rail: 3}
//
// Keys are strict. Roles are compute, storage, management and bmc; a
// compute interface or subnet needs a rail (0 to MaxRail, 255) and no other
// role may have one.
// An IP address may be listed once only, and node names are unique. An
// interface listed with several addresses has one role and rail. Two
// subnets with the same prefix must agree on role and rail. Every error is a
// *ParseError reading "name:line: message".
func Parse(data []byte, name string) (*Topology, error) {
	root, err := document(data, name)
	if err != nil {
		return nil, err
	}
	p := fileParser{
		walker:   walker{file: name},
		t:        New(),
		ipLine:   make(map[netip.Addr]int),
		nodeLine: make(map[string]int),
		ifaces:   make(map[[2]string]ifaceSeen),
	}
	if err := p.top(root); err != nil {
		return nil, err
	}
	p.t.sortSubnets()
	slices.SortFunc(p.t.nodes, CompareNames)
	return p.t, nil
}

type fileParser struct {
	walker
	t        *Topology
	ipLine   map[netip.Addr]int      // line of each interface's ip, for duplicates
	nodeLine map[string]int          // line of each node's name, for duplicates
	ifaces   map[[2]string]ifaceSeen // node and interface name: what its first address said
}

// ifaceSeen is the role and rail an interface's first address gave it, and
// that address's line: its other addresses must agree.
type ifaceSeen struct {
	id   Identity
	line int
}

func (p *fileParser) top(root *yaml.Node) error {
	m, err := p.mapping(root, "the topology", "nodes", "subnets")
	if err != nil {
		return err
	}
	nodes, err := p.sequence(m["nodes"], "nodes")
	if err != nil {
		return err
	}
	subnets, err := p.sequence(m["subnets"], "subnets")
	if err != nil {
		return err
	}
	if len(nodes) == 0 && len(subnets) == 0 {
		return p.errorf(root, ErrEmpty, "the topology names no nodes and no subnets")
	}
	for _, n := range nodes {
		if err := p.node(n); err != nil {
			return err
		}
	}
	for _, n := range subnets {
		if err := p.subnet(n); err != nil {
			return err
		}
	}
	return nil
}

func (p *fileParser) node(n *yaml.Node) error {
	m, err := p.mapping(n, "node", "name", "interfaces")
	if err != nil {
		return err
	}
	name, nameNode, err := p.scalar(m, "name", n, "node")
	if err != nil {
		return err
	}
	if err := p.printable(nameNode, "node name", name); err != nil {
		return err
	}
	if l, dup := p.nodeLine[name]; dup {
		return p.errorf(nameNode, ErrDuplicate, "node %q is also at line %d", name, l)
	}
	p.nodeLine[name] = nameNode.Line
	p.t.nodes = append(p.t.nodes, name)
	ifaces, err := p.sequence(m["interfaces"], "interfaces")
	if err != nil {
		return err
	}
	if len(ifaces) == 0 {
		return p.errorf(n, ErrMissing, "node %q has no interfaces", name)
	}
	for _, in := range ifaces {
		if err := p.iface(name, in); err != nil {
			return err
		}
	}
	return nil
}

func (p *fileParser) iface(node string, n *yaml.Node) error {
	m, err := p.mapping(n, "interface", "name", "ip", "role", "rail")
	if err != nil {
		return err
	}
	name, nameNode, err := p.scalar(m, "name", n, "interface")
	if err != nil {
		return err
	}
	if err := p.printable(nameNode, "interface name", name); err != nil {
		return err
	}
	what := fmt.Sprintf("interface %s %s", node, name)
	s, ipNode, err := p.scalar(m, "ip", n, what)
	if err != nil {
		return err
	}
	ip, err := parseIP(s)
	if err != nil {
		return p.errorf(ipNode, ErrBadIP, "%v", err)
	}
	id, err := p.roleAndRail(m, n, what)
	if err != nil {
		return err
	}
	id.Node, id.Interface, id.Known, id.Source = node, name, true, "interface"
	// One interface is one HCA or NIC: its addresses (IPv4 and IPv6, say)
	// have its one role and rail. Two would judge the same port same-rail
	// by one address and cross-rail by the other.
	key := [2]string{node, name}
	if old, seen := p.ifaces[key]; seen && (old.id.Role != id.Role || old.id.HasRail != id.HasRail || old.id.Rail != id.Rail) {
		return p.errorf(ipNode, ErrConflict, "interface %s %s is %s here but %s at line %d; an interface's addresses share its role and rail",
			node, name, describe(id), describe(old.id), old.line)
	} else if !seen {
		p.ifaces[key] = ifaceSeen{id: id, line: ipNode.Line}
	}
	if l, dup := p.ipLine[ip]; dup {
		old := p.t.byIP[ip]
		if old.Role != id.Role {
			return p.errorf(ipNode, ErrDuplicate, "%s is %s here but %s at line %d (%s %s); an address has one role",
				ip, id.Role, old.Role, l, old.Node, old.Interface)
		}
		return p.errorf(ipNode, ErrDuplicate, "%s is listed twice (also line %d, %s %s); list each address once",
			ip, l, old.Node, old.Interface)
	}
	p.ipLine[ip] = ipNode.Line
	p.t.byIP[ip] = id
	return nil
}

func (p *fileParser) subnet(n *yaml.Node) error {
	m, err := p.mapping(n, "subnet", "cidr", "role", "rail")
	if err != nil {
		return err
	}
	s, cidrNode, err := p.scalar(m, "cidr", n, "subnet")
	if err != nil {
		return err
	}
	prefix, err := parseCIDR(s)
	if err != nil {
		return p.errorf(cidrNode, ErrBadCIDR, "%v", err)
	}
	what := "subnet " + prefix.String()
	id, err := p.roleAndRail(m, n, what)
	if err != nil {
		return err
	}
	id.Known, id.Source = true, "subnet"
	origin := fmt.Sprintf("%s:%d", p.file, cidrNode.Line)
	if old := p.t.addSubnet(subnet{prefix: prefix, id: id, origin: origin}, false); old != nil {
		return p.errorf(cidrNode, ErrConflict, "%s is %s here but %s at %s; one prefix has one role and rail",
			prefix, describe(id), describe(old.id), old.origin)
	}
	return nil
}

// printable refuses a name with a control character (a newline, a tab,
// an escape), a line or paragraph separator or a bidirectional-text
// control: reports print node and interface names as they are, and a
// newline in one made a line of its own in the text report (a fake
// "[CRITICAL]" finding), a right-to-left override turned the rest of the
// line around.
func (p *fileParser) printable(n *yaml.Node, what, s string) error {
	for _, r := range s {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' || r == '\u061c' || r == '\u200e' || r == '\u200f' ||
			r >= '\u202a' && r <= '\u202e' || r >= '\u2066' && r <= '\u2069' {
			return p.errorf(n, ErrSyntax, "%s %q has a control character (%U); names are printed in reports as they are", what, s, r)
		}
	}
	return nil
}

// roleAndRail reads role and rail: compute needs a rail, the others have none.
func (p *fileParser) roleAndRail(m map[string]*yaml.Node, n *yaml.Node, what string) (Identity, error) {
	s, roleNode, err := p.scalar(m, "role", n, what)
	if err != nil {
		return Identity{}, err
	}
	role, err := parseRole(s)
	if err != nil {
		return Identity{}, p.errorf(roleNode, ErrUnknownRole, "%v", err)
	}
	id := Identity{Role: role}
	railNode := m["rail"]
	if railNode != nil && isNull(railNode) {
		railNode = nil // "rail:" with no value is no rail
	}
	switch {
	case railNode == nil && role == RoleCompute:
		return Identity{}, p.errorf(n, ErrRail, "compute %s needs a rail", what)
	case railNode == nil:
		return id, nil
	case role != RoleCompute:
		return Identity{}, p.errorf(railNode, ErrRail, "%s is %s: only compute has a rail", what, role)
	case railNode.Kind != yaml.ScalarNode:
		return Identity{}, p.errorf(railNode, ErrRail, "rail of %s must be a single integer", what)
	case railNode.Style == 0 && len(railNode.Value) > 1 && railNode.Value[0] == '0':
		// YAML 1.1 tools (yaml.v3's own decoding among them) read a plain
		// 010 as octal 8, YAML 1.2 ones as 10: refused, not guessed.
		return Identity{}, p.errorf(railNode, ErrRail, "rail %s has a leading zero, which YAML tools read as octal or as decimal: write it without", railNode.Value)
	}
	if id.Rail, err = parseRail(railNode.Value); err != nil {
		return Identity{}, p.errorf(railNode, ErrRail, "%v", err)
	}
	id.HasRail = true
	return id, nil
}

// describe is "compute rail 3" or "storage", for conflict messages.
func describe(id Identity) string {
	if id.HasRail {
		return fmt.Sprintf("%s rail %d", id.Role, id.Rail)
	}
	return string(id.Role)
}
