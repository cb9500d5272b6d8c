package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// TestRandomScenariosMatchTruth is a randomized property test: it builds
// random but valid generator scenarios (RC, UC, UD, XRC and RD flows of
// WRITE, SEND, READ and atomic messages at random sizes, MTUs and start
// PSNs, near the 2^24 wrap too; fabric, timeout and mirror drops, RNR and
// fatal NAKs, CE marks with CNPs, FECN/BECN, DSCP changes, mirror
// duplicates; VLAN, QinQ, ERSPAN I/II/III, GRE and VXLAN encapsulations,
// link types, capture formats and snap lengths), generates each capture
// with package gen, and checks what rocedump reports against the
// generator's truth:
//
//   - through a flows.Table fed frame by frame (as flows/truth_test.go
//     does), for every counter of every flow direction and for the
//     retransmission analysis (RetxStats) of reliable requesters;
//   - through `rocedump flows --format json` with --workers 1 and 2, whose
//     outputs must be byte-identical and must say what the table says;
//     `rocedump report --format json` must not change with --workers 2
//     either.
//
// Each case has its own seed (base seed + case number), so a failure names
// the seed that replays it and prints the scenario YAML.
//
//	go test ./cli -run TestRandomScenariosMatchTruth                      # 200 cases
//	ROCEDUMP_RAND_N=5000 go test ./cli -run TestRandomScenariosMatchTruth  # more
//	ROCEDUMP_RAND_SEED=7 ROCEDUMP_RAND_N=1000 go test ./cli -run TestRandomScenariosMatchTruth
//	ROCEDUMP_RAND_CASE=1234 go test ./cli -run TestRandomScenariosMatchTruth -v  # one case, its YAML
//	ROCEDUMP_RAND_ALL=1 ...   # do not skip the cases of known rocedump discrepancies
//	ROCEDUMP_RAND_CLI=0 ...   # table checks only (faster)
//	ROCEDUMP_RAND_MIN=1234 ... -v     # shrink case 1234 while its first discrepancy remains
//	                                  # (ROCEDUMP_RAND_METRIC="requester: packets" picks another)
//	ROCEDUMP_RAND_YAML=x.yaml ... -v  # check one scenario file instead
//
// The default run skips the cases of the discrepancies knownIssue lists
// (each a TODO, logged with its count); ROCEDUMP_RAND_ALL=1 runs them.
//
// With -count=N every repetition uses other seeds (the base seed moves on
// by N cases each time).
func TestRandomScenariosMatchTruth(t *testing.T) {
	n := randEnvInt("ROCEDUMP_RAND_N", 200)
	base := uint64(randEnvInt("ROCEDUMP_RAND_SEED", 20261130))
	base += randRepeat * uint64(n)
	randRepeat++
	cli := randEnvInt("ROCEDUMP_RAND_CLI", 1) != 0
	all := randEnvInt("ROCEDUMP_RAND_ALL", 0) != 0
	cases := make([]uint64, 0, n)
	if c := os.Getenv("ROCEDUMP_RAND_CASE"); c != "" {
		v, err := strconv.ParseUint(c, 0, 64)
		if err != nil {
			t.Fatalf("ROCEDUMP_RAND_CASE=%q: %v", c, err)
		}
		cases = append(cases, v)
		all = true
	} else {
		for i := range n {
			cases = append(cases, base+uint64(i))
		}
	}
	dir := t.TempDir()
	if path := os.Getenv("ROCEDUMP_RAND_YAML"); path != "" {
		y, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		errs := randCheckYAML(t, dir, "yaml", y, cli)
		if len(errs) > 0 {
			t.Errorf("%s:\n  %s", path, strings.Join(errs, "\n  "))
		}
		return
	}
	if c := os.Getenv("ROCEDUMP_RAND_MIN"); c != "" {
		v, err := strconv.ParseUint(c, 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		randMinimize(t, dir, randomScenario(v), cli)
		return
	}
	skipped := map[string]int{}
	sliced := 0                     // cases checked with parallel files although randParallel is off
	passedKnown := map[string]int{} // with ROCEDUMP_RAND_ALL=1: cases of a known discrepancy that pass
	firstPassed := map[string]uint64{}
	for _, seed := range cases {
		rs := randomScenario(seed)
		why := rs.knownIssue()
		if !all && why != "" {
			skipped[why]++
			continue
		}
		y, err := yaml.Marshal(rs)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("seed%d", seed)
		was := randParallel
		if !randParallel && sliced < randParallelSlice {
			randParallel = true
			sliced++
		}
		errs := randCheckYAML(t, dir, name, y, cli)
		randParallel = was
		class, _, _ := strings.Cut(why, ":") // D3, D10
		if len(errs) > 0 {
			known := ""
			if why != "" {
				known = "known " + class + ", "
			}
			t.Errorf("%s (%sreplay: ROCEDUMP_RAND_CASE=%d, minimize: ROCEDUMP_RAND_MIN=%d):\n  %s\nscenario:\n%s", name, known, seed, seed, strings.Join(errs, "\n  "), y)
		} else if why != "" {
			if passedKnown[class] == 0 {
				firstPassed[class] = seed
			}
			passedKnown[class]++
		}
		if len(cases) == 1 {
			t.Logf("%s:\n%s", name, y)
		}
	}
	if len(passedKnown) > 0 {
		t.Logf("cases of a known discrepancy that passed: %v (first seeds %v)", passedKnown, firstPassed)
	}
	whys := make([]string, 0, len(skipped))
	for why := range skipped {
		whys = append(whys, why)
	}
	sort.Strings(whys)
	for _, why := range whys {
		k := skipped[why]
		t.Logf("TODO: skipped %d of %d cases for a known discrepancy (set ROCEDUMP_RAND_ALL=1 to run them): %s", k, len(cases), why)
	}
}

// randCheckYAML generates the scenario y and returns the discrepancies.
func randCheckYAML(t *testing.T, dir, name string, y []byte, cli bool) []string {
	t.Helper()
	sc, err := gen.ParseScenario(y, name+".yaml")
	if err != nil {
		t.Fatalf("%s: the scenario is invalid: %v\n%s", name, err, y)
	}
	r := &randCase{t: t, name: name, yaml: y, parallel: randParallel}
	r.run(sc, filepath.Join(dir, name+gen.FileExt(sc)), cli)
	return r.errs
}

// metric is what a discrepancy is about, without the flow's name.
func randMetric(e string) string {
	if i := strings.Index(e, ": "); i >= 0 && strings.Contains(e[:i], "/") {
		role := e[strings.Index(e, "/")+1 : i]
		e = role + ": " + e[i+2:]
	}
	for _, sep := range []string{" = ", " map[", " differs", " ("} {
		if i := strings.Index(e, sep); i >= 0 {
			e = e[:i]
		}
	}
	return e
}

// minimize shrinks a failing random scenario while its first discrepancy
// (its metric) remains, and logs the smallest scenario found
// (ROCEDUMP_RAND_MIN=seed).
func randMinimize(t *testing.T, dir string, rs *rScenario, cli bool) {
	y, _ := yaml.Marshal(rs)
	errs := randCheckYAML(t, dir, "min", y, cli)
	if len(errs) == 0 {
		t.Logf("no discrepancy")
		return
	}
	target := randMetric(errs[0])
	if m := os.Getenv("ROCEDUMP_RAND_METRIC"); m != "" {
		target = m
	}
	fails := func(c *rScenario) bool {
		cy, err := yaml.Marshal(c)
		if err != nil {
			return false
		}
		if _, err := gen.ParseScenario(cy, "c.yaml"); err != nil {
			return false
		}
		for _, e := range randCheckYAML(t, dir, "min", cy, cli) {
			if randMetric(e) == target {
				return true
			}
		}
		return false
	}
	clone := func(c *rScenario) *rScenario {
		b, _ := yaml.Marshal(c)
		var n rScenario
		if err := yaml.Unmarshal(b, &n); err != nil {
			t.Fatal(err)
		}
		return &n
	}
	cur := clone(rs)
	for changed := true; changed; {
		changed = false
		try := func(edit func(c *rScenario) bool) {
			c := clone(cur)
			ok := func() (ok bool) {
				defer func() {
					if recover() != nil {
						ok = false // an index the edits before removed
					}
				}()
				return edit(c)
			}()
			if ok && fails(c) {
				cur, changed = c, true
			}
		}
		for i := len(cur.Flows) - 1; i >= 0; i-- {
			try(func(c *rScenario) bool { c.Flows = append(c.Flows[:i], c.Flows[i+1:]...); return len(c.Flows) > 0 })
		}
		try(func(c *rScenario) bool {
			ok := c.Encap != nil || c.Snaplen != 0 || c.Gzip || c.Format != "pcap" || c.Link != ""
			c.Encap, c.Snaplen, c.Gzip, c.Format, c.Link = nil, 0, false, "pcap", ""
			return ok
		})
		try(func(c *rScenario) bool { ok := c.Encap != nil; c.Encap = nil; return ok })
		try(func(c *rScenario) bool { ok := c.Snaplen != 0; c.Snaplen = 0; return ok })
		for fi := range cur.Flows {
			f := func(c *rScenario) *rFlow { return c.Flows[fi] }
			for i := len(cur.Flows[fi].Events) - 1; i >= 0; i-- {
				try(func(c *rScenario) bool { f(c).Events = append(f(c).Events[:i], f(c).Events[i+1:]...); return true })
			}
			for k := range cur.Flows[fi].MirrorDup {
				try(func(c *rScenario) bool { delete(f(c).MirrorDup, k); return true })
			}
			try(func(c *rScenario) bool { ok := f(c).MirrorDup != nil; f(c).MirrorDup = nil; return ok })
			try(func(c *rScenario) bool { ok := f(c).RoCE != ""; f(c).RoCE = ""; return ok })
			try(func(c *rScenario) bool {
				g := f(c)
				ok := g.RTTUS != 0 || g.TimeoutUS != 0 || g.AckEvery != 0 || g.CNPOpcode != 0 || g.StartUS != 0
				g.RTTUS, g.TimeoutUS, g.AckEvery, g.CNPOpcode, g.StartUS = 0, 0, 0, 0, 0
				return ok
			})
			try(func(c *rScenario) bool { ok := f(c).AckEvery != 0; f(c).AckEvery = 0; return ok })
			try(func(c *rScenario) bool { ok := f(c).RTTUS != 0; f(c).RTTUS = 0; return ok })
			try(func(c *rScenario) bool { ok := f(c).TimeoutUS != 0; f(c).TimeoutUS = 0; return ok })
			try(func(c *rScenario) bool { ok := f(c).StartUS != 0; f(c).StartUS = 0; return ok })
			try(func(c *rScenario) bool { ok := f(c).CNPOpcode != 0; f(c).CNPOpcode = 0; return ok })
			try(func(c *rScenario) bool { ok := f(c).StartPSN != 0; f(c).StartPSN = 0; return ok })
			try(func(c *rScenario) bool { ok := f(c).MTU != 1024; f(c).MTU = 1024; return ok })
			for i := len(cur.Flows[fi].Ops) - 1; i >= 0; i-- {
				// drop the op, renumbering the events after it
				try(func(c *rScenario) bool {
					g := f(c)
					first := 1
					for _, op := range g.Ops[:i] {
						first += max(op.Count, 1)
					}
					cnt := max(g.Ops[i].Count, 1)
					var evs []map[string]any
					for _, e := range g.Events {
						at := e["at_msg"].(int)
						switch {
						case at >= first+cnt:
							e["at_msg"] = at - cnt
						case at >= first:
							continue
						}
						evs = append(evs, e)
					}
					g.Events = evs
					g.Ops = append(g.Ops[:i], g.Ops[i+1:]...)
					return len(g.Ops) > 0
				})
				// one message fewer, from the end of the op
				try(func(c *rScenario) bool {
					g := f(c)
					if max(g.Ops[i].Count, 1) == 1 {
						return false
					}
					last := 0
					for _, op := range g.Ops[:i+1] {
						last += max(op.Count, 1)
					}
					var evs []map[string]any
					for _, e := range g.Events {
						at := e["at_msg"].(int)
						switch {
						case at > last:
							e["at_msg"] = at - 1
						case at == last:
							continue
						}
						evs = append(evs, e)
					}
					g.Events = evs
					g.Ops[i].Count = max(g.Ops[i].Count, 1) - 1
					return true
				})
				try(func(c *rScenario) bool {
					o := &f(c).Ops[i]
					ok := o.GapUS != 0 || o.Imm || o.Inv
					o.GapUS, o.Imm, o.Inv = 0, false, false
					return ok
				})
				try(func(c *rScenario) bool {
					o := &f(c).Ops[i]
					if o.Bytes <= 1 {
						return false
					}
					o.Bytes /= 2
					return true
				})
			}
		}
	}
	y, _ = yaml.Marshal(cur)
	t.Logf("minimized (%s):\n%s\n  %s", target, y, strings.Join(randCheckYAML(t, dir, "min", y, cli), "\n  "))
}

// randRepeat moves the seeds on with -count.
var randRepeat uint64

func randEnvInt(name string, def int) int {
	if s := os.Getenv(name); s != "" {
		if v, err := strconv.Atoi(s); err == nil {
			return v
		}
	}
	return def
}

// The scenario as YAML: only what the random generator sets, so that a
// failing case prints as a scenario file.
type rScenario struct {
	Name    string           `yaml:"name"`
	Seed    uint64           `yaml:"seed"`
	Format  string           `yaml:"format,omitempty"`
	Gzip    bool             `yaml:"gzip,omitempty"`
	Snaplen int              `yaml:"snaplen,omitempty"`
	Link    string           `yaml:"link,omitempty"`
	Encap   []map[string]any `yaml:"encap,omitempty"`
	Flows   []*rFlow         `yaml:"flows"`
}

type rFlow struct {
	Name      string           `yaml:"name"`
	Src       string           `yaml:"src"`
	Dst       string           `yaml:"dst"`
	Transport string           `yaml:"transport"`
	RoCE      string           `yaml:"roce,omitempty"`
	SrcQPN    uint32           `yaml:"src_qpn"`
	DestQPN   uint32           `yaml:"dest_qpn"`
	StartPSN  uint32           `yaml:"start_psn"`
	MTU       int              `yaml:"mtu"`
	StartUS   float64          `yaml:"start_us,omitempty"`
	RTTUS     float64          `yaml:"rtt_us,omitempty"`
	TimeoutUS float64          `yaml:"timeout_us,omitempty"`
	AckEvery  int              `yaml:"ack_every,omitempty"`
	CNPOpcode int              `yaml:"cnp_opcode,omitempty"`
	MirrorDup map[string]any   `yaml:"mirror_dup,omitempty"`
	Ops       []rOp            `yaml:"ops"`
	Events    []map[string]any `yaml:"events,omitempty"`

	msgs []rMsg // the messages, one per count of each op
}

type rOp struct {
	Op    string  `yaml:"op"`
	Bytes int     `yaml:"bytes,omitempty"`
	Count int     `yaml:"count,omitempty"`
	GapUS float64 `yaml:"gap_us,omitempty"`
	Imm   bool    `yaml:"imm,omitempty"`
	Inv   bool    `yaml:"inv,omitempty"`
}

// rMsg is one message of a flow and the one loss event (at most) it has.
type rMsg struct {
	op    string
	bytes int
	gapUS float64 // the op's gap_us (the generator's default 1)
	n     int     // data packets: requests, or READ responses
	loss  string  // "", fabric, fabric_unseen, timeout, timeout_unseen, mirror, rnr, nak
	off   int     // first packet of the loss
	cnt   int     // packets of the loss
	// rnrMirror: of an RNR NAK's WRITE, SEND or atomic (loss rnr), the
	// packets from the first whose first copy the mirror missed (a
	// mirror_drop at psn_offset 0 with the rnr_nak, the one pair of
	// events a message may have): they reached the responder, which
	// refused the first with the RNR NAK.
	rnrMirror int
	// nakMirror: the same for a fatal NAK's WRITE, SEND or atomic (loss
	// nak): they reached the responder, which refused the first with
	// the NAK, and nothing resends them; nakReserved: the NAK's code is
	// a reserved one, which tells nothing of its PSN.
	nakMirror   int
	nakReserved bool
}

func (m *rMsg) read() bool   { return m.op == "read" }
func (m *rMsg) atomic() bool { return m.op == "cmp_swap" || m.op == "fetch_add" }

func randReliable(tr string) bool { return tr == "RC" || tr == "XRC" || tr == "RD" }

// randomScenario builds the scenario of one seed. The constraints, and why:
//
//   - QPNs are unique over the whole scenario, so that no two flows share a
//     Key (two connections at once on one QP cannot happen);
//   - at most one loss event (fabric_drop, timeout_drop, mirror_drop,
//     rnr_nak, nak) per message: the expectations below are derived per
//     message; markings (ce_mark, fecn, dscp) are added freely; but an
//     RNR NAK's or fatal NAK's WRITE, SEND or atomic may also have a
//     mirror_drop from its first packet (rMsg.rnrMirror, nakMirror),
//     decided from a stream of its own each, so that the other events
//     stay those of the seed; and so is whether a reliable flow's
//     ce_mark marks the resends rather than the first transmissions
//     (resends, without CNPs);
//   - timeout_us is at least 600 µs: a resend that no NAK asked for less
//     than a mirror window (262-524 µs) after its original is what a
//     mirror copy looks like (flows/doc.go, "Mirror copies"), and real
//     ACK timeouts (4.096 µs × 2^n, NCCL n = 18-22) are far longer;
//   - mirror_dup delays are below 200 µs, inside the mirror window;
//   - the snap length, when there is one, keeps every header up to the
//     RDMA payload (rocedump counts only frames whose transport headers it
//     has).
func randomScenario(seed uint64) *rScenario {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	rnrMirror := rand.New(rand.NewPCG(seed, seed^0x524e524d49525252))
	nakMirror := rand.New(rand.NewPCG(seed, seed^0x4e414b4d49525252))
	ceResends := rand.New(rand.NewPCG(seed, seed^0x4345524553454e44))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	s := &rScenario{Name: fmt.Sprintf("rand%d", seed), Seed: seed}
	s.Format = pick("pcap", "pcap", "pcap-ns", "pcap-be", "pcap-ns-be", "pcapng", "pcapng-be")
	s.Gzip = rng.IntN(6) == 0
	v6 := rng.IntN(5) == 0
	// Encapsulation and link.
	tunnel := func(kind string) map[string]any {
		m := map[string]any{}
		switch kind {
		case "erspan2":
			m["session"], m["index"] = rng.IntN(1024), rng.IntN(0x100000)
		case "erspan3":
			m["session"], m["hw_id"], m["subheader"] = rng.IntN(1024), rng.IntN(64), rng.IntN(2) == 0
		case "vxlan":
			m["vni"] = rng.IntN(1 << 24)
		}
		if rng.IntN(4) == 0 {
			m["ipv6"] = true
		}
		return map[string]any{kind: m}
	}
	tag := func() map[string]any {
		if rng.IntN(3) == 0 {
			return map[string]any{"qinq": []int{rng.IntN(4095) + 1, rng.IntN(4095) + 1}}
		}
		return map[string]any{"vlan": rng.IntN(4095) + 1, "pcp": rng.IntN(8)}
	}
	switch rng.IntN(10) {
	case 0, 1, 2, 3:
	case 4:
		s.Encap = []map[string]any{tag()}
	case 5:
		s.Encap = []map[string]any{tunnel(pick("erspan1", "erspan2", "erspan3", "gre_teb", "vxlan")), tag()}
	case 6:
		s.Encap = []map[string]any{tag(), tunnel(pick("erspan1", "erspan2", "erspan3", "gre_teb", "vxlan"))}
	default:
		s.Encap = []map[string]any{tunnel(pick("erspan1", "erspan2", "erspan3", "gre_teb", "vxlan"))}
	}
	outerTag := len(s.Encap) > 0 && (s.Encap[0]["vlan"] != nil || s.Encap[0]["qinq"] != nil)
	if !outerTag && rng.IntN(4) == 0 {
		s.Link = pick("raw", "sll", "sll2")
	}
	rawNoTunnel := s.Link == "raw" && len(s.Encap) == 0
	// Headers before the RDMA payload, at most.
	need := map[string]int{"": 14, "ethernet": 14, "raw": 0, "sll": 16, "sll2": 20}[s.Link]
	for _, e := range s.Encap {
		switch {
		case e["vlan"] != nil:
			need += 4
		case e["qinq"] != nil:
			need += 8
		default:
			need += 40 + 8 + 28 + 14 // IPv6, GRE or UDP, ERSPAN III with subheader or VXLAN, Ethernet
		}
	}
	need += 40 + 8 + 12 + 48 + 12 // IPv6 (or GRH), UDP, BTH, extension headers, AETH + AtomicAckETH
	if rng.IntN(4) == 0 {
		s.Snaplen = max(64, need+rng.IntN(200))
	}

	nflows := 1 + rng.IntN(5)
	hosts := 2 + rng.IntN(3)
	addr := func(i int) string {
		if v6 {
			return fmt.Sprintf("fd00::%d", i+1)
		}
		return fmt.Sprintf("10.0.%d.%d", i/2, i%2+1)
	}
	usedQP := map[uint32]bool{}
	qpn := func() uint32 {
		for {
			var q uint32
			switch rng.IntN(4) {
			case 0:
				q = uint32(1 + rng.IntN(0x100))
			case 1:
				q = 0xffffff - uint32(rng.IntN(0x100))
			default:
				q = uint32(2 + rng.IntN(0xfffffd))
			}
			if q > 1 && !usedQP[q] {
				usedQP[q] = true
				return q
			}
		}
	}
	for i := range nflows {
		f := &rFlow{Name: fmt.Sprintf("f%d", i+1)}
		a := rng.IntN(hosts)
		b := (a + 1 + rng.IntN(hosts-1)) % hosts
		f.Src, f.Dst = addr(a), addr(b)
		switch r := rng.IntN(20); {
		case r < 11:
			f.Transport = "RC"
		case r < 15:
			f.Transport = "UC"
		case r < 18:
			f.Transport = "UD"
		case r < 19:
			f.Transport = "XRC"
		default:
			f.Transport = "RD"
		}
		if !rawNoTunnel && rng.IntN(8) == 0 {
			f.RoCE = "v1"
		}
		f.SrcQPN, f.DestQPN = qpn(), qpn()
		switch rng.IntN(4) {
		case 0:
			f.StartPSN = 0xffffff - uint32(rng.IntN(40)) // wraps within the flow
		case 1:
			f.StartPSN = 0
		default:
			f.StartPSN = uint32(rng.IntN(1 << 24))
		}
		f.MTU = []int{256, 512, 1024, 2048, 4096}[rng.IntN(5)]
		f.StartUS = float64(rng.IntN(200))
		if rng.IntN(2) == 0 {
			f.RTTUS = float64(1 + rng.IntN(40))
		}
		if rng.IntN(2) == 0 {
			f.TimeoutUS = float64(600 + rng.IntN(5000))
		}
		if randReliable(f.Transport) && rng.IntN(4) == 0 {
			f.AckEvery = 1 + rng.IntN(4)
		}
		if rng.IntN(3) == 0 {
			f.CNPOpcode = 0x80 + rng.IntN(2)
		}
		if rng.IntN(6) == 0 {
			md := map[string]any{}
			if rng.IntN(2) == 0 {
				md["delay_us"] = rng.IntN(200)
			}
			if rng.IntN(3) == 0 {
				md["ttl"] = 60 + rng.IntN(4)
			}
			if rng.IntN(3) == 0 {
				md["dscp"] = rng.IntN(64)
			}
			if rng.IntN(3) == 0 {
				md["ecn"] = pick("not_ect", "ect0", "ect1", "ce")
			}
			f.MirrorDup = md
		}
		// Ops.
		nops := 1 + rng.IntN(4)
		for range nops {
			var op rOp
			switch f.Transport {
			case "UD":
				op.Op = "send"
			case "UC":
				op.Op = pick("write", "send")
			default:
				op.Op = pick("write", "write", "send", "read", "cmp_swap", "fetch_add")
			}
			switch op.Op {
			case "write", "send", "read":
				maxB := 6 * f.MTU
				if f.Transport == "UD" {
					maxB = f.MTU
				}
				switch rng.IntN(6) {
				case 0:
					op.Bytes = 0
					if op.Op == "read" && rng.IntN(4) != 0 {
						op.Bytes = 1 + rng.IntN(maxB) // zero-length READs are rare
					}
				case 1:
					op.Bytes = f.MTU * (1 + rng.IntN(4))
					if f.Transport == "UD" {
						op.Bytes = f.MTU
					}
				default:
					op.Bytes = 1 + rng.IntN(maxB)
				}
				if op.Op != "read" {
					switch rng.IntN(5) {
					case 0:
						op.Imm = true
					case 1:
						op.Inv = op.Op == "send" && (f.Transport == "RC" || f.Transport == "XRC")
					}
				}
			}
			op.Count = 1 + rng.IntN(4)
			if rng.IntN(2) == 0 {
				op.GapUS = float64(1 + rng.IntN(50))
			}
			f.Ops = append(f.Ops, op)
			for range op.Count {
				n := 1
				if !(op.Op == "cmp_swap" || op.Op == "fetch_add") && op.Bytes > 0 {
					n = (op.Bytes + f.MTU - 1) / f.MTU
				}
				f.msgs = append(f.msgs, rMsg{op: op.Op, bytes: op.Bytes, n: n, gapUS: max(op.GapUS, 1)})
			}
		}
		// Events.
		reliable := randReliable(f.Transport)
		nev := rng.IntN(4)
		if rng.IntN(4) == 0 {
			nev = 0
		}
		for range nev {
			at := 1 + rng.IntN(len(f.msgs))
			m := &f.msgs[at-1]
			ev := map[string]any{"at_msg": at}
			kinds := []string{"ce", "fecn", "dscp"}
			if m.loss == "" {
				kinds = append(kinds, "fabric", "fabric_unseen", "mirror", "mirror")
				if reliable {
					kinds = append(kinds, "timeout", "timeout_unseen", "rnr", "rnr")
					if rng.IntN(4) == 0 {
						kinds = append(kinds, "nak")
					}
				}
			}
			k := kinds[rng.IntN(len(kinds))]
			switch k {
			case "fabric", "fabric_unseen", "mirror":
				m.off = rng.IntN(m.n)
				m.cnt = 1 + rng.IntN(min(3, m.n-m.off))
				d := map[string]any{"psn_offset": m.off, "packets": m.cnt}
				m.loss = k
				switch k {
				case "fabric":
					if rng.IntN(2) == 0 {
						d["seen"] = true
					}
					ev["fabric_drop"] = d
				case "fabric_unseen":
					d["seen"] = false
					ev["fabric_drop"] = d
				default:
					ev["mirror_drop"] = d
				}
			case "timeout", "timeout_unseen":
				m.loss = k
				m.off = m.n - 1
				d := map[string]any{}
				if rng.IntN(2) == 0 {
					m.off = rng.IntN(m.n)
					d["psn_offset"] = m.off
				}
				m.cnt = m.n - m.off
				if k == "timeout_unseen" {
					d["seen"] = false
				}
				ev["timeout_drop"] = d
			case "rnr":
				m.loss = k
				ev["rnr_nak"] = map[string]any{"timer": rng.IntN(14)}
				if !m.read() && rnrMirror.IntN(3) == 0 {
					// The mirror missed the packet the RNR NAK
					// refused, and maybe the next ones.
					m.rnrMirror = 1 + rnrMirror.IntN(min(3, m.n))
					f.Events = append(f.Events, map[string]any{"at_msg": at, "mirror_drop": map[string]any{"psn_offset": 0, "packets": m.rnrMirror}})
				}
			case "nak":
				m.loss = k
				ev["nak"] = pick("invalid_request", "remote_access_err", "remote_op_err", "invalid_rd_request", "reserved_9")
				if !m.read() && nakMirror.IntN(3) == 0 {
					// The mirror missed the packet the NAK
					// refused, and maybe the next ones.
					m.nakMirror = 1 + nakMirror.IntN(min(3, m.n))
					f.Events = append(f.Events, map[string]any{"at_msg": at, "mirror_drop": map[string]any{"psn_offset": 0, "packets": m.nakMirror}})
				}
			case "ce":
				off := rng.IntN(m.n)
				ce := map[string]any{"psn_offset": off, "packets": 1 + rng.IntN(m.n-off)}
				if rng.IntN(3) != 0 {
					ce["cnp"] = true
					if rng.IntN(3) == 0 {
						ce["cnp_opcode"] = 0x80 + rng.IntN(2)
					}
				}
				if reliable && ceResends.IntN(3) == 0 {
					// The switch marks the resends, not the first
					// transmissions: on a flow the mirror copies, the
					// copies of those may come before the flow's
					// first CE.
					ce["resends"] = true
					delete(ce, "cnp")
					delete(ce, "cnp_opcode")
				}
				ev["ce_mark"] = ce
			case "fecn":
				off := rng.IntN(m.n)
				fe := map[string]any{"psn_offset": off, "packets": 1 + rng.IntN(m.n-off)}
				if rng.IntN(2) == 0 {
					fe["becn"] = true
				}
				ev["fecn"] = fe
			case "dscp":
				ev["dscp"] = rng.IntN(64)
			}
			f.Events = append(f.Events, ev)
		}
		s.Flows = append(s.Flows, f)
	}
	return s
}

// knownIssue names the rocedump discrepancy a scenario runs into, if it is
// one the triage found and reported (the default run skips those cases;
// ROCEDUMP_RAND_ALL=1 runs them). Each is a TODO: drop its test here once
// rocedump is fixed. The tests are deliberately broad (they skip some
// cases that pass); minimal scenarios of each are in the QA report of
// branch qa-rand (D9 and D10: in the triage report of branch triage-s12):
//
//	D3 QPs of one host pair at the same PSNs, of one transport (a
//	   response names its QP's transport): the mirror missed requests
//	   of one QP, whose responses then fit the other's PSNs (wrong or no
//	   partner, NAKs pending on the other QP, mirror loss undecided; an
//	   ACK past the requests captured, the mirror having missed a
//	   message's tail, that lies within pairAhead of both QPs' requests
//	   pairs neither); or an RNR NAK on each QP at PSNs both sent
//	D6 READ re-issued from its first PSN taken for a mirror copy, when the
//	   mirror saw the first response before the fabric lost it, and the
//	   READ is its flow's first packet or the mirror copies the flow (then
//	   the capture alone cannot tell the re-issue from a copy: no earlier
//	   packet's copy is missing, and the answer to the re-issue comes
//	   exactly when the copies of the first answer would); and, on a
//	   flow the mirror copies, the copy of a READ that is the flow's
//	   first packet, whose first response the mirror missed, captured
//	   after the later ones, taken for a re-issue (no copy before it
//	   tells that the mirror copies the flow; a READ after other packets
//	   is told by its copy being due, flows.Flow.readCopyDue)
//	D9 a mirror copy captured at the same instant as the RNR retry of its
//	   packet (mirror_dup delay_us = rtt_us + the RNR timer: the retry
//	   leaves as the timer runs out, the copy lags exactly as long): the
//	   two are alike in every transport header and time, and rocedump
//	   takes the first in the file, the copy (the generator queued it
//	   first), for the retry and the retry for the copy. The counts hold
//	   (flows/doc.go, "What the rule cannot tell"), but the DSCP and ECN
//	   the mirror gave its copy count for the retry
//	D10 QPs of one host pair at the same PSNs, each READing, when the
//	   fabric lost the first responses of one QP's first READ before the
//	   mirror: its later responses, the first READ responses of their
//	   flow, lie within the response PSNs of both QPs' READs (the other's
//	   path MTU unknown yet), so no single requester is known, and the
//	   READ re-issued from its first PSN is taken for its mirror copy. The
//	   responses' payload lengths, which only the READ of the right length
//	   gives, could tell; rocedump does not match them
func (s *rScenario) knownIssue() string {
	for _, f := range s.Flows {
		delay := -1.0
		if f.MirrorDup != nil {
			delay = 0
			if d, ok := f.MirrorDup["delay_us"].(int); ok {
				delay = float64(d)
			}
		}
		for i, m := range f.msgs {
			if m.read() && m.off == 0 && (m.loss == "fabric" && m.cnt < m.n && (i == 0 || delay >= 0) ||
				m.loss == "mirror" && i == 0 && delay >= 0) {
				return "D6: a READ re-issued from its first PSN (its first response lost, later ones came) within the mirror window, on a flow the mirror copies or as the flow's first packet, is taken for a mirror copy, and so are its responses; or, the flow's first packet, a READ whose first response the mirror missed, copied after the later ones, taken for a re-issue"
			}
		}
	}
	for i, a := range s.Flows {
		for _, b := range s.Flows[i+1:] {
			if a.Src != b.Src || a.Dst != b.Dst || !randReliable(a.Transport) || a.Transport != b.Transport {
				continue // an XRC response never answers an RC QP (flows.mayPair)
			}
			if d := (a.StartPSN - b.StartPSN) & 0xffffff; d > 4096 && d < 1<<24-4096 {
				continue // PSNs far apart: the responses tell the QPs apart
			}
			if a.hasMirrorDrop() || b.hasMirrorDrop() || a.hasLoss() && b.hasLoss() {
				return "D3: QPs of one transport and host pair at the same PSNs, when the mirror missed requests of one (a response to them fits the other QP's requests: a wrong or no partner, its NAKs pending on the other QP, mirror loss undecided) or both have NAKs (an RNR NAK of each, at PSNs both QPs sent: one replaces the other's, its retry taken for a copy)"
			}
		}
	}
	for _, f := range s.Flows {
		if f.MirrorDup == nil || f.MirrorDup["dscp"] == nil && f.MirrorDup["ecn"] == nil {
			continue
		}
		delay, _ := f.MirrorDup["delay_us"].(int)
		rtt := f.RTTUS
		if rtt == 0 {
			rtt = 4 // the generator's default
		}
		for _, e := range f.Events {
			if r, ok := e["rnr_nak"].(map[string]any); ok {
				timer, _ := r["timer"].(int)
				if float64(delay) == rtt+float64(bth.RNRTimerDuration(uint8(timer)).Microseconds()) {
					return "D9: a mirror copy captured at the same instant as the RNR retry of its packet is taken for the retry, and the retry for the copy: the counts hold, but the copy's DSCP and ECN count for the retry"
				}
			}
		}
	}
	for i, a := range s.Flows {
		for _, b := range s.Flows[i+1:] {
			if a.Src != b.Src || a.Dst != b.Dst || !randReliable(a.Transport) || a.Transport != b.Transport {
				continue
			}
			if d := (a.StartPSN - b.StartPSN) & 0xffffff; d > 4096 && d < 1<<24-4096 {
				continue
			}
			if a.firstReadLostHead() && b.reads() || b.firstReadLostHead() && a.reads() {
				return "D10: QPs of one host pair at the same PSNs, each READing, when the fabric lost the first responses of one's first READ before the mirror: the later ones fit both QPs' READs, and the READ re-issued is taken for a copy"
			}
		}
	}
	return ""
}

// reads says whether the flow sends an RDMA READ.
func (f *rFlow) reads() bool {
	for _, m := range f.msgs {
		if m.read() {
			return true
		}
	}
	return false
}

// firstReadLostHead says whether the first READ of the flow lost its
// first responses, not all, before the mirror.
func (f *rFlow) firstReadLostHead() bool {
	for _, m := range f.msgs {
		if m.read() {
			return m.loss == "fabric_unseen" && m.off == 0 && m.cnt < m.n
		}
	}
	return false
}

func (f *rFlow) hasMirrorDrop() bool {
	for _, m := range f.msgs {
		if m.loss == "mirror" {
			return true
		}
	}
	return false
}

func (f *rFlow) hasLoss() bool {
	for _, m := range f.msgs {
		if m.loss != "" {
			return true
		}
	}
	return false
}

// randCase checks one generated capture.
type randCase struct {
	t    *testing.T
	name string
	yaml []byte
	errs []string
	// parallel: check the capture written as rotated and as parallel
	// files too (truth_parallel_test.go).
	parallel bool
}

func (r *randCase) errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *randCase) run(sc *gen.Scenario, path string, runCLI bool) {
	f, err := os.Create(path)
	if err != nil {
		r.t.Fatal(err)
	}
	tr, err := gen.Generate(f, sc)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.errorf("generate: %v", err)
		return
	}
	defer os.Remove(path)
	tab := r.feed(path)
	if tab == nil {
		return
	}
	r.checkTable(sc, tr, tab)
	if runCLI {
		r.checkCLI(path, tab)
	}
	if r.parallel {
		r.checkSplits(path, tr, tab, runCLI)
	}
}

// feed decodes every frame into a fresh flows.Table, as flows/truth_test.go
// does.
func (r *randCase) feed(path string) *flows.Table {
	rd, err := capture.Open(path)
	if err != nil {
		r.errorf("open: %v", err)
		return nil
	}
	defer rd.Close()
	tab := flows.NewTable(flows.Config{})
	var (
		rec capture.Record
		p   packet.Packet
		dec packet.Decoder
	)
	for {
		err := rd.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, capture.ErrCutOff) {
				break
			}
			r.errorf("read: %v", err)
			return nil
		}
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil {
			r.errorf("frame %d does not decode", rec.Number)
			continue
		}
		tab.Add(&p, flows.FrameRef{Frame: rec.Number, Time: rec.Timestamp})
	}
	tab.Finish()
	return tab
}

// randHoles is what the losses leave in one PSN space of a flow direction.
type randHoles struct {
	gaps, missing, outOfOrder, mirror uint64
	// trailingMirror: PSNs the mirror missed after the last PSN of the
	// space in the file.
	trailingMirror uint64
	// unsureResent: PSNs lost before the first PSN of the space in the
	// file, or within a READ request's slack, and resent: rocedump, which
	// cannot tell them from PSNs it carried (sent before the capture
	// began, or taken by the READ), counts them retransmitted.
	unsureResent uint64
	// mirrorResent: of outOfOrder, the PSNs decided mirror loss (an RNR
	// NAK at the first of their gap said the responder had it).
	mirrorResent uint64
}

// randSlot is a PSN of one space, in the order of first transmission.
type randSlot struct {
	absent  bool // the first transmission is not in the file
	resent  bool // a later copy fills it (out of order)
	mirror  bool // the mirror missed it (nobody resends it, but an RNR retry: see rMsg.rnrMirror)
	canJump bool // a READ response FIRST/ONLY: rocedump accepts a forward jump to it
	// read numbers the READ a response slot answers (from 1; 0 for
	// other slots), last marks its last response: a jump to the next
	// READ's FIRST/ONLY after a present slot that is not its READ's last
	// leaves that READ open, whose absent rest is a gap (flows.Flow
	// skipOpenRead).
	read int
	last bool
	// slack: a READ request of a flow that has not shown its path MTU
	// (no FIRST or MIDDLE request captured yet) may take up to this many
	// PSNs more than it does (flows/doc.go: any MTU of 256 to 4096), so
	// that many absent PSNs after it are no sure gap.
	slack int
}

// randMessagesOf lists the messages of a parsed scenario flow with the loss
// event (at most one) of each.
func randMessagesOf(f *gen.Flow) []rMsg {
	var msgs []rMsg
	for _, op := range f.Ops {
		for range op.Count {
			n := 1
			if op.Op != "cmp_swap" && op.Op != "fetch_add" && op.Bytes > 0 {
				n = (op.Bytes + f.MTU - 1) / f.MTU
			}
			msgs = append(msgs, rMsg{op: op.Op, bytes: op.Bytes, n: n})
		}
	}
	for _, e := range f.Events {
		m := &msgs[e.AtMsg-1]
		drop := func(kind string, d *gen.Drop, defOff int) {
			m.loss = kind
			m.off = defOff
			if d.PSNOffset != nil {
				m.off = *d.PSNOffset
			}
			m.cnt = min(max(d.Packets, 1), m.n-m.off)
			if d.Seen != nil && !*d.Seen {
				m.loss += "_unseen"
			}
		}
		switch {
		case e.FabricDrop != nil:
			drop("fabric", e.FabricDrop, 0)
		case e.TimeoutDrop != nil:
			drop("timeout", e.TimeoutDrop, m.n-1)
			m.cnt = m.n - m.off
		case e.MirrorDrop != nil && m.loss == "rnr":
			// From the first packet (rMsg.rnrMirror).
			m.rnrMirror = min(max(e.MirrorDrop.Packets, 1), m.n)
		case e.MirrorDrop != nil && m.loss == "nak":
			// From the first packet (rMsg.nakMirror).
			m.nakMirror = min(max(e.MirrorDrop.Packets, 1), m.n)
		case e.MirrorDrop != nil:
			drop("mirror", e.MirrorDrop, 0)
		case e.RNRNAK != nil && m.loss == "mirror":
			m.loss, m.rnrMirror, m.off, m.cnt = "rnr", m.cnt, 0, 0
		case e.RNRNAK != nil:
			m.loss = "rnr"
		case e.NAK != nil && m.loss == "mirror":
			m.loss, m.nakMirror, m.off, m.cnt = "nak", m.cnt, 0, 0
			m.nakReserved = strings.HasPrefix(*e.NAK, "reserved_")
		case e.NAK != nil:
			m.loss = "nak"
			m.nakReserved = strings.HasPrefix(*e.NAK, "reserved_")
		}
	}
	return msgs
}

// randExpect is what a flow's losses should show: the PSN gaps, missing
// and out-of-order PSNs of the requester's requests and of the
// responder's READ responses, the request messages whose last packet is
// in the file, and the retransmission episodes of a reliable requester
// that the capture shows.
type randExpect struct {
	req, resp                    randHoles
	messages                     uint64
	gbn, rnr, reissued, timeouts uint64
}

// randExpectFlow derives randExpect from the scenario flow. For the ACKs of a
// reliable WRITE/SEND/atomic it follows the generator's model (gen/flow.go
// reliableMessage: the responder ACKs every message's last packet and
// every ack_every-th packet of the flow): a timeout shows in the capture
// only when the requester resends a packet the file already holds.
func randExpectFlow(f *gen.Flow) randExpect {
	var e randExpect
	reliable := randReliable(f.Transport)
	msgs := randMessagesOf(f)
	var reqSlots, respSlots []randSlot
	ackCount := 0
	mtuShown := false
	for i := range msgs {
		m := &msgs[i]
		lossAt := func(j int) bool { return m.cnt > 0 && j >= m.off && j < m.off+m.cnt }
		tail := m.cnt > 0 && m.off+m.cnt == m.n
		fabric := m.loss == "fabric" || m.loss == "fabric_unseen" || m.loss == "timeout" || m.loss == "timeout_unseen"
		unseen := m.loss == "fabric_unseen" || m.loss == "timeout_unseen"
		if m.read() {
			e.messages++
			rs := randSlot{}
			if !mtuShown && m.bytes > 0 {
				rs.slack = (m.bytes+255)/256 - m.n
			}
			reqSlots = append(reqSlots, rs)
			for j := range m.n {
				s := randSlot{canJump: j == 0, read: int(e.messages), last: j == m.n-1}
				switch {
				case m.loss == "mirror":
					s.absent, s.mirror = lossAt(j), true
				case unseen:
					s.absent = lossAt(j) && !tail
					s.resent = s.absent
				}
				respSlots = append(respSlots, s)
			}
			switch {
			case fabric && m.off > 0:
				e.reissued++    // a READ for the rest
				mtuShown = true // its VA and PSN, past the first READ's, tell the MTU
			case unseen && m.cnt < m.n:
				// Its first responses lost before the mirror and the
				// later ones captured: the capture shows the responses
				// skip the READ's PSN, which the requester answers by
				// re-issuing the whole READ (an implied NAK), not a
				// timeout.
				e.reissued++
			case fabric:
				e.timeouts++ // the same READ again: a resend no NAK asked for
			case m.loss == "rnr":
				e.rnr++
			}
			if m.loss == "nak" {
				break
			}
			continue
		}
		for j := range m.n {
			s := randSlot{}
			switch {
			case m.loss == "mirror":
				s.absent, s.mirror = lossAt(j), true
			case unseen:
				// A reliable requester resends a lost tail after its
				// timeout before anything newer: in order.
				s.absent = lossAt(j) && !(reliable && tail)
				s.resent = s.absent && reliable
			case m.rnrMirror > 0:
				// When a later packet's first copy is captured,
				// the first ones leave a gap, which the RNR retry
				// fills and the RNR NAK at its first PSN decides
				// mirror loss (the responder received that PSN).
				// Otherwise the retry comes in order.
				s.absent = j < m.rnrMirror && m.rnrMirror < m.n
				s.resent, s.mirror = s.absent, s.absent
			case m.nakMirror > 0:
				// Nothing resends them. The fatal NAK at the first
				// PSN decides it mirror loss (the responder received
				// it), and the rest of its gap when a later packet's
				// copy is captured; a reserved code decides nothing.
				s.absent = j < m.nakMirror
				s.mirror = s.absent && !m.nakReserved && (j == 0 || m.nakMirror < m.n)
			}
			reqSlots = append(reqSlots, s)
			if j < m.n-1 && !s.absent && !(unseen && reliable && tail && lossAt(j)) {
				mtuShown = true
			}
		}
		last := m.n - 1
		if !(m.loss == "mirror" && lossAt(last)) && !(!reliable && unseen && lossAt(last)) && m.nakMirror < m.n {
			e.messages++
		}
		if !reliable {
			continue
		}
		// The generator's reliableMessage, reduced to its ACKs and passes.
		atomic := m.atomic()
		captured := make([]bool, m.n)
		sent := make([]bool, m.n)
		expected, lastAcked, from := 0, -1, 0
		fatal := false
		for {
			nak, rnr, gapped := false, false, false
			for j := from; j < m.n; j++ {
				first := !sent[j]
				sent[j] = true
				lost := first && fabric && lossAt(j)
				if !(lost && unseen) && !(first && m.loss == "mirror" && lossAt(j)) && !(first && j < m.rnrMirror) && !(first && j < m.nakMirror) {
					captured[j] = true
				}
				if lost || gapped {
					continue
				}
				switch {
				case j > expected:
					gapped, nak = true, true
					continue
				case j < expected:
					continue
				case first && m.loss == "rnr" && j == 0:
					gapped, rnr = true, true
					continue
				case first && m.loss == "nak" && j == 0:
					gapped, fatal = true, true
					continue
				}
				expected++
				ackCount++
				if atomic || j == m.n-1 || (f.AckEvery > 0 && ackCount%f.AckEvery == 0) {
					lastAcked = j
				}
			}
			if fatal || expected == m.n {
				break
			}
			switch {
			case nak:
				e.gbn++
				from = expected
			case rnr:
				if m.rnrMirror < m.n {
					// (else the retry is in order: no resend)
					e.rnr++
				}
				from = expected
			default:
				from = lastAcked + 1
				// the resend shows a timeout if it repeats a packet
				// the file holds
				for j := from; j < m.n; j++ {
					if captured[j] {
						e.timeouts++
						break
					}
				}
			}
		}
		if fatal {
			break
		}
	}
	e.req = randHolesOf(reqSlots)
	e.resp = randHolesOf(respSlots)
	return e
}

// randHolesOf counts the gaps: every run of absent PSNs followed by a present
// one, but a run before the first present PSN of the space (the capture
// cannot tell it from the start of the flow), before a READ response FIRST
// or ONLY (which may begin at any PSN), or within a READ request's slack.
// mirror counts the PSNs the mirror missed after the first present one
// (rocedump decides them mirror loss, trailing ones too: the responder
// acknowledged them), but for those within a slack.
func randHolesOf(ss []randSlot) randHoles {
	var h randHoles
	var run []randSlot
	seen := false
	slack := 0
	var open int // the READ the latest present slot left open (0: none)
	flush := func(closed bool) {
		if len(run) > 0 && seen {
			for _, s := range run[:min(slack, len(run))] {
				if s.resent {
					h.unsureResent++
				}
			}
			sure := run[min(slack, len(run)):]
			for _, s := range sure {
				if s.mirror {
					h.mirror++
				}
			}
			if closed && len(sure) > 0 {
				h.gaps++
				for _, s := range sure {
					if s.resent {
						h.outOfOrder++
						if s.mirror {
							h.mirrorResent++
						}
					} else {
						h.missing++
					}
				}
			}
		}
		if !closed && seen {
			for _, s := range run {
				if s.mirror {
					h.trailingMirror++
				}
			}
		}
		run = run[:0]
	}
	for _, s := range ss {
		if s.absent {
			run = append(run, s)
			if !seen && s.resent {
				h.unsureResent++
			}
			continue
		}
		if s.canJump {
			// The jump skips whole READs, not the rest of an open one.
			keep := 0
			for keep < len(run) && open != 0 && run[keep].read == open {
				keep++
			}
			run = run[:keep]
		}
		flush(true)
		seen = true
		slack = s.slack
		open = 0
		if s.read != 0 && !s.last {
			open = s.read
		}
	}
	flush(false)
	return h
}

func randKeyOf(ft *gen.FlowTruth) flows.Key {
	return flows.Key{Src: netip.MustParseAddr(ft.Src), Dst: netip.MustParseAddr(ft.Dst), DestQP: ft.DestQPN}
}

// randOpcodeName is the name bth gives the opcode the truth calls name.
var randOpcodeName = func() map[string]string {
	m := map[string]string{}
	for i := range 256 {
		m[gen.OpcodeName(uint8(i))] = bth.Opcode(i).String()
	}
	return m
}()

func (r *randCase) checkTable(sc *gen.Scenario, tr *gen.Truth, tab *flows.Table) {
	scf := map[string]*gen.Flow{}
	for i := range sc.Flows {
		scf[sc.Flows[i].Name] = &sc.Flows[i]
	}
	byKey := map[flows.Key][]*flows.Flow{}
	for _, f := range tab.Flows() {
		byKey[f.Key] = append(byKey[f.Key], f)
	}
	inTruth := map[flows.Key]bool{}
	truncated := uint64(0)
	dups := false
	for _, ft := range tr.Flows {
		inTruth[randKeyOf(ft)] = true
		if ft.MirrorDuplicates > 0 {
			dups = true
		}
	}
	for _, f := range tab.Flows() {
		truncated += f.Truncated
		if !inTruth[f.Key] {
			r.errorf("flow %v (%d packets) is not in the truth", f.Key, f.Packets)
		}
	}
	if !dups && truncated != uint64(tr.TruncatedFrames) {
		r.errorf("truncated frames in flows = %d, truth %d", truncated, tr.TruncatedFrames)
	}
	for _, ft := range tr.Flows {
		id := ft.Flow + "/" + ft.Role
		fs := byKey[randKeyOf(ft)]
		if ft.Packets == 0 && ft.MirrorDuplicates == 0 {
			if len(fs) != 0 {
				r.errorf("%s: truth has no packets, rocedump has %d flows", id, len(fs))
			}
			continue
		}
		if len(fs) != 1 {
			r.errorf("%s: %d flows (epochs) for %v, want 1", id, len(fs), randKeyOf(ft))
			continue
		}
		f := fs[0]
		ex := randExpectFlow(scf[ft.Flow])
		eq := func(what string, got, want uint64) {
			if got != want {
				r.errorf("%s: %s = %d, truth %d", id, what, got, want)
			}
		}
		eq("packets", f.Packets, uint64(ft.Packets))
		eq("wire bytes", f.WireBytes, uint64(ft.WireBytes))
		eq("payload bytes", f.PayloadBytes, uint64(ft.PayloadBytes))
		eq("mirror duplicates", f.MirrorDuplicates(), uint64(ft.MirrorDuplicates))
		wantTr := ft.Transport
		if ft.FirstPSN == nil {
			wantTr = "CNP"
		}
		if f.Transport.String() != wantTr {
			r.errorf("%s: transport %s, want %s", id, f.Transport, wantTr)
		}
		wantOps := map[string]uint64{}
		for name, n := range ft.Opcodes {
			wantOps[randOpcodeName[name]] += uint64(n)
		}
		gotOps := map[string]uint64{}
		for _, oc := range f.Opcodes() {
			gotOps[oc.Opcode.String()] += oc.Count
		}
		if fmt.Sprint(gotOps) != fmt.Sprint(wantOps) {
			r.errorf("%s: opcodes %v, truth %v", id, gotOps, wantOps)
		}
		wantDSCP := map[string]uint64{}
		for d, n := range ft.DSCP {
			wantDSCP[d] = uint64(n)
		}
		gotDSCP := map[string]uint64{}
		for _, vc := range f.DSCP() {
			gotDSCP[strconv.Itoa(int(vc.Value))] = vc.Count
		}
		if fmt.Sprint(gotDSCP) != fmt.Sprint(wantDSCP) {
			r.errorf("%s: DSCP %v, truth %v", id, gotDSCP, wantDSCP)
		}
		if ft.FirstPSN != nil {
			if !f.HasPSN {
				r.errorf("%s: no PSN, truth first PSN %d", id, *ft.FirstPSN)
			} else {
				eq("first PSN", uint64(f.FirstPSN), uint64(*ft.FirstPSN))
				eq("last PSN", uint64(f.LastPSN), uint64(*ft.LastPSN))
			}
		}
		h := ex.req
		if ft.Role == "responder" {
			h = ex.resp
		}
		eq("retransmitted", f.Retransmitted(), uint64(ft.Retransmitted)+h.unsureResent)
		for c := range f.NAKs {
			eq("NAKs["+bth.NAKCode(c).String()+"]", f.NAKs[c], uint64(ft.NAKs[bth.NAKCode(c).String()]))
		}
		var other uint64
		for code, n := range ft.NAKs {
			if strings.HasPrefix(code, "reserved_") {
				other += uint64(n)
			}
		}
		eq("NAKs[other]", f.NAKOther, other)
		eq("RNR NAKs", f.RNRNAKs, uint64(ft.RNRNAKs))
		eq("CNPs", f.CNPs, uint64(ft.CNPs))
		eq("ECN CE", f.ECNCE, uint64(ft.CEMarked))
		eq("FECN", f.FECN, uint64(ft.FECN))
		eq("BECN", f.BECN, uint64(ft.BECN))
		eq("ICRC bad", f.ICRCBad, 0)
		eq("PSN gaps", f.PSNGaps(), h.gaps)
		eq("missing PSNs", f.Requests.MissingPSNs+f.ReadResponses.MissingPSNs, h.missing)
		eq("out of order", f.Requests.OutOfOrder+f.ReadResponses.OutOfOrder, h.outOfOrder)
		if ft.Role == "requester" {
			eq("messages", f.Messages, ex.messages)
		} else {
			eq("messages", f.Messages, 0)
		}
		// Retransmission analysis of a reliable requester's requests.
		if ft.Role == "requester" && randReliable(ft.Transport) {
			x := &f.Retx
			eq("Retx.FabricLostPSNs", x.FabricLostPSNs, ex.req.outOfOrder-ex.req.mirrorResent)
			eq("Retx.MirrorLostPSNs", x.MirrorLostPSNs, ex.req.mirror)
			eq("Retx.GBNEpisodes", x.GBNEpisodes, ex.gbn)
			eq("Retx.RNRRetries", x.RNRRetries, ex.rnr)
			eq("Retx.ReissuedReads", x.ReissuedReads, ex.reissued)
			eq("Retx.Timeouts", x.Timeouts, ex.timeouts)
			eq("Reordered", f.Reordered(), 0) // the generator sends every QP's packets in order
			// The generator plays a READ, its re-issue and the answer
			// before the next message: no request followed the READ
			// to be resent after the re-issue.
			eq("ReissueResent", f.ReissueResent(), 0)
			if sum := x.GBNResent + x.RNRResent + x.TimeoutResent + f.ReissueResent() + x.ReissuedReads; sum != f.Requests.Retransmitted+f.Requests.OutOfOrder-f.Reordered() {
				r.errorf("%s: resends by episode %d != retransmitted %d + out of order %d - reordered %d", id, sum, f.Requests.Retransmitted, f.Requests.OutOfOrder, f.Reordered())
			}
		}
		// Pairing: never the wrong partner; a reliable flow whose other
		// direction is in the file, alone on its host pair, has one.
		var otherT *gen.FlowTruth
		alone := true
		for _, o := range tr.Flows {
			if o.Flow == ft.Flow && o != ft {
				otherT = o
			}
			if o.Flow != ft.Flow && (o.Src == ft.Src && o.Dst == ft.Dst || o.Src == ft.Dst && o.Dst == ft.Src) {
				alone = false
			}
		}
		if f.Partner == nil && alone && randReliable(ft.Transport) && ft.FirstPSN != nil && otherT != nil && otherT.FirstPSN != nil {
			r.errorf("%s: no partner, the connection is alone on its host pair", id)
		}
		if f.Partner != nil {
			var other *gen.FlowTruth
			for _, o := range tr.Flows {
				if o.Flow == ft.Flow && o != ft {
					other = o
				}
			}
			if other == nil || f.Partner.Key != randKeyOf(other) {
				r.errorf("%s: partner %v, want %v", id, f.Partner.Key, other)
			}
		}
	}
}

// sameForWorkers runs the command args with --workers=1 and =2, notes an
// error if either fails or their outputs differ, and returns them; ok is
// false if a run failed.
func (r *randCase) sameForWorkers(args ...string) (outs [2]string, ok bool) {
	for i, w := range []int{1, 2} {
		out, errOut, code := runCLI(r.t, append([]string{args[0], fmt.Sprintf("--workers=%d", w)}, args[1:]...)...)
		if code != ExitOK {
			r.errorf("%s --workers=%d: exit %d: %s", args[0], w, code, errOut)
			return outs, false
		}
		outs[i] = out
	}
	if outs[0] != outs[1] {
		r.errorf("%s: --workers=2 differs from --workers=1: %s", strings.Join(args[:len(args)-1], " "), firstDiff(outs[0], outs[1]))
	}
	return outs, true
}

// checkCLI runs `rocedump flows --format json` with one and two workers:
// the same bytes, and the records say what the table says.
func (r *randCase) checkCLI(path string, tab *flows.Table) {
	outs, ok := r.sameForWorkers("flows", "--format", "json", "--sort", "bytes", path)
	if !ok {
		return
	}
	if _, ok := r.sameForWorkers("report", "--format", "json", "--fail-on", "never", path); !ok {
		return
	}
	var recs []flowtable.Record
	if err := json.Unmarshal([]byte(outs[0]), &recs); err != nil {
		r.errorf("flows json: %v", err)
		return
	}
	byKey := map[string]flowtable.Record{}
	for _, rec := range recs {
		byKey[fmt.Sprintf("%s>%s/%d/%d", rec.Src, rec.Dst, rec.DestQPN, rec.Epoch)] = rec
	}
	if len(recs) != len(tab.Flows()) {
		r.errorf("flows json: %d records, the table has %d flows", len(recs), len(tab.Flows()))
	}
	for _, f := range tab.Flows() {
		k := fmt.Sprintf("%s>%s/%d/%d", f.Key.Src, f.Key.Dst, f.Key.DestQP, f.Epoch)
		rec, ok := byKey[k]
		if !ok {
			r.errorf("flows json: no record %s", k)
			continue
		}
		want := flowtable.NewRecord(f)
		// Fields that name other flows or frames by number, or depend
		// on the frame numbering, are compared by what they mean.
		want.ID, rec.ID = 0, 0
		want.PartnerID, rec.PartnerID = nil, nil
		want.First, want.Last, rec.First, rec.Last = "", "", "", ""
		want.FirstFrame, want.LastFrame, rec.FirstFrame, rec.LastFrame = 0, 0, 0, 0
		want.FirstFile, want.LastFile, rec.FirstFile, rec.LastFile = "", "", "", ""
		want.DurationS, want.MeanBps, want.PeakBps, rec.DurationS, rec.MeanBps, rec.PeakBps = 0, 0, 0, 0, 0, 0
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(rec)
		if string(wj) != string(gj) {
			r.errorf("flows json %s differs from the table: %s", k, firstDiff(string(wj), string(gj)))
		}
	}
}

// TestTruthSamePSNs checks, as the randomized test does (flows table, and
// `rocedump flows` with one and two workers), a scenario of QPs of one
// host pair that all start at PSN 0 (NCCL) with a NAK, an RNR NAK and a
// timeout on different QPs: each NAK's go-back-N or retry is its own
// QP's, and no other QP's resend is taken for it.
func TestTruthSamePSNs(t *testing.T) {
	path := filepath.Join("testdata", "truth", "nccl_qps_same_psns.yaml")
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if errs := randCheckYAML(t, t.TempDir(), "same-psns", y, true); len(errs) > 0 {
		t.Errorf("%s:\n  %s", path, strings.Join(errs, "\n  "))
	}
}

// TestTruthAckAheadSharedHosts checks, as TestTruthSamePSNs does, a
// connection whose last ACK names a PSN two past the highest request
// captured (the mirror missed a WRITE's tail) while other connections,
// at PSNs far from its own, share its host pair both ways: it is paired
// all the same, and the PSNs the mirror missed are mirror loss.
func TestTruthAckAheadSharedHosts(t *testing.T) {
	path := filepath.Join("testdata", "truth", "ack_ahead_shared_hosts.yaml")
	y, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if errs := randCheckYAML(t, t.TempDir(), "ack-ahead", y, true); len(errs) > 0 {
		t.Errorf("%s:\n  %s", path, strings.Join(errs, "\n  "))
	}
}

// TestTruthTriage checks, as TestTruthSamePSNs does, the scenarios of
// failures the randomized test found and flows now decides: a READ, its
// flow's first packet, retried after an RNR NAK on a connection the mirror
// copies; an XRC and an RC QP at the same PSNs; two QPs READing at the same
// PSN, the longer READ's first response lost; RNR NAKs for packets the
// mirror missed (mirror loss, though the RNR retry fills the gap); the
// copy of a READ whose first responses the mirror missed, coming after two
// more READs.
func TestTruthTriage(t *testing.T) {
	for _, name := range []string{"read_rnr_retry_first_copied", "xrc_rc_same_psns", "reads_same_psns", "rnr_mirror_drop", "read_mirror_missed_first_later_reads", "fatal_nak_mirror_drop"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", "truth", name+".yaml")
			y, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if errs := randCheckYAML(t, t.TempDir(), name, y, true); len(errs) > 0 {
				t.Errorf("%s:\n  %s", path, strings.Join(errs, "\n  "))
			}
		})
	}
}
