package flows

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/internal/allocs"
)

// flowsPkg is this package, whose allocations the tests count.
const flowsPkg = "github.com/rocedump/rocedump/flows"

// workload is synthetic traffic over a fixed set of RC connections: hosts
// pairs of hosts with qps connections each. Packet i belongs to connection
// i mod (hosts*qps): WRITE requests, every fourth an ACK back, every 64th a
// CNP, every 256th a READ request answered by a READ response ONLY. The
// packets are built once; next only rewrites PSNs.
type workload struct {
	conns             int
	write, ack, cnp   []packet.Packet
	read, readResp    []packet.Packet
	reqPSN, readCount []uint32
	start             time.Time
}

func newWorkload(hosts, qps int) *workload {
	w := &workload{conns: hosts * qps, start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for h := range hosts {
		a, b := fmt.Sprintf("10.%d.0.1", h), fmt.Sprintf("10.%d.0.2", h)
		for q := range qps {
			aQP, bQP := uint32(0x1000+q), uint32(0x2000+q)
			w.write = append(w.write, *roce(a, b, opWriteMid, bQP, 0, 1024))
			w.ack = append(w.ack, *roce(b, a, opAck, aQP, 0, 0))
			w.cnp = append(w.cnp, *roce(b, a, bth.OpcodeCNP, aQP, 0, 0))
			w.read = append(w.read, *readReq(a, b, bQP, 0, 0, 1024))
			w.readResp = append(w.readResp, *roce(b, a, opReadOnly, aQP, 0, 1024))
			w.reqPSN = append(w.reqPSN, uint32(len(w.reqPSN))*40000)
			w.readCount = append(w.readCount, 0)
		}
	}
	return w
}

// feed adds packets [from, to) of the workload to tab.
func (w *workload) feed(tab *Table, from, to int) {
	for i := from; i < to; i++ {
		c := i % w.conns
		n := i / w.conns
		at := FrameRef{Frame: i + 1, Time: w.start.Add(time.Duration(i) * 100 * time.Nanosecond)}
		var p *packet.Packet
		switch {
		case n%256 == 255:
			p = &w.read[c]
			p.BTH.PSN = psnAdd(w.reqPSN[c], 1)
			p.BTH.RETH.VA = uint64(w.readCount[c]) << 12
			w.readCount[c]++
			w.reqPSN[c] = p.BTH.PSN
		case n%256 == 254:
			// the response to the READ of the previous round
			p = &w.readResp[c]
			p.BTH.PSN = w.reqPSN[c]
		case n%64 == 63:
			p = &w.cnp[c]
		case n%4 == 3:
			p = &w.ack[c]
			p.BTH.PSN = w.reqPSN[c]
		default:
			p = &w.write[c]
			p.BTH.PSN = psnAdd(w.reqPSN[c], 1)
			w.reqPSN[c] = p.BTH.PSN
		}
		tab.Add(p, at)
	}
}

func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryFlat feeds 3 million packets over 1000 connections (2000 flows
// across 10 host pairs) and checks that the heap, after the flows exist,
// does not grow with the packets.
func TestMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("3 million packets")
	}
	const total, warm = 3_000_000, 500_000
	w := newWorkload(10, 100)
	tab := NewTable(Config{})
	w.feed(tab, 0, warm)
	before := heapInUse()
	flowsBefore := tab.Len()
	w.feed(tab, warm, total)
	after := heapInUse()
	tab.Finish()
	if tab.Len() != flowsBefore || tab.Len() != 2*w.conns {
		t.Errorf("flows: %d after %d packets, %d after %d; want %d", flowsBefore, warm, tab.Len(), total, 2*w.conns)
	}
	const slack = 64 << 10
	if after > before+slack {
		t.Errorf("heap grew from %d to %d bytes (+%d) over %d packets; want under %d",
			before, after, after-before, total-warm, slack)
	}
	t.Logf("heap %d -> %d bytes over %d packets, %d flows", before, after, total-warm, tab.Len())
	var retx, gaps uint64
	paired := 0
	for _, f := range tab.Flows() {
		retx += f.Retransmitted()
		gaps += f.PSNGaps()
		if f.Partner != nil {
			paired++
		}
	}
	if retx != 0 || gaps != 0 || paired != tab.Len() {
		t.Errorf("retransmitted %d, gaps %d, paired %d of %d; want 0, 0, all", retx, gaps, paired, tab.Len())
	}
}

// TestAddAllocs checks that accounting a packet of an existing flow
// allocates nothing: opcode, DSCP and port sets append only on a value the
// flow has not shown before, and the pairing evidence is allocated once,
// at a flow's first response.
func TestAddAllocs(t *testing.T) {
	w := newWorkload(2, 4)
	tab := NewTable(Config{})
	w.feed(tab, 0, 256*w.conns) // every kind of packet on every flow
	steadyAllocs(t, w, tab)
}

// steadyAllocs checks that tab, fed w's first 256 packets a connection,
// allocates nothing for w's next ones, 64 at a time.
func steadyAllocs(t *testing.T, w *workload, tab *Table) {
	t.Helper()
	i := 256 * w.conns
	if n := testing.AllocsPerRun(1000, func() {
		w.feed(tab, i, i+64)
		i += 64
	}); n != 0 {
		t.Errorf("%v allocations per 64 packets, want 0", n)
	}
}

func BenchmarkAdd(b *testing.B) {
	w := newWorkload(10, 100)
	tab := NewTable(Config{})
	w.feed(tab, 0, 256*w.conns)
	b.ReportAllocs()
	b.ResetTimer()
	i := 256 * w.conns
	for range b.N {
		w.feed(tab, i, i+1)
		i++
	}
}

// TestExtraPacketsAllocateNothing feeds the same flows N packets (every
// kind the workload has) and then N more, and requires the N more to
// allocate nothing: what a table allocates follows its flows (creation,
// first response, first gap...), never its packets (issue 6: zero
// allocations per packet in steady state).
func TestExtraPacketsAllocateNothing(t *testing.T) {
	const n = 256 * 1000 // each of the 1000 connections sends every kind of packet at least once
	w := newWorkload(10, 100)
	tab := NewTable(Config{})
	first, _ := allocs.Count(func() { w.feed(tab, 0, n) }, flowsPkg)
	flows := tab.Len()
	extra, sites := allocs.Count(func() { w.feed(tab, n, 2*n) }, flowsPkg)
	if tab.Len() != flows {
		t.Fatalf("%d flows after %d packets, %d after %d", flows, n, tab.Len(), 2*n)
	}
	if extra != 0 {
		t.Errorf("%d packets of %d flows: %d allocations; %d more packets: %d allocations, want 0; allocated at %q", n, flows, first, n, extra, sites)
	}
	t.Logf("%d allocations for %d flows (%.2f per flow), %d for %d more packets", first, flows, float64(first)/float64(flows), extra, n)
}
