package gen

import (
	"net/netip"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

// Frame is one generated frame. Data is valid only during the callback that
// receives it: the generator reuses the buffer.
type Frame struct {
	Time      time.Time
	Data      []byte // as captured: cut to the interface's snap length
	OrigLen   int    // length on the wire
	Interface int    // index into Scenario.Interfaces
}

// Stream generates the scenario's frames in capture order and hands each to
// emit. Memory does not grow with the number of packets: frames are built one
// at a time into a reused buffer, and each flow keeps only the packets of the
// message it is working on. Stream does not apply cut_off (that is a property
// of a file; see Generate).
func Stream(s *Scenario, emit func(ts time.Time, frame []byte, origLen int) error) error {
	_, err := Run(s, func(f *Frame) error { return emit(f.Time, f.Data, f.OrigLen) })
	return err
}

// Run is Stream with the interface of each frame, and it returns the truth:
// what the generator knows it put into the frames.
func Run(s *Scenario, emit func(f *Frame) error) (*Truth, error) {
	g := newGenerator(s)
	for {
		p, ok := g.next()
		if !ok {
			break
		}
		fr, err := g.build(&p)
		if err != nil {
			return nil, err
		}
		g.account(&p, fr)
		if err := emit(fr); err != nil {
			return nil, err
		}
	}
	g.finish()
	return g.truth, nil
}

// pktKind says which part of the scenario a packet comes from.
type pktKind uint8

const (
	kindFlow pktKind = iota
	kindCM
	kindTCP
	kindPFC
	kindMalformed
)

// pkt describes one frame still to be built. Frames are built only when they
// are emitted, so a pending packet is small and holds no bytes.
type pkt struct {
	t     int64 // nanoseconds after the scenario start
	seq   uint64
	kind  pktKind
	owner int32 // index of the flow, cm, tcp, pfc or malformed entry
	n     int32 // frame number within a cm/pfc/malformed entry; cm attribute
	rev   bool  // responder to requester (flows), server to client (cm, tcp)
	cnp   bool
	retx  bool
	dup   bool  // the mirror's second copy of a flow's packet (mirror_dup)
	dupCE bool  // dup: the copy carries the CE its ECN-capable packet's first copy lacks (a mark counts once)
	ttl   uint8 // IP TTL, GRH hop limit; 0 for the default, 64
	dscp  uint8
	ecn   uint8
	ipID  uint16 // IPv4 Identification (flows: flowGen.push)
	b     bth.BTH
	plen  int32 // RDMA payload bytes (flows, TCP)
	flags uint8 // TCP flags
	sq    uint32
	ack   uint32
}

func pktLess(a, b *pkt) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

// pktHeap is a binary min-heap of pending packets ordered by time.
type pktHeap []pkt

func (h *pktHeap) push(p pkt) {
	*h = append(*h, p)
	s := *h
	i := len(s) - 1
	for i > 0 {
		j := (i - 1) / 2
		if !pktLess(&s[i], &s[j]) {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
}

func (h *pktHeap) pop() pkt {
	s := *h
	p := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && pktLess(&s[r], &s[l]) {
			m = r
		}
		if !pktLess(&s[m], &s[i]) {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	*h = s
	return p
}

// batcher makes the next batch of a source's packets: a flow's message, a
// TCP session, a run of pause frames. Every packet of a batch is at or after
// the batch's start, and batches start in time order.
type batcher interface {
	nextBatch(s *source)
}

// source is one independent stream of packets in time order.
type source struct {
	h         pktHeap
	nextStart int64 // start of the next batch while !done
	done      bool
	seq       uint64
	b         batcher
}

func (s *source) push(p pkt) {
	p.seq = s.seq
	s.seq++
	s.h.push(p)
}

// fill makes batches until the earliest pending packet cannot be preceded by
// one of a batch not yet made.
func (s *source) fill() {
	for !s.done && (len(s.h) == 0 || s.nextStart <= s.h[0].t) {
		s.b.nextBatch(s)
	}
}

// generator holds everything one run needs. Nothing is package-level state.
type generator struct {
	s       *Scenario
	start   time.Time
	sources []*source
	order   []int // source indexes as a heap keyed by their earliest packet
	flows   []*flowGen
	ifaces  []*ifaceState
	fb      *frameBuf
	scratch []byte
	frame   Frame
	truth   *Truth
	wireLen int    // IP total length (or GRH packet length) of the frame being built
	ipID    uint16 // IPv4 Identification of the RoCE packet being built (roce)
	// cnpIDs is, per source and destination address, the first
	// non-zero IPv4 ID of their CNPs and whether a later one differed:
	// an analyser tells a CNP's copy only then (truth).
	cnpIDs map[[2]netip.Addr]*cnpIDs
}

// ifaceState is a capture interface and its per-tunnel GRE sequence numbers.
type ifaceState struct {
	it      *Interface
	snaplen int
	seq     []uint32
}

func newGenerator(s *Scenario) *generator {
	g := &generator{
		s:     s,
		start: s.Start,
		fb:    newFrameBuf(),
		truth: newTruth(s),
	}
	for i := range s.Interfaces {
		it := &s.Interfaces[i]
		g.ifaces = append(g.ifaces, &ifaceState{it: it, snaplen: *it.Snaplen, seq: make([]uint32, len(it.Encap))})
	}
	for i := range s.Flows {
		fg := newFlowGen(g, i)
		g.flows = append(g.flows, fg)
		g.addSource(fg, usToNS(s.Flows[i].StartUS))
	}
	cm := &cmGen{g: g}
	if len(s.CM) > 0 {
		cm.init()
		g.addSource(cm, cm.firstStart())
	}
	tg := &tcpGen{g: g}
	if len(s.TCP) > 0 {
		tg.init()
		g.addSource(tg, tg.firstStart())
	}
	pg := &pfcGen{g: g}
	if len(s.PFC) > 0 {
		pg.init()
		g.addSource(pg, pg.firstStart())
	}
	mg := &malGen{g: g}
	if len(s.Malformed) > 0 {
		mg.init()
		g.addSource(mg, mg.firstStart())
	}
	for i, src := range g.sources {
		src.fill()
		if len(src.h) > 0 {
			g.orderPush(i)
		}
	}
	return g
}

func (g *generator) addSource(b batcher, start int64) {
	g.sources = append(g.sources, &source{b: b, nextStart: start})
}

func usToNS(us float64) int64 { return int64(us*1000 + 0.5) }

func (g *generator) srcLess(i, j int) bool {
	a, b := &g.sources[i].h[0], &g.sources[j].h[0]
	if a.t != b.t {
		return a.t < b.t
	}
	return i < j
}

func (g *generator) orderPush(i int) {
	g.order = append(g.order, i)
	k := len(g.order) - 1
	for k > 0 {
		p := (k - 1) / 2
		if !g.srcLess(g.order[k], g.order[p]) {
			break
		}
		g.order[k], g.order[p] = g.order[p], g.order[k]
		k = p
	}
}

func (g *generator) orderFix() {
	o := g.order
	n := len(o)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && g.srcLess(o[r], o[l]) {
			m = r
		}
		if !g.srcLess(o[m], o[i]) {
			return
		}
		o[i], o[m] = o[m], o[i]
		i = m
	}
}

// next returns the earliest pending packet of all sources.
func (g *generator) next() (pkt, bool) {
	if len(g.order) == 0 {
		return pkt{}, false
	}
	si := g.order[0]
	src := g.sources[si]
	p := src.h.pop()
	src.fill()
	if len(src.h) == 0 {
		n := len(g.order) - 1
		g.order[0] = g.order[n]
		g.order = g.order[:n]
	}
	g.orderFix()
	return p, true
}

// ifaceIndex finds an interface by name; "" is the first.
func (g *generator) ifaceIndex(name string) int {
	for i, it := range g.s.Interfaces {
		if it.Name == name {
			return i
		}
	}
	return 0
}

// tos is the IPv4 TOS / IPv6 traffic class byte.
func tos(dscp, ecn uint8) uint8 { return dscp<<2 | ecn&3 }

// hostMACs are the Ethernet addresses of a packet from src to dst.
func hostMACs(src, dst netip.Addr) (s, d [6]byte) { return macFor(src), macFor(dst) }
