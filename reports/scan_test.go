package reports

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/flows"
)

// genInputs loads every generated capture (with the pod topology for the
// report_ ones, which are made for it).
func genInputs(t *testing.T) []*Input {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(genDir, "*.pcap*"))
	if len(paths) < 10 {
		t.Fatalf("found %d generated captures", len(paths))
	}
	var out []*Input
	for _, p := range paths {
		topo := ""
		if strings.HasPrefix(filepath.Base(p), "report_") || strings.HasPrefix(filepath.Base(p), "incident") {
			topo = filepath.Join(topoDir, "report_pod.yaml")
		}
		out = append(out, loadInput(t, p, topo))
	}
	return out
}

// randFlows are n flows between a few hosts with counters set at random,
// IDs in order or shuffled.
func randFlows(n int, seed uint64, shuffleIDs bool) []*flows.Flow {
	rng := rand.New(rand.NewPCG(seed, 2))
	some := func() uint64 {
		if rng.IntN(8) == 0 {
			return uint64(rng.IntN(5) + 1)
		}
		return 0
	}
	fs := make([]*flows.Flow, n)
	for i := range fs {
		f := &flows.Flow{ID: i + 1, Packets: rng.Uint64() >> 40, WireBytes: rng.Uint64() >> 20}
		f.Key = flows.Key{Src: netip.AddrFrom4([4]byte{10, 0, byte(rng.IntN(3)), byte(rng.IntN(20))}),
			Dst: netip.AddrFrom4([4]byte{10, 0, byte(rng.IntN(3)), byte(rng.IntN(20))}), DestQP: uint32(rng.IntN(40))}
		if rng.IntN(4) == 0 { // an IPv6 host, or the IPv4-mapped form of an IPv4 one: a different address
			f.Key.Src = netip.AddrFrom16(f.Key.Src.As16())
		}
		if i > 0 && rng.IntN(2) == 0 { // another QP between the same hosts
			f.Key.Src, f.Key.Dst = fs[i-1].Key.Src, fs[i-1].Key.Dst
		}
		if rng.IntN(2) == 0 {
			f.HasSrcQP, f.SrcQP = true, uint32(rng.IntN(40))
		}
		f.CNPs, f.ECNCE, f.FECN, f.BECN, f.ICRCBad = some(), some(), some(), some(), some()
		f.NAKs[rng.IntN(len(f.NAKs))] = some()
		f.NAKOther, f.RNRNAKs = some(), some()
		r := &f.Retx
		r.GBNEpisodes, r.Timeouts, r.RNRRetries, r.ReissuedReads, r.MirrorLostPSNs, r.FabricLostPSNs = some(), some(), some(), some(), some(), some()
		if rng.IntN(10) == 0 {
			f.CM = &flows.CMInfo{}
		}
		fs[i] = f
	}
	if shuffleIDs {
		rng.Shuffle(n, func(i, j int) { fs[i].ID, fs[j].ID = fs[j].ID, fs[i].ID })
		fs[n/2].ID = fs[n/3].ID // and one ID twice
	}
	return fs
}

// TestFlowScan: the scan's totals and lists are those of a walk over every
// flow, and flow(id) finds what a map from ID filled in order does.
func TestFlowScan(t *testing.T) {
	var inputs [][]*flows.Flow
	for _, in := range genInputs(t) {
		inputs = append(inputs, in.Flows)
	}
	inputs = append(inputs, randFlows(3000, 1, false), randFlows(3000, 2, true), nil)
	for k, fs := range inputs {
		s := newFlowScan(fs)
		var want flowScan
		byID := map[int]*flows.Flow{}
		hosts := map[netip.Addr]bool{}
		for _, f := range fs {
			want.packets += f.Packets
			want.bytes += f.WireBytes
			want.cnps += f.CNPs
			want.ce += f.ECNCE
			want.fecn += f.FECN
			want.becn += f.BECN
			r := &f.Retx
			if f.NAKTotal() > 0 || f.RNRNAKs > 0 || r.GBNEpisodes > 0 || r.Timeouts > 0 || r.RNRRetries > 0 || r.ReissuedReads > 0 ||
				r.MirrorLostPSNs > 0 || r.FabricLostPSNs > 0 {
				want.retx = append(want.retx, f)
			}
			if f.CNPs > 0 || f.ECNCE > 0 || f.FECN > 0 {
				want.cong = append(want.cong, f)
			}
			if f.ICRCBad > 0 {
				want.icrc = append(want.icrc, f)
			}
			if f.CM != nil {
				want.cm = append(want.cm, f)
			}
			byID[f.ID] = f
			hosts[f.Key.Src], hosts[f.Key.Dst] = true, true
		}
		if s.packets != want.packets || s.bytes != want.bytes || s.cnps != want.cnps || s.ce != want.ce || s.fecn != want.fecn || s.becn != want.becn {
			t.Errorf("input %d: totals %+v, want %+v", k, s, want)
		}
		for name, l := range map[string][2][]*flows.Flow{"retx": {s.retx, want.retx}, "cong": {s.cong, want.cong}, "icrc": {s.icrc, want.icrc}, "cm": {s.cm, want.cm}} {
			if !slices.Equal(l[0], l[1]) {
				t.Errorf("input %d: %s lists %d flows, want %d", k, name, len(l[0]), len(l[1]))
			}
		}
		if len(s.addrs) != len(hosts) || len(s.hosts) != len(hosts) {
			t.Errorf("input %d: %d hosts, want %d", k, len(s.addrs), len(hosts))
		}
		for i, f := range fs {
			b := s.brief[i]
			srcQP := uint32(0)
			if f.HasSrcQP {
				srcQP = f.SrcQP
			}
			if s.addrs[b.src] != f.Key.Src || s.addrs[b.dst] != f.Key.Dst || b.destQP != f.Key.DestQP || b.srcQP != srcQP || b.bytes != f.WireBytes {
				t.Fatalf("input %d: flow %d brief %+v", k, i, b)
			}
		}
		for id := -1; id <= len(fs)+2; id++ {
			if got := s.flow(id); got != byID[id] {
				t.Errorf("input %d: flow(%d) = %p, want %p", k, id, got, byID[id])
			}
		}
	}
}

// oldFanOutCounts and oldSummary are FanOut's per-HCA counts and the
// summary's counts as they were made, with maps over every flow.
func oldFanOutCounts(fs []*flows.Flow) map[netip.Addr][3]uint64 {
	type hca struct {
		qps   map[uint32]bool
		peers map[netip.Addr]bool
		bytes uint64
	}
	hcas := map[netip.Addr]*hca{}
	get := func(a netip.Addr) *hca {
		h := hcas[a]
		if h == nil {
			h = &hca{qps: map[uint32]bool{}, peers: map[netip.Addr]bool{}}
			hcas[a] = h
		}
		return h
	}
	for _, f := range fs {
		s, d := get(f.Key.Src), get(f.Key.Dst)
		s.peers[f.Key.Dst], d.peers[f.Key.Src] = true, true
		s.bytes += f.WireBytes
		d.bytes += f.WireBytes
		if f.Key.DestQP > gsiQPN {
			d.qps[f.Key.DestQP] = true
		}
		if f.HasSrcQP && f.SrcQP > gsiQPN {
			s.qps[f.SrcQP] = true
		}
	}
	out := map[netip.Addr][3]uint64{}
	for a, h := range hcas {
		if len(h.qps) > 0 {
			out[a] = [3]uint64{uint64(len(h.qps)), uint64(len(h.peers)), h.bytes}
		}
	}
	return out
}

func oldSummary(fs []*flows.Flow) (qps, hosts int) {
	type qp struct {
		dst string
		qpn uint32
	}
	q := map[qp]bool{}
	h := map[string]bool{}
	for _, f := range fs {
		q[qp{f.Key.Dst.String(), f.Key.DestQP}] = true
		h[f.Key.Src.String()], h[f.Key.Dst.String()] = true, true
	}
	return len(q), len(h)
}

// TestCountsFromScan: FanOut's per-HCA counts and the summary's QP and
// host counts, made by sorting packed numbers, are those of the maps they
// were made with.
func TestCountsFromScan(t *testing.T) {
	inputs := [][]*flows.Flow{randFlows(5000, 3, false), randFlows(5000, 4, true)}
	for _, in := range genInputs(t) {
		inputs = append(inputs, in.Flows)
	}
	for k, fs := range inputs {
		got := map[netip.Addr][3]uint64{}
		for _, h := range fanOutHCAs(newFlowScan(fs)) {
			got[h.ip] = [3]uint64{uint64(h.qps), uint64(h.peers), h.bytes}
		}
		if want := oldFanOutCounts(fs); !reflect.DeepEqual(got, want) {
			t.Errorf("input %d: per-HCA counts differ (%d HCAs, want %d)", k, len(got), len(want))
		}
		in := &Input{Flows: fs}
		sum := summarize(in, nil)
		if q, h := oldSummary(fs); sum.QPs != q || sum.Hosts != h {
			t.Errorf("input %d: %d QPs %d hosts, want %d and %d", k, sum.QPs, sum.Hosts, q, h)
		}
	}
}

// TestDetailLines: detailLines makes only the lines capped keeps, and
// keeps what capped keeps.
func TestDetailLines(t *testing.T) {
	for n := range 25 {
		var all []string
		var d detailLines
		made := 0
		for i := range n {
			line := fmt.Sprintf("line %d", i)
			all = append(all, line)
			d.add(func() string { made++; return line })
		}
		if got, want := d.capped(), capped(all); !reflect.DeepEqual(got, want) {
			t.Errorf("%d lines: %q, want %q", n, got, want)
		}
		if made != min(n, maxDetails) {
			t.Errorf("%d lines: made %d", n, made)
		}
	}
}

// TestRetxRowsKeepsFirst: a retransmission finding keeps the lines a sort
// of every row by weight (then flow ID) puts first, and counts the rest.
func TestRetxRowsKeepsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	for _, n := range []int{0, 1, 9, 10, 11, 50, 1000} {
		g := retxGroup{in: &Input{}}
		type row struct {
			w  uint64
			id int
		}
		var all []row
		ids := rng.Perm(n)
		for i := range n {
			f := &flows.Flow{ID: ids[i] + 1}
			w := uint64(rng.IntN(5))
			all = append(all, row{w, f.ID})
			g.row(w, f, func() string { return fmt.Sprintf("w%d", w) })
		}
		slices.SortFunc(all, func(a, b row) int {
			if c := cmp.Compare(b.w, a.w); c != 0 {
				return c
			}
			return cmp.Compare(a.id, b.id)
		})
		var want []string
		for i, r := range all {
			if i == 10 {
				want = append(want, fmt.Sprintf("and %d more", n-10))
				break
			}
			want = append(want, retxFlowLabel(&flows.Flow{ID: r.id})+": "+fmt.Sprintf("w%d", r.w))
		}
		var fd Finding
		g.fill(&fd)
		if !reflect.DeepEqual(fd.Evidence.Details, want) {
			t.Errorf("%d rows:\n got %q\nwant %q", n, fd.Evidence.Details, want)
		}
	}
}

// TestDSCPChecks: dscpMismatch reads the collector's per-flow observations
// as Collector.DSCP lists them, making a check only for the flows with
// wrong packets: the same checks, in the same order.
func TestDSCPChecks(t *testing.T) {
	for _, in := range genInputs(t) {
		all := in.Collect.DSCP()
		obs := in.Collect.Table.Flows()
		if len(all) != len(obs) {
			t.Fatalf("%s: %d checks for %d flows observed", in.Capture.Files[0], len(all), len(obs))
		}
		for i, f := range obs {
			if got := in.Collect.c.check(i+1, f); !reflect.DeepEqual(got, all[i]) {
				t.Errorf("%s: flow %d: %+v, want %+v", in.Capture.Files[0], i+1, got, all[i])
			}
			o := countsOf(f, in.Collect.c.rareOf(i+1))
			if o.dataWrong != all[i].DataWrong || o.data != all[i].Data || o.cnpWrong != all[i].CNPWrong || o.cnp != all[i].CNP {
				t.Errorf("%s: flow %d: counts differ from its check", in.Capture.Files[0], i+1)
			}
		}
	}
}
