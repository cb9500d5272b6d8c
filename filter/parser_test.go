package filter

import (
	"errors"
	"testing"
)

func TestParseTree(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"empty", "", "<nil>"},
		{"primitive", "udp port 4791", "udp port 4791"},
		{"and or equal precedence", "udp or tcp and port 53", "((udp or tcp) and port 53)"},
		{"or and left assoc", "udp and tcp or icmp", "((udp and tcp) or icmp)"},
		{"not binds tighter", "not udp and tcp", "((not udp) and tcp)"},
		{"not not", "! ! udp", "(not (not udp))"},
		{"symbols", "udp && !tcp || icmp", "((udp and (not tcp)) or icmp)"},
		{"parentheses", "udp or (tcp and port 53)", "(udp or (tcp and port 53))"},
		{"inherit host", "host 10.0.0.1 or 10.0.0.2", "(host 10.0.0.1 or host 10.0.0.2)"},
		{"inherit port", "port 80 or 443 or 8080", "((port 80 or port 443) or port 8080)"},
		{"inherit all qualifiers", "tcp dst port 80 or 81", "(tcp dst port 80 or tcp dst port 81)"},
		{"inherit through not", "host 10.0.0.1 and not 10.0.0.2", "(host 10.0.0.1 and (not host 10.0.0.2))"},
		{"inherit into parens", "host 10.0.0.1 and (10.0.0.2 or 10.0.0.3)", "(host 10.0.0.1 and (host 10.0.0.2 or host 10.0.0.3))"},
		{"inherit past paren term", "host 1.2.3.4 and (tcp) or 5.6.7.8", "((host 1.2.3.4 and tcp) or host 5.6.7.8)"},
		{"inherit past not term", "not host 1.2.3.4 or 5.6.7.8", "((not host 1.2.3.4) or host 5.6.7.8)"},
		{"parenthesized number", "port ((80) or 81)", "(port 80 or port 81)"},
		{"src or dst", "src or dst host 10.0.0.1", "src or dst host 10.0.0.1"},
		{"src and dst", "ip src and dst net 10.0.0.0/8", "ip src and dst net 10.0.0.0/8"},
		{"net forms", "net 10.1 or 10.0.0.0/8 or 10.0.0.0 mask 255.0.0.0", "((net 10.1 or net 10.0.0.0/8) or net 10.0.0.0 mask 255.0.0.0)"},
		{"ipv6", "ip6 net 2001:db8::/32 or ::1", "(ip6 net 2001:db8::/32 or ip6 net ::1)"},
		{"mac", "ether src 00:0c:29:aa:bb:cc", "ether src 00:0c:29:aa:bb:cc"},
		{"proto escape", "ip proto \\tcp", "ip proto \\tcp"},
		{"portrange name", "udp portrange 4000-5000", "udp portrange 4000-5000"},
		{"vlan", "vlan 100 and vlan", "(vlan 100 and vlan)"},
		{"vlan pnum", "vlan (100)", "vlan 100"},
		{"less greater", "less 64 or greater 1000", "(less 64 or greater 1000)"},
		{"broadcast", "ether broadcast or ip multicast", "(ether broadcast or ip multicast)"},
		{"load", "udp[8] = 0x81", "(udp[8:1] = 129)"},
		{"load size", "udp[20:4] & 0xffffff = 0x11", "((udp[20:4] & 16777215) = 17)"},
		{"relop forms", "len >= 100 and len != 5 and len <= 9", "(((len >= 100) and (len != 5)) and (len <= 9))"},
		{"arith C precedence", "ip[0] + ip[1] * 2 - 3 = 1", "(((ip[0:1] + (ip[1:1] * 2)) - 3) = 1)"},
		{"arith shifts below plus", "ip[0] << 1 + 2 = 1", "((ip[0:1] << (1 + 2)) = 1)"},
		{"arith and below shift", "ip[0] & 3 << 1 = 6", "((ip[0:1] & (3 << 1)) = 6)"},
		{"arith or lowest", "ip[0] | 1 & 2 = 1", "((ip[0:1] | (1 & 2)) = 1)"},
		{"percent shifts right", "ip[0] % 3 + 1 = 1", "((ip[0:1] % (3 + 1)) = 1)"},
		{"percent binds left", "ip[0] + ip[1] % 3 = 1", "((ip[0:1] + (ip[1:1] % 3)) = 1)"},
		{"percent after mul", "ip[0] - ip[1] % 3 * 2 = 1", "((ip[0:1] - (ip[1:1] % (3 * 2))) = 1)"},
		{"xor shifts", "ip[0] ^ ip[1] & 3 = 1", "((ip[0:1] ^ (ip[1:1] & 3)) = 1)"},
		{"unary minus", "-ip[8] + 1 = 0", "(((-ip[8:1]) + 1) = 0)"},
		{"unary minus before percent", "-ip[8] % 5 = 0", "((-(ip[8:1] % 5)) = 0)"},
		{"parenthesized relation", "(ip[0] + 1) * 2 = 4", "(((ip[0:1] + 1) * 2) = 4)"},
		{"relation in parens", "(ip[0] = 1) or tcp", "((ip[0:1] = 1) or tcp)"},
		{"named constants", "tcp[tcpflags] & tcp-syn != 0", "((tcp[13:1] & 2) != 0)"},
		{"octal and hex", "ip[010] = 0x10", "(ip[8:1] = 16)"},
		{"relation after or", "port 80 or 1 = 1", "(port 80 or (1 = 1))"},
		{"byte", "byte 23 = 17", "byte 23 = 17"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := parse(tt.expr)
			if err != nil {
				t.Fatalf("parse(%q): %v", tt.expr, err)
			}
			got := "<nil>"
			if tree != nil {
				got = tree.String()
			}
			if got != tt.want {
				t.Errorf("parse(%q)\n got  %s\n want %s", tt.expr, got, tt.want)
			}
			// The canonical form means the same.
			if tree != nil {
				again, err := parse(got)
				if err != nil || again.String() != got {
					t.Errorf("re-parse of %q: %v, %v", got, again, err)
				}
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name     string
		expr     string
		linkType uint32
		kind     error
		want     string
	}{
		{"misspelt keyword", "udp prot 4791", 1, ErrSyntax, `filter: syntax error at "prot" (position 5) in "udp prot 4791"`},
		{"trailing and", "udp and", 1, ErrSyntax, `filter: syntax error at end of expression (position 8) in "udp and"`},
		{"id without qualifier", "tcp or 80", 1, ErrSyntax, `filter: syntax error at "80" (position 8) in "tcp or 80"`},
		{"bare address", "10.0.0.1", 1, ErrSyntax, `filter: syntax error at "10.0.0.1" (position 1) in "10.0.0.1"`},
		{"paren term gives no qualifier", "(tcp) or 1.2.3.4", 1, ErrSyntax, `filter: syntax error at "1.2.3.4" (position 10) in "(tcp) or 1.2.3.4"`},
		{"uppercase keyword", "UDP", 1, ErrSyntax, `filter: syntax error at "UDP" (position 1) in "UDP"`},
		{"unbalanced", "(udp", 1, ErrSyntax, `filter: syntax error at end of expression (position 5) in "(udp"`},
		{"illegal character", "udp port 4791 $", 1, ErrSyntax, `filter: illegal character at "$" (position 15) in "udp port 4791 $"`},
		{"keyword as proto", "ip proto tcp", 1, ErrSyntax, `filter: syntax error at "tcp" (position 10) in "ip proto tcp"`},
		{"pid led by paren", "host ((1.2.3.4 or 1.2.3.5) or 1.2.3.6)", 1, ErrSyntax, `filter: syntax error at "1.2.3.4" (position 8) in "host ((1.2.3.4 or 1.2.3.5) or 1.2.3.6)"`},
		{"dash makes a name", "len-1 > 0", 1, ErrSyntax, `filter: syntax error at "len-1" (position 1) in "len-1 > 0"`},
		{"port too big", "port 70000", 1, ErrInvalid, `filter: illegal port number 70000 > 65535 at "70000" (position 6) in "port 70000"`},
		{"number overflow", "port 99999999999", 1, ErrInvalid, `filter: number 99999999999 overflows 32 bits at "99999999999" (position 6) in "port 99999999999"`},
		{"octal", "port 089", 1, ErrInvalid, `filter: number 089 contains non-octal digit at "089" (position 6) in "port 089"`},
		{"unknown host", "host foo", 1, ErrInvalid, `filter: unknown host 'foo' (host names are not resolved) at "foo" (position 6) in "host foo"`},
		{"unknown proto", "ip proto \\foo", 1, ErrInvalid, `filter: unknown ip proto 'foo' at "\\foo" (position 10) in "ip proto \\foo"`},
		{"port on host", "udp port 1.2", 1, ErrInvalid, `filter: 'port' modifier applied to ip host at "1.2" (position 10) in "udp port 1.2"`},
		{"tcp host", "tcp host 1.2.3.4", 1, ErrInvalid, `filter: 'tcp' modifier applied to host at "1.2.3.4" (position 10) in "tcp host 1.2.3.4"`},
		{"host bits", "net 10.0.0.1/8", 1, ErrInvalid, `filter: non-network bits set in "10.0.0.1/8" at "10.0.0.1" (position 5) in "net 10.0.0.1/8"`},
		{"mask on host", "host 10.0.0.0/8", 1, ErrInvalid, `filter: Mask syntax for networks only at "10.0.0.0" (position 6) in "host 10.0.0.0/8"`},
		{"mac without ether", "host 00:11:22:33:44:55", 1, ErrInvalid, `filter: ethernet address used in non-ether expression at "00:11:22:33:44:55" (position 6) in "host 00:11:22:33:44:55"`},
		{"service is tcp", "udp port http", 1, ErrInvalid, `filter: port 'http' is tcp at "http" (position 10) in "udp port http"`},
		{"data size", "ip[0:3] = 1", 1, ErrInvalid, `filter: data size must be 1, 2, or 4 at "3" (position 6) in "ip[0:3] = 1"`},
		{"division by zero", "ip[0] / 0 = 1", 1, ErrInvalid, `filter: division by zero at "/" (position 7) in "ip[0] / 0 = 1"`},
		{"divisor starting with zero", "ip[1] / ip[0] = 1", 1, ErrInvalid, `filter: division by zero at "/" (position 7) in "ip[1] / ip[0] = 1"`},
		{"folded division by zero", "ip[0] / (ip[1] & 0) = 1", 1, ErrInvalid, `filter: division by zero at "/" (position 7) in "ip[0] / (ip[1] & 0) = 1"`},
		{"shift", "ip[0] << 32 = 1", 1, ErrInvalid, `filter: shift by more than 31 bits at "<<" (position 7) in "ip[0] << 32 = 1"`},
		{"vlan id", "vlan 5000", 1, ErrInvalid, `filter: VLAN tag 5000 greater than maximum 4095 at "vlan" (position 1) in "vlan 5000"`},
		{"proto on tcp", "tcp proto 6", 1, ErrInvalid, `filter: 'tcp proto' is bogus at "6" (position 11) in "tcp proto 6"`},
		{"ether host on sll", "ether host 00:11:22:33:44:55", 113, ErrLinkType, `filter: ethernet addresses supported only on Ethernet (link type is LINUX_SLL) at "00:11:22:33:44:55" (position 12) in "ether host 00:11:22:33:44:55"`},
		{"vlan on raw", "vlan and udp", 101, ErrLinkType, `filter: no VLAN support for RAW at "vlan" (position 1) in "vlan and udp"`},
		{"broadcast on sll2", "broadcast", 276, ErrLinkType, `filter: not a broadcast link at "broadcast" (position 1) in "broadcast"`},
		{"inbound on ethernet", "inbound", 1, ErrLinkType, `filter: inbound/outbound not supported on Ethernet when reading savefiles at "inbound" (position 1) in "inbound"`},
		{"ifindex on sll", "ifindex 3", 113, ErrLinkType, `filter: ifindex not supported on LINUX_SLL at "ifindex" (position 1) in "ifindex 3"`},
		{"unknown link type", "ip", 9999, ErrLinkType, `filter: protocol filters are not supported on link type 9999 at "ip" (position 1) in "ip"`},
		{"mpls", "mpls and udp", 1, ErrUnsupported, `filter: "mpls" is not supported at "mpls" (position 1) in "mpls and udp"`},
		{"protochain", "ip protochain 6", 1, ErrUnsupported, `filter: 'protochain' is not supported at "6" (position 15) in "ip protochain 6"`},
		{"first error wins", "port 70000 or vlan 5000", 1, ErrInvalid, `filter: illegal port number 70000 > 65535 at "70000" (position 6) in "port 70000 or vlan 5000"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Compile(tt.expr, tt.linkType)
			if err == nil {
				t.Fatalf("Compile(%q, %d) = %v, want an error", tt.expr, tt.linkType, f)
			}
			if err.Error() != tt.want {
				t.Errorf("Compile(%q, %d) error\n got  %s\n want %s", tt.expr, tt.linkType, err, tt.want)
			}
			if !errors.Is(err, tt.kind) {
				t.Errorf("Compile(%q): errors.Is(%v, %v) is false", tt.expr, err, tt.kind)
			}
			var fe *Error
			if !errors.As(err, &fe) || fe.Expr != tt.expr {
				t.Errorf("Compile(%q): error %#v is not an *Error for the expression", tt.expr, err)
			}
		})
	}
}

func TestLexer(t *testing.T) {
	tests := []struct {
		in   string
		want []tokKind
	}{
		{"10.1.16.61", []tokKind{tHID}},
		{"10.1.0.0/16", []tokKind{tHID, tDiv, tNum}},
		{"4000-5000", []tokKind{tID}},
		{"00:0c:29:aa:bb:cc", []tokKind{tEID}},
		{"000c.29aa.bbcc", []tokKind{tEID}},
		{"000c29aabbcc", []tokKind{tEID}},
		{"1.2.3.4.5.6", []tokKind{tEID}},
		{"1.2.3.4.5", []tokKind{tID}},
		{"fe80::1", []tokKind{tHID6}},
		{"::ffff:1.2.3.4", []tokKind{tHID6}},
		{"ip[0:2]", []tokKind{tPname, tLBrack, tNum, tColon, tNum, tRBrack}},
		{"tcp-syn", []tokKind{tNum}},
		{"tcp-synx", []tokKind{tID}},
		{"\\tcp", []tokKind{tID}},
		{"len-1", []tokKind{tID}},
		{"a>=b!=c==d<<e>>f&&g||h", []tokKind{tID, tGe, tID, tNeq, tID, tEq, tID, tLsh, tID, tRsh, tID, tAnd, tID, tOr, tID}},
		{"0x1F", []tokKind{tNum}},
		{"hostname", []tokKind{tID}},
		{"mpls", []tokKind{tUnsupported}},
	}
	for _, tt := range tests {
		toks, err := lex(tt.in)
		if err != nil {
			t.Errorf("lex(%q): %v", tt.in, err)
			continue
		}
		var got []tokKind
		for _, tok := range toks[:len(toks)-1] {
			got = append(got, tok.kind)
		}
		if len(got) != len(tt.want) {
			t.Errorf("lex(%q) = %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("lex(%q) = %v, want %v", tt.in, got, tt.want)
				break
			}
		}
	}
}
