package flows

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/gen"
)

// genCaptures lists the generated captures with their truth and scenario.
func genCaptures(t *testing.T) []string {
	t.Helper()
	truths, err := filepath.Glob("../testdata/pcaps/gen/*.truth.json")
	if err != nil || len(truths) == 0 {
		t.Fatalf("no generated truth files (%v)", err)
	}
	return truths
}

// loadTruth reads NAME.truth.json, the scenario NAME.yaml and finds the
// capture NAME.pcap[ng][.gz] beside the truth.
func loadTruth(t *testing.T, truthPath string) (tr *gen.Truth, sc *gen.Scenario, capPath string) {
	t.Helper()
	b, err := os.ReadFile(truthPath)
	if err != nil {
		t.Fatal(err)
	}
	tr = new(gen.Truth)
	if err := json.Unmarshal(b, tr); err != nil {
		t.Fatalf("%s: %v", truthPath, err)
	}
	name := strings.TrimSuffix(filepath.Base(truthPath), ".truth.json")
	sc, err = gen.LoadScenario(filepath.Join("../testdata/scenarios", name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(truthPath), name+".pcap*"))
	if len(matches) != 1 {
		t.Fatalf("%s: want one capture, found %v", name, matches)
	}
	return tr, sc, matches[0]
}

func truthKey(t *testing.T, ft *gen.FlowTruth) Key {
	t.Helper()
	return Key{Src: netip.MustParseAddr(ft.Src), Dst: netip.MustParseAddr(ft.Dst), DestQP: ft.DestQPN}
}

// opcodeByTruthName maps the truth's opcode names (gen.OpcodeName) back to
// opcodes. The truth names differ from bth.Opcode.String in two ways: it
// calls 0x80 "CNP_0x80" where bth calls both CNP opcodes "CNP", and it
// spells SEND_LAST_INVALIDATE / SEND_ONLY_INVALIDATE where bth (after
// Linux and Wireshark) says SEND_LAST_INV / SEND_ONLY_INV. Comparing by
// opcode number sidesteps both.
var opcodeByTruthName = func() map[string]bth.Opcode {
	m := map[string]bth.Opcode{}
	for i := range 256 {
		m[gen.OpcodeName(uint8(i))] = bth.Opcode(i)
	}
	return m
}()

// holes is what the scenario's losses before the mirror (fabric drops with
// seen: false) and at the mirror (mirror drops) leave in one PSN space.
type holes struct {
	gaps, missing, outOfOrder uint64
}

// expectedHoles derives PSNGaps, MissingPSNs and OutOfOrder for both
// directions of scenario flow f from its events. The rule:
//
//   - every run of packets absent from the file (a mirror_drop, or a
//     fabric_drop or timeout_drop with seen: false) is one PSN gap, provided
//     a later packet of the same PSN space is in the file: a later packet
//     of the same message, or, for a hole at the message's tail, the next
//     message (a reliable requester resends a lost tail after its timeout,
//     before anything new, so an RC fabric loss at the tail leaves no gap);
//   - a reliable transport resends fabric losses (go-back-N from the NAKed
//     PSN), so those PSNs arrive later and fill the gap: OutOfOrder;
//   - nobody resends mirror losses (the responder got them) nor UC/UD
//     losses: they stay in MissingPSNs.
//
// Events of a READ act on the response packets, so they count on the
// responder direction (ReadResponses); others on the requester's Requests.
func expectedHoles(f *gen.Flow) (req, resp holes) {
	reliable := f.Transport == "RC" || f.Transport == "XRC" || f.Transport == "RD"
	type msg struct {
		read bool
		n    int
	}
	var msgs []msg
	for _, op := range f.Ops {
		n := 1
		if op.Op != "cmp_swap" && op.Op != "fetch_add" && op.Bytes > 0 {
			n = (op.Bytes + f.MTU - 1) / f.MTU
		}
		for range max(op.Count, 1) {
			msgs = append(msgs, msg{read: op.Op == "read", n: n})
		}
	}
	for _, e := range f.Events {
		var d *gen.Drop
		mirror := false
		switch {
		case e.MirrorDrop != nil:
			d, mirror = e.MirrorDrop, true
		case e.FabricDrop != nil && e.FabricDrop.Seen != nil && !*e.FabricDrop.Seen:
			d = e.FabricDrop
		case e.TimeoutDrop != nil && e.TimeoutDrop.Seen != nil && !*e.TimeoutDrop.Seen:
			d = e.TimeoutDrop
		default:
			continue
		}
		m := msgs[e.AtMsg-1]
		off := 0
		if d.PSNOffset != nil {
			off = *d.PSNOffset
		} else if e.TimeoutDrop != nil {
			off = m.n - 1
		}
		cnt := max(d.Packets, 1)
		if e.TimeoutDrop != nil {
			cnt = m.n - off
		}
		cnt = min(cnt, m.n-off)
		h := &req
		if m.read {
			h = &resp
		}
		tail := off+cnt == m.n
		laterInSpace := false
		for _, later := range msgs[e.AtMsg:] {
			if later.read == m.read {
				laterInSpace = true
			}
		}
		resent := reliable && !mirror
		switch {
		case !tail:
		case resent:
			continue // resent after the timeout before anything newer
		case !laterInSpace:
			continue // nothing after the hole: the capture cannot tell
		}
		h.gaps++
		if resent {
			h.outOfOrder += uint64(cnt)
		} else {
			h.missing += uint64(cnt)
		}
	}
	return req, resp
}

// fatalNAKs counts the NAKs that end a connection (every code but PSN
// sequence error).
func fatalNAKs(ft *gen.FlowTruth) int {
	n := 0
	for code, c := range ft.NAKs {
		if code != bth.NAKPSNSequenceError.String() {
			n += c
		}
	}
	return n
}

// TestGeneratedTruth feeds every generated capture into a Table and checks
// each flow against the generator's truth.
func TestGeneratedTruth(t *testing.T) {
	for _, truthPath := range genCaptures(t) {
		name := strings.TrimSuffix(filepath.Base(truthPath), ".truth.json")
		t.Run(name, func(t *testing.T) {
			tr, sc, capPath := loadTruth(t, truthPath)
			tab := feedFile(t, capPath)
			byKey := map[Key][]*Flow{}
			for _, f := range tab.Flows() {
				byKey[f.Key] = append(byKey[f.Key], f)
			}
			truthFlows := map[Key]*gen.FlowTruth{}
			for _, ft := range tr.Flows {
				truthFlows[truthKey(t, ft)] = ft
			}
			scFlows := map[string]*gen.Flow{}
			for i := range sc.Flows {
				scFlows[sc.Flows[i].Name] = &sc.Flows[i]
			}

			for _, ft := range tr.Flows {
				k := truthKey(t, ft)
				fs := byKey[k]
				if ft.Packets == 0 {
					if len(fs) != 0 {
						t.Errorf("%s/%s: truth has no packets, table has %d flows", ft.Flow, ft.Role, len(fs))
					}
					continue
				}
				if len(fs) != 1 {
					t.Errorf("%s/%s %v: want 1 flow (epoch 0), got %d", ft.Flow, ft.Role, k, len(fs))
					continue
				}
				f := fs[0]
				var partnerTruth *gen.FlowTruth
				for _, o := range tr.Flows {
					if o.Flow == ft.Flow && o != ft {
						partnerTruth = o
					}
				}
				reqHoles, respHoles := expectedHoles(scFlows[ft.Flow])
				h := reqHoles
				if ft.Role == "responder" {
					h = respHoles
				}
				lostLast := 0
				if ft.Role == "requester" {
					lostLast = mirrorDroppedLast(scFlows[ft.Flow])
				}
				checkFlow(t, f, ft, partnerTruth, h, lostLast)
			}

			// No flow beyond the truth's, except the CM MADs (UD to QP1,
			// counted in the truth's cm section) and frames whose ICRC is
			// bad on purpose (the malformed section): they are RoCE frames
			// with a BTH and belong to a flow, but the generator's flow
			// truth does not list them.
			cmMADs, icrcBad := 0, 0
			for _, f := range tab.Flows() {
				if truthFlows[f.Key] != nil {
					continue
				}
				switch {
				case f.Key.DestQP == bth.CMQPN:
					cmMADs += int(f.Packets)
				case f.ICRCBad == f.Packets:
					icrcBad += int(f.Packets)
				default:
					t.Errorf("flow %v (%d packets) is not in the truth", f.Key, f.Packets)
				}
			}
			wantMADs := 0
			for _, c := range tr.CM {
				for _, n := range c.Messages {
					wantMADs += n
				}
			}
			if cmMADs != wantMADs {
				t.Errorf("CM MAD packets on QP1 flows: got %d, want %d", cmMADs, wantMADs)
			}
			if icrcBad != tr.ICRCBadFrames {
				t.Errorf("packets in ICRC-bad-only flows: got %d, want %d", icrcBad, tr.ICRCBadFrames)
			}
			// A mirror's snap length can cut the CM MADs before the QPNs
			// and starting PSNs they name, and those flows then pair by
			// PSN: behind ERSPAN II, 802.1Q, IPv4, UDP, BTH and DETH a
			// REQ's starting PSN ends 187 bytes into the frame (cut at
			// 128 in retx_mirrored, whole at 256 in report_storage_mirror).
			cmWhole := sc.Snaplen == 0 || sc.Snaplen >= 192
			checkGenPairs(t, tab, tr, len(tr.CM) > 0 && cmWhole)
		})
	}
}

// mirrorDroppedLast counts the request messages of scenario flow f whose
// last packet the mirror dropped: delivered, so the truth counts them
// completed, but Flow.Messages counts a message at its last packet.
func mirrorDroppedLast(f *gen.Flow) int {
	var msgs []gen.Op
	for _, op := range f.Ops {
		for range max(op.Count, 1) {
			msgs = append(msgs, op)
		}
	}
	n := 0
	for _, e := range f.Events {
		d := e.MirrorDrop
		if d == nil || e.AtMsg < 1 || e.AtMsg > len(msgs) {
			continue
		}
		op := msgs[e.AtMsg-1]
		if op.Op == "read" {
			continue // the drop is of responses
		}
		pkts := 1
		if op.Op != "cmp_swap" && op.Op != "fetch_add" && op.Bytes > 0 {
			pkts = (op.Bytes + f.MTU - 1) / f.MTU
		}
		off := 0
		if d.PSNOffset != nil {
			off = *d.PSNOffset
		}
		if off+max(d.Packets, 1) >= pkts {
			n++
		}
	}
	return n
}

func checkFlow(t *testing.T, f *Flow, ft, partner *gen.FlowTruth, h holes, lostLast int) {
	t.Helper()
	id := ft.Flow + "/" + ft.Role
	eq := func(what string, got, want uint64) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %s = %d, want %d", id, what, got, want)
		}
	}
	eq("Packets", f.Packets, uint64(ft.Packets))
	eq("MirrorDuplicates", f.MirrorDuplicates(), uint64(ft.MirrorDuplicates))
	eq("WireBytes", f.WireBytes, uint64(ft.WireBytes))
	eq("PayloadBytes", f.PayloadBytes, uint64(ft.PayloadBytes))
	if f.Epoch != 0 {
		t.Errorf("%s: Epoch = %d, want 0", id, f.Epoch)
	}
	if got, want := f.Transport.String(), ft.Transport; got != want {
		t.Errorf("%s: Transport = %s, want %s", id, got, want)
	}

	// Opcodes, by number.
	want := map[bth.Opcode]uint64{}
	for name, n := range ft.Opcodes {
		op, ok := opcodeByTruthName[name]
		if !ok {
			t.Fatalf("%s: unknown truth opcode name %q", id, name)
		}
		want[op] = uint64(n)
	}
	got := map[bth.Opcode]uint64{}
	for _, oc := range f.Opcodes() {
		got[oc.Opcode] = oc.Count
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: opcodes = %v, want %v", id, opcodeNames(got), opcodeNames(want))
	}

	// Messages: the truth counts messages that completed (ACKed, or for
	// UC/UD delivered whole) on the requester direction. Flow.Messages
	// counts request messages whose last packet is in the capture, once
	// each. The two differ by the messages a fatal NAK refused: their
	// packets were sent (and captured) but they never completed. The
	// generator's scenarios lose no UC/UD message. They also differ by the
	// messages whose last packet the mirror dropped (lostLast).
	wantMsgs := ft.MessagesCompleted - lostLast
	if ft.Role == "requester" && partner != nil {
		wantMsgs += fatalNAKs(partner)
	}
	eq("Messages", f.Messages, uint64(wantMsgs))

	if ft.FirstPSN == nil {
		if f.HasPSN {
			t.Errorf("%s: HasPSN with no non-CNP packet in the truth", id)
		}
	} else {
		if !f.HasPSN {
			t.Errorf("%s: !HasPSN, want first PSN %d", id, *ft.FirstPSN)
		}
		eq("FirstPSN", uint64(f.FirstPSN), uint64(*ft.FirstPSN))
		eq("LastPSN", uint64(f.LastPSN), uint64(*ft.LastPSN))
	}

	eq("Retransmitted", f.Retransmitted(), uint64(ft.Retransmitted))
	eq("PSNGaps", f.PSNGaps(), h.gaps)
	eq("MissingPSNs", f.Requests.MissingPSNs+f.ReadResponses.MissingPSNs, h.missing)
	eq("OutOfOrder", f.Requests.OutOfOrder+f.ReadResponses.OutOfOrder, h.outOfOrder)

	for c := range f.NAKs {
		eq("NAKs["+bth.NAKCode(c).String()+"]", f.NAKs[c], uint64(ft.NAKs[bth.NAKCode(c).String()]))
	}
	var otherNAKs uint64
	for code, n := range ft.NAKs {
		if strings.HasPrefix(code, "nak_code_") || strings.HasPrefix(code, "reserved_") {
			otherNAKs += uint64(n)
		}
	}
	eq("NAKOther", f.NAKOther, otherNAKs)
	eq("RNRNAKs", f.RNRNAKs, uint64(ft.RNRNAKs))
	eq("CNPs", f.CNPs, uint64(ft.CNPs))
	eq("ECNCE", f.ECNCE, uint64(ft.CEMarked))
	eq("FECN", f.FECN, uint64(ft.FECN))
	eq("BECN", f.BECN, uint64(ft.BECN))

	wantDSCP := map[uint8]uint64{}
	for d, n := range ft.DSCP {
		v, err := strconv.Atoi(d)
		if err != nil {
			t.Fatalf("%s: DSCP %q: %v", id, d, err)
		}
		wantDSCP[uint8(v)] = uint64(n)
	}
	gotDSCP := map[uint8]uint64{}
	for _, vc := range f.DSCP() {
		gotDSCP[vc.Value] = vc.Count
	}
	if fmt.Sprint(gotDSCP) != fmt.Sprint(wantDSCP) {
		t.Errorf("%s: DSCP = %v, want %v", id, gotDSCP, wantDSCP)
	}
}

func opcodeNames(m map[bth.Opcode]uint64) string {
	var s []string
	for op, n := range m {
		s = append(s, fmt.Sprintf("%s(%#02x):%d", op, uint8(op), n))
	}
	sort.Strings(s)
	return strings.Join(s, " ")
}

// checkGenPairs checks Partner and PairedBy against the truth: the two
// directions of a scenario flow are each other's partner; a flow with no
// other direction in the truth (UC, UD) has none. With CM exchanges in the
// scenario the flows they name pair by CM, the rest by PSN.
func checkGenPairs(t *testing.T, tab *Table, tr *gen.Truth, haveCM bool) {
	t.Helper()
	find := func(ft *gen.FlowTruth) *Flow {
		for _, f := range tab.Flows() {
			if f.Key == truthKey(t, ft) {
				return f
			}
		}
		return nil
	}
	cmQPs := map[uint32]bool{}
	for _, c := range tr.CM {
		cmQPs[c.ClientQPN], cmQPs[c.ServerQPN] = true, true
	}
	for _, ft := range tr.Flows {
		f := find(ft)
		if f == nil {
			continue
		}
		var other *gen.FlowTruth
		for _, o := range tr.Flows {
			if o.Flow == ft.Flow && o != ft {
				other = o
			}
		}
		var wantPartner *Flow
		if other != nil {
			wantPartner = find(other)
		}
		if f.Partner != wantPartner {
			t.Errorf("%s/%s: Partner = %v, want %v", ft.Flow, ft.Role, flowName(f.Partner), flowName(wantPartner))
			continue
		}
		want := PairNone
		switch {
		case wantPartner == nil:
		case haveCM && cmQPs[ft.DestQPN]:
			want = PairCM
		default:
			want = PairPSN
		}
		if f.PairedBy != want {
			t.Errorf("%s/%s: PairedBy = %v, want %v", ft.Flow, ft.Role, f.PairedBy, want)
		}
		if f.Partner != nil {
			if q, ok := f.PartnerQPN(); !ok || q != ft.SrcQPN {
				t.Errorf("%s/%s: PartnerQPN = %#x, %v, want %#x", ft.Flow, ft.Role, q, ok, ft.SrcQPN)
			}
		}
	}
}

func flowName(f *Flow) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprintf("#%d %v>%v qp %#x", f.ID, f.Key.Src, f.Key.Dst, f.Key.DestQP)
}
