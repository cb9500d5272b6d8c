package flows

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/internal/testcaps"
)

// copyFrame is added to a copy's frame number: the copies of a doubled
// tape have frame numbers of their own, and the packets keep theirs, so
// that every FrameRef a flow keeps compares equal to the plain tape's.
const copyFrame = 1 << 30

// mirrored returns tape as a mirror whose sources overlap delivers it:
// every packet keep selects followed, delay later, by a copy that edit
// changes (its DSCP, ECN: what a copy taken after a switch may differ
// in). A copy comes after the packets captured at the same time as it,
// but right after its packet when delay is 0.
func mirrored(tape []taped, delay time.Duration, keep func(*packet.Packet) bool, edit func(*packet.Packet)) []taped {
	var out, copies []taped
	flush := func(until time.Time, strict bool) {
		for len(copies) > 0 && (copies[0].at.Time.Before(until) || !strict && copies[0].at.Time.Equal(until)) {
			out = append(out, copies[0])
			copies = copies[1:]
		}
	}
	for _, e := range tape {
		flush(e.at.Time, true)
		out = append(out, e)
		if !keep(&e.p) {
			continue
		}
		c := e
		c.at.Time = c.at.Time.Add(delay)
		c.at.Frame += copyFrame
		if edit != nil {
			edit(&c.p)
		}
		if delay == 0 {
			out = append(out, c)
			continue
		}
		copies = append(copies, c)
	}
	flush(time.Time{}, false)
	return append(out, copies...)
}

// mergecapped returns tape as mergecap merges a capture with itself: at
// each capture time, the packets of that time, then their copies, changed
// by edit (the copies of a microsecond capture then lag by the packets of
// a microsecond, and come after what a NAK asked for within it).
func mergecapped(tape []taped, keep func(*packet.Packet) bool, edit func(*packet.Packet)) []taped {
	var out []taped
	for i := 0; i < len(tape); {
		j := i
		for j < len(tape) && tape[j].at.Time.Equal(tape[i].at.Time) {
			j++
		}
		out = append(out, tape[i:j]...)
		for _, e := range tape[i:j] {
			if keep(&e.p) {
				e.at.Frame += copyFrame
				if edit != nil {
					edit(&e.p)
				}
				out = append(out, e)
			}
		}
		i = j
	}
	return out
}

// replay feeds a tape to a new table and finishes it.
func replay(tape []taped) *Table {
	tab := NewTable(Config{})
	for i := range tape {
		e := &tape[i]
		p := e.p
		tab.Add(&p, e.at)
	}
	tab.Finish()
	return tab
}

// flowView is everything a flow says but its mirror duplicates, for
// comparing a doubled capture's flows with the plain one's.
type flowView struct {
	ID, Epoch                            int
	Key                                  Key
	Transport                            bth.Transport
	Packets, WireBytes, PayloadBytes     uint64
	Messages, CNPs, ECNCE, FECN, BECN    uint64
	ICRCBad, Truncated, NAKOther, RNRNAK uint64
	NAKs                                 [5]uint64
	ECN                                  [4]uint64
	First, Last                          FrameRef
	HasPSN                               bool
	FirstPSN, LastPSN                    uint32
	Requests, ReadResponses              PSNStats
	Retx                                 RetxStats
	Events                               []RetxEvent
	Opcodes                              []OpcodeCount
	DSCP, RNRTimers                      []ValueCount
	Peak                                 float64
	Partner                              int
	PairedBy                             PairMethod
	SrcQP                                uint32
}

// diffFields names the fields in which two views differ.
func diffFields(a, b flowView) string {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	var out []string
	for i := range va.NumField() {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return strings.Join(out, ", ")
}

func viewOf(f *Flow) flowView {
	v := flowView{
		ID: f.ID, Epoch: f.Epoch, Key: f.Key, Transport: f.Transport,
		Packets: f.Packets, WireBytes: f.WireBytes, PayloadBytes: f.PayloadBytes,
		Messages: f.Messages, CNPs: f.CNPs, ECNCE: f.ECNCE, FECN: f.FECN, BECN: f.BECN,
		ICRCBad: f.ICRCBad, Truncated: f.Truncated, NAKOther: f.NAKOther, RNRNAK: f.RNRNAKs,
		NAKs: f.NAKs, ECN: f.ECN, First: f.First, Last: f.Last,
		HasPSN: f.HasPSN, FirstPSN: f.FirstPSN, LastPSN: f.LastPSN,
		Requests: f.Requests, ReadResponses: f.ReadResponses, Retx: f.Retx, Events: f.RetxEvents(),
		Opcodes: f.Opcodes(), DSCP: f.DSCP(), RNRTimers: f.RNRTimers(),
		Peak: f.PeakBitsPerSecond(), PairedBy: f.PairedBy, SrcQP: f.SrcQP,
	}
	if f.Partner != nil {
		v.Partner = f.Partner.ID
	}
	return v
}

// sameFlows checks that the doubled table holds the plain table's flows,
// counter for counter, and that its mirror duplicates are the copies.
// With countsOnly it compares the counts only (see countsView).
func sameFlows(t *testing.T, plain, doubled *Table, copies uint64, countsOnly bool) {
	t.Helper()
	var dups uint64
	for _, f := range plain.Flows() {
		if f.MirrorDuplicates() != 0 {
			t.Errorf("plain: flow %s has %d mirror duplicates, want none", flowName(f), f.MirrorDuplicates())
		}
	}
	if plain.Len() != doubled.Len() {
		t.Fatalf("%d flows with the copies, %d without", doubled.Len(), plain.Len())
	}
	for i, f := range doubled.Flows() {
		dups += f.MirrorDuplicates()
		got, want := viewOf(f), viewOf(plain.Flows()[i])
		if countsOnly {
			got, want = countsView(got), countsView(want)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("flow %s with the copies differs in %s:\n  %+v\nwithout:\n  %+v", flowName(f), diffFields(got, want), got, want)
		}
	}
	if dups != copies {
		t.Errorf("%d mirror duplicates, want %d", dups, copies)
	}
}

// countsView keeps what a view counts, and not which frame it counted or
// the marks and times of the packets it counted: where a copy is taken for
// a resend and the resend for its copy (see TestMirrorCopyAfterNAK).
func countsView(v flowView) flowView {
	c := flowView{
		ID: v.ID, Epoch: v.Epoch, Key: v.Key, Transport: v.Transport,
		Packets: v.Packets, WireBytes: v.WireBytes, PayloadBytes: v.PayloadBytes, Messages: v.Messages,
		CNPs: v.CNPs, NAKOther: v.NAKOther, RNRNAK: v.RNRNAK, NAKs: v.NAKs, Opcodes: v.Opcodes,
		Partner: v.Partner, PairedBy: v.PairedBy,
	}
	r := v.Retx
	c.Retx = RetxStats{GBNEpisodes: r.GBNEpisodes, GBNResent: r.GBNResent, Timeouts: r.Timeouts, TimeoutResent: r.TimeoutResent,
		RNRRetries: r.RNRRetries, RNRResent: r.RNRResent, ReissuedReads: r.ReissuedReads,
		MirrorLostPSNs: r.MirrorLostPSNs, MirrorGaps: r.MirrorGaps, FabricLostPSNs: r.FabricLostPSNs, FabricGaps: r.FabricGaps}
	for _, s := range []*PSNStats{&v.Requests, &v.ReadResponses} {
		c.Requests.Packets += s.Packets
		c.Requests.Retransmitted += s.Retransmitted
		c.Requests.PSNGaps += s.PSNGaps
		c.Requests.MissingPSNs += s.MissingPSNs
		c.Requests.OutOfOrder += s.OutOfOrder
	}
	return c
}

// notCNP keeps every packet but CNPs, whose copies count as CNPs
// (TestMirrorCNPs).
func notCNP(p *packet.Packet) bool { return !p.BTH.Opcode.IsCNP() }

// markCopy is a copy taken after the switch re-marked and congested it.
func markCopy(p *packet.Packet) { p.DSCP, p.ECN = 10, 3 }

// markedCE returns tape with CE on every packet keep selects: the flows a
// doubled tape whose copies markCopy edited must show, a packet counting
// as CE-marked when any copy of it is (see ce.go), but for a not-ECT one,
// which no switch marks (RFC 3168 §5); the copy's DSCP counts nowhere.
func markedCE(tape []taped, keep func(*packet.Packet) bool) []taped {
	out := slices.Clone(tape)
	for i := range out {
		if keep(&out[i].p) && out[i].p.ECN != 0 {
			out[i].p.ECN = 3
		}
	}
	return out
}

// mirrorDelays are the copies' delays the tests try: back to back, a few
// microseconds (several packets of a flow between the two), and most of
// MirrorWindow.
var mirrorDelays = []time.Duration{0, time.Microsecond, 3 * time.Microsecond, 40 * time.Microsecond, 200 * time.Microsecond}

// TestMirrorCopies doubles every packet of sequences with every kind of
// loss and recovery (retxCases: go-back-N after loss behind and before the
// mirror, a second NAK, a timeout, an RNR retry, a re-issued READ, mirror
// gaps, a QPN reused) and of the cases below, at each of mirrorDelays and
// with copies re-marked or not: the flows must be those of the plain
// sequence, counter for counter, event for event, frame for frame, and
// the copies their mirror duplicates.
func TestMirrorCopies(t *testing.T) {
	cases := map[string]func(c *clock){}
	for _, tc := range retxCases {
		cases[tc.name] = tc.play
	}
	cases["a single-packet SEND resent after a 1 ms ACK timeout"] = func(c *clock) {
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 500, 64))
		ack(c, aQP, 500)
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 501, 64))
		c.add(time.Millisecond, roce(hostA, hostB, opSendOnly, bQP, 501, 64))
		ack(c, aQP, 501)
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 502, 64))
		ack(c, aQP, 502)
	}
	// A timeout's resends, new packets, then a go-back-N, all within a
	// mirror lag: the copies of the timeout's resends come after the
	// go-back-N's run of resends.
	cases["a timeout's resends, new packets, then a go-back-N"] = func(c *clock) {
		for psn := range uint32(3) {
			c.add(us, roce(hostA, hostB, opSendOnly, bQP, psn, 64))
			ack(c, aQP, psn)
		}
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 3, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 4, 64)) // both lost after the mirror
		c.add(4*time.Millisecond, roce(hostA, hostB, opSendOnly, bQP, 3, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 4, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 5, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 6, 64)) // lost after the mirror
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 7, 64))
		c.add(2*us, roce(hostB, hostA, opAck, aQP, 5, 0))
		c.add(us, nak(hostB, hostA, aQP, 6, 0, false))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 6, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 7, 64))
		ack(c, aQP, 7)
	}
	// Three runs of resends within a mirror lag: a timeout's, an RNR
	// retry's, a go-back-N's.
	cases["a timeout's resends, an RNR retry, then a go-back-N"] = func(c *clock) {
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 0, 64))
		ack(c, aQP, 0)
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 1, 64)) // lost after the mirror
		c.add(4*time.Millisecond, roce(hostA, hostB, opSendOnly, bQP, 1, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 2, 64))
		c.add(2*us, roce(hostB, hostA, opAck, aQP, 1, 0))
		c.add(us, nak(hostB, hostA, aQP, 2, 1, true)) // RNR NAK, 10 µs
		c.add(10*us, roce(hostA, hostB, opSendOnly, bQP, 2, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 3, 64)) // lost after the mirror
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 4, 64))
		c.add(2*us, roce(hostB, hostA, opAck, aQP, 2, 0))
		c.add(us, nak(hostB, hostA, aQP, 3, 0, false))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 3, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 4, 64))
		ack(c, aQP, 4)
	}
	// The first request lost after the mirror: nothing comes back for the
	// 4 ms of the ACK timeout, which is no sign of a capture of one
	// direction; the copy of the resend comes after the next request.
	cases["the first request lost, resent after a 4 ms timeout"] = func(c *clock) {
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 0, 64))
		c.add(4*time.Millisecond, roce(hostA, hostB, opSendOnly, bQP, 0, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, bQP, 1, 64))
		c.add(300*us, roce(hostB, hostA, opAck, aQP, 0, 0))
		ack(c, aQP, 1)
	}
	cases["READs with responses of several packets, and dense ACKs"] = func(c *clock) {
		for i := range uint32(3) {
			psn := 1000 + 8*i
			c.add(us, readReq(hostA, hostB, bQP, psn, 0x10000*uint64(i+1), 4096))
			for j := range uint32(4) {
				op := []bth.Opcode{opReadFirst, opReadMid, opReadMid, opReadLast}[j]
				c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn+j, 1024))
			}
			for j := range uint32(4) {
				c.add(100*time.Nanosecond, roce(hostA, hostB, opWriteMid, bQP, psn+4+j, 1024))
				c.add(50*time.Nanosecond, roce(hostB, hostA, opAck, aQP, psn+4+j, 0))
			}
		}
	}
	cases["a connection set up by RDMA CM"] = func(c *clock) {
		playCM(c, 0x42, aQP, 100, bQP, 9000)
		connection(c, aQP, bQP, 100, 5)
	}
	// The cases and delays where the copy of a resent PSN comes after a
	// NAK for that PSN and before the resend it asks for: counts only.
	ambiguous := map[string]time.Duration{"a second NAK during go-back-N is a second episode": time.Microsecond}
	for name, play := range cases {
		var tape []taped
		c := newClock(Config{})
		c.tape = &tape
		play(c)
		plain, plainCE := replay(tape), replay(markedCE(tape, notCNP))
		copies := uint64(0)
		for i := range tape {
			if notCNP(&tape[i].p) {
				copies++
			}
		}
		for _, delay := range mirrorDelays {
			for _, edit := range []func(*packet.Packet){nil, markCopy} {
				t.Run(fmt.Sprintf("%s/%v/marked=%v", name, delay, edit != nil), func(t *testing.T) {
					want := plain
					if edit != nil {
						want = plainCE
					}
					sameFlows(t, want, replay(mirrored(tape, delay, notCNP, edit)), copies, ambiguous[name] == delay)
				})
			}
		}
	}
}

// TestMirrorCopiesCaptures doubles every frame of every capture in
// testdata/pcaps (generated ones with every recovery the generator plays,
// and real ones), back to back, 3 µs later, and as `mergecap -w out
// in.pcap in.pcap` does, and checks that the flows are those of the
// capture as it is.
func TestMirrorCopiesCaptures(t *testing.T) {
	for _, path := range testcaps.All(t, "../testdata/pcaps") {
		var tape []taped
		decodeEach(t, path, func(rec *capture.Record, p *packet.Packet) {
			if p.Kind == packet.KindRoCE && p.HasBTH {
				tape = append(tape, taped{*p, FrameRef{Frame: rec.Number, Time: rec.Timestamp}})
			}
		})
		plain := replay(tape)
		for _, f := range plain.Flows() {
			if f.MirrorDuplicates() != 0 {
				// A capture of a mirror that copies packets would say
				// nothing here: testdata has none but mirror_dup.
				if filepath.Base(path) != "mirror_dup.pcap" {
					t.Errorf("%s: flow %s has %d mirror duplicates, want none", path, flowName(f), f.MirrorDuplicates())
				}
			}
		}
		if filepath.Base(path) == "mirror_dup.pcap" {
			continue // TestGeneratedTruth checks it against its truth
		}
		copies := uint64(0)
		for i := range tape {
			if notCNP(&tape[i].p) {
				copies++
			}
		}
		plainCE := replay(markedCE(tape, notCNP))
		for _, delay := range []time.Duration{0, 3 * time.Microsecond} {
			t.Run(fmt.Sprintf("%s/%v", filepath.Base(path), delay), func(t *testing.T) {
				sameFlows(t, plainCE, replay(mirrored(tape, delay, notCNP, markCopy)), copies, false)
			})
		}
		t.Run(filepath.Base(path)+"/mergecap", func(t *testing.T) {
			sameFlows(t, plain, replay(mergecapped(tape, notCNP, nil)), copies, false)
		})
	}
}

// TestMirrorCopiesSomeFlows doubles the packets of one connection only:
// the other's flows have no mirror duplicates, and both count as plain.
func TestMirrorCopiesSomeFlows(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	for i := range uint32(6) {
		c.add(us, roce(hostA, hostB, opSendOnly, 0x11, 100+i, 64))
		c.add(us, roce(hostA, hostB, opSendOnly, 0x12, 200+i, 64))
		c.add(us, roce(hostB, hostA, opAck, 0x21, 100+i, 0))
		c.add(us, roce(hostB, hostA, opAck, 0x22, 200+i, 0))
	}
	onlyQP := func(p *packet.Packet) bool { return p.BTH.DestQP == 0x11 || p.BTH.DestQP == 0x21 }
	doubled := replay(mirrored(tape, 2*us, onlyQP, nil))
	sameFlows(t, replay(tape), doubled, 12, false)
	for _, f := range doubled.Flows() {
		want := uint64(0)
		if onlyQP(&packet.Packet{BTH: bth.BTH{DestQP: f.Key.DestQP}}) {
			want = 6
		}
		if f.MirrorDuplicates() != want {
			t.Errorf("flow %s: %d mirror duplicates, want %d", flowName(f), f.MirrorDuplicates(), want)
		}
	}
}

// TestMirrorWindow: a packet is a copy of the one before it with its PSN
// when it comes within MirrorWindow of it, and never when it comes twice
// that or more after it, when no NAK asked for it; a resend a NAK or an
// RNR NAK asked for is never a copy, however soon.
func TestMirrorWindow(t *testing.T) {
	tests := []struct {
		name   string
		play   func(c *clock)
		copies uint64
		retx   RetxStats
	}{
		{
			name: "just inside the window: a copy",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(MirrorWindow-time.Nanosecond, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
			},
			copies: 1,
		},
		{
			name: "twice the window: an ACK timeout",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(2*MirrorWindow, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
			},
			retx: RetxStats{Timeouts: 1, TimeoutResent: 1, TimeoutWait: durs(2 * MirrorWindow)},
		},
		{
			name: "a NAK asked for it: go-back-N, 1 µs after",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 11, 64))
				c.add(us, nak(hostB, hostA, aQP, 11, 0, false))
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 11, 64))
			},
			retx: RetxStats{GBNEpisodes: 1, GBNResent: 1, GBNRecovery: durs(us)},
		},
		{
			name: "an RNR NAK asked for it",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(us, nak(hostB, hostA, aQP, 10, 1, true))
				c.add(10*us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
			},
			retx: RetxStats{RNRRetries: 1, RNRResent: 1, RNRWait: durs(10 * us)},
		},
		{
			name: "the NAK sent again after its resend, on a mirror that copies nothing: a second go-back-N",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 11, 64))
				c.add(us, nak(hostB, hostA, aQP, 10, 0, false))
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64)) // lost again
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 11, 64))
				c.add(us, nak(hostB, hostA, aQP, 10, 0, false))
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 11, 64))
			},
			retx: RetxStats{GBNEpisodes: 2, GBNResent: 4, GBNRecovery: durs(us, us)},
		},
		{
			name: "an atomic ACK at an ACK's PSN is no copy of it",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opSendOnly, bQP, 10, 64))
				c.add(us, roce(hostB, hostA, opAck, aQP, 10, 0))
				c.add(us, roce(hostB, hostA, opAtomicAck, aQP, 10, 0))
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			tc.play(c)
			c.tab.Finish()
			var copies uint64
			for _, f := range c.tab.Flows() {
				copies += f.MirrorDuplicates()
			}
			if copies != tc.copies {
				t.Errorf("%d mirror duplicates, want %d", copies, tc.copies)
			}
			if r := c.tab.Current(key(hostA, hostB, bQP)); r.Retx != tc.retx {
				t.Errorf("Retx =\n  %+v\nwant\n  %+v", r.Retx, tc.retx)
			}
		})
	}
}

// TestMirrorCNPs: a CNP's copy with IPv4 ID 0 is counted as a CNP of its
// own: nothing else in a CNP tells it from the next one the NIC sends
// (see the package doc; TestMirrorCNPCopiesByIPID for the IDs).
func TestMirrorCNPs(t *testing.T) {
	var tape []taped
	c := newClock(Config{})
	c.tape = &tape
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 10, 64))
	c.add(us, roce(hostB, hostA, bth.OpcodeCNP, aQP, 0, 0))
	c.add(us, roce(hostB, hostA, opAck, aQP, 10, 0))
	all := func(*packet.Packet) bool { return true }
	tab := replay(mirrored(tape, 0, all, nil))
	f := tab.Current(key(hostB, hostA, aQP))
	if f.CNPs != 2 || f.MirrorDuplicates() != 1 || f.Packets != 3 {
		t.Errorf("CNPs %d, mirror duplicates %d, packets %d; want 2, 1 (the ACK's copy), 3", f.CNPs, f.MirrorDuplicates(), f.Packets)
	}
}

// TestMirrorCopyAllocs: a copy allocates nothing once its flow has shown
// a resend (the copy of a resend reads the run it is in).
func TestMirrorCopyAllocs(t *testing.T) {
	c := newClock(Config{})
	writes(c, bQP, 100, 103, us)
	c.add(us, nak(hostB, hostA, aQP, 102, 0, false))
	writes(c, bQP, 102, 103, us)
	p := roce(hostA, hostB, opWriteMid, bQP, 103, 1024)
	at := FrameAt{FrameRef: FrameRef{Time: c.now}, Nanos: c.now.UnixNano()}
	n := testing.AllocsPerRun(100, func() { c.tab.AddFrame(p, &at) })
	if n != 0 {
		t.Errorf("%v allocations per copy, want 0", n)
	}
	if f := c.tab.Current(key(hostA, hostB, bQP)); f.MirrorDuplicates() == 0 || f.Retx.GBNEpisodes != 1 {
		t.Errorf("mirror duplicates %d, go-back-N episodes %d; want copies and 1", f.MirrorDuplicates(), f.Retx.GBNEpisodes)
	}
}

// TestMirrorCopyAfterNAK: a copy the mirror delivers after a NAK for its
// PSN, before the resend the NAK asks for, is taken for that resend, and
// the resend for a copy: the counts are those without the copy, the
// recovery time starts at the copy.
func TestMirrorCopyAfterNAK(t *testing.T) {
	c := newClock(Config{})
	writes(c, bQP, 100, 103, us)
	c.add(us, nak(hostB, hostA, aQP, 102, 0, false))
	writes(c, bQP, 102, 102, 0)    // the copy of 102, 3 µs late
	writes(c, bQP, 102, 103, 2*us) // the resend
	writes(c, bQP, 103, 103, 0)    // the copy of 103 (the first)
	f := only(t, c, key(hostA, hostB, bQP))
	want := RetxStats{GBNEpisodes: 1, GBNResent: 2, GBNRecovery: durs(0)}
	if f.Retx != want || f.MirrorDuplicates() != 2 || f.Packets != 6 {
		t.Errorf("Retx %+v, mirror duplicates %d, packets %d; want %+v, 2, 6", f.Retx, f.MirrorDuplicates(), f.Packets, want)
	}
}

// TestMirrorOneDirection: a mirror of one direction shows no NAK, so a
// go-back-N's resends, microseconds after the packets they resend, look
// like a lagging mirror's copies. Once the flow has gone oneWayAfter with
// no packet the other way between its hosts, they count as resent, as
// before the copy rule; a copy of the last packet is still a copy.
func TestMirrorOneDirection(t *testing.T) {
	c := newClock(Config{})
	writes(c, bQP, 100, 104, us)
	c.add(2*time.Millisecond, roce(hostA, hostB, opWriteMid, bQP, 105, 1024))
	writes(c, bQP, 106, 110, us)
	writes(c, bQP, 107, 110, 2*us) // go-back-N from 107: its NAK went the other way
	writes(c, bQP, 111, 112, us)
	c.add(us, roce(hostA, hostB, opWriteMid, bQP, 112, 1024)) // the mirror's copy of 112
	f := only(t, c, key(hostA, hostB, bQP))
	if f.Requests.Retransmitted != 4 || f.MirrorDuplicates() != 1 {
		t.Errorf("Retransmitted %d, MirrorDuplicates %d; want 4 resent and 1 copy", f.Requests.Retransmitted, f.MirrorDuplicates())
	}
}

// TestReadReissuedWhole: the first response packet of a READ is lost
// before the mirror, so its later ones open a gap in the READ responses;
// the requester re-issues the whole READ (its own PSN, address and length)
// microseconds later, as a mirror's copy would come. It is a re-issued
// READ, not a copy, and the responses it draws are resent, not copies.
// The same READ repeated without the gap is still a copy.
func TestReadReissuedWhole(t *testing.T) {
	c := newClock(Config{})
	resp := func(psn uint32, ops ...bth.Opcode) {
		for i, op := range ops {
			c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
		}
	}
	c.add(us, readReq(hostA, hostB, bQP, 1000, 0x10000, 4096))
	resp(1000, opReadFirst, opReadMid, opReadMid, opReadLast)
	c.add(us, readReq(hostA, hostB, bQP, 1004, 0x20000, 4096))
	resp(1005, opReadMid, opReadMid, opReadLast) // 1004 lost
	c.add(3*us, readReq(hostA, hostB, bQP, 1004, 0x20000, 4096))
	resp(1004, opReadFirst, opReadMid, opReadMid, opReadLast)
	c.add(us, readReq(hostA, hostB, bQP, 1008, 0x30000, 4096))
	c.add(us, readReq(hostA, hostB, bQP, 1008, 0x30000, 4096)) // the mirror's copy
	resp(1008, opReadFirst, opReadMid, opReadMid, opReadLast)
	r := only(t, c, key(hostA, hostB, bQP))
	if r.Retx.ReissuedReads != 1 || r.Requests.Retransmitted != 1 || r.Retx.Timeouts != 0 || r.MirrorDuplicates() != 1 || r.Messages != 3 {
		t.Errorf("requests: ReissuedReads %d, Retransmitted %d, Timeouts %d, MirrorDuplicates %d, Messages %d; want 1, 1, 0, 1, 3",
			r.Retx.ReissuedReads, r.Requests.Retransmitted, r.Retx.Timeouts, r.MirrorDuplicates(), r.Messages)
	}
	s := only(t, c, key(hostB, hostA, aQP)).ReadResponses
	if s.Packets != 15 || s.PSNGaps != 1 || s.OutOfOrder != 1 || s.Retransmitted != 3 || s.MissingPSNs != 0 {
		t.Errorf("READ responses %+v; want 15 packets, 1 gap filled out of order, 3 resent", s)
	}
}

// TestReadReissueRETHCut: behind an ERSPAN III header with its platform
// subheader and a VLAN tag, 128-byte snaps cut the RETH of READ requests.
// The PSNs still tell a re-issued READ: one past the previous READ's PSN
// and at or before the READ responses already captured (a new READ comes
// after them), or the previous READ's own PSN while its responses skip
// it. The responses a re-issue draws are resent, not mirror copies; a
// copy of a new READ is still a copy.
func TestReadReissueRETHCut(t *testing.T) {
	c := newClock(Config{})
	read, resp := cutReads(c)
	read(1000)
	resp(1000, opReadFirst, opReadMid)
	resp(1003, opReadLast) // 1002 lost before the mirror
	read(1002)
	resp(1002, opReadFirst, opReadLast)
	read(1004)
	resp(1004, opReadFirst, opReadMid, opReadMid, opReadLast) // 1005 lost after the mirror
	read(1005)
	resp(1005, opReadFirst, opReadMid, opReadLast)
	read(1008)
	resp(1009, opReadMid, opReadMid, opReadLast) // 1008 lost before the mirror
	read(1008)
	resp(1008, opReadFirst, opReadMid, opReadMid, opReadLast)
	read(1012)
	read(1012) // the mirror's copy
	resp(1012, opReadFirst, opReadMid, opReadMid, opReadLast)
	r := only(t, c, key(hostA, hostB, bQP))
	if r.Retx.ReissuedReads != 3 || r.Retx.Timeouts != 0 || r.MirrorDuplicates() != 1 || r.Messages != 4 {
		t.Errorf("requests: ReissuedReads %d, Timeouts %d, MirrorDuplicates %d, Messages %d; want 3, 0, 1, 4",
			r.Retx.ReissuedReads, r.Retx.Timeouts, r.MirrorDuplicates(), r.Messages)
	}
	s := only(t, c, key(hostB, hostA, aQP))
	if rr := s.ReadResponses; s.MirrorDuplicates() != 0 || rr.PSNGaps != 2 || rr.OutOfOrder != 2 || rr.Retransmitted != 7 {
		t.Errorf("READ responses: MirrorDuplicates %d, %+v; want no copy, 2 gaps filled out of order, 7 resent", s.MirrorDuplicates(), rr)
	}
}

// TestReadReissueOutstanding: two READs outstanding, a response packet of
// the first lost before the mirror. The requester re-issues the first
// READ from the missing PSN, behind the second READ's: a re-issue, not a
// mirror copy, and so are the responses it draws.
func TestReadReissueOutstanding(t *testing.T) {
	c := newClock(Config{})
	c.add(us, readReq(hostA, hostB, bQP, 1000, 0x10000, 4096))
	c.add(us, readReq(hostA, hostB, bQP, 1004, 0x20000, 4096))
	for _, psn := range []uint32{1000, 1002, 1003, 1004, 1005, 1006, 1007} { // 1001 lost
		op := []bth.Opcode{opReadFirst, opReadMid, opReadMid, opReadLast}[(psn-1000)%4]
		c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn, 1024))
	}
	c.add(3*us, readReq(hostA, hostB, bQP, 1001, 0x10000+1024, 3072))
	for i, op := range []bth.Opcode{opReadFirst, opReadMid, opReadLast} {
		c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, 1001+uint32(i), 1024))
	}
	r := only(t, c, key(hostA, hostB, bQP))
	if r.Retx.ReissuedReads != 1 || r.Retx.Timeouts != 0 || r.MirrorDuplicates() != 0 || r.Messages != 2 {
		t.Errorf("requests: ReissuedReads %d, Timeouts %d, MirrorDuplicates %d, Messages %d; want 1, 0, 0, 2",
			r.Retx.ReissuedReads, r.Retx.Timeouts, r.MirrorDuplicates(), r.Messages)
	}
	s := only(t, c, key(hostB, hostA, aQP))
	if rr := s.ReadResponses; s.MirrorDuplicates() != 0 || rr.OutOfOrder != 1 || rr.Retransmitted != 2 {
		t.Errorf("READ responses: MirrorDuplicates %d, %+v; want no copy, 1 out of order, 2 resent", s.MirrorDuplicates(), rr)
	}
}

// TestMirrorMissedFirstResend: the mirror misses the first resend of a
// go-back-N, the PSN the NAK names. The resends after it are still the
// NAK's go-back-N, not copies of their originals.
func TestMirrorMissedFirstResend(t *testing.T) {
	c := newClock(Config{})
	writes(c, bQP, 100, 109, us)
	c.add(2*us, nak(hostB, hostA, aQP, 105, 0, false))
	writes(c, bQP, 106, 109, us) // the resend of 105 is not in the capture
	writes(c, bQP, 110, 112, us)
	ack(c, aQP, 112)
	f := only(t, c, key(hostA, hostB, bQP))
	if f.Retx.GBNEpisodes != 1 || f.Retx.GBNResent != 4 || f.MirrorDuplicates() != 0 || f.Packets != 17 {
		t.Errorf("Retx %+v, MirrorDuplicates %d, Packets %d; want 1 go-back-N episode of 4 resends, no copy, 17 packets",
			f.Retx, f.MirrorDuplicates(), f.Packets)
	}
}

// TestMirrorMissedReissuedFirst: a READ is re-issued from a lost response
// and the mirror misses the FIRST response that answers it. The later
// responses are resends the re-issued READ asked for, not copies.
func TestMirrorMissedReissuedFirst(t *testing.T) {
	c := newClock(Config{})
	c.add(us, readReq(hostA, hostB, bQP, 1000, 0x10000, 4096))
	for _, psn := range []uint32{1000, 1001, 1003} { // 1002 lost before the mirror
		op := []bth.Opcode{opReadFirst, opReadMid, opReadMid, opReadLast}[psn-1000]
		c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn, 1024))
	}
	c.add(3*us, readReq(hostA, hostB, bQP, 1002, 0x10000+2048, 2048))
	c.add(3*us, roce(hostB, hostA, opReadLast, aQP, 1003, 1024)) // its FIRST, 1002, missed
	s := only(t, c, key(hostB, hostA, aQP))
	if s.MirrorDuplicates() != 0 || s.ReadResponses.Retransmitted != 1 || s.Packets != 4 {
		t.Errorf("READ responses: MirrorDuplicates %d, %+v; want no copy, 1 resent, 4 packets", s.MirrorDuplicates(), s.ReadResponses)
	}
}

// TestReadReissuedFirstOfCapture: the capture's first READ on a QP loses
// its first response before the mirror, the later ones come, and the READ
// is re-issued whole a few microseconds later: there is no gap in READ
// responses that began with this READ, but they began past its PSN, so the
// repeat is its re-issue (and its responses resends), not a mirror copy;
// the mirror's copy of the re-issue, after that, is a copy.
func TestReadReissuedFirstOfCapture(t *testing.T) {
	c := newClock(Config{})
	resp := func(psn uint32, ops ...bth.Opcode) {
		for i, op := range ops {
			c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
		}
	}
	c.add(us, readReq(hostA, hostB, bQP, 1000, 0x10000, 4096))
	resp(1001, opReadMid, opReadMid, opReadLast) // 1000 lost before the mirror
	c.add(3*us, readReq(hostA, hostB, bQP, 1000, 0x10000, 4096))
	c.add(us, readReq(hostA, hostB, bQP, 1000, 0x10000, 4096)) // the mirror's copy of the re-issue
	resp(1000, opReadFirst, opReadMid, opReadMid, opReadLast)
	r := only(t, c, key(hostA, hostB, bQP))
	if r.Retx.ReissuedReads != 1 || r.Requests.Retransmitted != 1 || r.MirrorDuplicates() != 1 || r.Messages != 1 {
		t.Errorf("requests: ReissuedReads %d, Retransmitted %d, MirrorDuplicates %d, Messages %d; want 1, 1, 1, 1",
			r.Retx.ReissuedReads, r.Requests.Retransmitted, r.MirrorDuplicates(), r.Messages)
	}
}

// TestRNRNAKCopyAfterACK: a mirror lagging 70 µs behind an RNR NAK of 60
// µs delivers the NAK's copy after the retry and after the ACK that
// answered it. A responder does not NAK a PSN it has acknowledged: the
// NAK is a copy, not a second RNR NAK (and the request's copy is no second
// retry).
func TestRNRNAKCopyAfterACK(t *testing.T) {
	c := newClock(Config{})
	c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))
	c.add(4*us, nak(hostB, hostA, aQP, 0, 5, true)) // RNR NAK, 60 µs
	c.add(60*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))
	c.add(4*us, roce(hostB, hostA, opAck, aQP, 0, 0))
	c.add(2*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))  // the copy of the first
	c.add(4*us, nak(hostB, hostA, aQP, 0, 5, true))            // the NAK's copy
	c.add(60*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100)) // the retry's copy
	c.add(4*us, roce(hostB, hostA, opAck, aQP, 0, 0))          // the ACK's copy
	req, resp := only(t, c, key(hostA, hostB, bQP)), only(t, c, key(hostB, hostA, aQP))
	if resp.RNRNAKs != 1 || resp.MirrorDuplicates() != 2 || req.Retx.RNRRetries != 1 || req.MirrorDuplicates() != 2 {
		t.Errorf("RNR NAKs %d, response copies %d, RNR retries %d, request copies %d; want 1, 2, 1, 2",
			resp.RNRNAKs, resp.MirrorDuplicates(), req.Retx.RNRRetries, req.MirrorDuplicates())
	}
}

// TestRNRNAKCopyBeforeACK: a mirror lagging 34 µs behind an RNR NAK of
// 30 µs delivers the NAK's copy after the retry and before the ACK that
// answers it (here at the same microsecond). The connection is known to
// be copied and the NAK's copy is due: it is that copy, not a second RNR
// NAK, and the retry's copy no second retry. On the same mirror lagging
// 10 µs, the NAK's copy comes before the retry: an RNR NAK after the
// retry is the responder refusing it too, a second RNR NAK and retry.
func TestRNRNAKCopyBeforeACK(t *testing.T) {
	tests := []struct {
		name                     string
		play                     func(c *clock)
		naks, respCopies         uint64
		retries, reqCopies, retx uint64
	}{
		{
			name: "the copy after the retry, before its ACK",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))
				c.add(4*us, nak(hostB, hostA, aQP, 0, 3, true))            // RNR NAK, 30 µs
				c.add(30*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100)) // the retry
				c.add(0, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))     // the copy of the first
				c.add(4*us, nak(hostB, hostA, aQP, 0, 3, true))            // the NAK's copy
				c.add(0, roce(hostB, hostA, opAck, aQP, 0, 0))             // the ACK of the retry
				c.add(30*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100)) // the retry's copy
				c.add(4*us, roce(hostB, hostA, opAck, aQP, 0, 0))          // the ACK's copy
			},
			naks: 1, respCopies: 2, retries: 1, reqCopies: 2, retx: 1,
		},
		{
			name: "the copy before the retry, a second RNR NAK after it",
			play: func(c *clock) {
				c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))
				c.add(4*us, nak(hostB, hostA, aQP, 0, 3, true))            // RNR NAK, 30 µs
				c.add(6*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))  // the copy of the first
				c.add(4*us, nak(hostB, hostA, aQP, 0, 3, true))            // the NAK's copy
				c.add(20*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100)) // the retry
				c.add(4*us, nak(hostB, hostA, aQP, 0, 3, true))            // refused again
				c.add(6*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100))  // the retry's copy
				c.add(4*us, nak(hostB, hostA, aQP, 0, 3, true))            // the second NAK's copy
				c.add(20*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100)) // the second retry
				c.add(4*us, roce(hostB, hostA, opAck, aQP, 0, 0))
				c.add(6*us, roce(hostA, hostB, opWriteOnly, bQP, 0, 100)) // its copy
				c.add(4*us, roce(hostB, hostA, opAck, aQP, 0, 0))         // the ACK's copy
			},
			naks: 2, respCopies: 3, retries: 2, reqCopies: 3, retx: 2,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newClock(Config{})
			tc.play(c)
			req, resp := only(t, c, key(hostA, hostB, bQP)), only(t, c, key(hostB, hostA, aQP))
			got := []uint64{resp.RNRNAKs, resp.MirrorDuplicates(), req.Retx.RNRRetries, req.MirrorDuplicates(), req.Requests.Retransmitted}
			want := []uint64{tc.naks, tc.respCopies, tc.retries, tc.reqCopies, tc.retx}
			if !slices.Equal(got, want) {
				t.Errorf("RNR NAKs, response copies, RNR retries, request copies, retransmitted = %v, want %v", got, want)
			}
		})
	}
}

// TestReissuedReadAnswerCopy: a READ's last response lost before the
// mirror, the requester re-issues the READ for the rest after its timeout,
// and the mirror copies every packet: the answer to the re-issue is new
// (the responses never carried its PSN), and its copy a copy, not the
// resend the re-issue expects.
func TestReissuedReadAnswerCopy(t *testing.T) {
	c := newClock(Config{})
	twice := func(dt time.Duration, p func() *packet.Packet) {
		c.add(dt, p())
		c.add(0, p()) // the mirror's copy
	}
	twice(us, func() *packet.Packet { return readReq(hostA, hostB, bQP, 0, 0x10000, 604) })
	twice(4*us, func() *packet.Packet { return roce(hostB, hostA, opReadFirst, aQP, 0, 256) })
	twice(0, func() *packet.Packet { return roce(hostB, hostA, opReadMid, aQP, 1, 256) })
	// PSN 2 (the LAST) lost before the mirror; the READ again for the rest
	twice(4096*us, func() *packet.Packet { return readReq(hostA, hostB, bQP, 2, 0x10000+512, 92) })
	twice(4*us, func() *packet.Packet { return roce(hostB, hostA, opReadOnly, aQP, 2, 92) })
	resp := only(t, c, key(hostB, hostA, aQP))
	if resp.Packets != 3 || resp.MirrorDuplicates() != 3 || resp.ReadResponses.Retransmitted != 0 {
		t.Errorf("READ responses: %d packets, %d copies, %d resent; want 3, 3, 0",
			resp.Packets, resp.MirrorDuplicates(), resp.ReadResponses.Retransmitted)
	}
}

// TestReadResentAfterAnswer: the fabric loses a READ's first response
// after the mirror saw it; the requester, seeing the later one, asks for
// the READ again, whole (its own PSN, address and length), and the
// responder answers it again. The mirror copies nothing of the flow: the
// copy of the READ before it never came, and a mirror delivers a flow's
// copies in order, so the repeat is the READ resent (a timeout, as the
// capture shows no response missing) and its answer resent, not copies.
// A READ that is its flow's first packet, repeated the same way, stays a
// copy: nothing before it tells whether the mirror copies the flow.
func TestReadResentAfterAnswer(t *testing.T) {
	run := func(first bool) (*Flow, *Flow) {
		c := newClock(Config{})
		resp := func(psn uint32, ops ...bth.Opcode) {
			for i, op := range ops {
				c.add(0, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
			}
		}
		if !first {
			c.add(us, readReq(hostA, hostB, bQP, 0, 0x10000, 1197))
			c.add(4*us, nil)
			resp(0, opReadFirst, opReadLast)
		}
		c.add(us, readReq(hostA, hostB, bQP, 2, 0x20000, 1197))
		c.add(4*us, nil)
		resp(2, opReadFirst, opReadLast) // the FIRST lost after the mirror
		c.add(0, readReq(hostA, hostB, bQP, 2, 0x20000, 1197))
		c.add(4*us, nil)
		resp(2, opReadFirst, opReadLast)
		return only(t, c, key(hostA, hostB, bQP)), only(t, c, key(hostB, hostA, aQP))
	}
	r, s := run(false)
	if r.Requests.Retransmitted != 1 || r.Retx.Timeouts != 1 || r.MirrorDuplicates() != 0 || r.Messages != 2 {
		t.Errorf("requests: Retransmitted %d, Timeouts %d, MirrorDuplicates %d, Messages %d; want 1, 1, 0, 2",
			r.Requests.Retransmitted, r.Retx.Timeouts, r.MirrorDuplicates(), r.Messages)
	}
	if s.ReadResponses.Retransmitted != 2 || s.MirrorDuplicates() != 0 {
		t.Errorf("READ responses: Retransmitted %d, MirrorDuplicates %d; want 2, 0", s.ReadResponses.Retransmitted, s.MirrorDuplicates())
	}
	r, s = run(true)
	if r.Requests.Retransmitted != 0 || r.MirrorDuplicates() != 1 || s.MirrorDuplicates() != 2 {
		t.Errorf("first READ: Retransmitted %d, MirrorDuplicates %d, READ responses' %d; want 0, 1, 2",
			r.Requests.Retransmitted, r.MirrorDuplicates(), s.MirrorDuplicates())
	}
}

// TestReissuedReadCopyBeforeAnswer: the mirror copies every packet; a
// READ's middle response is lost before the mirror, and the requester
// re-issues the READ for the rest (a PSN ahead of the requests' highest).
// The re-issue's copy, captured before any response answers it, while the
// gap is still open, is a copy, not a second re-issue: a requester asks
// again only when a response shows a PSN missing, or after its timeout.
func TestReissuedReadCopyBeforeAnswer(t *testing.T) {
	c := newClock(Config{})
	twice := func(dt time.Duration, p func() *packet.Packet) {
		c.add(dt, p())
		c.add(0, p()) // the mirror's copy
	}
	twice(us, func() *packet.Packet { return readReq(hostA, hostB, bQP, 0, 0x10000, 3599) })
	for i, op := range []bth.Opcode{opReadFirst, opReadMid, opReadMid, opReadLast} {
		twice(0, func() *packet.Packet { return roce(hostB, hostA, op, aQP, uint32(i), 1024) })
	}
	twice(us, func() *packet.Packet { return readReq(hostA, hostB, bQP, 4, 0x20000, 3599) })
	twice(4*us, func() *packet.Packet { return roce(hostB, hostA, opReadFirst, aQP, 4, 1024) })
	twice(0, func() *packet.Packet { return roce(hostB, hostA, opReadMid, aQP, 5, 1024) })
	// PSN 6 lost before the mirror
	twice(0, func() *packet.Packet { return roce(hostB, hostA, opReadLast, aQP, 7, 527) })
	twice(0, func() *packet.Packet { return readReq(hostA, hostB, bQP, 6, 0x20000+2048, 1551) })
	twice(4*us, func() *packet.Packet { return roce(hostB, hostA, opReadFirst, aQP, 6, 1024) })
	twice(0, func() *packet.Packet { return roce(hostB, hostA, opReadLast, aQP, 7, 527) })
	r := only(t, c, key(hostA, hostB, bQP))
	if r.Packets != 3 || r.MirrorDuplicates() != 3 || r.Retx.ReissuedReads != 1 || r.Requests.Retransmitted != 1 {
		t.Errorf("requests: %d packets, %d copies, %d re-issued, %d resent; want 3, 3, 1, 1",
			r.Packets, r.MirrorDuplicates(), r.Retx.ReissuedReads, r.Requests.Retransmitted)
	}
}

// TestMirrorMissedReadFirstCopied: the mirror copies every packet of a
// connection and misses the first response of a READ that is not the
// flow's first packet. The copy of the READ, lagging more than a round
// trip, comes after the READ's later responses, whose PSNs skipped the
// READ's: as a re-issue of the READ would. It is the copy the mirror
// owes next (the copies of the packets before the READ have come, and
// none of its own), and nothing answers it from its PSN: it is a copy,
// and the copies of the later responses are copies, not resends; the
// flows are those of the capture without the copies, at every lag. The
// same READ re-issued (its first response lost before the mirror, the
// answer again from its PSN) stays a re-issue at every lag, its answer
// resent: a re-issue comes a round trip after the READ, before the copy
// of the packet before it unless the mirror lags less than that, and
// then the READ's copy came first. Both hold when two more READs follow
// the READ before its copy comes.
func TestMirrorMissedReadFirstCopied(t *testing.T) {
	resp := func(c *clock, psn uint32, ops ...bth.Opcode) {
		for i, op := range ops {
			c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
		}
	}
	plays := []struct {
		name     string
		reissued uint64 // re-issued READs
		play     func(c *clock)
	}{
		{"the mirror missed the first response", 0, func(c *clock) {
			c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 100, 512))
			c.add(4*us, roce(hostB, hostA, opAck, aQP, 100, 0))
			c.add(us, readReq(hostA, hostB, bQP, 101, 0x10000, 4096))
			c.add(4*us, nil)
			resp(c, 102, opReadMid, opReadMid, opReadLast) // 101 missed
			c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 105, 512))
			c.add(4*us, roce(hostB, hostA, opAck, aQP, 105, 0))
		}},
		{"the fabric lost the first response before the mirror", 1, func(c *clock) {
			c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 100, 512))
			c.add(4*us, roce(hostB, hostA, opAck, aQP, 100, 0))
			c.add(us, readReq(hostA, hostB, bQP, 101, 0x10000, 4096))
			c.add(4*us, nil)
			resp(c, 102, opReadMid, opReadMid, opReadLast) // 101 lost
			c.add(us, readReq(hostA, hostB, bQP, 101, 0x10000, 4096))
			c.add(4*us, nil)
			resp(c, 101, opReadFirst, opReadMid, opReadMid, opReadLast)
			c.add(us, roce(hostA, hostB, opWriteOnly, bQP, 105, 512))
			c.add(4*us, roce(hostB, hostA, opAck, aQP, 105, 0))
		}},
		// A READ before, whose response opens the READ responses (their
		// gap then skips the READ's first PSN), and two more READs
		// before the READ's copy comes (at the longer lags): it is no
		// longer one of the flow's last two READs, but the one whose
		// first response the gap skipped (flowCold.missedRead).
		{"the mirror missed the first response, two READs follow", 0, func(c *clock) {
			c.add(us, readReq(hostA, hostB, bQP, 100, 0x8000, 512))
			c.add(4*us, roce(hostB, hostA, opReadOnly, aQP, 100, 512))
			c.add(us, readReq(hostA, hostB, bQP, 101, 0x10000, 4096))
			c.add(4*us, nil)
			resp(c, 102, opReadMid, opReadMid, opReadLast) // 101 missed
			c.add(us, readReq(hostA, hostB, bQP, 105, 0x20000, 2048))
			c.add(4*us, nil)
			resp(c, 105, opReadFirst, opReadLast)
			c.add(us, readReq(hostA, hostB, bQP, 107, 0x30000, 2048))
			c.add(4*us, nil)
			resp(c, 107, opReadFirst, opReadLast)
		}},
		{"the fabric lost the first response before the mirror, two READs follow", 1, func(c *clock) {
			c.add(us, readReq(hostA, hostB, bQP, 100, 0x8000, 512))
			c.add(4*us, roce(hostB, hostA, opReadOnly, aQP, 100, 512))
			c.add(us, readReq(hostA, hostB, bQP, 101, 0x10000, 4096))
			c.add(4*us, nil)
			resp(c, 102, opReadMid, opReadMid, opReadLast) // 101 lost
			c.add(us, readReq(hostA, hostB, bQP, 101, 0x10000, 4096))
			c.add(4*us, nil)
			resp(c, 101, opReadFirst, opReadMid, opReadMid, opReadLast)
			c.add(us, readReq(hostA, hostB, bQP, 105, 0x20000, 2048))
			c.add(4*us, nil)
			resp(c, 105, opReadFirst, opReadLast)
			c.add(us, readReq(hostA, hostB, bQP, 107, 0x30000, 2048))
			c.add(4*us, nil)
			resp(c, 107, opReadFirst, opReadLast)
		}},
	}
	for _, tc := range plays {
		var tape []taped
		c := newClock(Config{})
		c.tape = &tape
		tc.play(c)
		plain := replay(tape)
		if r := plain.Current(key(hostA, hostB, bQP)); r.Retx.ReissuedReads != tc.reissued {
			t.Fatalf("%s, without copies: %d re-issued READs, want %d", tc.name, r.Retx.ReissuedReads, tc.reissued)
		}
		for _, delay := range append(mirrorDelays, 8*us) {
			t.Run(fmt.Sprintf("%s/%v", tc.name, delay), func(t *testing.T) {
				sameFlows(t, replay(markedCE(tape, notCNP)), replay(mirrored(tape, delay, notCNP, markCopy)), uint64(len(tape)), false)
			})
		}
	}
}

// TestReadReissueLastLostRETHCut: the RETH of READ requests cut, a READ's
// LAST response lost before the mirror. The requester re-issues the READ
// from that PSN, one past the highest READ response captured, a MIDDLE:
// its READ was not finished, so a READ at the next PSN re-issues it, where
// after a LAST or ONLY it would be a new READ.
func TestReadReissueLastLostRETHCut(t *testing.T) {
	c := newClock(Config{})
	read, resp := cutReads(c)
	read(2000)
	resp(2000, opReadFirst, opReadMid, opReadMid) // 2003, the LAST, lost before the mirror
	c.add(time.Millisecond, nil)
	read(2003) // the re-issue, for the last 1024 bytes
	resp(2003, opReadOnly)
	read(2004) // a new READ: after a READ's LAST
	resp(2004, opReadFirst, opReadMid, opReadMid, opReadLast)
	read(2008)
	resp(2008, opReadOnly)
	r := only(t, c, key(hostA, hostB, bQP))
	if r.Retx.ReissuedReads != 1 || r.Messages != 3 || r.MirrorDuplicates() != 0 {
		t.Errorf("requests: ReissuedReads %d, Messages %d, MirrorDuplicates %d; want 1, 3, 0",
			r.Retx.ReissuedReads, r.Messages, r.MirrorDuplicates())
	}
}

// cutReads returns what plays READs from A to B whose RETH the snap
// length cut (read), 1 µs after the packet before, and their responses
// (resp: ops from psn on, 1,024 bytes each, 100 ns apart).
func cutReads(c *clock) (read func(psn uint32), resp func(psn uint32, ops ...bth.Opcode)) {
	read = func(psn uint32) {
		p := readReq(hostA, hostB, bQP, psn, 0x10000, 4096)
		p.BTH.Ext &^= bth.HasRETH
		p.BTH.RETH = bth.RETH{}
		p.BTH.Truncated, p.Truncated = true, true
		c.add(us, p)
	}
	resp = func(psn uint32, ops ...bth.Opcode) {
		for i, op := range ops {
			c.add(100*time.Nanosecond, roce(hostB, hostA, op, aQP, psn+uint32(i), 1024))
		}
	}
	return read, resp
}
