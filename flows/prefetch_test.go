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
	if i := empty.PrefetchFlow(1, 2, 3).Index(); i != -1 {
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
			if got := tab.PrefetchFlow(src, dst, f.Key.DestQP).Index(); got != want {
				t.Fatalf("%s: flow %d %v: PrefetchFlow = %d, want %d", path, f.ID, f.Key, got, want)
			}
			if got := tab.PrefetchFlow(src, dst^0x80000000, f.Key.DestQP).Index(); got != -1 && tab.flowAt(int32(got)).Key.Dst == f.Key.Dst {
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
	if i := m.PrefetchFlow(0x0a000001, 0x0a000002, 0x11).Index(); i != -1 {
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

// TestHints: a frame handed in with the hint PrefetchFlow gave for it is
// added to the flow a lookup finds (the key's current epoch), and a hint
// that no longer holds is not taken: one given before the key started a
// new epoch (the old epoch's flow), one given for another frame (Seq),
// and one of another table.
func TestHints(t *testing.T) {
	const aQP, bQP = 0x22, 0x11
	src, dst := uint32(0x0a01103d), uint32(0x0a01103e) // hostA, hostB
	c := newClock(Config{})
	connection(c, aQP, bQP, 100, 5)
	tab, seq := c.tab, uint64(100)
	addHinted := func(dt time.Duration, h Hint, hintSeq uint64, psn uint32) *Flow {
		t.Helper()
		c.now = c.now.Add(dt)
		c.frame++
		seq++
		at := At(FrameRef{Frame: c.frame, Time: c.now, Seq: seq})
		at.SetHint(h, hintSeq)
		f, _, _, _ := tab.addFlow(roce(hostA, hostB, opSendOnly, bQP, psn, 64), &at, false)
		return f
	}
	first := tab.Current(key(hostA, hostB, bQP))
	h := tab.PrefetchFlow(src, dst, bQP)
	if h.Index() != first.ID-1 {
		t.Fatalf("PrefetchFlow = %d, want %d", h.Index(), first.ID-1)
	}
	if f := addHinted(2*time.Microsecond, h, seq+1, 105); f != first {
		t.Fatalf("hinted frame went to flow %d, want %d", f.ID, first.ID)
	}
	// Another table's hint for this frame, naming a flow index this
	// table has for another key: not taken.
	other := newClock(Config{})
	connection(other, aQP, 0x99, 7, 1)
	connection(other, aQP, bQP, 7, 1)
	oh := other.tab.PrefetchFlow(src, dst, bQP)
	if oh.Index() == first.ID-1 {
		t.Fatalf("the other table's flow has the same index %d: the test proves nothing", oh.Index())
	}
	if f := addHinted(2*time.Microsecond, Hint{id: oh.id, gen: oh.gen}, seq+1, 106); f != first {
		t.Fatalf("another table's hint: flow %d, want %d", f.ID, first.ID)
	}
	// A hint given for another frame: not taken (the zero Hint neither).
	stale := Hint{id: 1, gen: tab.gen}
	if first.ID == 1 {
		stale.id = 2
	}
	if f := addHinted(2*time.Microsecond, stale, seq, 107); f != first {
		t.Fatalf("a hint of another frame: flow %d, want %d", f.ID, first.ID)
	}
	if f := addHinted(2*time.Microsecond, Hint{}, seq+1, 108); f != first {
		t.Fatalf("the zero hint: flow %d, want %d", f.ID, first.ID)
	}
	// The key starts a new epoch (idle, then a PSN far away) between the
	// hint and its frame: the hint names the old epoch and is not taken.
	h = tab.PrefetchFlow(src, dst, bQP)
	second := addHinted(2*time.Second, Hint{}, 0, 9000000)
	if second == first || second.Epoch != first.Epoch+1 {
		t.Fatalf("no new epoch: flow %d epoch %d", second.ID, second.Epoch)
	}
	if f := addHinted(2*time.Microsecond, h, seq+1, 9000001); f != second {
		t.Fatalf("a hint from before the new epoch: flow %d (epoch %d), want %d", f.ID, f.Epoch, second.ID)
	}
	if h2 := tab.PrefetchFlow(src, dst, bQP); h2.Index() != second.ID-1 {
		t.Fatalf("PrefetchFlow after the epoch = %d, want %d", h2.Index(), second.ID-1)
	} else if f := addHinted(2*time.Microsecond, h2, seq+1, 9000002); f != second {
		t.Fatalf("hinted frame after the epoch: flow %d, want %d", f.ID, second.ID)
	}
}
