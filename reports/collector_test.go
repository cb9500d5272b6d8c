package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/topology"
)

// decodeAll decodes every frame of a capture into its own Packet.
func decodeAll(t testing.TB, path string) ([]packet.Packet, []flows.FrameRef) {
	t.Helper()
	m, err := capture.OpenMerged([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var (
		rec  capture.Record
		dec  packet.Decoder
		pkts []packet.Packet
		refs []flows.FrameRef
	)
	for {
		file, err := m.Next(&rec)
		if err == io.EOF {
			break
		}
		var p packet.Packet
		if err := dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p); err != nil {
			t.Fatal(err)
		}
		pkts = append(pkts, p)
		refs = append(refs, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
	}
	return pkts, refs
}

// TestCollectorAllocs: once every flow, conversation and bin exists, Add
// allocates nothing, for RoCE and for other frames.
func TestCollectorAllocs(t *testing.T) {
	for _, name := range []string{"clean_allreduce", "congestion", "storage", "report_ecn"} {
		t.Run(name, func(t *testing.T) {
			pkts, refs := decodeAll(t, genCapture(t, name))
			c := NewCollector(flows.NewTable(flows.Config{}), Config{})
			for i := range pkts {
				c.Add(&pkts[i], refs[i])
			}
			allocs := testing.AllocsPerRun(20, func() {
				for i := range pkts {
					c.Add(&pkts[i], refs[i])
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per pass over %d frames, want 0", allocs, len(pkts))
			}
		})
	}
}

// TestCollectorMatchesTruth checks the collector's per-flow classes,
// conversations and CM requests against the generator's truth, for every
// generated capture.
func TestCollectorMatchesTruth(t *testing.T) {
	for _, name := range []string{"clean_allreduce", "congestion", "storage", "report_storage", "report_ecn",
		"report_ssh_bootstrap", "report_cross_rail_mirror", "mirror_erspan2_vlan_trunc", "snaplen64", "transports"} {
		t.Run(name, func(t *testing.T) {
			tr := genTruth(t, name)
			in := loadGen(t, name, "")
			byKey := map[flows.Key]*flows.Flow{}
			for _, f := range in.Flows {
				byKey[f.Key] = f // the last epoch; these scenarios have one
			}
			checks := in.Collect.DSCP()
			for _, ft := range tr.Flows {
				k := flows.Key{Src: netip.MustParseAddr(ft.Src), Dst: netip.MustParseAddr(ft.Dst), DestQP: ft.DestQPN}
				f := byKey[k]
				if f == nil {
					if ft.Packets > 0 {
						t.Errorf("%s %s: no flow %v", ft.Flow, ft.Role, k)
					}
					continue
				}
				d := checks[f.ID-1]
				if d.FlowID != f.ID || d.CNP != uint64(ft.CNPs) || d.Data != uint64(ft.Packets)-uint64(ft.CNPs) {
					t.Errorf("%s %s: DSCP check %+v, want %d data and %d CNPs", ft.Flow, ft.Role, d, ft.Packets-int64(ft.CNPs), ft.CNPs)
				}
				// the truth counts DSCPs per frame, CNPs included; CNPs
				// are on cnp_dscp (48 in these scenarios)
				var wrongData uint64
				for v, n := range ft.DSCP {
					dv, _ := strconv.Atoi(v)
					if dv != 26 && dv != 48 {
						wrongData += uint64(n)
					}
				}
				if name != "report_ecn" && d.DataWrong != wrongData {
					t.Errorf("%s %s: %d data packets off DSCP 26, truth says %d", ft.Flow, ft.Role, d.DataWrong, wrongData)
				}
			}
			convs := in.Collect.Conversations()
			if len(convs) != len(tr.TCP) {
				t.Fatalf("%d conversations, truth has %d TCP sessions", len(convs), len(tr.TCP))
			}
			for _, tt := range tr.TCP {
				found := false
				for _, c := range convs {
					if c.Src.String() == tt.Client && c.Dst.String() == tt.Server && int(c.ServicePort) == min(tt.ServerPort, tt.ClientPort) {
						found = true
						if c.Packets != uint64(tt.Packets) || c.Proto != protoTCP {
							t.Errorf("%s: conversation %+v, want %d TCP packets", tt.Name, c, tt.Packets)
						}
					}
				}
				if !found {
					t.Errorf("%s: no conversation %s > %s", tt.Name, tt.Client, tt.Server)
				}
			}
			cms := in.Collect.CMConnects()
			wantCM := len(tr.CM)
			if in.Capture.Truncated > 0 {
				wantCM = 0 // 128-byte snaps cut CM REQs before the MAD header
			}
			if len(cms) != wantCM {
				t.Errorf("%d CM connects, want %d", len(cms), wantCM)
			}
			for i, c := range cms {
				if i < len(tr.CM) && (int(c.Port) != tr.CM[i].ServicePort || c.Src.String() != tr.CM[i].Client || c.LocalQPN != tr.CM[i].ClientQPN || c.PortSpace != bth.PortSpaceTCP) {
					t.Errorf("CM connect %d: %+v, want %+v", i, c, tr.CM[i])
				}
			}
			var pfc uint64
			prio, _ := in.Collect.PFC()
			for i := range prio {
				if want := uint64(tr.PFC.Priorities[strconv.Itoa(i)]); prio[i].Frames != want {
					t.Errorf("priority %d: %d PFC frames, want %d", i, prio[i].Frames, want)
				}
			}
			pfc = in.Collect.c.pfc.frames
			if pfc != uint64(tr.PFC.Frames) {
				t.Errorf("%d PFC frames, want %d", pfc, tr.PFC.Frames)
			}
		})
	}
}

// synth builds RoCE and other packets for collector unit tests.
type synth struct {
	t0    time.Time
	frame int
}

func (s *synth) ref(us float64) flows.FrameRef {
	s.frame++
	return flows.FrameRef{Frame: s.frame, Time: s.t0.Add(time.Duration(us * float64(time.Microsecond)))}
}

func roce(src, dst string, qp uint32, op bth.Opcode, psn uint32, dscp, ecn uint8) *packet.Packet {
	p := &packet.Packet{Kind: packet.KindRoCE, RoCEVersion: 2, IPVersion: 4, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
		DSCP: dscp, ECN: ecn, Proto: protoUDP, SrcPort: 49152, DstPort: 4791, IPTotalLen: 1000, HasBTH: true}
	p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN = op, qp, psn
	return p
}

func pfcFrame(prio int, quanta uint16) *packet.Packet {
	p := &packet.Packet{Kind: packet.KindOther, EtherType: 0x8808, HasPFC: true}
	p.PFC.Opcode = packet.MACControlPFC
	p.PFC.ClassEnable = 1 << prio
	p.PFC.Quanta[prio] = quanta
	return p
}

const (
	opWriteOnly = bth.Opcode(0x0a) // RC RDMA WRITE ONLY
	opCNP       = bth.Opcode(0x81)
)

// TestECNReaction covers the ECN rule: a CNP back within the window acts
// on every pending mark, a mark just after a CNP is covered by it, marks
// whose window passed are not acted on, and marks still in their window at
// the end are decided by the traffic that came back.
func TestECNReaction(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{ECNWindow: time.Millisecond})
	add := func(p *packet.Packet, us float64) { c.Add(p, s.ref(us)) }
	// A→B: 3 marks, a CNP 10 µs later (acted), a mark 20 µs after the CNP
	// (covered by the rate limit), then 2 marks with no CNP for 2 ms.
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 1, 26, 3), 0)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 2, 26, 3), 1)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 3, 26, 3), 2)
	add(roce("10.0.0.2", "10.0.0.1", 0x100, opCNP, 0, 48, 0), 12)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 4, 26, 3), 32)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 5, 26, 3), 500)
	add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 6, 26, 3), 510)
	// a CNP 1.6 ms after them is too late
	add(roce("10.0.0.2", "10.0.0.1", 0x100, opCNP, 0, 48, 0), 2100)
	// C→D: one mark at the end, D answers with an ACK but no CNP: not acted.
	add(roce("10.0.1.1", "10.0.1.2", 0x201, opWriteOnly, 1, 26, 3), 2200)
	add(roce("10.0.1.2", "10.0.1.1", 0x101, bth.Opcode(0x11), 1, 26, 2), 2204)
	// E→F: one mark at the end and nothing back: undecided.
	add(roce("10.0.2.1", "10.0.2.2", 0x202, opWriteOnly, 1, 26, 3), 2300)
	c.Finish()
	got := c.ECN()
	want := []ECNReaction{
		{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), CEMarked: 6, Acted: 4, NotActed: 2},
		{Src: netip.MustParseAddr("10.0.1.1"), Dst: netip.MustParseAddr("10.0.1.2"), CEMarked: 1, NotActed: 1},
		{Src: netip.MustParseAddr("10.0.2.1"), Dst: netip.MustParseAddr("10.0.2.2"), CEMarked: 1, NoReverse: true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d directions, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g := got[i]
		g.FirstNotActed, g.LastNotActed = nil, nil
		if g != want[i] {
			t.Errorf("direction %d: got %+v, want %+v", i, g, want[i])
		}
	}
	if f := got[0].FirstNotActed; f == nil || f.Frame != 6 || got[0].LastNotActed.Frame != 7 {
		t.Errorf("first/last not acted: %+v %+v, want frames 6 and 7", got[0].FirstNotActed, got[0].LastNotActed)
	}
}

// TestPFCStorms replays pause timers: refreshes before expiry extend one
// pause, an XON ends it, a gap splits it; only a pause longer than
// PFCStormDuration is a storm.
func TestPFCStorms(t *testing.T) {
	q := uint16(65535) // 83.9 µs at 400 Gb/s
	tests := []struct {
		name    string
		frames  []float64 // XOFF times in µs; negative: XON at -t
		storms  int
		longest time.Duration
		paused  time.Duration
	}{
		{"one pause", []float64{0}, 0, 0, pauseDuration(q)},
		{"refreshed for 1.5 ms", series(0, 50, 31), 1, 1500*time.Microsecond + pauseDuration(q), 1500*time.Microsecond + pauseDuration(q)},
		{"refreshed, XON at 1.2 ms", append(series(0, 50, 24), -1200), 1, 1200 * time.Microsecond, 1200 * time.Microsecond},
		{"refreshed, XON at 0.9 ms", append(series(0, 50, 18), -900), 0, 0, 900 * time.Microsecond},
		{"gaps of 100 µs", series(0, 100, 20), 0, 0, 20 * pauseDuration(q)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			c := NewCollector(flows.NewTable(flows.Config{}), Config{})
			for _, us := range tc.frames {
				if us < 0 {
					c.Add(pfcFrame(3, 0), s.ref(-us))
				} else {
					c.Add(pfcFrame(3, q), s.ref(us))
				}
			}
			// a last frame long after, so the capture covers every pause
			c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 1, 26, 2), s.ref(10000))
			c.Finish()
			prio, pause := c.PFC()
			p := prio[3]
			if pause != 0 || p.Priority != 3 || p.Frames != uint64(len(tc.frames)) {
				t.Errorf("priority 3: %+v, 802.3x %d", p, pause)
			}
			if p.Storms != tc.storms || p.LongestStorm != tc.longest {
				t.Errorf("storms %d longest %v, want %d and %v", p.Storms, p.LongestStorm, tc.storms, tc.longest)
			}
			if got := c.c.pfc.prio[3].pausedT; got != tc.paused {
				t.Errorf("paused %v, want %v", got, tc.paused)
			}
		})
	}
}

func series(start, step float64, n int) []float64 {
	var out []float64
	for i := range n {
		out = append(out, start+step*float64(i))
	}
	return out
}

// TestTimelineBins: bins start at 100 µs, double when the capture runs
// past 200 of them, and every series (per-flow ones too) stays aligned and
// keeps its sum.
func TestTimelineBins(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	// flow A every 1 ms for 1 s, flow B from 0.5 s to 0.6 s every 100 µs,
	// a CNP and a CE mark now and then
	var bitsA, bitsB float64
	for ms := range 1000 {
		c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, uint32(ms), 26, 2), s.ref(float64(ms)*1000))
		bitsA += 8000
		if ms >= 500 && ms < 600 {
			for k := range 10 {
				c.Add(roce("10.0.1.1", "10.0.1.2", 0x201, opWriteOnly, uint32(ms*10+k), 26, 3), s.ref(float64(ms)*1000+float64(k)*100))
				bitsB += 8000
			}
		}
		if ms%100 == 0 {
			c.Add(roce("10.0.1.2", "10.0.1.1", 0x101, opCNP, 0, 48, 0), s.ref(float64(ms)*1000+1))
		}
	}
	c.Finish()
	tl := c.Timeline()
	idA, idB := 0, 0
	for _, f := range c.Table.Flows() {
		switch f.Key.DestQP {
		case 0x200:
			idA = f.ID
		case 0x201:
			idB = f.ID
		}
	}
	// 1 s in 1 µs bins is 10^6 bins: 13 doublings give 8.192 ms bins,
	// 122 of them for the 999.9 ms the frames span
	if tl.RoCEBits.Bin != 8192*time.Microsecond || len(tl.RoCEBits.Bins) != 122 {
		t.Fatalf("bin %v × %d, want 8.192ms × 122", tl.RoCEBits.Bin, len(tl.RoCEBits.Bins))
	}
	sum := func(b []float64) (s float64) {
		for _, v := range b {
			s += v
		}
		return s
	}
	for name, se := range map[string]Series{"CNPs": tl.CNPs, "CEMarks": tl.CEMarks, "A": tl.FlowBits[idA], "B": tl.FlowBits[idB]} {
		if se.Bin != tl.RoCEBits.Bin || !se.Start.Equal(tl.RoCEBits.Start) || len(se.Bins) != len(tl.RoCEBits.Bins) {
			t.Errorf("%s: %v × %d from %v, not aligned with RoCEBits", name, se.Bin, len(se.Bins), se.Start)
		}
	}
	if got := sum(tl.FlowBits[idA].Bins); got != bitsA {
		t.Errorf("flow A: %v bits, want %v", got, bitsA)
	}
	if got := sum(tl.FlowBits[idB].Bins); got != bitsB {
		t.Errorf("flow B: %v bits, want %v", got, bitsB)
	}
	if got := sum(tl.RoCEBits.Bins); got != bitsA+bitsB+10*8000 {
		t.Errorf("all RoCE: %v bits, want %v", got, bitsA+bitsB+10*8000)
	}
	if sum(tl.CNPs.Bins) != 10 || sum(tl.CEMarks.Bins) != 1000 {
		t.Errorf("CNPs %v, CE marks %v, want 10 and 1000", sum(tl.CNPs.Bins), sum(tl.CEMarks.Bins))
	}
	// flow B lives in bins 61..73 (0.5 s to 0.6 s at 8.192 ms)
	for i, v := range tl.FlowBits[idB].Bins {
		if (v > 0) != (i >= 61 && i <= 73) {
			t.Errorf("flow B bin %d = %v", i, v)
		}
	}
}

// TestConversations: service port (a known one, else the lower) and
// client side, both directions in one conversation, biggest first.
func TestConversations(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	tcp := func(src, dst string, sport, dport uint16, flags uint8, n int) *packet.Packet {
		return &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
			Proto: protoTCP, SrcPort: sport, DstPort: dport, TCPFlags: flags, IPTotalLen: n}
	}
	// the server answers first (capture started mid-session), then a SYN
	c.Add(tcp("10.0.0.2", "10.0.0.1", 22, 50000, tcpACK, 100), s.ref(0))
	c.Add(tcp("10.0.0.1", "10.0.0.2", 50000, 22, tcpACK, 60), s.ref(1))
	// both ports high: the lower one is the service; a SYN names the client
	c.Add(tcp("10.0.1.1", "10.0.1.2", 45000, 40000, tcpSYN, 60), s.ref(2))
	c.Add(tcp("10.0.1.2", "10.0.1.1", 40000, 45000, tcpSYN|tcpACK, 60), s.ref(3))
	c.Add(tcp("10.0.1.1", "10.0.1.2", 45000, 40000, tcpACK, 5000), s.ref(4))
	// an NFS client on a reserved port: the known service port wins
	udp := &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr("10.0.2.1"), Dst: netip.MustParseAddr("10.0.2.2"),
		Proto: protoUDP, SrcPort: 2049, DstPort: 700, IPTotalLen: 160}
	c.Add(udp, s.ref(5))
	c.Finish()
	got := c.Conversations()
	want := []Conversation{
		{Src: netip.MustParseAddr("10.0.1.1"), Dst: netip.MustParseAddr("10.0.1.2"), Proto: protoTCP, ServicePort: 40000, Packets: 3, Bytes: 5120},
		{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), Proto: protoTCP, ServicePort: 22, Packets: 2, Bytes: 160},
		{Src: netip.MustParseAddr("10.0.2.2"), Dst: netip.MustParseAddr("10.0.2.1"), Proto: protoUDP, ServicePort: 2049, Packets: 1, Bytes: 160},
	}
	sameConversations(t, got, want)
}

// TestDSCPClasses: data and CNPs are judged against their own DSCP, QP1
// MADs not at all.
func TestDSCPClasses(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{DataDSCP: 24, CNPDSCP: 46})
	c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 1, 24, 2), s.ref(0))
	c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, 2, 0, 2), s.ref(1))
	c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opCNP, 0, 46, 0), s.ref(2))
	c.Add(roce("10.0.0.1", "10.0.0.2", 0x200, opCNP, 0, 24, 0), s.ref(3))
	c.Add(roce("10.0.0.1", "10.0.0.2", gsiQPN, bth.Opcode(0x64), 1, 0, 0), s.ref(4)) // UD SEND_ONLY to QP1
	c.Finish()
	d := c.DSCP()
	if len(d) != 2 {
		t.Fatalf("%d checks, want 2 (the data flow and the QP1 flow)", len(d))
	}
	got := d[0]
	if got.Data != 2 || got.DataWrong != 1 || got.CNP != 2 || got.CNPWrong != 1 ||
		got.WrongValues[0] != 1 || got.WrongValues[24] != 1 || got.First.Frame != 2 || got.Last.Frame != 4 {
		t.Errorf("flow 1: %+v", got)
	}
	if d[1].Data != 0 || d[1].DataWrong != 0 {
		t.Errorf("QP1 flow: %+v, want no data counted", d[1])
	}
}

// TestTopologyContract pins down what the modules rely on: nil and an
// empty topology know nothing, NodeOf falls back to the address.
func TestTopologyContract(t *testing.T) {
	var nilTopo *topology.Topology
	a := netip.MustParseAddr("10.0.0.1")
	if id := nilTopo.Lookup(a); id.Known || id.Role != topology.RoleUnknown {
		t.Errorf("nil topology: %+v", id)
	}
	if n := nilTopo.NodeOf(a); n != "10.0.0.1" {
		t.Errorf("nil topology: NodeOf = %q", n)
	}
}

// TestDeterministic: the same capture gives byte-identical findings and
// timeline, run after run (no map order leaks into the output).
func TestDeterministic(t *testing.T) {
	for _, name := range []string{"report_storage", "report_ecn", "report_cross_rail", "congestion"} {
		var first []byte
		for range 5 {
			in := loadGen(t, name, pod)
			b, err := json.Marshal(struct {
				F []Finding
				T *Timeline
			}{runAll(in), in.Collect.Timeline()})
			if err != nil {
				t.Fatal(err)
			}
			if first == nil {
				first = b
			} else if !bytes.Equal(first, b) {
				t.Fatalf("%s: two runs differ", name)
			}
		}
	}
}

// BenchmarkCollectorAdd measures the collector and flow table per frame.
func BenchmarkCollectorAdd(b *testing.B) {
	pkts, refs := decodeAll(b, genCapture(b, "report_clean_rails"))
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	var n int64
	for i := range pkts {
		n += int64(pkts[i].CapLen)
	}
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for i := range pkts {
			c.Add(&pkts[i], refs[i])
		}
	}
}

// TestConfigDefaults: Config{} is the defaults; an explicit DSCP or PCP 0
// stays 0; a window of zero or less is the default (none is empty).
func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   Config
		want Config
	}{
		{"zero", Config{}, Config{DataDSCP: 26, CNPDSCP: 48, DataPCP: 3, CNPPCP: 6, ECNWindow: time.Millisecond}},
		{"explicit DSCP 0", Config{ExplicitDSCP: true, ECNWindow: time.Microsecond}, Config{ExplicitDSCP: true, DataPCP: 3, CNPPCP: 6, ECNWindow: time.Microsecond}},
		{"explicit PCP 0", Config{ExplicitPCP: true}, Config{DataDSCP: 26, CNPDSCP: 48, ExplicitPCP: true, ECNWindow: time.Millisecond}},
		{"PCPs", Config{DataPCP: 4, CNPPCP: 7}, Config{DataDSCP: 26, CNPDSCP: 48, DataPCP: 4, CNPPCP: 7, ECNWindow: time.Millisecond}},
		{"negative window", Config{DataDSCP: 24, CNPDSCP: 46, ECNWindow: -time.Millisecond}, Config{DataDSCP: 24, CNPDSCP: 46, DataPCP: 3, CNPPCP: 6, ECNWindow: time.Millisecond}},
	}
	for _, tc := range tests {
		if got := tc.in.WithDefaults(); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestConversationsCutBeforePorts: a TCP or UDP frame cut before its
// ports is in no conversation (not "tcp/0" or "udp/0": a UDP one may be
// RoCE, a TCP one SSH or NVMe/TCP); headers_cut counts it. One cut inside
// a mirror's ERSPAN (GRE) header is in none either.
func TestConversationsCutBeforePorts(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	cut := func(src, dst string, proto uint8, n int) *packet.Packet {
		return &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
			Proto: proto, IPTotalLen: n, Truncated: true, CapLen: 64, OrigLen: n + 14}
	}
	c.Add(cut("10.0.0.1", "10.0.0.2", protoUDP, 4144), s.ref(0))      // a RoCE WRITE, cut
	c.Add(cut("10.0.0.1", "10.100.255.20", protoTCP, 1500), s.ref(1)) // NVMe/TCP, cut
	c.Add(cut("192.0.2.10", "192.0.2.20", 47, 200), s.ref(2))         // ERSPAN, cut in its GRE header
	// whole enough: the ports were captured
	ok := cut("10.0.0.1", "10.0.0.2", protoTCP, 1500)
	ok.SrcPort, ok.DstPort = 50000, 22
	c.Add(ok, s.ref(3))
	c.Finish()
	got := c.Conversations()
	if len(got) != 1 || got[0].ServicePort != 22 || got[0].Packets != 1 {
		for _, g := range got {
			t.Logf("%+v", *g)
		}
		t.Fatalf("got %d conversations, want the tcp/22 one only", len(got))
	}
	if n := c.c.health.headersCut; n != 3 {
		t.Errorf("headers cut: %d, want 3", n)
	}
}

// TestConversationsFragments: NFS over UDP sends a READ reply bigger than
// the MTU as IP fragments; the later ones carry no ports and belong to the
// conversation of the datagram's first fragment (not to a "udp/0" one,
// which the storage-role and non-RDMA findings would report again). A
// later fragment whose first was not seen is in none.
func TestConversationsFragments(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	udp := func(src, dst string, sport, dport uint16, frag bool, n int) *packet.Packet {
		p := &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
			Proto: protoUDP, SrcPort: sport, DstPort: dport, IPTotalLen: n, Fragment: frag}
		if frag {
			p.Note = packet.ReasonFragment
		}
		return p
	}
	i := 0
	add := func(p *packet.Packet) { c.Add(p, s.ref(float64(i))); i++ }
	add(udp("10.100.255.22", "10.0.0.1", 0, 0, true, 1068)) // a later fragment, its first not captured
	for range 2 {
		add(udp("10.0.0.1", "10.100.255.22", 800, 2049, false, 148)) // READ call
		add(udp("10.100.255.22", "10.0.0.1", 2049, 800, true, 1500)) // reply: first fragment
		add(udp("10.100.255.22", "10.0.0.1", 0, 0, true, 1500))      // middle
		add(udp("10.100.255.22", "10.0.0.1", 0, 0, true, 1068))      // last
	}
	c.Finish()
	got := c.Conversations()
	if len(got) != 1 {
		for _, g := range got {
			t.Logf("%+v", *g)
		}
		t.Fatalf("got %d conversations, want the NFS one only", len(got))
	}
	if g := got[0]; g.ServicePort != portNFS || g.Packets != 8 || g.Bytes != 2*(148+1500+1500+1068) || g.Last.Frame != i {
		t.Errorf("NFS: %+v, want 8 packets, %d bytes, last frame %d", *g, 2*(148+1500+1500+1068), i)
	}
}

// TestConversationsSYNPort: NCCL's bootstrap listens on an ephemeral
// port, and its peers connect from ephemeral ports that may be lower: the
// SYN names the service, so three connections to one listener are one
// conversation on its port (not three on the clients' ports). A
// connection seen without its SYN keeps the lower-port rule.
func TestConversationsSYNPort(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	tcp := func(src, dst string, sport, dport uint16, flags uint8, n int) *packet.Packet {
		return &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst),
			Proto: protoTCP, SrcPort: sport, DstPort: dport, TCPFlags: flags, IPTotalLen: n}
	}
	us := 0.0
	add := func(p *packet.Packet) { c.Add(p, s.ref(us)); us++ }
	for _, cp := range []uint16{33001, 33002, 33003} {
		add(tcp("10.0.0.1", "10.0.0.2", cp, 45000, tcpSYN, 60))
		add(tcp("10.0.0.2", "10.0.0.1", 45000, cp, tcpSYN|tcpACK, 60))
		add(tcp("10.0.0.1", "10.0.0.2", cp, 45000, tcpACK, 100))
		add(tcp("10.0.0.2", "10.0.0.1", 45000, cp, tcpACK, 52))
	}
	// mid-session, no SYN: the lower port
	add(tcp("10.0.0.2", "10.0.0.1", 46000, 34000, tcpACK, 500))
	c.Finish()
	got := c.Conversations()
	want := []Conversation{
		{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), Proto: protoTCP, ServicePort: 45000, Packets: 12, Bytes: 3 * 272},
		{Src: netip.MustParseAddr("10.0.0.2"), Dst: netip.MustParseAddr("10.0.0.1"), Proto: protoTCP, ServicePort: 34000, Packets: 1, Bytes: 500},
	}
	sameConversations(t, got, want)
}

// TestConversationsMirrorCopies: a mirror that delivers each TCP or UDP
// packet twice (the copy a few microseconds later, its TTL lowered) counts
// each once, as the RoCE flows do; a packet that only looks the same
// (later than the mirror window, or a third time, or with nothing that
// tells it: IPv4 ID and checksum 0) is counted.
func TestConversationsMirrorCopies(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{})
	ssh := func(toServer bool, id uint32, sum uint16, n int) *packet.Packet {
		p := &packet.Packet{Kind: packet.KindOther, IPVersion: 4, Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"),
			Proto: protoTCP, SrcPort: 51022, DstPort: 22, TCPFlags: tcpACK, IPTotalLen: n, IPID: id, L4Checksum: sum, TTL: 64}
		if !toServer {
			p.Src, p.Dst, p.SrcPort, p.DstPort = p.Dst, p.Src, p.DstPort, p.SrcPort
		}
		return p
	}
	add := func(p *packet.Packet, us float64) { c.Add(p, s.ref(us)) }
	us := 0.0
	for i := range 10 {
		p := ssh(i%2 == 0, uint32(100+i), uint16(0xbeef+i), 100+i)
		add(p, us)
		cp := *p
		cp.TTL--
		add(&cp, us+2) // the mirror's copy
		us += 10
	}
	// Busy: three packets, then the copies of all three.
	for i := range 3 {
		add(ssh(true, uint32(200+i), uint16(0x1000+i), 60), us+float64(i))
	}
	for i := range 3 {
		add(ssh(true, uint32(200+i), uint16(0x1000+i), 60), us+5+float64(i))
	}
	us += 100
	// Not copies: the same packet after the mirror window, a third
	// identical one, and packets that carry neither an ID nor a checksum.
	add(ssh(true, 300, 0x2000, 70), us)
	add(ssh(true, 300, 0x2000, 70), us+1000)
	add(ssh(true, 300, 0x2000, 70), us+1001) // the copy of the one before
	add(ssh(true, 300, 0x2000, 70), us+1002) // a third: counted
	add(ssh(true, 0, 0, 80), us+2000)
	add(ssh(true, 0, 0, 80), us+2001)
	c.Finish()
	got := c.Conversations()
	if len(got) != 1 {
		t.Fatalf("%d conversations, want 1", len(got))
	}
	g := got[0]
	wantPackets, wantCopies := uint64(10+3+3+2), uint64(10+3+1)
	wantBytes := uint64(0)
	for i := range 10 {
		wantBytes += uint64(100 + i)
	}
	wantBytes += 3*60 + 3*70 + 2*80
	if g.Packets != wantPackets || g.Copies != wantCopies || g.Bytes != wantBytes {
		t.Errorf("packets %d, copies %d, bytes %d; want %d, %d, %d", g.Packets, g.Copies, g.Bytes, wantPackets, wantCopies, wantBytes)
	}
}

// sameConversations fails unless got, frames aside, is want, in order.
func sameConversations(t *testing.T, got []*Conversation, want []Conversation) {
	t.Helper()
	if len(got) != len(want) {
		for _, g := range got {
			t.Logf("%+v", *g)
		}
		t.Fatalf("got %d conversations, want %d", len(got), len(want))
	}
	for i := range want {
		g := *got[i]
		g.First, g.Last = flows.FrameRef{}, flows.FrameRef{}
		if g != want[i] {
			t.Errorf("conversation %d: got %+v, want %+v", i, g, want[i])
		}
	}
}

// TestECNReactionEarlyCNP: a connection split by direction, the
// responses' file's clock 100 µs behind the requests', so that its ACKs
// come about 92 µs before the WRITEs they acknowledge: a CNP sorted that
// far before the CE mark it answers (sent 5 µs after it) acts on it, as
// in the wire's order. A CNP further before a mark than that lead and the
// rate limit does not.
func TestECNReactionEarlyCNP(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cnpAt float64 // the CNP's capture time, in µs; the mark is at 600
		acted uint64
	}{
		{"lead", 505, 1},
		{"before the lead", 450, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			c := NewCollector(flows.NewTable(flows.Config{}), Config{ECNWindow: time.Millisecond})
			type ev struct {
				at float64
				p  *packet.Packet
			}
			var evs []ev
			for i := range 160 { // 1.6 ms: the mark's window passes
				at := float64(i * 10)
				ecn := uint8(2)
				if i == 60 {
					ecn = 3
				}
				ack := roce("10.0.0.2", "10.0.0.1", 0x100, bth.Opcode(0x11), uint32(i), 26, 2)
				ack.BTH.Ext, ack.BTH.AETH.Syndrome = ack.BTH.Opcode.Headers(), 0x1f
				w := roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, uint32(i), 26, ecn)
				w.BTH.Ext = w.BTH.Opcode.Headers()
				evs = append(evs, ev{at, w}, ev{at + 8 - 100, ack})
			}
			evs = append(evs, ev{tc.cnpAt, roce("10.0.0.2", "10.0.0.1", 0x100, opCNP, 0, 48, 0)})
			slices.SortStableFunc(evs, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
			for _, e := range evs {
				c.Add(e.p, s.ref(e.at+100))
			}
			c.Finish()
			got := c.ECN()
			if len(got) != 1 || got[0].CEMarked != 1 || got[0].Acted != tc.acted || got[0].NotActed != 1-tc.acted {
				t.Errorf("got %+v, want 1 CE mark, %d acted on", got, tc.acted)
			}
		})
	}
}
