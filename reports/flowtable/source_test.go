package flowtable

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// genFlows reads every generated capture of testdata into one flow table
// per capture and returns all their flows: RC, UD, CNP, RDMA CM, NAKs,
// retransmissions, VLANs, IPv6, truncated and malformed frames.
func genFlows(t testing.TB) []*flows.Flow {
	t.Helper()
	paths, _ := filepath.Glob("../../testdata/pcaps/gen/*.pcap*")
	if len(paths) < 10 {
		t.Fatalf("found %d generated captures", len(paths))
	}
	var out []*flows.Flow
	for _, p := range paths {
		m, err := capture.OpenMerged([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		tab := flows.NewTable(flows.Config{})
		var rec capture.Record
		var pkt packet.Packet
		var dec packet.Decoder
		for {
			file, err := m.Next(&rec)
			if err == io.EOF {
				break
			}
			if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &pkt) == nil {
				tab.Add(&pkt, flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp})
			}
		}
		m.Close()
		tab.Finish()
		out = append(out, tab.Flows()...)
	}
	return out
}

// oldByBytes is the stable sort the top-flows tables used over every record.
func oldByBytes(rs []Record) []Record {
	out := slices.Clone(rs)
	slices.SortStableFunc(out, func(a, b Record) int {
		if c := cmp.Compare(b.Bytes, a.Bytes); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out
}

// TestFlowSourceMatchesRecords: a Source over flows yields what Records
// makes of them, one reused record at a time, and its totals, top flows
// and picks are those of the records.
func TestFlowSourceMatchesRecords(t *testing.T) {
	fs := genFlows(t)
	want := Records(fs)
	src := FlowsOf(fs)
	if src.Len() != len(want) {
		t.Fatalf("Len %d, want %d", src.Len(), len(want))
	}
	i := 0
	for r := range src.All() {
		if !reflect.DeepEqual(*r, want[i]) {
			t.Fatalf("record %d (flow %d) from the source:\n%+v\nwant\n%+v", i, want[i].ID, *r, want[i])
		}
		i++
	}
	if i != len(want) {
		t.Fatalf("All yielded %d records, want %d", i, len(want))
	}
	i = 0
	for r := range src.Rows() {
		w := want[i]
		w.RNRTimers, w.Opcodes, w.DSCP, w.ECN, w.UDPSrcPorts, w.MorePorts, w.CM = nil, nil, nil, nil, nil, false, nil
		if !reflect.DeepEqual(*r, w) {
			t.Fatalf("row %d (flow %d) from the source:\n%+v\nwant\n%+v", i, w.ID, *r, w)
		}
		i++
	}
	for _, s := range []Source{src, RecordsOf(want)} {
		if got, w := s.Totals(), TotalsRow(want); !slices.Equal(got, w) {
			t.Errorf("Totals %q, want %q", got, w)
		}
		sorted := oldByBytes(want)
		for _, k := range []int{0, 1, 5, 20, 50, len(want) - 1, len(want), len(want) + 3} {
			got := s.TopByBytes(k)
			w := sorted[:max(0, min(k, len(sorted)))]
			if !reflect.DeepEqual(got, w) {
				t.Errorf("TopByBytes(%d) differs from the sorted records", k)
			}
		}
		// IDs repeat across the captures: the last record of an ID wins.
		odd := s.Pick(func(id int) bool { return id%2 == 1 })
		last := map[int]Record{}
		for _, r := range want {
			if r.ID%2 == 1 {
				last[r.ID] = r
			}
		}
		if !reflect.DeepEqual(odd, last) {
			t.Errorf("Pick: %d records, want %d", len(odd), len(last))
		}
		if h := s.Head(7); h.Len() != 7 || h.TopByBytes(100)[0].ID != oldByBytes(want[:7])[0].ID {
			t.Errorf("Head(7): %d records", h.Len())
		}
	}
	// Ties in bytes and ID keep the order given, as the stable sort did.
	dup := []Record{{ID: 3, Bytes: 5, Src: "a"}, {ID: 3, Bytes: 5, Src: "b"}, {ID: 2, Bytes: 5}, {ID: 4, Bytes: 9}, {ID: 3, Bytes: 5, Src: "c"}}
	for k := range len(dup) + 1 {
		if got, w := RecordsOf(dup).TopByBytes(k), oldByBytes(dup)[:k]; !reflect.DeepEqual(got, w) {
			t.Errorf("ties, TopByBytes(%d): %v, want %v", k, got, w)
		}
	}
}

// oldWrite is each format as it was written before the Sources: the
// records made first, encoding/json for JSON.
func oldWrite(t *testing.T, format string, shown, all []Record) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	switch format {
	case "table":
		err = writeTableWriter(&b, RecordsOf(shown), RecordsOf(all))
	case "markdown":
		err = writeMarkdownWriter(&b, RecordsOf(shown), RecordsOf(all))
	case "csv":
		err = WriteCSV(&b, shown)
	case "json":
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		err = enc.Encode(shown)
	case FormatJSONL:
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for i := range shown {
			if err = enc.Encode(&shown[i]); err != nil {
				break
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWriteFromFlowsSameBytes: every format written from flows, one
// record at a time, is the bytes of the old writers over all the records.
func TestWriteFromFlowsSameBytes(t *testing.T) {
	fs := genFlows(t)
	recs := Records(fs)
	for _, format := range Formats {
		for _, top := range []int{0, 3} {
			shown, shownRecs := FlowsOf(fs), recs
			if top > 0 {
				shown, shownRecs = shown.Head(top), recs[:top]
			}
			want := oldWrite(t, format, shownRecs, recs)
			for name, src := range map[string][2]Source{"flows": {shown, FlowsOf(fs)}, "records": {RecordsOf(shownRecs), RecordsOf(recs)}} {
				var got bytes.Buffer
				if err := Write(&got, format, src[0], src[1]); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("%s from %s, top %d: differs from the old output at byte %d", format, name, top, firstDiff(got.Bytes(), want))
				}
			}
		}
	}
	// No flows: [] (a Source over flows, or an empty list), null for a nil list.
	for _, c := range []struct {
		src  Source
		want string
	}{{FlowsOf(nil), "[]\n"}, {RecordsOf([]Record{}), "[]\n"}, {RecordsOf(nil), "null\n"}} {
		var got bytes.Buffer
		if err := WriteJSONOf(&got, c.src); err != nil || got.String() != c.want {
			t.Errorf("empty JSON: %q, %v; want %q", got.String(), err, c.want)
		}
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}

// randRecords are records with every field set at random, strings with
// characters JSON escapes (quotes, controls, HTML, invalid UTF-8, U+2028),
// floats across the ranges where encoding/json switches to exponents,
// nil and empty maps and lists.
func randRecords(n int, seed uint64) []Record {
	rng := rand.New(rand.NewPCG(seed, 1))
	pieces := []string{"10.0.0.1", "fd00::1", "a\"b", `c\d`, "<script>", "&amp;", "\n\t\r\b\f", "\x00\x1f\x7f", "é", "日本",
		"\u2028\u2029", "\xff\xfe", "RC", "", " ", "SEND_ONLY", "x\xc3"}
	str := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		return b.String()
	}
	floats := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 1e20, 1e21, 9.999e20, 123456789.125,
		4.2e25, -3e-8, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1 + 0.2, 1234567.0}
	fl := func() float64 {
		if rng.IntN(3) == 0 {
			return rng.Float64() * math.Pow(10, float64(rng.IntN(50)-25))
		}
		return floats[rng.IntN(len(floats))]
	}
	counts := func() map[string]uint64 {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return map[string]uint64{}
		}
		m := map[string]uint64{}
		for range rng.IntN(6) + 1 {
			m[str()] = rng.Uint64() >> rng.IntN(64)
		}
		return m
	}
	u32 := func() *uint32 {
		if rng.IntN(2) == 0 {
			return nil
		}
		v := rng.Uint32()
		return &v
	}
	out := make([]Record, n)
	for i := range out {
		r := &out[i]
		r.ID = rng.IntN(1<<20) - 5
		r.Src, r.Dst, r.PairedBy, r.Transport, r.First, r.Last = str(), str(), str(), str(), str(), str()
		r.DestQPN, r.SrcQPN, r.PartnerQPN = rng.Uint32(), u32(), u32()
		if rng.IntN(2) == 0 {
			v := rng.IntN(1000) - 10
			r.PartnerID = &v
		}
		r.Epoch, r.PKey = rng.IntN(5), uint16(rng.Uint32())
		if rng.IntN(2) == 0 {
			v := uint16(rng.Uint32())
			r.VLAN = &v
		}
		r.Packets, r.Bytes, r.PayloadBytes, r.Messages = rng.Uint64(), rng.Uint64()>>3, rng.Uint64()>>9, rng.Uint64()>>40
		r.FirstFrame, r.LastFrame = rng.IntN(1<<30), -rng.IntN(3)
		r.DurationS, r.MeanBps, r.PeakBps = fl(), fl(), fl()
		if rng.IntN(4) != 0 {
			first, last, high := rng.Uint32()>>8, rng.Uint32()>>8, rng.Uint32()>>8
			r.FirstPSN, r.LastPSN, r.HighestPSN = &first, &last, &high
		}
		r.RetransmittedPackets, r.PSNGaps, r.MissingPSNs, r.OutOfOrder, r.Reordered = rng.Uint64()>>50, rng.Uint64()>>50, rng.Uint64()>>50, rng.Uint64(), rng.Uint64()>>50
		r.NAKs = NAKCounts{rng.Uint64() >> 60, rng.Uint64() >> 60, 0, 1, 2, rng.Uint64()}
		r.RNRNAKs, r.CNPs, r.ECNCE, r.FECN, r.BECN, r.ICRCBad, r.Truncated = rng.Uint64()>>60, rng.Uint64()>>30, 7, 0, 1, 2, rng.Uint64()
		r.RNRTimers, r.Opcodes, r.DSCP, r.ECN = counts(), counts(), counts(), counts()
		switch rng.IntN(3) {
		case 0:
		case 1:
			r.UDPSrcPorts = []uint16{}
		default:
			for range rng.IntN(5) + 1 {
				r.UDPSrcPorts = append(r.UDPSrcPorts, uint16(rng.Uint32()))
			}
		}
		r.MorePorts = rng.IntN(2) == 0
		if rng.IntN(2) == 0 {
			r.CM = &CMRecord{Frame: rng.IntN(100)}
			if rng.IntN(2) == 0 { // cut from a REQ by the snap length, else
				r.CM.ServiceID = str()
			}
			if rng.IntN(2) == 0 {
				psn := rng.Uint32()
				r.CM.StartPSN = &psn
			}
			if rng.IntN(2) == 0 {
				r.CM.PortSpace = str()
			}
			if rng.IntN(2) == 0 {
				r.CM.Port = uint16(rng.Uint32())
			}
		}
	}
	return out
}

// indentedAt is compact JSON as encoding/json indents a value written at
// depth levels of nesting with indent ("" leaves it compact): what
// JSONEncoder.AppendRecord must write.
func indentedAt(t testing.TB, compact []byte, indent string, depth int) []byte {
	if indent == "" {
		return compact
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, compact, strings.Repeat(indent, depth), indent); err != nil {
		t.Fatal(err)
	}
	return ind.Bytes()
}

// TestJSONEncoderMatchesEncodingJSON holds JSONEncoder to encoding/json on
// random records and on the records of real flows: compact and indented,
// HTML escaped or not, at several depths.
func TestJSONEncoderMatchesEncodingJSON(t *testing.T) {
	recs := append(randRecords(1000, 1), Records(genFlows(t))...)
	for _, indent := range []string{"", "  ", "\t"} {
		for _, html := range []bool{false, true} {
			for i := range recs {
				r := &recs[i]
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(html)
				if err := enc.Encode(r); err != nil {
					t.Fatal(err)
				}
				compact := bytes.TrimSuffix(want.Bytes(), []byte("\n"))
				e := JSONEncoder{Indent: indent, EscapeHTML: html}
				for _, depth := range []int{0, 1, 2} {
					w := indentedAt(t, compact, indent, depth)
					got, err := e.AppendRecord([]byte("prefix"), r, depth)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got[6:], w) {
						d := firstDiff(got[6:], w)
						t.Fatalf("record %d, indent %q, html %v, depth %d: differs at byte %d:\ngot  %q\nwant %q", i, indent, html, depth, d,
							got[6:][max(0, d-40):min(len(got)-6, d+40)], w[max(0, d-40):min(len(w), d+40)])
					}
				}
			}
		}
	}
}

// TestJSONEncoderNilAsEmpty: with NilAsEmpty, nil maps and ports read as
// empty ones.
func TestJSONEncoderNilAsEmpty(t *testing.T) {
	r := Record{ID: 1}
	e := JSONEncoder{NilAsEmpty: true}
	got, _ := e.AppendRecord(nil, &r, 0)
	r.RNRTimers, r.Opcodes, r.DSCP, r.ECN, r.UDPSrcPorts = map[string]uint64{}, map[string]uint64{}, map[string]uint64{}, map[string]uint64{}, []uint16{}
	want, _ := json.Marshal(&r)
	if !bytes.Equal(got, want) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestJSONEncoderRejectsNonFinite: a NaN or infinite number is an error,
// as in encoding/json.
func TestJSONEncoderRejectsNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		r := Record{MeanBps: v}
		_, want := json.Marshal(&r)
		var e JSONEncoder
		_, err := e.AppendRecord(nil, &r, 0)
		if err == nil || want == nil || !strings.HasSuffix(want.Error(), err.Error()) {
			t.Errorf("%v: error %v, want %v", v, err, want)
		}
	}
}

// TestWriteMarkdownStreamSameBytes compares the streamed Markdown table
// with tablewriter's, as TestWriteTableStreamSameBytes does the table.
func TestWriteMarkdownStreamSameBytes(t *testing.T) {
	for _, n := range []int{1, 7, 300} {
		rs := bigRecords(n)
		if n == 7 {
			rs[3].Src = "a|b"
			rs[4].Transport = "é日本"
		}
		shown := rs[:max(1, n-n/10)]
		var got, want bytes.Buffer
		if err := writeMarkdownStream(&got, RecordsOf(shown), RecordsOf(rs)); err != nil {
			t.Fatal(err)
		}
		if err := writeMarkdownWriter(&want, RecordsOf(shown), RecordsOf(rs)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			g, w := got.String(), want.String()
			i := firstDiff(got.Bytes(), want.Bytes())
			lo := max(0, i-200)
			t.Errorf("%d rows: streamed Markdown differs from tablewriter's at byte %d:\ngot:  %q\nwant: %q", n, i, g[lo:min(len(g), i+100)], w[lo:min(len(w), i+100)])
		}
	}
}

// TestTotalsAddFlowTimes: the first and last times of flows are compared
// as the records' strings are, whatever the order of the flows.
func TestTotalsAddFlowTimes(t *testing.T) {
	fs := genFlows(t)
	rng := rand.New(rand.NewPCG(7, 7))
	rng.Shuffle(len(fs), func(i, j int) { fs[i], fs[j] = fs[j], fs[i] })
	fs = fs[:len(fs)/2]
	var a, b Totals
	for _, f := range fs {
		a.AddFlow(f)
		r := NewRecord(f)
		b.Add(&r)
	}
	if !slices.Equal(a.Row(), b.Row()) {
		t.Errorf("AddFlow %q, Add %q", a.Row(), b.Row())
	}
}

// oldRow is Row as it was before it wrote its cells into one buffer.
func oldRow(r Record) []string {
	hex24 := func(v uint32) string {
		s := strconv.FormatUint(uint64(v), 16)
		if len(s) < 6 {
			s = strings.Repeat("0", 6-len(s)) + s
		}
		return "0x" + s
	}
	qpn := hex24(r.DestQPN)
	if r.Epoch > 0 {
		qpn += " ep" + strconv.Itoa(r.Epoch)
	}
	partner := "none"
	switch {
	case r.PartnerQPN != nil:
		partner = hex24(*r.PartnerQPN)
	case r.Transport == "UD" || r.Transport == "UC" || r.Transport == "CNP":
		partner = "-"
	}
	return []string{
		strconv.Itoa(r.ID), r.Src, r.Dst, qpn, partner, r.Transport,
		u(r.Packets), HumanBytes(r.Bytes), HumanDuration(time.Duration(r.DurationS * 1e9)), HumanRate(r.MeanBps),
		u(r.RetransmittedPackets), u(r.PSNGaps), u(NAKTotal(r)), u(r.CNPs), u(r.ECNCE),
	}
}

// TestRowSameCells: Row's cells, written into one buffer, are those of the
// old Row, over records of every kind and magnitude.
func TestRowSameCells(t *testing.T) {
	recs := append(append(bigRecords(3000), randRecords(3000, 9)...), Records(genFlows(t))...)
	for i := range recs {
		if got, want := Row(recs[i]), oldRow(recs[i]); !slices.Equal(got, want) {
			t.Fatalf("record %d: %q, want %q", i, got, want)
		}
	}
}

// TestHumanUnitsSame: the units written by appending are those of the old
// string functions (strconv, concatenation) across magnitudes.
func TestHumanUnitsSame(t *testing.T) {
	three := func(v float64) string {
		for dec := 2; dec >= 0; dec-- { // the most decimals that keep three digits
			if s := strconv.FormatFloat(v, 'f', dec, 64); len(s) <= 4 || dec == 0 {
				return s
			}
		}
		return ""
	}
	oldBytes := func(n uint64) string {
		if n < 1000 {
			return strconv.FormatUint(n, 10) + " B"
		}
		v := float64(n)
		for _, u := range []string{"KB", "MB", "GB", "TB", "PB"} {
			v /= 1000
			if strconv.FormatFloat(v, 'f', 0, 64) != "1000" && v < 1000 || u == "PB" {
				return three(v) + " " + u
			}
		}
		return ""
	}
	oldRate := func(bps float64) string {
		if bps < 1000 && strconv.FormatFloat(bps, 'f', 0, 64) != "1000" {
			return strconv.FormatFloat(bps, 'f', 0, 64) + " bps"
		}
		for _, u := range []string{"Kbps", "Mbps", "Gbps", "Tbps"} {
			bps /= 1000
			if bps < 1000 && strconv.FormatFloat(bps, 'f', 0, 64) != "1000" || u == "Tbps" {
				return three(bps) + " " + u
			}
		}
		return ""
	}
	oldDur := func(d time.Duration) string {
		switch {
		case d <= 0:
			return "0 s"
		case d < time.Microsecond:
			return strconv.FormatInt(int64(d), 10) + " ns"
		case d < time.Millisecond && three(float64(d)/1e3) != "1000":
			return three(float64(d)/1e3) + " µs"
		case d < time.Second && three(float64(d)/1e6) != "1000":
			return three(float64(d)/1e6) + " ms"
		case d < time.Minute:
			return three(d.Seconds()) + " s"
		}
		return d.Round(time.Second).String()
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100000 {
		n := rng.Uint64() >> rng.IntN(64)
		if got, want := HumanBytes(n), oldBytes(n); got != want {
			t.Fatalf("HumanBytes(%d) %q, want %q", n, got, want)
		}
		f := float64(n) * rng.Float64()
		if rng.IntN(10) == 0 {
			f = -f
		}
		if got, want := HumanRate(f), oldRate(f); got != want {
			t.Fatalf("HumanRate(%v) %q, want %q", f, got, want)
		}
		d := time.Duration(rng.Int64() >> rng.IntN(64))
		if got, want := HumanDuration(d), oldDur(d); got != want {
			t.Fatalf("HumanDuration(%v) %q, want %q", d, got, want)
		}
		v := rng.Uint32() >> rng.IntN(32)
		if got, want := Hex24(v), "0x"+fmt.Sprintf("%06x", v); got != want {
			t.Fatalf("Hex24(%d) %q, want %q", v, got, want)
		}
	}
}
