package reports

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// TestECNOneDirection: CE marks A→B in a capture that holds no RoCE
// packet from B to A (a mirror of one direction) cannot be judged: the
// CNPs B sent, if any, were not mirrored. They were counted not acted on,
// and ecn_not_acted said "no CNP back". A direction with traffic back but
// no CNP is still not acted on.
func TestECNOneDirection(t *testing.T) {
	s := &synth{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := NewCollector(flows.NewTable(flows.Config{}), Config{ECNWindow: time.Millisecond})
	add := func(p *packet.Packet, us float64) { c.Add(p, s.ref(us)) }
	// A→B: 3 marks, more requests for 3 ms, nothing back.
	for i, us := range []float64{0, 1, 2, 1500, 3000} {
		ecn := uint8(2)
		if i < 3 {
			ecn = 3
		}
		add(roce("10.0.0.1", "10.0.0.2", 0x200, opWriteOnly, uint32(i+1), 26, ecn), us)
	}
	// C→D: 2 marks, D ACKs but sends no CNP: not acted on.
	add(roce("10.0.1.1", "10.0.1.2", 0x201, opWriteOnly, 1, 26, 3), 10)
	add(roce("10.0.1.1", "10.0.1.2", 0x201, opWriteOnly, 2, 26, 3), 11)
	add(roce("10.0.1.2", "10.0.1.1", 0x101, bth.Opcode(0x11), 2, 26, 2), 15)
	add(roce("10.0.1.1", "10.0.1.2", 0x201, opWriteOnly, 3, 26, 2), 3001)
	c.Finish()
	got := c.ECN()
	a, b := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
	cc, d := netip.MustParseAddr("10.0.1.1"), netip.MustParseAddr("10.0.1.2")
	want := []ECNReaction{{Src: a, Dst: b, CEMarked: 3, NoReverse: true}, {Src: cc, Dst: d, CEMarked: 2, NotActed: 2}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		g := got[i]
		g.FirstNotActed, g.LastNotActed = nil, nil
		if g != want[i] {
			t.Errorf("direction %d: got %+v, want %+v", i, g, want[i])
		}
	}
	in := &Input{Flows: c.Table.Flows(), Collect: c, Config: c.cfg}
	fs := ecnNotActed(in)
	if len(fs) != 1 {
		t.Fatalf("ecn_not_acted:%s", summary(fs))
	}
	wantCounts(t, fs[0], map[string]float64{"ce_marked": 5, "not_acted": 2, "undecided": 3, "directions": 1})
	if len(fs[0].Evidence.Details) != 1 || fs[0].Evidence.Details[0] != "10.0.1.1 > 10.0.1.2: 2 of 2 CE marks without a CNP back" {
		t.Errorf("details %q", fs[0].Evidence.Details)
	}
}

// TestOneDirectionMirror: the generated ECN capture seen as a mirror of
// the requesters' direction only (every packet from a .1 address), and
// as a mix (one host pair both ways). The CNPs went the other way and
// were not mirrored: no "CE marks with no CNP back"; capture_health says
// which connections are seen one way (warning when all are, info when
// some are).
func TestOneDirectionMirror(t *testing.T) {
	src := genCapture(t, "report_ecn")
	fromDot1 := func(p *packet.Packet) bool { return p.Src.Is4() && p.Src.As4()[3] == 1 }
	t.Run("requests only", func(t *testing.T) {
		in := loadInput(t, filterCapture(t, src, fromDot1), "")
		fs := runAll(in)
		for _, f := range ofKind(fs, KindECNNotActed) {
			if hasCount(&f, "not_acted") {
				t.Errorf("ecn_not_acted on a mirror of one direction: %s %v", summary([]Finding{f}), f.Evidence.Details)
			}
		}
		// No CNP in the capture: the congestion finding does not say
		// DCQCN cut a rate.
		if cg := ofKind(fs, KindCongestion); len(cg) != 1 || strings.Contains(cg[0].Detail, "DCQCN cut") ||
			!strings.Contains(cg[0].Detail, "the capture holds no CNP back") {
			t.Errorf("congestion:%s %v", summary(cg), cg)
		}
		ow := oneWayOf(fs)
		if ow == nil || ow.Severity != Warning {
			t.Fatalf("want a capture_health warning for one direction:%s", summary(fs))
		}
		n := ow.Evidence.Counts["connections"]
		if n == 0 || ow.Evidence.Counts["one_way_flows"] != n || len(ow.Flows) != int(n) {
			t.Errorf("one direction: %v, flows %v", ow.Evidence.Counts, ow.Flows)
		}
	})
	t.Run("mixed", func(t *testing.T) {
		pair := netip.MustParsePrefix("10.0.0.0/24")
		in := loadInput(t, filterCapture(t, src, func(p *packet.Packet) bool { return fromDot1(p) || pair.Contains(p.Src) }), "")
		fs := runAll(in)
		ow := oneWayOf(fs)
		if ow == nil || ow.Severity != Info {
			t.Fatalf("want a capture_health info for one direction:%s", summary(fs))
		}
		if c := ow.Evidence.Counts; c["one_way_flows"] == 0 || c["one_way_flows"] >= c["connections"] {
			t.Errorf("one direction: %v", c)
		}
		for _, id := range ow.Flows {
			if f := in.Flows[id-1]; pair.Contains(f.Key.Src) {
				t.Errorf("flow %d %s is seen both ways", id, flowName(f))
			}
		}
	})
}

// oneWayOf is the capture_health finding of connections seen one way.
func oneWayOf(fs []Finding) *Finding {
	for i := range fs {
		if fs[i].Kind == KindCaptureHealth && hasCount(&fs[i], "one_way_flows") {
			return &fs[i]
		}
	}
	return nil
}

// filterCapture writes the frames of capture src whose packet keep
// accepts (frames that do not decode are kept), as a mirror that saw
// only those would, and returns its path.
func filterCapture(t *testing.T, src string, keep func(*packet.Packet) bool) string {
	t.Helper()
	r, err := capture.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		buf bytes.Buffer
		w   *gen.PcapWriter
		rec capture.Record
		dec packet.Decoder
		p   packet.Packet
	)
	for {
		err := r.Next(&rec)
		if err == io.EOF || errors.Is(err, capture.ErrCutOff) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if w == nil {
			if w, err = gen.NewPcapWriter(&buf, uint32(rec.LinkType), 0, true, false); err != nil {
				t.Fatal(err)
			}
		}
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) == nil && p.Kind == packet.KindRoCE && !keep(&p) {
			continue
		}
		if err := w.WriteFrame(rec.Timestamp, rec.Data, rec.OrigLen); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "one-way.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTimeoutOneDirection: on a mirror of the requesters' direction only,
// resends whose NAKs went the other way look like ACK timeouts; the
// timeout finding says which of its QPs show nothing back, as the full
// capture's does not.
func TestTimeoutOneDirection(t *testing.T) {
	src := genCapture(t, "retransmissions")
	timeouts := func(in *Input) *Finding {
		fs := Retransmissions(in)
		return retxVariant(fs, KindRetransmission, "timeouts")
	}
	full := timeouts(loadInput(t, src, ""))
	if full == nil {
		t.Fatal("no timeout finding in the full capture")
	}
	if strings.Contains(full.Detail, "mirror of one direction") {
		t.Errorf("full capture: %s", full.Detail)
	}
	in := loadInput(t, filterCapture(t, src, func(p *packet.Packet) bool { return p.Src.Is4() && p.Src.As4()[3] == 1 }), "")
	one := timeouts(in)
	if one == nil {
		t.Fatal("no timeout finding on the requests' direction")
	}
	if !strings.Contains(one.Detail, "show no packet back in the capture (a mirror of one direction") {
		t.Errorf("detail does not say the QPs are seen one way: %s", one.Detail)
	}
	for _, l := range one.Evidence.Details {
		if !strings.HasSuffix(l, ", nothing captured back") {
			t.Errorf("detail line %q", l)
		}
	}
}

// TestMergeOneDirection: rocedump merge makes the one-direction finding
// again from the flow records, by their transport: a UC flow with nothing
// back is no connection seen one way (its flows had every transport RC).
func TestMergeOneDirection(t *testing.T) {
	at := "2026-01-01T00:00:01Z"
	rec := func(id int, src, dst, transport string, partner *int) flowtable.Record {
		return flowtable.Record{ID: id, Src: src, Dst: dst, DestQPN: 0x100 + uint32(id), Transport: transport, PartnerID: partner,
			Packets: 10, First: at, Last: at}
	}
	one, two := 1, 2
	a := &Report{SchemaVersion: SchemaVersion, Capture: CaptureInfo{Files: []string{"a.pcap"}, Packets: 40, RoCE: 40},
		Flows: []flowtable.Record{
			rec(1, "10.0.1.1", "10.0.1.2", "RC", &two), rec(2, "10.0.1.2", "10.0.1.1", "RC", &one),
			rec(3, "10.0.0.1", "10.0.0.2", "RC", nil), rec(4, "10.0.3.1", "10.0.3.2", "UC", nil),
		}}
	r, err := Merge([]MergeSource{{"a.json", a}}, MergeOptions{Tool: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ow := oneWayOf(r.Findings)
	if ow == nil {
		t.Fatalf("no one-direction finding:%s", summary(r.Findings))
	}
	wantCounts(t, *ow, map[string]float64{"one_way_flows": 1, "connections": 2, "host_directions": 1})
}

// TestOneDirectionResendsAsCopies: with one direction mirrored, go-back-N
// resends that came soon after their originals (no NAK in the capture to
// explain them) are taken for the mirror's copies, not ACK timeouts; the
// one-direction finding says so, as the mirror copies finding shows them.
func TestOneDirectionResendsAsCopies(t *testing.T) {
	src := genCapture(t, "retx_mixed")
	in := loadInput(t, filterCapture(t, src, func(p *packet.Packet) bool { return !(p.Src == netip.MustParseAddr("10.0.10.2")) }), "")
	var copies, oneWay *Finding
	fs := CaptureHealth(in)
	for i := range fs {
		switch {
		case strings.HasPrefix(fs[i].Title, "The mirror delivered"):
			copies = &fs[i]
		case strings.HasPrefix(fs[i].Title, "The capture shows only one direction"):
			oneWay = &fs[i]
		}
	}
	if copies == nil || oneWay == nil {
		t.Fatalf("want a mirror copies and a one-direction finding, got %+v", fs)
	}
	if !strings.Contains(oneWay.Detail, "the mirror copies finding as a mirror's copy") {
		t.Errorf("the one-direction detail does not say resends may be taken for mirror copies: %s", oneWay.Detail)
	}
}
