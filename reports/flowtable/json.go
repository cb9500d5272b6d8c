package flowtable

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSONEncoder writes Records as JSON without reflection: the bytes
// encoding/json writes for a Record (field order and names, numbers,
// string escaping, map keys sorted, null for nil pointers), compact or
// indented as json.Indent does. A big flow table spends most of its output
// time in encoding/json otherwise (reflection, sorting each map's keys
// through reflect values, then indenting the compact bytes in a second
// pass). TestJSONEncoderMatchesEncodingJSON holds it to encoding/json.
type JSONEncoder struct {
	// Indent is the indentation of one level; "" writes compact JSON.
	Indent string
	// EscapeHTML escapes <, > and & in strings, as json.Encoder does by
	// default.
	EscapeHTML bool
	// NilAsEmpty writes nil maps as {} and a nil UDPSrcPorts as [] (the
	// report never writes null for them), where encoding/json writes null.
	NilAsEmpty bool

	keys   []string       // scratch for sorting map keys
	built  *Builder       // the Builder of the records being written, if any (see counts)
	lines  []string       // "\n" and the indentation of each depth, as used
	starts []recordStarts // of the Records written at each depth, as used
}

// recordStarts are the member starts of a Record (and of its NAK counts)
// written at one depth.
type recordStarts struct {
	record, naks memberStarts
}

// memberStarts holds the bytes that start each member of an object whose
// members are always the same, in the same order: the comma, the new line
// and indentation, the quoted name and the colon. The first object written
// makes them (done says it has), and the others copy each in one append
// instead of writing it piece by piece.
type memberStarts struct {
	starts []string
	done   bool
}

// recordStarts returns the member starts of Records at depth.
func (e *JSONEncoder) recordStarts(depth int) *recordStarts {
	for len(e.starts) <= depth {
		e.starts = append(e.starts, recordStarts{})
	}
	return &e.starts[depth]
}

// fresh is a JSONEncoder with e's settings and no scratch: copies of one
// encoder that run at the same time must not share its scratch slices.
func (e JSONEncoder) fresh() JSONEncoder {
	e.keys, e.lines, e.starts, e.built = nil, nil, nil, nil
	return e
}

// AppendRecord appends r to dst. depth is the nesting level r is written
// at (0 at the top): its inner lines are indented by depth+1 levels, its
// closing brace by depth. A number that is not finite is an error, as in
// encoding/json.
func (e *JSONEncoder) AppendRecord(dst []byte, r *Record, depth int) ([]byte, error) {
	for _, v := range [...]float64{r.DurationS, r.MeanBps, r.PeakBps} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return dst, &json.UnsupportedValueError{Value: reflect.ValueOf(v), Str: strconv.FormatFloat(v, 'g', -1, 64)}
		}
	}
	var lists *recordCounts
	if b := e.built; b != nil && r == &b.r && b.counts.valid {
		lists = &b.counts // r's maps, already in key order
	}
	st := e.recordStarts(depth)
	o := object{e: e, b: dst, depth: depth, starts: &st.record}
	o.open()
	o.member("id")
	o.int(int64(r.ID))
	o.member("src")
	o.str(r.Src)
	o.member("dst")
	o.str(r.Dst)
	o.member("dest_qpn")
	o.uint(uint64(r.DestQPN))
	o.member("src_qpn")
	optUint(&o, r.SrcQPN)
	o.member("partner_qpn")
	optUint(&o, r.PartnerQPN)
	o.member("partner_id")
	if r.PartnerID != nil {
		o.int(int64(*r.PartnerID))
	} else {
		o.null()
	}
	o.member("paired_by")
	o.str(r.PairedBy)
	o.member("transport")
	o.str(r.Transport)
	o.member("epoch")
	o.int(int64(r.Epoch))
	o.member("pkey")
	o.uint(uint64(r.PKey))
	o.member("vlan")
	optUint(&o, r.VLAN)
	o.member("packets")
	o.uint(r.Packets)
	o.member("bytes")
	o.uint(r.Bytes)
	o.member("payload_bytes")
	o.uint(r.PayloadBytes)
	o.member("first")
	o.str(r.First)
	o.member("last")
	o.str(r.Last)
	o.member("first_frame")
	o.int(int64(r.FirstFrame))
	o.member("last_frame")
	o.int(int64(r.LastFrame))
	o.member("first_file")
	o.str(r.FirstFile)
	o.member("last_file")
	o.str(r.LastFile)
	o.member("duration_s")
	o.float(r.DurationS)
	o.member("mean_bps")
	o.float(r.MeanBps)
	o.member("peak_bps")
	o.float(r.PeakBps)
	o.member("messages")
	o.uint(r.Messages)
	o.member("first_psn")
	optUint(&o, r.FirstPSN)
	o.member("last_psn")
	optUint(&o, r.LastPSN)
	o.member("highest_psn")
	optUint(&o, r.HighestPSN)
	o.member("retransmitted_packets")
	o.uint(r.RetransmittedPackets)
	o.member("psn_gaps")
	o.uint(r.PSNGaps)
	o.member("missing_psns")
	o.uint(r.MissingPSNs)
	o.member("out_of_order")
	o.uint(r.OutOfOrder)
	o.member("reordered")
	o.uint(r.Reordered)

	o.member("naks")
	n := o.child()
	n.starts = &st.naks
	n.open()
	n.member("psn_seq_err")
	n.uint(r.NAKs.PSNSeqErr)
	n.member("invalid_request")
	n.uint(r.NAKs.InvalidRequest)
	n.member("remote_access_err")
	n.uint(r.NAKs.RemoteAccessErr)
	n.member("remote_op_err")
	n.uint(r.NAKs.RemoteOpErr)
	n.member("invalid_rd_request")
	n.uint(r.NAKs.InvalidRDRequest)
	n.member("other")
	n.uint(r.NAKs.Other)
	o.b = n.close()
	st.naks.done = true

	o.member("rnr_naks")
	o.uint(r.RNRNAKs)
	o.member("rnr_timers")
	if lists != nil {
		o.countList(&lists.rnr)
	} else {
		o.countMap(r.RNRTimers)
	}
	o.member("cnps")
	o.uint(r.CNPs)
	o.member("ecn_ce")
	o.uint(r.ECNCE)
	o.member("cnps_ce")
	o.uint(r.CNPsCE)
	o.member("fecn")
	o.uint(r.FECN)
	o.member("becn")
	o.uint(r.BECN)
	o.member("icrc_bad")
	o.uint(r.ICRCBad)
	o.member("truncated")
	o.uint(r.Truncated)
	o.member("mirror_duplicates")
	o.uint(r.MirrorDuplicates)
	o.member("opcodes")
	if lists != nil {
		o.countList(&lists.ops)
	} else {
		o.countMap(r.Opcodes)
	}
	o.member("dscp")
	if lists != nil {
		o.countList(&lists.dscp)
	} else {
		o.countMap(r.DSCP)
	}
	o.member("ecn")
	if lists != nil {
		o.countList(&lists.ecn)
	} else {
		o.countMap(r.ECN)
	}

	o.member("udp_src_ports")
	switch {
	case r.UDPSrcPorts == nil && !e.NilAsEmpty:
		o.null()
	case len(r.UDPSrcPorts) == 0:
		o.b = append(o.b, "[]"...)
	default:
		a := o.child()
		a.b = append(a.b, '[')
		for _, p := range r.UDPSrcPorts {
			a.elem()
			a.uint(uint64(p))
		}
		a.newline(a.depth)
		o.b = append(a.b, ']')
	}
	o.member("udp_src_ports_truncated")
	o.b = strconv.AppendBool(o.b, r.MorePorts)

	o.member("cm")
	if c := r.CM; c != nil {
		m := o.child()
		m.open()
		if c.ServiceID != "" {
			m.key("service_id")
			m.str(c.ServiceID)
		}
		if c.PortSpace != "" {
			m.key("port_space")
			m.str(c.PortSpace)
		}
		if c.Port != 0 {
			m.key("port")
			m.uint(uint64(c.Port))
		}
		if c.StartPSN != nil {
			m.key("start_psn")
			m.uint(uint64(*c.StartPSN))
		}
		m.key("frame")
		m.int(int64(c.Frame))
		m.key("file")
		m.str(c.File)
		o.b = m.close()
	} else {
		o.null()
	}
	st.record.done = true
	return o.close(), nil
}

// object writes one JSON object or array at a nesting depth.
type object struct {
	e      *JSONEncoder
	b      []byte
	depth  int           // of the object itself
	n      int           // members written
	starts *memberStarts // for member
}

// child is an object nested in o's current member, writing on o's bytes.
func (o *object) child() object { return object{e: o.e, b: o.b, depth: o.depth + 1} }

func (o *object) open() { o.b = append(o.b, '{') }

// newline starts a line indented by depth levels (nothing when compact).
func (o *object) newline(depth int) {
	if o.e.Indent == "" {
		return
	}
	for len(o.e.lines) <= depth {
		o.e.lines = append(o.e.lines, "\n"+strings.Repeat(o.e.Indent, len(o.e.lines)))
	}
	o.b = append(o.b, o.e.lines[depth]...)
}

// elem starts the next member or element.
func (o *object) elem() {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.newline(o.depth + 1)
}

// key starts the next member: its name, which needs no escaping (a field
// name), and colon.
func (o *object) key(k string) {
	o.elem()
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
	if o.e.Indent != "" {
		o.b = append(o.b, ' ')
	}
}

// member is key for an object whose members are always the same, in the
// same order (see memberStarts).
func (o *object) member(k string) {
	if ms := o.starts; ms.done {
		o.b = append(o.b, ms.starts[o.n]...)
		o.n++
		return
	}
	o.firstMember(k)
}

// firstMember is member for the first object written, which makes the
// member starts.
func (o *object) firstMember(k string) {
	start := len(o.b)
	o.key(k)
	o.starts.starts = append(o.starts.starts, string(o.b[start:]))
}

// mapKey is key for a name that may need escaping (a map key).
func (o *object) mapKey(k string) {
	o.elem()
	o.b = appendString(o.b, k, o.e.EscapeHTML)
	o.b = append(o.b, ':')
	if o.e.Indent != "" {
		o.b = append(o.b, ' ')
	}
}

// close ends the object and returns the bytes.
func (o *object) close() []byte {
	if o.n > 0 {
		o.newline(o.depth)
	}
	return append(o.b, '}')
}

func (o *object) null() { o.b = append(o.b, "null"...) }

// optUint writes *v, or null for a nil v (the record's optional numbers).
func optUint[T uint16 | uint32](o *object, v *T) {
	if v == nil {
		o.null()
		return
	}
	o.uint(uint64(*v))
}
func (o *object) int(v int64)     { o.b = strconv.AppendInt(o.b, v, 10) }
func (o *object) uint(v uint64)   { o.b = appendUint(o.b, v) }
func (o *object) str(s string)    { o.b = appendString(o.b, s, o.e.EscapeHTML) }
func (o *object) float(v float64) { o.b = appendFloat(o.b, v) }

// appendUint is strconv.AppendUint(b, v, 10), inlined for one digit: most
// of a record's counters are 0.
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	return strconv.AppendUint(b, v, 10)
}

// countMap writes m with its keys sorted, as encoding/json writes a
// map[string]uint64.
func (o *object) countMap(m map[string]uint64) {
	if m == nil && !o.e.NilAsEmpty {
		o.null()
		return
	}
	c := o.child()
	c.open()
	o.e.keys = sortedKeys(o.e.keys, m)
	for _, k := range o.e.keys {
		c.mapKey(k)
		c.uint(m[k])
	}
	o.b = c.close()
}

// countList writes the members of a counter map listed in key order, as
// countMap writes the map.
func (o *object) countList(l *countList) {
	c := o.child()
	c.open()
	for i, k := range l.keys {
		c.mapKey(k)
		c.uint(l.vals[i])
	}
	o.b = c.close()
}

// appendFloat writes v as encoding/json writes a float64 (ES6 number
// formatting); v must be finite.
func appendFloat(b []byte, v float64) []byte {
	abs := math.Abs(v)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plainSafe and htmlSafe say which ASCII bytes a JSON string holds as
// they are: all but control characters, quote and backslash (and <, >
// and & when escaping HTML).
var plainSafe, htmlSafe = asciiSafe(""), asciiSafe("<>&")

func asciiSafe(also string) (safe [utf8.RuneSelf]bool) {
	for b := range safe {
		safe[b] = b >= 0x20 && b != '"' && b != '\\' && !strings.ContainsRune(also, rune(b))
	}
	return safe
}

// plain reports whether every byte of s is ASCII that a JSON string holds
// as it is (plainSafe, or htmlSafe when escapeHTML): the strings of a
// record (addresses, times, names) all are. It tests eight bytes at a time
// (the bit tricks of "Bit Twiddling Hacks", hasless and haszero: exact
// tests of whether any byte is below n, or is zero), the rest a byte at a
// time.
func plain(s string, escapeHTML bool) bool {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	// any is nonzero when some byte of x is zero.
	any := func(x uint64) uint64 { return (x - ones) & ^x & high }
	for ; len(s) >= 8; s = s[8:] {
		t := s[:8]
		w := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		bad := w&high | (w-0x20*ones)&^w&high | any(w^'"'*ones) | any(w^'\\'*ones)
		if escapeHTML {
			bad |= any(w^'<'*ones) | any(w^'>'*ones) | any(w^'&'*ones)
		}
		if bad != 0 {
			return false
		}
	}
	safe := &plainSafe
	if escapeHTML {
		safe = &htmlSafe
	}
	for i := 0; i < len(s); i++ {
		if b := s[i]; b >= utf8.RuneSelf || !safe[b] {
			return false
		}
	}
	return true
}

// appendString writes s as a JSON string exactly as encoding/json does:
// control characters, quote and backslash escaped (and <, >, & when
// escapeHTML), invalid UTF-8 as \ufffd, U+2028 and U+2029 escaped.
func appendString(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	if plain(s, escapeHTML) {
		dst = append(dst, s...)
		return append(dst, '"')
	}
	safe := &plainSafe
	if escapeHTML {
		safe = &htmlSafe
	}
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if safe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
