//go:build cgo

package capture

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

func TestOpenLiveNoSuchInterface(t *testing.T) {
	_, err := OpenLive(LiveConfig{Interface: "nosuch0", SnapLen: 128})
	var le *LiveError
	if !errors.Is(err, ErrNoSuchInterface) || !errors.As(err, &le) {
		t.Fatalf("OpenLive(nosuch0): %v, want ErrNoSuchInterface", err)
	}
	if !slices.Contains(le.Available, "lo") {
		t.Errorf("available interfaces %q lack lo", le.Available)
	}
}

// TestOpenLiveLoopback opens a real capture on lo (root only): an idle
// capture times out instead of blocking, counts nothing, and reports its
// settings; a filter libpcap rejects is ErrLiveFilter.
func TestOpenLiveLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("opening a live capture needs root or CAP_NET_RAW")
	}
	_, err := OpenLive(LiveConfig{Interface: "lo", Filter: "udp dst port"})
	if !errors.Is(err, ErrLiveFilter) {
		t.Errorf("bad filter: %v, want ErrLiveFilter", err)
	}
	h, err := OpenLive(LiveConfig{Interface: "lo", SnapLen: 200, Timeout: 20 * time.Millisecond,
		Filter: "udp dst port 4791 and host 192.0.2.77"}) // nothing on lo matches
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.LinkType() != LinkTypeEthernet || h.SnapLen() != 200 {
		t.Errorf("link type %v, snap length %d; want Ethernet, 200", h.LinkType(), h.SnapLen())
	}
	var rec Record
	start := time.Now()
	if err := h.Next(&rec); !errors.Is(err, ErrLiveTimeout) {
		t.Errorf("idle Next: %v, want ErrLiveTimeout", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("idle Next took %v with a 20ms timeout", d)
	}
	if s, err := h.Stats(); err != nil || s.KernelDrops != 0 {
		t.Errorf("Stats: %+v, %v", s, err)
	}
}

// TestOpenLiveAny: "any" (Linux cooked frames) opens with the default
// filter, whose "vlan" part libpcap compiles for Ethernet only (root only).
func TestOpenLiveAny(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("opening a live capture needs root or CAP_NET_RAW")
	}
	h, err := OpenLive(LiveConfig{Interface: "any", SnapLen: 128, Timeout: 20 * time.Millisecond, Filter: DefaultLiveFilter()})
	if err != nil {
		t.Fatalf("OpenLive(any) with the default filter: %v", err)
	}
	h.Close()
}

func TestLinkTypeOfDLT(t *testing.T) {
	for dlt, want := range map[int]LinkType{1: LinkTypeEthernet, 12: LinkTypeRaw, 14: LinkTypeRaw, 113: LinkTypeLinuxSLL, 276: LinkTypeLinuxSLL2} {
		if got := linkTypeOfDLT(dlt); got != want {
			t.Errorf("linkTypeOfDLT(%d) = %v, want %v", dlt, got, want)
		}
	}
}

// TestBeforeFilter: a frame stamped in the moments before the filter took
// effect is dropped; one stamped long before (a clock other than the
// host's) is not, nor one at or after it.
func TestBeforeFilter(t *testing.T) {
	at := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC).UnixNano()
	for _, tc := range []struct {
		ns   int64
		drop bool
	}{
		{at - int64(time.Millisecond), true},
		{at - int64(filterLag), true},
		{at - int64(filterLag) - 1, false},
		{at - int64(time.Hour), false},
		{at, false},
		{at + 1, false},
	} {
		if got := beforeFilter(tc.ns, at); got != tc.drop {
			t.Errorf("frame %v before the filter: dropped %v, want %v", time.Duration(at-tc.ns), got, tc.drop)
		}
	}
}
