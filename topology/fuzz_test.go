package topology

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// FuzzParse feeds Parse arbitrary files. Beyond never panicking: an error
// is a *ParseError with a sentinel and a "file:line: " prefix; a topology
// that parses looks every listed interface up as itself, and its node
// names, rails and subnets are sorted and unique.
func FuzzParse(f *testing.F) {
	for _, tc := range parseErrorCases {
		f.Add([]byte(tc.in))
	}
	f.Add([]byte(precedenceFile))
	for _, p := range []string{"../testdata/topology/dgx-pod.yaml", "../testdata/topology/README.md"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	sentinels := []error{ErrSyntax, ErrEmpty, ErrUnknownKey, ErrMissing, ErrBadIP, ErrBadCIDR, ErrUnknownRole, ErrRail, ErrDuplicate, ErrConflict}
	f.Fuzz(func(t *testing.T, data []byte) {
		topo, err := Parse(data, "fuzz.yaml")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line < 1 || !strings.HasPrefix(err.Error(), "fuzz.yaml:") {
				t.Fatalf("error %q (%T) is not a positioned *ParseError", err, err)
			}
			if !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) }) {
				t.Fatalf("error %q wraps no sentinel", err)
			}
			if topo != nil {
				t.Fatal("a topology came back with the error")
			}
			return
		}
		for ip, id := range topo.byIP {
			if got := topo.Lookup(ip); got != id || !got.Known || got.Source != "interface" || got.Node == "" {
				t.Fatalf("Lookup(%s) = %+v, want %+v", ip, got, id)
			}
			if id.HasRail != (id.Role == RoleCompute) || id.Rail < 0 {
				t.Fatalf("%s: %+v breaks the rail rule", ip, id)
			}
			if !slices.Contains(topo.nodes, id.Node) {
				t.Fatalf("%s is on node %q, which Nodes lacks", ip, id.Node)
			}
		}
		nodes := topo.Nodes()
		if !slices.IsSortedFunc(nodes, CompareNames) || len(slices.Compact(slices.Clone(nodes))) != len(nodes) {
			t.Fatalf("Nodes %q not sorted and unique", nodes)
		}
		rails := topo.Rails()
		if !slices.IsSorted(rails) || len(slices.Compact(slices.Clone(rails))) != len(rails) {
			t.Fatalf("Rails %v not sorted and unique", rails)
		}
		if !slices.IsSortedFunc(topo.subnets, compareSubnets) {
			t.Fatal("subnets not longest prefix first")
		}
		if len(topo.byPrefix) != len(topo.subnets) {
			t.Fatalf("%d subnets but %d by prefix", len(topo.subnets), len(topo.byPrefix))
		}
		for i := 1; i < len(topo.subnets); i++ {
			if topo.subnets[i].prefix == topo.subnets[i-1].prefix {
				t.Fatalf("prefix %s twice", topo.subnets[i].prefix)
			}
		}
		if topo.String() == "" {
			t.Fatal("empty String")
		}
	})
}

// The examples in the README parse: users copy them.
func TestREADMEExamplesParse(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "topology", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(data), "```yaml\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("README.md has no yaml example")
	}
	for i, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		if _, err := Parse([]byte(b), "README.md example"); err != nil {
			t.Errorf("example %d: %v", i+1, err)
		}
	}
}
