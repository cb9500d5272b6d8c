package flowtable

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
)

// TestAppendIntsMatchStrconv holds appendUint and appendInt to strconv at
// every number of digits and its edges (0, 9, 10, 99, 100, ..., 2^32 on
// either side, the largest and smallest values), appended after other
// bytes to a slice with no room left and to one with room.
func TestAppendIntsMatchStrconv(t *testing.T) {
	var us []uint64
	for v := range uint64(1000) {
		us = append(us, v)
	}
	for p := uint64(1); ; p *= 10 {
		us = append(us, p-1, p, p+1, 2*p-1, 5*p)
		if p > math.MaxUint64/10 {
			break
		}
	}
	us = append(us, 1<<32-1, 1<<32, 1<<32+1, 1<<53, 1<<63-1, 1<<63, math.MaxUint64-1, math.MaxUint64)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		us = append(us, rng.Uint64()>>rng.IntN(64))
	}
	for _, prefix := range [][]byte{nil, []byte("x"), append(make([]byte, 0, 64), "key: "...)} {
		for _, v := range us {
			b := append([]byte(nil), prefix...)
			if got, want := string(appendUint(b, v)), string(prefix)+strconv.FormatUint(v, 10); got != want {
				t.Fatalf("appendUint(%q, %d) = %q, want %q", prefix, v, got, want)
			}
			for _, i := range []int64{int64(v), -int64(v)} {
				b := append([]byte(nil), prefix...)
				if got, want := string(appendInt(b, i)), string(prefix)+strconv.FormatInt(i, 10); got != want {
					t.Fatalf("appendInt(%q, %d) = %q, want %q", prefix, i, got, want)
				}
			}
		}
	}
	for _, i := range []int64{math.MinInt64, math.MinInt64 + 1, math.MaxInt64, -1, -9, -10, -99, -100} {
		if got, want := string(appendInt(nil, i)), strconv.FormatInt(i, 10); got != want {
			t.Errorf("appendInt(%d) = %q, want %q", i, got, want)
		}
	}
}

// TestAppendFloatMatchesEncodingJSON holds appendFloat to encoding/json
// on whole numbers about 2^53 (past which not every integer is a
// float64), zeros of either sign, negative, fractional and huge numbers.
func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	vs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 9, 10, 99, 100, 1e15, 1e16, 1e20, 1e21, 1e22,
		1<<53 - 1, 1 << 53, 1<<53 + 2, 1 << 63, 1 << 64, -(1 << 53), -12345, 12345.5, 1e-7, 123456789.125,
		math.MaxFloat64, math.SmallestNonzeroFloat64, math.Nextafter(1<<53, 0), math.Nextafter(1, 2), math.Nextafter(1, 0)}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		v := math.Floor(rng.Float64() * math.Pow(2, float64(rng.IntN(70))))
		vs = append(vs, v, v+0.5, -v)
	}
	for _, v := range vs {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFloat([]byte("x"), v); string(got[1:]) != string(want) {
			t.Fatalf("appendFloat(%v) = %q, want %q", v, got[1:], want)
		}
	}
}

// TestAppendStringMatchesEncodingJSON holds appendString and
// appendStringBody to encoding/json on strings that need escaping: quotes,
// backslashes, control characters, HTML characters, non-ASCII, invalid
// UTF-8, U+2028 and U+2029, at every position of an eight-byte word.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	pieces := []string{"", "a", "10.0.0.1", "fe80::1", `"`, `\`, "<", ">", "&", "\x00", "\x1f", "\x7f", "\n", "\t",
		"é", "µs", "日本", "\u2028", "\u2029", "\xff", "\xc3", "\xe2\x80", "RC_SEND_ONLY"}
	var ss []string
	for _, p := range pieces {
		for pad := range 9 {
			ss = append(ss, p, "abcdefghij"[:pad]+p, p+"abcdefghij"[:pad], "abcdefgh"+p+"ijklmnop")
		}
	}
	for _, html := range []bool{false, true} {
		for _, s := range ss {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			w := bytes.TrimSuffix(want.Bytes(), []byte("\n"))
			if got := appendString(nil, s, html); !bytes.Equal(got, w) {
				t.Fatalf("appendString(%q, html %v) = %q, want %q", s, html, got, w)
			}
			if got := appendStringBody([]byte("x"), s, html); !bytes.Equal(got[1:], w[1:len(w)-1]) {
				t.Fatalf("appendStringBody(%q, html %v) = %q, want %q", s, html, got[1:], w[1:len(w)-1])
			}
		}
	}
}

// TestBuilderStringsNeedNoEscaping: the strings a Builder's record holds
// that AppendRecord writes without escaping (see JSONEncoder.AppendRecord)
// are written by encoding/json as they are: the names of every opcode,
// transport, pairing method, RNR timer and ECN codepoint, DSCP values,
// times and addresses without a zone.
func TestBuilderStringsNeedNoEscaping(t *testing.T) {
	var ss []string
	for o := range 256 {
		ss = append(ss, bth.Opcode(o).String())
	}
	for tr := range 16 {
		ss = append(ss, bth.Transport(tr).String())
	}
	for m := range 8 {
		ss = append(ss, flows.PairMethod(m).String())
	}
	for v := range 32 {
		ss = append(ss, bth.RNRTimerDuration(uint8(v)).String())
	}
	for v := range 64 {
		ss = append(ss, itoa(v))
	}
	ss = append(ss, ecnNames[:]...)
	var b Builder
	for _, f := range genFlows(t) {
		r := b.Record(f)
		if !b.plainAddrs {
			t.Fatalf("flow %d: addresses %s, %s taken for zoned", f.ID, r.Src, r.Dst)
		}
		ss = append(ss, r.Src, r.Dst, r.First, r.Last)
	}
	for _, html := range []bool{false, true} {
		for _, s := range ss {
			if got := appendString(nil, s, html); string(got) != `"`+s+`"` {
				t.Errorf("%q (html %v) is written as %s", s, html, got)
			}
		}
	}
}

// TestZonedAddressEscaped: an address with a zone, whose text can hold
// any character, is escaped in a Builder's record as in encoding/json.
func TestZonedAddressEscaped(t *testing.T) {
	f := &flows.Flow{Key: flows.Key{Src: netip.MustParseAddr(`fe80::1%a"b\c<`), Dst: netip.MustParseAddr("fe80::2")}}
	r := NewRecord(f)
	var want, got bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false) // as JSON Lines are
	if err := enc.Encode(&r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSONLOf(&got, FlowsOf([]*flows.Flow{f})); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("got  %s\nwant %s", got.String(), want.String())
	}
}

// TestFileNamesEscaped: file names, which an encoder remembers when they
// need no escaping, are escaped as encoding/json escapes them, one record
// after another with one encoder, plain names and others in turn, the
// same name twice in a row.
func TestFileNamesEscaped(t *testing.T) {
	names := []string{"a.pcap", `dir/"b".pcap`, "a.pcap", "a.pcap"[:1], "<c>&.pcap", "d\xff.pcap", "é.pcap", "a.pcap"}
	for _, html := range []bool{false, true} {
		e := JSONEncoder{EscapeHTML: html}
		for i, first := range names {
			r := Record{FirstFile: first, LastFile: first, CM: &CMRecord{File: names[(i+3)%len(names)]}}
			if i%2 == 1 {
				r.LastFile = names[(i+1)%len(names)]
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(&r); err != nil {
				t.Fatal(err)
			}
			got, err := e.AppendRecord(nil, &r, 0)
			if err != nil {
				t.Fatal(err)
			}
			if w := bytes.TrimSuffix(want.Bytes(), []byte("\n")); !bytes.Equal(got, w) {
				t.Fatalf("html %v, record %d:\ngot  %s\nwant %s", html, i, got, w)
			}
		}
	}
}

// TestAppendRecordWritesNoFurther: AppendRecord, which copies the
// pieces between values as whole arrays when a record has room for them,
// leaves the bytes of dst's capacity past the record as they were, for
// random records and for those of real flows made by a Builder, compact
// and indented, at several depths.
func TestAppendRecordWritesNoFurther(t *testing.T) {
	recs := randRecords(300, 7)
	fs := genFlows(t)
	for _, indent := range []string{"", " ", "  ", "\t\t\t\t"} {
		for _, depth := range []int{0, 1, 2, 5} {
			e := JSONEncoder{Indent: indent}
			var b Builder
			check := func(r *Record) {
				dst := make([]byte, 3, 1<<16)
				for i := range dst[:cap(dst)] {
					dst[:cap(dst)][i] = 0xaa
				}
				got, err := e.AppendRecord(dst, r, depth)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range got[len(got):cap(got)] {
					if c != 0xaa {
						t.Fatalf("indent %q, depth %d: byte %d past the record written (%q)", indent, depth, i, got[len(got):][:i+1])
					}
				}
			}
			for i := range recs {
				check(&recs[i])
			}
			e.built = &b
			for _, f := range fs {
				check(b.Record(f))
			}
		}
	}
}

// TestEncoderSettingsChanged: an encoder whose settings change between
// records (its fields are exported) writes each record by the settings
// of its call, as a new encoder with them would: the file name it
// remembered as needing no escaping without HTML escaping needs it with.
func TestEncoderSettingsChanged(t *testing.T) {
	r := Record{FirstFile: "<a>&b.pcap", LastFile: "<a>&b.pcap"}
	r.LastFile = r.FirstFile // the same string: the encoder's remembered name
	var e JSONEncoder
	for _, html := range []bool{false, true, false} {
		e.EscapeHTML = html
		got, err := e.AppendRecord(nil, &r, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := JSONEncoder{EscapeHTML: html}
		want, _ := n.AppendRecord(nil, &r, 0)
		if !bytes.Equal(got, want) {
			t.Errorf("html %v after a change:\ngot  %s\nwant %s", html, got, want)
		}
	}
}

// TestEncoderIndentChanged: an encoder whose Indent changes between
// records writes each with the Indent of its call.
func TestEncoderIndentChanged(t *testing.T) {
	r := Record{ID: 1}
	var e JSONEncoder
	for _, indent := range []string{"", "  ", "\t", ""} {
		e.Indent = indent
		got, err := e.AppendRecord(nil, &r, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := JSONEncoder{Indent: indent}
		want, _ := n.AppendRecord(nil, &r, 1)
		if !bytes.Equal(got, want) {
			t.Errorf("indent %q after a change:\ngot  %s\nwant %s", indent, got, want)
		}
	}
}
