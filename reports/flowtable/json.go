package flowtable

import (
	"encoding/json"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
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

	keys    []string        // scratch for sorting map keys
	built   *Builder        // the Builder of the records being written, if any (see counts)
	layouts []*recordLayout // of the Records written at each depth, as used
	// plainFile is the last file name found to need no escaping: the
	// records of a capture name the same few files (see appendFileName).
	plainFile string
}

// fresh is a JSONEncoder with e's settings and no scratch: copies of one
// encoder that run at the same time must not share its scratch slices.
func (e JSONEncoder) fresh() JSONEncoder {
	e.keys, e.layouts, e.built, e.plainFile = nil, nil, nil, ""
	return e
}

// AppendRecord appends r to dst. depth is the nesting level r is written
// at (0 at the top): its inner lines are indented by depth+1 levels, its
// closing brace by depth. A number that is not finite is an error, as in
// encoding/json.
//
// It writes the bytes between the values of a record, which are the same
// in every record written at one depth (commas, new lines, indentation,
// member names, colons, the quotes of strings), each in one append from
// the recordLayout of that depth. A record the Builder being written
// from made (see JSONEncoder.built) has strings that need no escaping
// (times, names of enums and opcodes, addresses without a zone), written
// as they are; the others are escaped as encoding/json escapes them.
func (e *JSONEncoder) AppendRecord(dst []byte, r *Record, depth int) ([]byte, error) {
	for _, v := range [...]float64{r.DurationS, r.MeanBps, r.PeakBps} {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return dst, &json.UnsupportedValueError{Value: reflect.ValueOf(v), Str: strconv.FormatFloat(v, 'g', -1, 64)}
		}
	}
	var lists *recordCounts
	known, addrs := false, false // the strings, the addresses need no escaping
	if b := e.built; b != nil && r == &b.r && b.counts.valid {
		lists = &b.counts // r's maps, already in key order
		known, addrs = true, b.plainAddrs
	}
	l := e.layout(depth)
	b := dst
	b = append(b, l.seg[mID]...)
	b = appendInt(b, int64(r.ID))
	b = append(b, l.seg[mSrc]...)
	b = e.appendText(b, r.Src, addrs)
	b = append(b, l.seg[mDst]...)
	b = e.appendText(b, r.Dst, addrs)
	b = append(b, l.seg[mDestQPN]...)
	b = appendUint(b, uint64(r.DestQPN))
	b = append(b, l.seg[mSrcQPN]...)
	b = appendOpt(b, r.SrcQPN)
	b = append(b, l.seg[mPartnerQPN]...)
	b = appendOpt(b, r.PartnerQPN)
	b = append(b, l.seg[mPartnerID]...)
	if r.PartnerID != nil {
		b = appendInt(b, int64(*r.PartnerID))
	} else {
		b = append(b, "null"...)
	}
	b = append(b, l.seg[mPairedBy]...)
	b = e.appendText(b, r.PairedBy, known)
	b = append(b, l.seg[mTransport]...)
	b = e.appendText(b, r.Transport, known)
	b = append(b, l.seg[mEpoch]...)
	b = appendInt(b, int64(r.Epoch))
	b = append(b, l.seg[mPKey]...)
	b = appendUint(b, uint64(r.PKey))
	b = append(b, l.seg[mVLAN]...)
	b = appendOpt(b, r.VLAN)
	b = append(b, l.seg[mPackets]...)
	b = appendUint(b, r.Packets)
	b = append(b, l.seg[mBytes]...)
	b = appendUint(b, r.Bytes)
	b = append(b, l.seg[mPayloadBytes]...)
	b = appendUint(b, r.PayloadBytes)
	b = append(b, l.seg[mFirst]...)
	b = e.appendText(b, r.First, known)
	b = append(b, l.seg[mLast]...)
	b = e.appendText(b, r.Last, known)
	b = append(b, l.seg[mFirstFrame]...)
	b = appendInt(b, int64(r.FirstFrame))
	b = append(b, l.seg[mLastFrame]...)
	b = appendInt(b, int64(r.LastFrame))
	b = append(b, l.seg[mFirstFile]...)
	b = e.appendFile(b, r.FirstFile)
	b = append(b, l.seg[mLastFile]...)
	b = e.appendFile(b, r.LastFile)
	b = append(b, l.seg[mDurationS]...)
	b = appendFloat(b, r.DurationS)
	b = append(b, l.seg[mMeanBps]...)
	b = appendFloat(b, r.MeanBps)
	b = append(b, l.seg[mPeakBps]...)
	b = appendFloat(b, r.PeakBps)
	b = append(b, l.seg[mMessages]...)
	b = appendUint(b, r.Messages)
	b = append(b, l.seg[mFirstPSN]...)
	b = appendUint(b, uint64(r.FirstPSN))
	b = append(b, l.seg[mLastPSN]...)
	b = appendUint(b, uint64(r.LastPSN))
	b = append(b, l.seg[mHighestPSN]...)
	b = appendUint(b, uint64(r.HighestPSN))
	b = append(b, l.seg[mRetransmittedPackets]...)
	b = appendUint(b, r.RetransmittedPackets)
	b = append(b, l.seg[mPSNGaps]...)
	b = appendUint(b, r.PSNGaps)
	b = append(b, l.seg[mMissingPSNs]...)
	b = appendUint(b, r.MissingPSNs)
	b = append(b, l.seg[mOutOfOrder]...)
	b = appendUint(b, r.OutOfOrder)
	b = append(b, l.seg[mReordered]...)
	b = appendUint(b, r.Reordered)

	// naks: its opening brace and first member are in its segment, its
	// closing brace in rnr_naks'.
	b = append(b, l.seg[mNAKs]...)
	b = appendUint(b, r.NAKs.PSNSeqErr)
	b = append(b, l.nak[nakInvalidRequest]...)
	b = appendUint(b, r.NAKs.InvalidRequest)
	b = append(b, l.nak[nakRemoteAccessErr]...)
	b = appendUint(b, r.NAKs.RemoteAccessErr)
	b = append(b, l.nak[nakRemoteOpErr]...)
	b = appendUint(b, r.NAKs.RemoteOpErr)
	b = append(b, l.nak[nakInvalidRDRequest]...)
	b = appendUint(b, r.NAKs.InvalidRDRequest)
	b = append(b, l.nak[nakOther]...)
	b = appendUint(b, r.NAKs.Other)

	b = append(b, l.seg[mRNRNAKs]...)
	b = appendUint(b, r.RNRNAKs)
	b = append(b, l.seg[mRNRTimers]...)
	if lists != nil {
		b = l.appendList(b, &lists.rnr)
	} else {
		b = e.appendMap(b, l, r.RNRTimers)
	}
	b = append(b, l.seg[mCNPs]...)
	b = appendUint(b, r.CNPs)
	b = append(b, l.seg[mECNCE]...)
	b = appendUint(b, r.ECNCE)
	b = append(b, l.seg[mCNPsCE]...)
	b = appendUint(b, r.CNPsCE)
	b = append(b, l.seg[mFECN]...)
	b = appendUint(b, r.FECN)
	b = append(b, l.seg[mBECN]...)
	b = appendUint(b, r.BECN)
	b = append(b, l.seg[mICRCBad]...)
	b = appendUint(b, r.ICRCBad)
	b = append(b, l.seg[mTruncated]...)
	b = appendUint(b, r.Truncated)
	b = append(b, l.seg[mMirrorDuplicates]...)
	b = appendUint(b, r.MirrorDuplicates)
	b = append(b, l.seg[mOpcodes]...)
	if lists != nil {
		b = l.appendList(b, &lists.ops)
	} else {
		b = e.appendMap(b, l, r.Opcodes)
	}
	b = append(b, l.seg[mDSCP]...)
	if lists != nil {
		b = l.appendList(b, &lists.dscp)
	} else {
		b = e.appendMap(b, l, r.DSCP)
	}
	b = append(b, l.seg[mECN]...)
	if lists != nil {
		b = l.appendList(b, &lists.ecn)
	} else {
		b = e.appendMap(b, l, r.ECN)
	}

	b = append(b, l.seg[mUDPSrcPorts]...)
	switch {
	case r.UDPSrcPorts == nil && !e.NilAsEmpty:
		b = append(b, "null"...)
	case len(r.UDPSrcPorts) == 0:
		b = append(b, "[]"...)
	default:
		b = append(b, l.arrFirst...)
		for i, p := range r.UDPSrcPorts {
			if i > 0 {
				b = append(b, l.arrNext...)
			}
			b = appendUint(b, uint64(p))
		}
		b = append(b, l.arrClose...)
	}
	b = append(b, l.seg[mMorePorts]...)
	b = strconv.AppendBool(b, r.MorePorts)

	b = append(b, l.seg[mCM]...)
	if c := r.CM; c != nil {
		b = e.appendCM(b, l, c)
	} else {
		b = append(b, "null"...)
	}
	return append(b, l.close...), nil
}

// The members of a Record, in the order it is written: the index of each
// in recordMembers and recordLayout.seg.
const (
	mID = iota
	mSrc
	mDst
	mDestQPN
	mSrcQPN
	mPartnerQPN
	mPartnerID
	mPairedBy
	mTransport
	mEpoch
	mPKey
	mVLAN
	mPackets
	mBytes
	mPayloadBytes
	mFirst
	mLast
	mFirstFrame
	mLastFrame
	mFirstFile
	mLastFile
	mDurationS
	mMeanBps
	mPeakBps
	mMessages
	mFirstPSN
	mLastPSN
	mHighestPSN
	mRetransmittedPackets
	mPSNGaps
	mMissingPSNs
	mOutOfOrder
	mReordered
	mNAKs
	mRNRNAKs
	mRNRTimers
	mCNPs
	mECNCE
	mCNPsCE
	mFECN
	mBECN
	mICRCBad
	mTruncated
	mMirrorDuplicates
	mOpcodes
	mDSCP
	mECN
	mUDPSrcPorts
	mMorePorts
	mCM
	nMembers
)

// recordMembers are the names of a Record's members (their json tags),
// and whether each is a string, by index.
var recordMembers = [nMembers]struct {
	name string
	str  bool
}{
	{"id", false}, {"src", true}, {"dst", true}, {"dest_qpn", false}, {"src_qpn", false},
	{"partner_qpn", false}, {"partner_id", false}, {"paired_by", true}, {"transport", true},
	{"epoch", false}, {"pkey", false}, {"vlan", false}, {"packets", false}, {"bytes", false},
	{"payload_bytes", false}, {"first", true}, {"last", true}, {"first_frame", false},
	{"last_frame", false}, {"first_file", true}, {"last_file", true}, {"duration_s", false},
	{"mean_bps", false}, {"peak_bps", false}, {"messages", false}, {"first_psn", false},
	{"last_psn", false}, {"highest_psn", false}, {"retransmitted_packets", false},
	{"psn_gaps", false}, {"missing_psns", false}, {"out_of_order", false}, {"reordered", false},
	{"naks", false}, {"rnr_naks", false}, {"rnr_timers", false}, {"cnps", false},
	{"ecn_ce", false}, {"cnps_ce", false}, {"fecn", false}, {"becn", false},
	{"icrc_bad", false}, {"truncated", false}, {"mirror_duplicates", false},
	{"opcodes", false}, {"dscp", false}, {"ecn", false}, {"udp_src_ports", false},
	{"udp_src_ports_truncated", false}, {"cm", false},
}

// The members of NAKCounts, in order.
const (
	nakPSNSeqErr = iota
	nakInvalidRequest
	nakRemoteAccessErr
	nakRemoteOpErr
	nakInvalidRDRequest
	nakOther
	nNAKMembers
)

var nakMembers = [nNAKMembers]string{"psn_seq_err", "invalid_request", "remote_access_err", "remote_op_err", "invalid_rd_request", "other"}

// recordLayout holds the bytes between the values of a Record written at
// one depth by one encoder (its indentation), as AppendRecord writes
// them.
type recordLayout struct {
	// seg[m] is what comes before the value of member m: the closing
	// quote of the string before, the comma, the new line and
	// indentation, the quoted name, the colon (and space), and the opening
	// quote of a string. seg[mID] starts with the record's opening brace,
	// seg[mNAKs] ends with naks' opening brace and its first member's
	// start, seg[mRNRNAKs] starts with naks' closing brace.
	seg [nMembers]string
	nak [nNAKMembers]string // the starts of naks' members (the first is in seg[mNAKs])
	// The members of the objects and the elements of the lists inside a
	// record (counter maps, CM, UDP source ports): the start of the
	// first one and of the others, up to the opening quote of a name;
	// the closing quote and colon of a name; the closing brace or
	// bracket on a line of its own.
	mapFirst, mapNext, mapColon string
	arrFirst, arrNext           string
	objClose, arrClose          string
	close                       string // the record's closing brace, on a line of its own
}

// layout returns the recordLayout of records written at depth.
func (e *JSONEncoder) layout(depth int) *recordLayout {
	if depth < len(e.layouts) {
		if l := e.layouts[depth]; l != nil {
			return l
		}
	}
	for len(e.layouts) <= depth {
		e.layouts = append(e.layouts, nil)
	}
	l := newRecordLayout(e.Indent, depth)
	e.layouts[depth] = l
	return l
}

func newRecordLayout(indent string, depth int) *recordLayout {
	// line starts a line at depth d (nothing when compact), start the
	// member name at depth d.
	line := func(d int) string {
		if indent == "" {
			return ""
		}
		return "\n" + strings.Repeat(indent, d)
	}
	colon := ":"
	if indent != "" {
		colon = ": "
	}
	start := func(comma bool, d int, name string) string {
		s := line(d) + `"` + name + `"` + colon
		if comma {
			s = "," + s
		}
		return s
	}
	l := new(recordLayout)
	for m, rm := range recordMembers {
		s := start(m > 0, depth+1, rm.name)
		if m > 0 && recordMembers[m-1].str {
			s = `"` + s
		}
		if rm.str {
			s += `"`
		}
		switch m {
		case mID:
			s = "{" + s
		case mNAKs:
			s += "{" + start(false, depth+2, nakMembers[0])
		case mRNRNAKs:
			s = line(depth+1) + "}" + s
		}
		l.seg[m] = s
	}
	for m := 1; m < nNAKMembers; m++ {
		l.nak[m] = start(true, depth+2, nakMembers[m])
	}
	l.mapFirst, l.mapNext, l.mapColon = "{"+line(depth+2)+`"`, ","+line(depth+2)+`"`, `"`+colon
	l.arrFirst, l.arrNext = "["+line(depth+2), ","+line(depth+2)
	l.objClose, l.arrClose = line(depth+1)+"}", line(depth+1)+"]"
	l.close = line(depth) + "}"
	return l
}

// appendList writes the members of a counter map listed in key order, as
// appendMap writes the map. Their keys need no escaping (the Builder's:
// names of RNR timers and opcodes, DSCP numbers, ECN codepoints).
func (l *recordLayout) appendList(b []byte, c *countList) []byte {
	if len(c.keys) == 0 {
		return append(b, "{}"...)
	}
	vals := c.vals[:len(c.keys)]
	for i, k := range c.keys {
		if i == 0 {
			b = append(b, l.mapFirst...)
		} else {
			b = append(b, l.mapNext...)
		}
		b = append(b, k...)
		b = append(b, l.mapColon...)
		b = appendUint(b, vals[i])
	}
	return append(b, l.objClose...)
}

// appendMap writes m with its keys sorted, as encoding/json writes a
// map[string]uint64.
func (e *JSONEncoder) appendMap(b []byte, l *recordLayout, m map[string]uint64) []byte {
	if m == nil && !e.NilAsEmpty {
		return append(b, "null"...)
	}
	if len(m) == 0 {
		return append(b, "{}"...)
	}
	e.keys = sortedKeys(e.keys, m)
	for i, k := range e.keys {
		if i == 0 {
			b = append(b, l.mapFirst...)
		} else {
			b = append(b, l.mapNext...)
		}
		b = appendStringBody(b, k, e.EscapeHTML)
		b = append(b, l.mapColon...)
		b = appendUint(b, m[k])
	}
	return append(b, l.objClose...)
}

// appendCM writes c, leaving out the empty members tagged omitempty.
func (e *JSONEncoder) appendCM(b []byte, l *recordLayout, c *CMRecord) []byte {
	n := 0
	key := func(name string) {
		if n == 0 {
			b = append(b, l.mapFirst...)
		} else {
			b = append(b, l.mapNext...)
		}
		n++
		b = append(b, name...)
		b = append(b, l.mapColon...)
	}
	if c.ServiceID != "" {
		key("service_id")
		b = appendString(b, c.ServiceID, e.EscapeHTML)
	}
	if c.PortSpace != "" {
		key("port_space")
		b = appendString(b, c.PortSpace, e.EscapeHTML)
	}
	if c.Port != 0 {
		key("port")
		b = appendUint(b, uint64(c.Port))
	}
	if c.StartPSN != nil {
		key("start_psn")
		b = appendUint(b, uint64(*c.StartPSN))
	}
	key("frame")
	b = appendInt(b, int64(c.Frame))
	key("file")
	b = append(b, '"')
	b = e.appendFile(b, c.File)
	b = append(b, '"')
	return append(b, l.objClose...)
}

// appendText writes the inside of the JSON string of s (no quotes): s
// itself when known says it needs no escaping.
func (e *JSONEncoder) appendText(b []byte, s string, known bool) []byte {
	if known {
		return append(b, s...)
	}
	return appendStringBody(b, s, e.EscapeHTML)
}

// appendFile is appendText for a file name. The records of a capture
// name the same few files, the same strings: the last one found plain
// is written without looking at it again.
func (e *JSONEncoder) appendFile(b []byte, s string) []byte {
	if len(s) == len(e.plainFile) && unsafe.StringData(s) == unsafe.StringData(e.plainFile) {
		return append(b, s...)
	}
	if plain(s, e.EscapeHTML) {
		e.plainFile = s
		return append(b, s...)
	}
	return appendStringBody(b, s, e.EscapeHTML)
}

// appendOpt writes *v, or null for a nil v (the record's optional numbers).
func appendOpt[T uint16 | uint32](b []byte, v *T) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return appendUint(b, uint64(*v))
}

// appendInt is strconv.AppendInt(b, v, 10).
func appendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return appendUint(b, uint64(v))
	}
	return appendUint(append(b, '-'), uint64(-v))
}

// appendUint is strconv.AppendUint(b, v, 10), inlined for one digit:
// most of a record's counters are 0.
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	return appendUintLong(b, v)
}

// appendUintLong is appendUint for any v from 10: it writes the digits in place,
// two at a time from the last, with 32-bit divisions once v fits them.
func appendUintLong(b []byte, v uint64) []byte {
	if v < 100 {
		return append(b, digitPairs[v][0], digitPairs[v][1])
	}
	n := decimalLen(v)
	i := len(b)
	b = slices.Grow(b, n)[:i+n]
	d := b[i:]
	j := n
	for v >= 1<<32 {
		q := v / 100
		p := &digitPairs[v-q*100]
		j -= 2
		d[j], d[j+1] = p[0], p[1]
		v = q
	}
	w := uint32(v)
	for w >= 100 {
		q := w / 100
		p := &digitPairs[w-q*100]
		j -= 2
		d[j], d[j+1] = p[0], p[1]
		w = q
	}
	if w >= 10 {
		d[0], d[1] = digitPairs[w][0], digitPairs[w][1]
	} else {
		d[0] = byte('0' + w)
	}
	return b
}

// decimalLen is the number of decimal digits of v (1 for 0).
func decimalLen(v uint64) int {
	n := bits.Len64(v) * 1233 >> 12 // log10(2) ≈ 1233/4096: n or n-1 digits
	if v >= pow10[n] {
		n++
	}
	return max(n, 1)
}

// pow10[i] is 10^i.
var pow10 = [20]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// digitPairs holds "00" to "99".
var digitPairs = func() (p [100][2]byte) {
	for i := range p {
		p[i] = [2]byte{byte('0' + i/10), byte('0' + i%10)}
	}
	return p
}()

// appendFloat writes v as encoding/json writes a float64 (ES6 number
// formatting); v must be finite.
func appendFloat(b []byte, v float64) []byte {
	// A whole number below 2^53 is written as its integer: every integer
	// there is a float64, so no shorter digits read back as v. (Rates are
	// whole numbers.) -0 is left to strconv ("-0").
	if v > 0 && v < 1<<53 {
		if u := uint64(v); float64(u) == v {
			return appendUint(b, u)
		}
	}
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
	dst = appendStringBody(dst, s, escapeHTML)
	return append(dst, '"')
}

// appendStringBody is appendString without the quotes.
func appendStringBody(dst []byte, s string, escapeHTML bool) []byte {
	if plain(s, escapeHTML) {
		return append(dst, s...)
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
	return append(dst, s[start:]...)
}
