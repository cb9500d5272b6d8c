package capture

import (
	"testing"

	"github.com/rocedump/rocedump/filter"
)

// TestLiveFilterForLinkType: the default live filter compiles for every
// link type rocedump decodes, the Linux cooked frames of "live -i any"
// included (its "vlan" part is for Ethernet only), and a filter the user
// gave is left as it is.
func TestLiveFilterForLinkType(t *testing.T) {
	for _, lt := range []LinkType{LinkTypeEthernet, LinkTypeRaw, LinkTypeIPv4, LinkTypeIPv6,
		LinkTypeLinuxSLL, LinkTypeLinuxSLL2, LinkTypeNull, LinkTypeLoop} {
		expr := liveFilterFor(DefaultLiveFilter(), lt)
		if _, err := filter.Compile(expr, uint32(lt)); err != nil {
			t.Errorf("link type %v: the default filter does not compile: %v", lt, err)
		}
	}
	if got := liveFilterFor(DefaultLiveFilter(), LinkTypeEthernet); got != DefaultLiveFilter() {
		t.Errorf("Ethernet: filter %q, want the default", got)
	}
	if got := liveFilterFor("vlan 100", LinkTypeLinuxSLL); got != "vlan 100" {
		t.Errorf("a filter given: %q, want it as given", got)
	}
}
