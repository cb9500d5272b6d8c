package reports

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// doubled writes a capture of src as a mirror whose sources overlap
// delivers it: every frame keep selects followed, delay later, by a copy
// that edit changes (nil: identical), and returns its path and the number
// of copies. At equal times a copy comes after the frames of its time, but
// right after its frame when delay is 0.
func doubled(t *testing.T, src string, delay time.Duration, keep func(p *packet.Packet) bool, edit func([]byte)) (string, int) {
	t.Helper()
	r, err := capture.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	type frame struct {
		ts   time.Time
		data []byte
		orig int
	}
	var (
		out, copies []frame
		rec         capture.Record
		dec         packet.Decoder
		p           packet.Packet
		link        uint32
		n           int
	)
	flush := func(until time.Time, strict bool) {
		for len(copies) > 0 && (copies[0].ts.Before(until) || !strict && !copies[0].ts.After(until)) {
			out, copies = append(out, copies[0]), copies[1:]
		}
	}
	for {
		err := r.Next(&rec)
		if err == io.EOF || errors.Is(err, capture.ErrCutOff) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		link = uint32(rec.LinkType)
		flush(rec.Timestamp, true)
		f := frame{rec.Timestamp, bytes.Clone(rec.Data), rec.OrigLen}
		out = append(out, f)
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil || !keep(&p) {
			continue
		}
		n++
		if delay < 0 {
			edit(out[len(out)-1].data) // edited in place, no copy (edited)
			continue
		}
		c := frame{f.ts.Add(delay), bytes.Clone(f.data), f.orig}
		if edit != nil {
			edit(c.data)
		}
		if delay == 0 {
			out = append(out, c)
			continue
		}
		copies = append(copies, c)
	}
	flush(time.Time{}, false)
	out = append(out, copies...)
	// The same name: findings name the file.
	path := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))+".pcap")
	var buf bytes.Buffer
	w, err := gen.NewPcapWriter(&buf, link, 0, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range out {
		if err := w.WriteFrame(f.ts, f.data, f.orig); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, n
}

// edited writes a capture of src with every frame keep selects changed
// by edit, and returns its path.
func edited(t *testing.T, src string, keep func(p *packet.Packet) bool, edit func([]byte)) string {
	t.Helper()
	path, _ := doubled(t, src, -1, keep, edit)
	return path
}

// roceNotCNP selects the RoCE frames but CNPs, whose copies count as CNPs.
func roceNotCNP(p *packet.Packet) bool {
	return p.Kind == packet.KindRoCE && p.HasBTH && !p.BTH.Opcode.IsCNP()
}

// routedCopy makes a frame (Ethernet, IPv4) the copy a switch's egress
// mirror takes: TTL 63, DSCP 10 and ECN CE, the router's source MAC.
func routedCopy(d []byte) {
	if len(d) < 34 || binary.BigEndian.Uint16(d[12:]) != 0x0800 {
		return
	}
	copy(d[6:12], []byte{0x02, 0, 0, 0, 0, 0xfe})
	d[15], d[22] = 10<<2|3, 63
	ipChecksum(d)
}

// ceFrame marks a frame (Ethernet, IPv4) CE, as the switch whose egress
// copy routedCopy makes marked the packet: what the packet is, counted
// once, when its copy shows the mark. A not-ECT packet a switch does not
// mark (RFC 3168 §5): the CE of its copy is no mark.
func ceFrame(d []byte) {
	if len(d) < 34 || binary.BigEndian.Uint16(d[12:]) != 0x0800 || d[15]&3 == 0 {
		return
	}
	d[15] |= 3
	ipChecksum(d)
}

// ipChecksum sets the header checksum of a frame's IPv4 header.
func ipChecksum(d []byte) {
	ip := d[14:34]
	binary.BigEndian.PutUint16(ip[10:], 0)
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
}

// reportJSON runs every module over in and returns the report as JSON,
// without what a copy changes in it though the analysis is the same: the
// frame numbers (a copy takes one) and the capture's frame counts.
func reportJSON(t *testing.T, in *Input, dropCopies bool) map[string]any {
	t.Helper()
	r := Run(in, "test")
	var kept []Finding
	for _, f := range r.Findings {
		if dropCopies && f.Kind == KindCaptureHealth && f.Evidence.Counts["mirror_duplicates"] > 0 {
			continue
		}
		for _, e := range []*Frame{f.Evidence.First, f.Evidence.Last} {
			if e != nil {
				e.Frame = 0
			}
		}
		kept = append(kept, f)
	}
	r.Findings = kept
	r.Summary = summarize(in, kept)
	r.Capture = CaptureInfo{}
	b, err := json.Marshal(struct {
		R     *Report
		Flows []flowtable.Record
	}{r, flowtable.Records(in.Flows)})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range m["Flows"].([]any) {
		fl := f.(map[string]any)
		delete(fl, "first_frame")
		delete(fl, "last_frame")
		delete(fl, "mirror_duplicates")
		if cm, _ := fl["cm"].(map[string]any); cm != nil {
			delete(cm, "frame")
		}
	}
	return m
}

// copiesFindingOf returns the capture_health finding about mirror copies.
func copiesFindingOf(t *testing.T, fs []Finding) *Finding {
	t.Helper()
	for i := range fs {
		if fs[i].Kind == KindCaptureHealth && strings.Contains(fs[i].Title, "twice") {
			return &fs[i]
		}
	}
	return nil
}

// TestMirrorCopiesReport doubles every frame but the CNPs of generated
// captures (clean ones, and retransmissions: go-back-N after loss behind
// and before the mirror, a timeout, RNR NAKs, a re-issued READ, fatal NAKs,
// a mirror gap), back to back and 3 µs later, as copied or as routed
// copies (TTL, DSCP, ECN CE and MAC changed): every finding and flow record
// must be the plain capture's, and capture_health must say how many frames
// came twice, on how many flows. A routed copy's CE marks its packet: the
// report is then the plain capture's with every packet CE-marked (the
// marks cite the copies' frames, later by the delay: the findings' times
// are left out at 3 µs).
func TestMirrorCopiesReport(t *testing.T) {
	for _, name := range []string{"report_clean_rails", "clean_allreduce", "retransmissions", "retx_mixed", "report_ecn"} {
		plainPath := genCapture(t, name)
		plain := loadInput(t, plainPath, "")
		marked := loadInput(t, edited(t, plainPath, roceNotCNP, ceFrame), "")
		for _, delay := range []time.Duration{0, 3 * time.Microsecond} {
			for _, edit := range []func([]byte){nil, routedCopy} {
				path, n := doubled(t, plainPath, delay, roceNotCNP, edit)
				t.Run(name+"/"+delay.String()+"/routed="+boolString(edit != nil), func(t *testing.T) {
					in := loadInput(t, path, "")
					base := plain
					if edit != nil {
						base = marked
					}
					// The time series, when the copies leave the
					// capture's span (and so the bins) as it was.
					if delay == 0 && !reflect.DeepEqual(in.Collect.Timeline(), base.Collect.Timeline()) {
						t.Errorf("timeline with the copies differs from the plain one")
					}
					want, got := reportJSON(t, base, false), reportJSON(t, in, true)
					if edit != nil && delay != 0 {
						dropTimes(want)
						dropTimes(got)
					}
					if !reflect.DeepEqual(got, want) {
						g, _ := json.MarshalIndent(got, "", " ")
						w, _ := json.MarshalIndent(want, "", " ")
						t.Errorf("report with the copies differs from the plain one:\n%s", firstDiff(string(g), string(w)))
					}
					f := copiesFindingOf(t, Run(in, "test").Findings)
					if f == nil {
						t.Fatalf("no capture_health finding about the copies")
					}
					var fl float64
					for _, x := range in.Flows {
						if x.MirrorDuplicates() > 0 {
							fl++
						}
					}
					wantCounts(t, *f, map[string]float64{"mirror_duplicates": float64(n), "flows": fl, "roce_packets": float64(in.Capture.RoCE)})
					if f.Severity != Warning || f.Evidence.First == nil || len(f.Flows) != int(fl) {
						t.Errorf("severity %v, first frame %v, %d flows; want warning, a frame, %v", f.Severity, f.Evidence.First, len(f.Flows), fl)
					}
				})
			}
		}
	}
}

// dropTimes leaves the times of the findings' first and last frames out
// of a reportJSON.
func dropTimes(m map[string]any) {
	r, _ := m["R"].(map[string]any)
	fs, _ := r["findings"].([]any)
	for _, f := range fs {
		ev, _ := f.(map[string]any)["evidence"].(map[string]any)
		for _, k := range []string{"first", "last"} {
			if fr, _ := ev[k].(map[string]any); fr != nil {
				delete(fr, "time")
			}
		}
	}
}

func boolString(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// firstDiff shows the first line where two texts differ, with context.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			lo := max(0, i-8)
			return "got:\n" + strings.Join(al[lo:min(len(al), i+3)], "\n") + "\nwant:\n" + strings.Join(bl[lo:min(len(bl), i+3)], "\n")
		}
	}
	return "lengths differ"
}

// TestMirrorCopiesSeverity: a few copies are an info finding, copies of
// 1% of the RoCE frames or more a warning; a capture with none has no
// such finding.
func TestMirrorCopiesSeverity(t *testing.T) {
	plain := genCapture(t, "report_clean_rails")
	if f := copiesFindingOf(t, CaptureHealth(loadInput(t, plain, ""))); f != nil {
		t.Fatalf("plain capture: %s", f.Title)
	}
	var first bool
	one := func(p *packet.Packet) bool {
		if !roceNotCNP(p) || first {
			return false
		}
		first = true
		return true
	}
	path, _ := doubled(t, plain, time.Microsecond, one, nil)
	in := loadInput(t, path, "")
	f := copiesFindingOf(t, CaptureHealth(in))
	if f == nil || f.Severity != Info || f.Evidence.Counts["mirror_duplicates"] != 1 || f.Evidence.Counts["flows"] != 1 {
		t.Fatalf("one copy of %d RoCE frames: %+v, want an info finding with 1 copy on 1 flow", in.Capture.RoCE, f)
	}
	if !strings.HasPrefix(f.Title, "The mirror delivered 1 frame twice (1 flow)") {
		t.Errorf("title %q", f.Title)
	}
	// One flow: its requests and its ACKs, over 1% of the capture.
	var key flows.Key
	oneFlow := func(p *packet.Packet) bool {
		if !roceNotCNP(p) {
			return false
		}
		if !key.Src.IsValid() {
			key = flows.Key{Src: p.Src, Dst: p.Dst, DestQP: p.BTH.DestQP}
		}
		return p.Src == key.Src && p.Dst == key.Dst || p.Src == key.Dst && p.Dst == key.Src
	}
	path, n := doubled(t, plain, 2*time.Microsecond, oneFlow, routedCopy)
	in = loadInput(t, path, "")
	f = copiesFindingOf(t, CaptureHealth(in))
	if f == nil || f.Severity != Warning || f.Evidence.Counts["mirror_duplicates"] != float64(n) || f.Evidence.Counts["flows"] != 2 {
		t.Fatalf("%d copies on one connection: %+v, want a warning with them on 2 flows", n, f)
	}
}

// TestMirrorDupScenario: testdata/scenarios/mirror_dup.yaml plays every
// recovery with the mirror copying five connections: the report finds
// each recovery once, as many times as the scenario played it, and the
// copies in capture_health, with the CNPs they leave counted.
func TestMirrorDupScenario(t *testing.T) {
	tr := genTruth(t, "mirror_dup")
	in := loadGen(t, "mirror_dup", "")
	r := Run(in, "test")
	var copies, copied float64
	for _, ft := range tr.Flows {
		copies += float64(ft.MirrorDuplicates)
		if ft.MirrorDuplicates > 0 {
			copied++
		}
	}
	f := copiesFindingOf(t, r.Findings)
	if f == nil {
		t.Fatalf("no capture_health finding about the copies:%s", summary(r.Findings))
	}
	wantCounts(t, *f, map[string]float64{"mirror_duplicates": copies, "flows": copied, "roce_packets": float64(tr.RoCEFrames), "cnps_on_copied_flows": 2})
	want := map[string]bool{
		"Go-back-N: 5 packets resent in 2 episodes after packet loss on 1 QP": true,
		"ACK timeouts: 1 packet resent after 1 timeout on 1 QP":               true,
		"1 RNR NAK on 1 QP: the receiver was not ready":                       true,
		"1 RDMA READ re-issued after lost READ responses on 1 QP":             true,
	}
	ecn := false
	for _, g := range r.Findings {
		switch g.Kind {
		case KindRetransmission:
			if !want[g.Title] {
				t.Errorf("retransmission finding %q", g.Title)
			}
			delete(want, g.Title)
		case KindECNNotActed:
			// routed-copy's copies carry the CE the switch marked its
			// packets with (its 6 requests and 2 RNR retries; its 4
			// ACKs too, left undecided: nothing comes after them), and
			// the scenario sends no CNP for them.
			if g.Title != "8 CE-marked packets got no CNP back (ECN not acted on)" || g.Evidence.Counts["undecided"] != 4 {
				t.Errorf("ecn_not_acted finding %q %v, want routed-copy's 8 marks, 4 undecided", g.Title, g.Evidence.Counts)
			}
			ecn = true
		case KindDSCPMismatch, KindMirrorLoss:
			t.Errorf("%s finding from the copies' marks: %q", g.Kind, g.Title)
		}
	}
	for title := range want {
		t.Errorf("no finding %q", title)
	}
	if !ecn {
		t.Errorf("no ecn_not_acted finding for the CE on routed-copy's copies")
	}
}

// TestMirrorCopiesMerge: rocedump merge recomputes capture_health from
// the flow records, mirror duplicates included.
func TestMirrorCopiesMerge(t *testing.T) {
	in := loadGen(t, "mirror_dup", "")
	one := Run(in, "test")
	one.Flows = flowtable.Records(in.Flows)
	b, err := json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	m, err := Merge([]MergeSource{{Name: "a.json", Report: &rep}}, MergeOptions{Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	got, want := copiesFindingOf(t, m.Findings), copiesFindingOf(t, one.Findings)
	if got == nil || want == nil || got.Title != want.Title || !reflect.DeepEqual(got.Evidence.Counts, want.Evidence.Counts) || got.Severity != want.Severity {
		t.Errorf("merged: %+v\nwant %+v", got, want)
	}
}

// TestMirrorCNPCopyCE: report_ecn's CNPs sent ECT(0), each with a new
// IPv4 ID, and each copied 20 µs later with the CE a switch marked it
// with after the mirror's first copy: each CNP counts as CE-marked once
// (CNPsCE, ECNCE), and its mark, a CNP's, is no data packet's: the ECN
// reaction findings are the plain capture's.
func TestMirrorCNPCopyCE(t *testing.T) {
	isCNP := func(p *packet.Packet) bool { return p.Kind == packet.KindRoCE && p.HasBTH && p.BTH.Opcode.IsCNP() }
	id := uint16(100)
	plain := edited(t, genCapture(t, "report_ecn"), isCNP, func(d []byte) {
		if len(d) < 34 || binary.BigEndian.Uint16(d[12:]) != 0x0800 {
			return
		}
		d[15] = d[15]&^3 | 2 // ECT(0)
		id++
		binary.BigEndian.PutUint16(d[18:], id)
		ipChecksum(d)
	})
	path, n := doubled(t, plain, 20*time.Microsecond, isCNP, ceFrame)
	if n == 0 {
		t.Fatal("no CNPs in report_ecn")
	}
	base, in := loadInput(t, plain, ""), loadInput(t, path, "")
	var cnps, cnpsCE, copies uint64
	for _, f := range in.Flows {
		cnps += f.CNPs
		cnpsCE += f.CNPsCE()
		copies += f.MirrorDuplicates()
	}
	// The first copy may come before its sender's CNPs showed a second
	// ID: it counts as a CNP of its own (flows, "Mirror copies").
	if copies+cnps-uint64(n) != uint64(n) || cnpsCE != cnps {
		t.Errorf("%d CNPs copied: %d CNPs (%d CE-marked), %d mirror duplicates; want every CNP CE-marked once", n, cnps, cnpsCE, copies)
	}
	reaction := func(in *Input) []string {
		var out []string
		for _, f := range Run(in, "test").Findings {
			if f.Kind == KindECNNotActed {
				out = append(out, f.Title)
			}
		}
		return out
	}
	if got, want := reaction(in), reaction(base); !slices.Equal(got, want) {
		t.Errorf("ECN reaction findings %q, want the plain capture's %q", got, want)
	}
}
