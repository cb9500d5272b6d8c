package reports

import (
	"maps"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/internal/testcaps"
)

// refObs is one flow's DSCP and ECN-capability counts, counted packet by
// packet: what the Collector derives from the flow counters and its rare
// observations.
type refObs struct {
	data, cnp, dataWrong, cnpWrong uint64
	ect, notECT                    uint64
	wrong                          map[uint8]uint64
	first, last, firstNotECT       flows.FrameRef

	// Tagged packets off their class's priority, by class (data, CNP).
	pcpWrong          [2]uint64
	pcpValues         [2][8]uint64
	pcpFirst, pcpLast [2]flows.FrameRef
}

// wrongPCP counts a tagged packet of class on priority p.PCP.
func (o *refObs) wrongPCP(class int, p *packet.Packet, at flows.FrameRef) {
	if o.pcpWrong[class] == 0 {
		o.pcpFirst[class] = at
	}
	o.pcpLast[class] = at
	o.pcpWrong[class]++
	o.pcpValues[class][p.PCP]++
}

// refCollector counts every packet into refObs by flow, on a flow table of
// its own.
type refCollector struct {
	cfg   Config
	table *flows.Table
	obs   []refObs // by flow ID - 1
}

func (r *refCollector) add(p *packet.Packet, at flows.FrameRef) {
	fa := flows.At(at)
	f, _, _, copied := r.table.AddFlowDelta(p, &fa)
	if f == nil {
		return
	}
	for len(r.obs) < f.ID {
		r.obs = append(r.obs, refObs{wrong: map[uint8]uint64{}})
	}
	if copied {
		return // a mirror's copy is no packet of the flow
	}
	for len(r.obs) < f.ID {
		r.obs = append(r.obs, refObs{wrong: map[uint8]uint64{}})
	}
	o := &r.obs[f.ID-1]
	op := p.BTH.Opcode
	wrong := false
	switch {
	case op.IsCNP():
		o.cnp++
		if p.DSCP != r.cfg.CNPDSCP {
			o.cnpWrong++
			wrong = true
		}
		if p.HasVLAN && p.PCP != r.cfg.CNPPCP {
			o.wrongPCP(dscpCNP, p, at)
		}
	case p.BTH.DestQP == 1: // GSI: management datagrams
		return
	default:
		o.data++
		if p.DSCP != r.cfg.DataDSCP {
			o.dataWrong++
			wrong = true
		}
		if p.HasVLAN && p.PCP != r.cfg.DataPCP {
			o.wrongPCP(dscpData, p, at)
		}
		if op.IsRequest() || op.IsReadResponse() {
			if p.ECN&3 == 0 {
				if o.notECT == 0 {
					o.firstNotECT = at
				}
				o.notECT++
			} else {
				o.ect++
			}
		}
	}
	if wrong {
		if o.dataWrong+o.cnpWrong == 1 {
			o.first = at
		}
		o.last = at
		o.wrong[p.DSCP]++
	}
}

// checkAgainstRef compares c's derived counts with ref's; it returns
// whether any flow had wrong-DSCP, not-ECT and wrong-PCP packets.
func checkAgainstRef(t *testing.T, name string, c *Collector, ref *refCollector) (wrong, notECT, pcp bool) {
	t.Helper()
	checks := c.DSCP()
	if len(checks) != len(ref.obs) {
		t.Fatalf("%s: %d checks, %d flows counted", name, len(checks), len(ref.obs))
	}
	for i, d := range checks {
		o := &ref.obs[i]
		if d.FlowID != i+1 || d.Data != o.data || d.CNP != o.cnp || d.DataWrong != o.dataWrong || d.CNPWrong != o.cnpWrong {
			t.Errorf("%s flow %d: check %+v, counted %+v", name, i+1, d, *o)
			continue
		}
		if (d.First != nil) != (len(o.wrong) > 0) || d.First != nil && (*d.First != o.first || *d.Last != o.last || !maps.Equal(d.WrongValues, o.wrong)) {
			t.Errorf("%s flow %d: wrong packets %v %v %v, counted %v %v %v", name, i+1, d.WrongValues, d.First, d.Last, o.wrong, o.first, o.last)
		}
		r := c.c.rareOf(i + 1)
		n := countsOf(c.Table.Flows()[i], r)
		if n.ectData != o.ect || n.notECTData != o.notECT || r.firstNotECTOf() != o.firstNotECT {
			t.Errorf("%s flow %d: ECN-capable %d, not %d (first %v); counted %d, %d (%v)", name, i+1,
				n.ectData, n.notECTData, r.firstNotECTOf(), o.ect, o.notECT, o.firstNotECT)
		}
		for class := range 2 {
			var got wrongPCP
			if w := r.wrongPCPOf(class); w != nil {
				got = *w
			}
			want := wrongPCP{packets: o.pcpWrong[class], byValue: o.pcpValues[class], first: o.pcpFirst[class], last: o.pcpLast[class]}
			if got != want {
				t.Errorf("%s flow %d class %d: wrong priority %+v, counted %+v", name, i+1, class, got, want)
			}
			pcp = pcp || want.packets > 0
		}
		wrong = wrong || o.dataWrong+o.cnpWrong > 0
		notECT = notECT || o.notECT > 0
	}
	return wrong, notECT, pcp
}

// TestDerivedCountsMatchPerPacket: the DSCP and ECN-capability counts the
// Collector derives from the flow counters equal those counted packet by
// packet, for every generated and real capture, with the default DSCPs and
// with DSCPs no packet carries (every packet rare).
func TestDerivedCountsMatchPerPacket(t *testing.T) {
	paths := testcaps.All(t, "../testdata/pcaps")
	var wrong, notECT, pcp, gsi bool
	for _, path := range paths {
		pkts, refs := decodeAll(t, path)
		for _, cfg := range []Config{{}, {DataDSCP: 7, CNPDSCP: 7, DataPCP: 5, CNPPCP: 5}} {
			cfg = cfg.WithDefaults()
			c := NewCollector(flows.NewTable(flows.Config{}), cfg)
			ref := &refCollector{cfg: cfg, table: flows.NewTable(flows.Config{})}
			for i := range pkts {
				c.Add(&pkts[i], refs[i])
				ref.add(&pkts[i], refs[i])
			}
			w, n, pc := checkAgainstRef(t, filepath.Base(path), c, ref)
			wrong, notECT, pcp = wrong || w, notECT || n, pcp || pc
			for _, f := range c.Table.Flows() {
				gsi = gsi || f.Key.DestQP == gsiQPN
			}
		}
	}
	if !wrong || !notECT || !pcp || !gsi {
		t.Errorf("the captures lack a case: wrong DSCP %v, not ECN-capable %v, wrong PCP %v, QP1 %v", wrong, notECT, pcp, gsi)
	}
}

// TestDerivedCountsEveryOpcode: the derivation holds for every opcode,
// known or not, ECN-capable or not, on QP1 or not.
func TestDerivedCountsEveryOpcode(t *testing.T) {
	cfg := Config{}.WithDefaults()
	c := NewCollector(flows.NewTable(flows.Config{}), cfg)
	ref := &refCollector{cfg: cfg, table: flows.NewTable(flows.Config{})}
	src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	frame := 0
	for _, qp := range []uint32{1, 0x100} {
		for op := range 256 {
			for k := range 6 {
				frame++
				p := packet.Packet{
					Kind: packet.KindRoCE, HasBTH: true, RoCEVersion: 2, IPVersion: 4,
					Src: src, Dst: dst, SrcPort: 49152, IPTotalLen: 100,
					DSCP: []uint8{cfg.DataDSCP, cfg.CNPDSCP, 0}[k%3], ECN: uint8(k % 4),
					HasVLAN: k%5 != 4, PCP: []uint8{cfg.DataPCP, cfg.CNPPCP, 0, 7, 1}[k%5],
					BTH: bth.BTH{Opcode: bth.Opcode(op), DestQP: qp + uint32(op), PSN: uint32(k)},
				}
				if qp == 1 {
					p.BTH.DestQP = 1
				}
				at := flows.FrameRef{Frame: frame, Time: time.Unix(1700000000, int64(frame)*1000), Seq: uint64(frame)}
				c.Add(&p, at)
				ref.add(&p, at)
			}
		}
	}
	checkAgainstRef(t, "every opcode", c, ref)
}
