package flowtable

import (
	"bytes"
	"encoding/json"
	"testing"
)

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
