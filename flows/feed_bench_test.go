package flows_test

import (
	"errors"
	"net/netip"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rocedump/rocedump/bench"
	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/internal/allocs"
)

// The table-alone benchmarks replay the hot-path benchmark's traffic
// (bench.DefaultFabric: 256 GPUs on 8 rails, 4 QPs per peer, 31,744 RC
// connections, 63,488 interleaved flows, 16 KiB RDMA WRITEs as four 4 KiB
// packets and an ACK) from pre-decoded packets, so that they measure
// flows.Table and nothing else: no file reading, no frame walk.

// benchFeedPackets matches the hot-path benchmark's capture (bench's
// hotPathPackets): ~31 packets per flow, flow creation included.
const benchFeedPackets = 2_000_000

// feedRec is one decoded packet, reduced to the fields that differ from
// packet to packet in this workload (28 bytes instead of a 700-byte
// packet.Packet); replay writes them into one reused Packet, as the decoder
// does.
type feedRec struct {
	t              uint32 // ns since the feed's start
	psn, destQP    uint32
	src, dst       uint16 // indexes into feed.addrs
	ipLen, payload uint16
	sport          uint16
	ext            bth.ExtHeaders
	op             bth.Opcode
	syndrome       uint8
	tos            uint8 // DSCP<<2 | ECN
	flags          uint8 // feedTruncated, feedICRCBad, feedICRCOK
}

const (
	feedTruncated = 1 << iota
	feedICRCBad
	feedICRCOK
)

// feed is the recorded packet stream.
type feed struct {
	start time.Time
	addrs []netip.Addr
	tmpl  packet.Packet // the first packet: fields common to all
	recs  []feedRec
}

var (
	benchFeedOnce sync.Once
	benchFeedData *feed
	benchFeedErr  error
)

var errFeedEnough = errors.New("enough")

// makeFeed streams the first n frames of the fabric's traffic from the
// generator (as bench.Generate writes them) and decodes them.
func makeFeed(f bench.Fabric, n int) (*feed, error) {
	f.Messages = n/(f.Connections()*f.FramesPerMessage()) + 2
	sc, err := f.Scenario()
	if err != nil {
		return nil, err
	}
	fd := &feed{recs: make([]feedRec, 0, n)}
	addrIdx := map[netip.Addr]uint16{}
	addr := func(a netip.Addr) uint16 {
		i, ok := addrIdx[a]
		if !ok {
			i = uint16(len(fd.addrs))
			addrIdx[a] = i
			fd.addrs = append(fd.addrs, a)
		}
		return i
	}
	var (
		dec packet.Decoder
		p   packet.Packet
	)
	seen := 0
	err = gen.Stream(sc, func(ts time.Time, frame []byte, origLen int) error {
		seen++
		if seen > n {
			return errFeedEnough
		}
		if dec.Decode(capture.LinkTypeEthernet, frame, origLen, &p) != nil || p.Kind != packet.KindRoCE || !p.HasBTH || p.HasCM {
			return nil
		}
		if len(fd.recs) == 0 {
			fd.start, fd.tmpl = ts, p
		}
		r := feedRec{
			t: uint32(ts.Sub(fd.start)), psn: p.BTH.PSN, destQP: p.BTH.DestQP,
			src: addr(p.Src), dst: addr(p.Dst), ipLen: uint16(p.IPTotalLen), payload: uint16(p.PayloadLen),
			sport: p.SrcPort, ext: p.BTH.Ext, op: p.BTH.Opcode, syndrome: p.BTH.AETH.Syndrome,
			tos: p.DSCP<<2 | p.ECN&3,
		}
		if p.Truncated {
			r.flags |= feedTruncated
		}
		switch p.ICRC {
		case bth.ICRCBad:
			r.flags |= feedICRCBad
		case bth.ICRCOK:
			r.flags |= feedICRCOK
		}
		fd.recs = append(fd.recs, r)
		return nil
	})
	if err != nil && !errors.Is(err, errFeedEnough) {
		return nil, err
	}
	return fd, nil
}

func benchFeed(b testing.TB) *feed {
	benchFeedOnce.Do(func() {
		benchFeedData, benchFeedErr = makeFeed(bench.DefaultFabric(), benchFeedPackets)
	})
	if benchFeedErr != nil {
		b.Fatal(benchFeedErr)
	}
	return benchFeedData
}

// replay adds records [from, to) to tab.
func (fd *feed) replay(tab *flows.Table, p *packet.Packet, from, to int) {
	for i := from; i < to; i++ {
		tab.Add(p, fd.fill(p, i))
	}
}

// fill writes record i into p and returns its frame reference.
func (fd *feed) fill(p *packet.Packet, i int) flows.FrameRef {
	{
		r := &fd.recs[i]
		p.Src, p.Dst = fd.addrs[r.src], fd.addrs[r.dst]
		p.IPTotalLen, p.PayloadLen, p.SrcPort = int(r.ipLen), int(r.payload), r.sport
		p.DSCP, p.ECN = r.tos>>2, r.tos&3
		p.Truncated = r.flags&feedTruncated != 0
		p.ICRC = bth.ICRCUnchecked
		if r.flags&feedICRCBad != 0 {
			p.ICRC = bth.ICRCBad
		} else if r.flags&feedICRCOK != 0 {
			p.ICRC = bth.ICRCOK
		}
		h := &p.BTH
		h.Opcode, h.PSN, h.DestQP, h.Ext, h.AETH.Syndrome = r.op, r.psn, r.destQP, r.ext, r.syndrome
		return flows.FrameRef{Frame: i + 1, Time: fd.start.Add(time.Duration(r.t)), Seq: uint64(i)}
	}
}

// BenchmarkTableFeed: flows.Table alone on the hot-path benchmark's traffic
// (63,488 interleaved flows, ~31 packets each), Finish included.
func BenchmarkTableFeed(b *testing.B) {
	fd := benchFeed(b)
	b.ReportAllocs()
	b.ResetTimer()
	var n int
	cpu := cpuTime()
	for range b.N {
		tab := flows.NewTable(flows.Config{})
		p := fd.tmpl
		fd.replay(tab, &p, 0, len(fd.recs))
		tab.Finish()
		n = tab.Len()
	}
	cpu = cpuTime() - cpu
	packets := float64(b.N) * float64(len(fd.recs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/packets, "ns/packet")
	b.ReportMetric(float64(cpu.Nanoseconds())/packets, "cpu-ns/packet")
	b.ReportMetric(float64(n), "flows")
}

// BenchmarkTableSteady: flows.Table alone on the second half of the same
// traffic, once every flow exists: the per-packet cost without flow
// creation (no Finish).
func BenchmarkTableSteady(b *testing.B) {
	benchSteady(b, benchFeed(b))
}

// benchSteady times the table on the second half of fd's traffic, after
// a first half (not timed) has made every flow.
func benchSteady(b *testing.B, fd *feed) {
	warm := len(fd.recs) / 2
	b.ReportAllocs()
	var cpu time.Duration
	for range b.N {
		b.StopTimer()
		tab := flows.NewTable(flows.Config{})
		p := fd.tmpl
		fd.replay(tab, &p, 0, warm)
		b.StartTimer()
		c := cpuTime()
		fd.replay(tab, &p, warm, len(fd.recs))
		cpu += cpuTime() - c
	}
	packets := float64(b.N) * float64(len(fd.recs)-warm)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/packets, "ns/packet")
	b.ReportMetric(float64(cpu.Nanoseconds())/packets, "cpu-ns/packet")
}

// heapFeedPackets is enough of the benchmark's traffic for every one of
// its 63,488 flows to carry a few messages and their ACKs.
const heapFeedPackets = 400_000

// maxHeapPerFlow bounds the heap a flow of the benchmark's traffic takes in
// the table (issue 6: memory set by flows, 111k flows within the report's
// 200 MB). About 1,070 bytes today: the 960-byte Flow, its share of the
// index, of the flow list and of the host lists, and the pairing evidence
// of each flow that carries ACKs.
const maxHeapPerFlow = 1200

// BenchmarkTableFewFlows: the same kind of traffic between 4 hosts (24
// connections, 48 flows, all in cache): the table's cost without cache
// misses, to compare with BenchmarkTableSteady's.
func BenchmarkTableFewFlows(b *testing.B) {
	fewFeedOnce.Do(func() {
		f := bench.DefaultFabric()
		f.Rails, f.Nodes, f.QPsPerPeer = 1, 4, 2
		fewFeedData, fewFeedErr = makeFeed(f, 500_000)
	})
	if fewFeedErr != nil {
		b.Fatal(fewFeedErr)
	}
	benchSteady(b, fewFeedData)
}

var (
	fewFeedOnce sync.Once
	fewFeedData *feed
	fewFeedErr  error
)

// TestBenchFeedHeapPerFlow measures the heap the table holds per flow once
// the benchmark's 63,488 flows have each carried their first messages, and
// checks that packets of flows that exist allocate nothing.
func TestBenchFeedHeapPerFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("generates the benchmark's traffic")
	}
	fd, err := makeFeed(bench.DefaultFabric(), heapFeedPackets)
	if err != nil {
		t.Fatal(err)
	}
	p := fd.tmpl
	before := heapAlloc()
	tab := flows.NewTable(flows.Config{})
	// Every flow exists after the first half; the second half then
	// allocates nothing.
	half := len(fd.recs) / 2
	fd.replay(tab, &p, 0, half)
	n := tab.Len()
	extra, sites := allocs.Count(func() { fd.replay(tab, &p, half, len(fd.recs)) }, flowsPkg)
	if extra != 0 || tab.Len() != n {
		t.Errorf("second half: %d allocations and %d new flows, want none; allocated at %q", extra, tab.Len()-n, sites)
	}
	tab.Finish()
	after := heapAlloc()
	runtime.KeepAlive(tab)
	if want := bench.DefaultFabric().Flows(); tab.Len() != want {
		t.Fatalf("%d flows, want %d", tab.Len(), want)
	}
	per := float64(after-before) / float64(tab.Len())
	t.Logf("%d flows, %d packets: heap %d -> %d bytes, %.0f bytes per flow", tab.Len(), len(fd.recs), before, after, per)
	if per > maxHeapPerFlow {
		t.Errorf("%.0f bytes of heap per flow, want at most %d", per, maxHeapPerFlow)
	}
}

// flowsPkg is the package whose allocations the tests count.
const flowsPkg = "github.com/rocedump/rocedump/flows"

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
