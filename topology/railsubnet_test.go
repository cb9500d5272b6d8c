package topology

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestAddRailSubnet(t *testing.T) {
	tests := []struct {
		spec string
		ip   string
		rail int
	}{
		{"10.0.3.0/24=3", "10.0.3.77", 3},
		{"10.0.3.0/24:3", "10.0.3.77", 3},
		{" 10.0.3.0/24 = 3 ", "10.0.3.77", 3},
		{"10.0.0.0/8=0", "10.200.0.1", 0},
		{"fd00:0:0:3::/64=3", "fd00:0:0:3::9", 3},
		{"fd00:0:0:3::/64:3", "fd00:0:0:3::9", 3},
		{"::ffff:10.0.5.0/120=5", "10.0.5.1", 5},
		{"10.0.255.0/24=255", "10.0.255.1", 255}, // the highest rail
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			topo := New()
			if err := topo.AddRailSubnet(tc.spec); err != nil {
				t.Fatalf("AddRailSubnet: %v", err)
			}
			want := Identity{Role: RoleCompute, Rail: tc.rail, HasRail: true, Known: true, Source: "rail-subnet"}
			if got := topo.Lookup(netip.MustParseAddr(tc.ip)); got != want {
				t.Errorf("Lookup(%s) = %+v, want %+v", tc.ip, got, want)
			}
		})
	}
}

func TestAddRailSubnetErrors(t *testing.T) {
	tests := []struct {
		spec string
		err  error
		msg  string
	}{
		{"", ErrBadSpec, "want CIDR=RAIL, e.g. 10.0.3.0/24=3"},
		{"10.0.3.0/24", ErrBadSpec, "want CIDR=RAIL"},
		{"fd00::/64", ErrBadSpec, "want CIDR=RAIL"},
		{"10.0.3.0=3", ErrBadSpec, "want CIDR=RAIL"},
		{"3=10.0.3.0/24", ErrBadSpec, "want CIDR=RAIL"},
		{"10.0.3.0/33=3", ErrBadCIDR, `cidr "10.0.3.0/33" is not a CIDR prefix`},
		{"10.0.3.1/24=3", ErrBadCIDR, "has host bits set (did you mean 10.0.3.0/24?)"},
		{"rail3/24=3", ErrBadCIDR, "is not a CIDR prefix"},
		{"10.0.3.0/24=", ErrRail, `rail "" is not an integer`},
		{"10.0.3.0/24=three", ErrRail, `rail "three" is not an integer`},
		{"10.0.3.0/24=-3", ErrRail, "rail -3 is negative"},
		{"10.0.3.0/24=256", ErrRail, "rail 256 is out of range (0 to 255"},
		{"10.0.3.0/24=1000000", ErrRail, "rail 1000000 is out of range (0 to 255"},
		{"10.0.3.0/24=3=4", ErrBadCIDR, `cidr "10.0.3.0/24=3"`}, // the last '=' splits
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			err := New().AddRailSubnet(tc.spec)
			if err == nil {
				t.Fatal("AddRailSubnet succeeded, want an error")
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("error %q does not match %v", err, tc.err)
			}
			if prefix := `rail subnet "` + tc.spec + `": `; !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q, want it to start with %q", err, prefix)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to contain %q", err, tc.msg)
			}
		})
	}
}

// Rail subnets from the command line join the file's subnets: the file's
// interfaces still win, the longest prefix wins, a repeat is harmless and a
// disagreement is an error naming both.
func TestRailSubnetMergesWithFile(t *testing.T) {
	const file = `nodes:
  - name: dgx-01
    interfaces:
      - {name: mlx5_3, ip: 10.0.3.1, role: compute, rail: 3}
subnets:
  - {cidr: 10.0.0.0/16, role: compute, rail: 0}
  - {cidr: 10.100.0.0/16, role: storage}
`
	topo, err := Parse([]byte(file), "pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{"10.0.3.0/24=4", "10.0.0.0/16=0"} {
		if err := topo.AddRailSubnet(spec); err != nil {
			t.Fatalf("AddRailSubnet(%q): %v", spec, err)
		}
	}
	tests := []struct {
		ip     string
		rail   int
		source string
	}{
		{"10.0.3.1", 3, "interface"},   // the file's interface wins over the flag
		{"10.0.3.2", 4, "rail-subnet"}, // the flag's /24 wins over the file's /16
		{"10.0.9.9", 0, "subnet"},      // the repeated /16 stays the file's
	}
	for _, tc := range tests {
		got := topo.Lookup(netip.MustParseAddr(tc.ip))
		if got.Rail != tc.rail || !got.HasRail || got.Source != tc.source {
			t.Errorf("Lookup(%s) = %+v, want rail %d from %s", tc.ip, got, tc.rail, tc.source)
		}
	}

	conflicts := []struct{ spec, msg string }{
		{"10.100.0.0/16=1", "10.100.0.0/16 is already storage (pod.yaml:7)"},
		{"10.0.0.0/16=5", "10.0.0.0/16 is already compute rail 0 (pod.yaml:6)"},
		{"10.0.3.0/24=6", `10.0.3.0/24 is already compute rail 4 (--rail-subnet "10.0.3.0/24=4")`},
	}
	for _, tc := range conflicts {
		err := topo.AddRailSubnet(tc.spec)
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("AddRailSubnet(%q) = %v, want a conflict %q", tc.spec, err, tc.msg)
		}
	}
	if got := topo.Lookup(netip.MustParseAddr("10.100.1.1")); got.Role != RoleStorage {
		t.Errorf("a refused rail subnet changed the topology: 10.100.1.1 is %+v", got)
	}
}
