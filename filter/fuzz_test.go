package filter

import (
	"errors"
	"testing"
)

// FuzzCompile feeds arbitrary expressions to Compile for every link type:
// it must never panic, errors must be *Error values pointing inside the
// expression, and what compiles must match frames without panicking.
func FuzzCompile(f *testing.F) {
	for _, e := range realExprs {
		f.Add(e)
	}
	for _, e := range synthExprs {
		f.Add(e)
	}
	for _, e := range []string{
		"host 1.2.3.4 and (tcp) or 5.6.7.8", "port ((80) or 81)", "(((udp)))",
		"ip[ip[0] & 0xf] = 1", "-(-(1)) = 1", "\\", "ether host 1:2:3:4:5:6:7:8",
		"vlan (100)", "host ::ffff:1.2.3.4", "udp portrange http-https",
		"byte 1 & 2", "src or 1.2.3.4", "ip6 net ::/129", "net 10.0.0.0 mask 255",
	} {
		f.Add(e)
	}
	frames := [][]byte{nil, {0x45}}
	for _, lt := range synthLinkTypes {
		for _, fr := range synthFrames(lt) {
			frames = append(frames, fr.data)
		}
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 1000 {
			return
		}
		tree, perr := parse(expr)
		for _, lt := range synthLinkTypes {
			flt, err := Compile(expr, lt)
			if err != nil {
				var fe *Error
				if !errors.As(err, &fe) || fe.Pos < 1 || fe.Pos > len(expr)+1 {
					t.Fatalf("Compile(%q, %d): bad error %#v", expr, lt, err)
				}
				continue
			}
			if perr != nil {
				t.Fatalf("Compile(%q) succeeds but parse fails: %v", expr, perr)
			}
			// The optimized program agrees with the plain tree wherever
			// the tree does not run off the frame.
			root, _ := compileTree(tree, expr, lt)
			for _, fr := range frames {
				got := flt.Match(fr)
				if want := root.eval(fr, uint32(len(fr))); want != abort && got != (want == accept) {
					t.Fatalf("Compile(%q, %d) on % x: program %v, tree %v", expr, lt, fr, got, want == accept)
				}
			}
		}
		// The canonical form of the syntax tree parses to itself.
		if tree, err := parse(expr); err == nil && tree != nil {
			again, err := parse(tree.String())
			if err != nil || again.String() != tree.String() {
				t.Fatalf("%q: canonical form %q re-parses to %v, %v", expr, tree.String(), again, err)
			}
		}
	})
}

// fuzzFilters are compiled once for FuzzMatch.
var fuzzFilters = []string{
	"udp port 4791", "udp dst port 4791 and udp[8] = 0x81", "vlan and udp portrange 4000-5000",
	"vlan 100 and vlan 200 and ip6 host 2001:db8::1", "not udp[100] = 1 or arp",
	"ip[2:2] - ((ip[0] & 0xf) << 2) - 8 = udp[4:2]", "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0",
	"icmp6[icmp6type] = icmp6-echo or ip6 proto 17", "ether host 02:00:00:00:00:01 or broadcast",
	"stp or ipx or atalk or iso or netbeui", "ip[0] / ip[1] > 2 or ip[1] % ip[2] = 1",
	"net 10.0.0.0/8 and not port 53", "greater 100 and less 200", "inbound and ifindex 3",
}

// FuzzMatch feeds arbitrary frames to fixed filters on every link type:
// Match must never panic, and where the unoptimized evaluation does not
// run off the frame, the optimized program must agree with it.
func FuzzMatch(f *testing.F) {
	type compiled struct {
		tree cond
		prog *program
	}
	var filters []compiled
	for _, lt := range synthLinkTypes {
		for _, e := range fuzzFilters {
			tree, err := parse(e)
			if err != nil {
				f.Fatal(err)
			}
			root, err := compileTree(tree, e, lt)
			if err != nil {
				continue // e.g. ifindex on Ethernet
			}
			filters = append(filters, compiled{root, newProgram(root)})
		}
	}
	for _, lt := range synthLinkTypes {
		for _, fr := range synthFrames(lt) {
			f.Add(fr.data, uint16(fr.origLen))
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte, wire uint16) {
		for _, c := range filters {
			got := c.prog.run(frame, uint32(wire))
			for n := 0; n <= len(frame) && n < 80; n += 7 {
				c.prog.run(frame[:n], uint32(wire))
			}
			want := c.tree.eval(frame, uint32(wire))
			if want != abort && got != (want == accept) {
				t.Fatalf("%v on % x: program %v, tree %v", c.tree, frame, got, want == accept)
			}
		}
	})
}
