package flows

import (
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/rocedump/rocedump/internal/testcaps"
)

// TestPackIPv4: the key the prefetch hints build from peeked addresses is
// the one Add builds from the decoded packet.
func TestPackIPv4(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 10000 {
		src, dst, qp := rng.Uint32(), rng.Uint32(), rng.Uint32()&psnMask
		var s, d [4]byte
		binary.BigEndian.PutUint32(s[:], src)
		binary.BigEndian.PutUint32(d[:], dst)
		if got, want := packIPv4(src, dst, qp), packKey(netip.AddrFrom4(s), netip.AddrFrom4(d), qp); got != want {
			t.Fatalf("packIPv4(%08x, %08x, %#x) = %+v, packKey %+v", src, dst, qp, got, want)
		}
	}
}

// TestPrefetchFlow: PrefetchFlow finds the flow Current finds (the latest
// epoch of the key) for every IPv4 flow of the captures, -1 for keys the
// table does not hold, and changes nothing.
func TestPrefetchFlow(t *testing.T) {
	paths := testcaps.All(t, "../testdata/pcaps")
	empty := NewTable(Config{})
	empty.PrefetchSlot(1, 2, 3)
	if i := empty.PrefetchFlow(1, 2, 3); i != -1 {
		t.Errorf("empty table: PrefetchFlow = %d", i)
	}
	checked := 0
	for _, path := range paths {
		tab := feedFile(t, path)
		n := tab.Len()
		for _, f := range tab.Flows() {
			if !f.Key.Src.Is4() || !f.Key.Dst.Is4() {
				continue
			}
			s, d := f.Key.Src.As4(), f.Key.Dst.As4()
			src, dst := binary.BigEndian.Uint32(s[:]), binary.BigEndian.Uint32(d[:])
			tab.PrefetchSlot(src, dst, f.Key.DestQP)
			want := tab.Current(f.Key).ID - 1
			if got := tab.PrefetchFlow(src, dst, f.Key.DestQP); got != want {
				t.Fatalf("%s: flow %d %v: PrefetchFlow = %d, want %d", path, f.ID, f.Key, got, want)
			}
			if got := tab.PrefetchFlow(src, dst^0x80000000, f.Key.DestQP); got != -1 && tab.flowAt(int32(got)).Key.Dst == f.Key.Dst {
				t.Fatalf("%s: PrefetchFlow of another key found flow %d", path, got+1)
			}
			checked++
		}
		if tab.Len() != n {
			t.Fatalf("%s: the hints changed the table", path)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d flows", checked)
	}
}

// TestPrefetchMerged: a table MergeShards made holds its flows elsewhere:
// the hints find nothing there, and do not fail.
func TestPrefetchMerged(t *testing.T) {
	c := newClock(Config{})
	a, b := c.tab, NewTable(Config{})
	c.add(0, roce("10.0.0.1", "10.0.0.2", opSendOnly, 0x11, 1, 100))
	a.Finish()
	b.Finish()
	m := MergeShards([]*Table{a, b})
	m.PrefetchSlot(0x0a000001, 0x0a000002, 0x11)
	if i := m.PrefetchFlow(0x0a000001, 0x0a000002, 0x11); i != -1 {
		t.Errorf("merged table: PrefetchFlow = %d", i)
	}
}

// TestLookAheadPays: a table says looking ahead pays from lookAheadFlows
// flows on, and a shard that holds a share of the pass's flows from that
// share of them on.
func TestLookAheadPays(t *testing.T) {
	c := newClock(Config{})
	for i := range lookAheadFlows {
		if c.tab.LookAheadPays(1) {
			t.Fatalf("pays with %d flows", i)
		}
		if got, want := c.tab.LookAheadPays(0.25), i >= lookAheadFlows/4; got != want {
			t.Fatalf("a quarter of the pass's flows: pays with %d flows = %v", i, got)
		}
		c.add(time.Microsecond, roce("10.0.0.1", "10.0.0.2", opSendOnly, uint32(i+2), 1, 100))
	}
	if n := c.tab.Len(); n != lookAheadFlows || !c.tab.LookAheadPays(1) {
		t.Errorf("%d flows: LookAheadPays = %v", n, c.tab.LookAheadPays(1))
	}
}
