package topology

import (
	"net/netip"
	"strings"
)

// CompareNames orders node names, and the addresses that stand for nodes
// the topology does not name, as an engineer reads them: addresses first,
// in address order (10.0.0.9 before 10.0.0.10, fd00::a before fd00::10);
// then names, where runs of decimal digits compare as numbers, so dgx-2
// comes before dgx-10, and everything else byte by byte. Names that differ
// only in leading zeros (node01, node1) are ordered by the plain text
// comparison, so the order is total and deterministic; it is the plain one
// when no digits are involved.
func CompareNames(a, b string) int {
	ia, ea := netip.ParseAddr(a)
	ib, eb := netip.ParseAddr(b)
	switch {
	case ea == nil && eb == nil:
		if c := ia.Compare(ib); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	case ea == nil:
		return -1
	case eb == nil:
		return 1
	}
	return compareNatural(a, b)
}

// compareNatural compares a and b with their runs of digits as numbers.
func compareNatural(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			// The runs without their leading zeros: the longer is the
			// larger number; of equal lengths, the text decides.
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if len(na) != len(nb) {
				if len(na) < len(nb) {
					return -1
				}
				return 1
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if a[i] != b[j] {
			if a[i] < b[j] {
				return -1
			}
			return 1
		}
		i++
		j++
	}
	switch {
	case len(a)-i < len(b)-j:
		return -1
	case len(a)-i > len(b)-j:
		return 1
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
