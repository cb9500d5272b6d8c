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
	// records of a capture name the same few files (see appendFile);
	// plainHTML says it was found so with EscapeHTML (else it may hold
	// <, > or &).
	plainFile string
	plainHTML bool
}

// fresh is a JSONEncoder with e's settings and no scratch: copies of one
// encoder that run at the same time must not share its scratch slices.
func (e JSONEncoder) fresh() JSONEncoder {
	e.keys, e.layouts, e.built, e.plainFile, e.plainHTML = nil, nil, nil, "", false
	return e
}

// AppendRecord appends r to dst. depth is the nesting level r is written
// at (0 at the top): its inner lines are indented by depth+1 levels, its
// closing brace by depth. A number that is not finite is an error, as in
// encoding/json.
//
// It writes the bytes between the values of a record, which are the same
// in every record written at one depth (commas, new lines, indentation,
// member names, colons, the quotes of strings), each at once from the
// recordLayout of that depth: as a whole array of segmentSize bytes when
// the record is sure to have that many bytes from there on (no call of
// memmove). A record the Builder being written
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
	b = l.seg[mID].append(b)
	b = appendInt(b, int64(r.ID))
	b = l.seg[mSrc].append(b)
	b = e.appendText(b, r.Src, addrs)
	b = l.seg[mDst].append(b)
	b = e.appendText(b, r.Dst, addrs)
	b = l.seg[mDestQPN].append(b)
	b = appendUint(b, uint64(r.DestQPN))
	b = l.seg[mSrcQPN].append(b)
	b = appendOpt(b, r.SrcQPN)
	b = l.seg[mPartnerQPN].append(b)
	b = appendOpt(b, r.PartnerQPN)
	b = l.seg[mPartnerID].append(b)
	if r.PartnerID != nil {
		b = appendInt(b, int64(*r.PartnerID))
	} else {
		b = append(b, "null"...)
	}
	b = l.seg[mPairedBy].append(b)
	b = e.appendText(b, r.PairedBy, known)
	b = l.seg[mTransport].append(b)
	b = e.appendText(b, r.Transport, known)
	b = l.seg[mEpoch].append(b)
	b = appendInt(b, int64(r.Epoch))
	b = l.seg[mPKey].append(b)
	b = appendUint(b, uint64(r.PKey))
	b = l.seg[mVLAN].append(b)
	b = appendOpt(b, r.VLAN)
	b = l.seg[mPackets].append(b)
	b = appendUint(b, r.Packets)
	b = l.seg[mBytes].append(b)
	b = appendUint(b, r.Bytes)
	b = l.seg[mPayloadBytes].append(b)
	b = appendUint(b, r.PayloadBytes)
	b = l.seg[mFirst].append(b)
	b = e.appendText(b, r.First, known)
	b = l.seg[mLast].append(b)
	b = e.appendText(b, r.Last, known)
	b = l.seg[mFirstFrame].append(b)
	b = appendInt(b, int64(r.FirstFrame))
	b = l.seg[mLastFrame].append(b)
	b = appendInt(b, int64(r.LastFrame))
	b = l.seg[mFirstFile].append(b)
	b = e.appendFile(b, r.FirstFile)
	b = l.seg[mLastFile].append(b)
	b = e.appendFile(b, r.LastFile)
	b = l.seg[mDurationS].append(b)
	b = appendFloat(b, r.DurationS)
	b = l.seg[mMeanBps].append(b)
	b = appendFloat(b, r.MeanBps)
	b = l.seg[mPeakBps].append(b)
	b = appendFloat(b, r.PeakBps)
	b = l.seg[mMessages].append(b)
	b = appendUint(b, r.Messages)
	b = l.seg[mFirstPSN].append(b)
	b = appendOpt(b, r.FirstPSN)
	b = l.seg[mLastPSN].append(b)
	b = appendOpt(b, r.LastPSN)
	b = l.seg[mHighestPSN].append(b)
	b = appendOpt(b, r.HighestPSN)
	b = l.seg[mRetransmittedPackets].append(b)
	b = appendUint(b, r.RetransmittedPackets)
	b = l.seg[mPSNGaps].append(b)
	b = appendUint(b, r.PSNGaps)
	b = l.seg[mMissingPSNs].append(b)
	b = appendUint(b, r.MissingPSNs)
	b = l.seg[mOutOfOrder].append(b)
	b = appendUint(b, r.OutOfOrder)
	b = l.seg[mReordered].append(b)
	b = appendUint(b, r.Reordered)

	// naks: its opening brace and first member are in its segment, its
	// closing brace in rnr_naks'.
	b = l.seg[mNAKs].append(b)
	b = appendUint(b, r.NAKs.PSNSeqErr)
	b = l.nak[nakInvalidRequest].append(b)
	b = appendUint(b, r.NAKs.InvalidRequest)
	b = l.nak[nakRemoteAccessErr].append(b)
	b = appendUint(b, r.NAKs.RemoteAccessErr)
	b = l.nak[nakRemoteOpErr].append(b)
	b = appendUint(b, r.NAKs.RemoteOpErr)
	b = l.nak[nakInvalidRDRequest].append(b)
	b = appendUint(b, r.NAKs.InvalidRDRequest)
	b = l.nak[nakOther].append(b)
	b = appendUint(b, r.NAKs.Other)

	b = l.seg[mRNRNAKs].append(b)
	b = appendUint(b, r.RNRNAKs)
	b = l.seg[mRNRTimers].append(b)
	if lists != nil {
		b = l.appendList(b, &lists.rnr)
	} else {
		b = e.appendMap(b, l, r.RNRTimers)
	}
	b = l.seg[mCNPs].append(b)
	b = appendUint(b, r.CNPs)
	b = l.seg[mECNCE].append(b)
	b = appendUint(b, r.ECNCE)
	b = l.seg[mCNPsCE].append(b)
	b = appendUint(b, r.CNPsCE)
	b = l.seg[mFECN].append(b)
	b = appendUint(b, r.FECN)
	b = l.seg[mBECN].append(b)
	b = appendUint(b, r.BECN)
	b = l.seg[mICRCBad].append(b)
	b = appendUint(b, r.ICRCBad)
	b = l.seg[mTruncated].append(b)
	b = appendUint(b, r.Truncated)
	b = l.seg[mMirrorDuplicates].append(b)
	b = appendUint(b, r.MirrorDuplicates)
	b = l.seg[mOpcodes].append(b)
	if lists != nil {
		b = l.appendList(b, &lists.ops)
	} else {
		b = e.appendMap(b, l, r.Opcodes)
	}
	b = l.seg[mDSCP].append(b)
	if lists != nil {
		b = l.appendList(b, &lists.dscp)
	} else {
		b = e.appendMap(b, l, r.DSCP)
	}
	b = l.seg[mECN].append(b)
	if lists != nil {
		b = l.appendList(b, &lists.ecn)
	} else {
		b = e.appendMap(b, l, r.ECN)
	}

	b = l.seg[mUDPSrcPorts].append(b)
	switch {
	case r.UDPSrcPorts == nil && !e.NilAsEmpty:
		b = append(b, "null"...)
	case len(r.UDPSrcPorts) == 0:
		b = append(b, "[]"...)
	default:
		b = l.arrFirst.append(b)
		for i, p := range r.UDPSrcPorts {
			if i > 0 {
				b = l.arrNext.append(b)
			}
			b = appendUint(b, uint64(p))
		}
		b = l.arrClose.append(b)
	}
	b = l.seg[mMorePorts].append(b)
	b = strconv.AppendBool(b, r.MorePorts)

	b = l.seg[mCM].append(b)
	if c := r.CM; c != nil {
		b = e.appendCM(b, l, c)
	} else {
		b = append(b, "null"...)
	}
	return l.close.append(b), nil
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
	seg [nMembers]segment
	nak [nNAKMembers]segment // the starts of naks' members (the first is in seg[mNAKs])
	// The members of the objects and the elements of the lists inside a
	// record (counter maps, CM, UDP source ports): the start of the
	// first one and of the others, up to the opening quote of a name;
	// the closing quote and colon of a name; the closing brace or
	// bracket on a line of its own.
	mapFirst, mapNext, mapColon segment
	arrFirst, arrNext           segment
	objClose, arrClose          segment
	close                       segment // the record's closing brace, on a line of its own
	indent                      string  // the Indent it was made for
}

// layout returns the recordLayout of records written at depth with
// e.Indent (one made for another Indent, which has changed since, is
// made again).
func (e *JSONEncoder) layout(depth int) *recordLayout {
	if depth < len(e.layouts) {
		if l := e.layouts[depth]; l != nil && l.indent == e.Indent {
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
	var segs [nMembers]string
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
		segs[m] = s
	}
	var naks [nNAKMembers]string
	for m := 1; m < nNAKMembers; m++ {
		naks[m] = start(true, depth+2, nakMembers[m])
	}
	close := line(depth) + "}"
	// tail[m] is the fewest bytes a record holds from the start of
	// seg[m] on: a segment is copied as a whole array only when they are
	// segmentSize or more, so that it never writes past the record's end.
	var tail [nMembers + 1]int
	tail[nMembers] = len(close)
	for m := nMembers - 1; m >= 0; m-- {
		least := 1 // a number, or null
		switch m {
		case mSrc, mDst, mPairedBy, mTransport, mFirst, mLast, mFirstFile, mLastFile:
			least = 0 // an empty string: its quotes are in the segments
		case mNAKs:
			least = 6 // and the other members' starts
			for _, s := range naks {
				least += len(s)
			}
		case mRNRTimers, mOpcodes, mDSCP, mECN, mUDPSrcPorts:
			least = 2 // {} or []
		case mMorePorts, mCM:
			least = 4 // true, null
		}
		tail[m] = len(segs[m]) + least + tail[m+1]
	}
	for m, s := range segs {
		l.seg[m] = newSegment(s, tail[m] >= segmentSize)
	}
	for m, s := range naks {
		l.nak[m] = newSegment(s, tail[mRNRNAKs] >= segmentSize)
	}
	// The members and elements of the maps and the list of UDP source
	// ports are followed by the members from udp_src_ports_truncated on
	// (CM's by the record's closing brace only: appendCM appends their
	// strings).
	inner := tail[mMorePorts] >= segmentSize
	l.mapFirst, l.mapNext, l.mapColon = newSegment("{"+line(depth+2)+`"`, inner), newSegment(","+line(depth+2)+`"`, inner), newSegment(`"`+colon, inner)
	l.arrFirst, l.arrNext = newSegment("["+line(depth+2), inner), newSegment(","+line(depth+2), inner)
	l.objClose, l.arrClose = newSegment(line(depth+1)+"}", inner), newSegment(line(depth+1)+"]", inner)
	l.close = newSegment(close, false)
	l.indent = indent
	return l
}

// segmentSize bounds the segments copied as a whole array: a few fixed
// moves instead of a call of memmove for each of the fifty segments of
// a record.
const segmentSize = 64

// segment is a piece of a recordLayout: its text, and the same padded to
// segmentSize bytes when it fits and the record has at least segmentSize
// bytes from its start on, always (see newRecordLayout).
type segment struct {
	n int // len(s) when it is copied as b, else -1
	b [segmentSize]byte
	s string
}

// newSegment is the segment of s, copied as a whole array when whole
// (the bytes that always follow s in a record fill segmentSize) and s
// fits.
func newSegment(s string, whole bool) segment {
	g := segment{n: -1, s: s}
	if whole && len(s) <= segmentSize {
		g.n = copy(g.b[:], s)
	}
	return g
}

// append appends the segment to b. When b has room, it writes all
// segmentSize bytes of the array, whose bytes past the segment the rest
// of the record writes over.
func (g *segment) append(b []byte) []byte {
	n := len(b)
	if g.n >= 0 && cap(b)-n >= segmentSize {
		*(*[segmentSize]byte)(b[n : n+segmentSize]) = g.b
		return b[:n+g.n]
	}
	return append(b, g.s...)
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
			b = l.mapFirst.append(b)
		} else {
			b = l.mapNext.append(b)
		}
		b = append(b, k...)
		b = l.mapColon.append(b)
		b = appendUint(b, vals[i])
	}
	return l.objClose.append(b)
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
			b = l.mapFirst.append(b)
		} else {
			b = l.mapNext.append(b)
		}
		b = appendStringBody(b, k, e.EscapeHTML)
		b = l.mapColon.append(b)
		b = appendUint(b, m[k])
	}
	return l.objClose.append(b)
}

// appendCM writes c, leaving out the empty members tagged omitempty.
func (e *JSONEncoder) appendCM(b []byte, l *recordLayout, c *CMRecord) []byte {
	n := 0
	key := func(name string) {
		if n == 0 {
			b = append(b, l.mapFirst.s...)
		} else {
			b = append(b, l.mapNext.s...)
		}
		n++
		b = append(b, name...)
		b = append(b, l.mapColon.s...)
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
	return append(b, l.objClose.s...)
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
// is written without looking at it again, unless EscapeHTML was set
// since.
func (e *JSONEncoder) appendFile(b []byte, s string) []byte {
	if len(s) == len(e.plainFile) && unsafe.StringData(s) == unsafe.StringData(e.plainFile) && (e.plainHTML || !e.EscapeHTML) {
		return append(b, s...)
	}
	if plain(s, e.EscapeHTML) {
		e.plainFile, e.plainHTML = s, e.EscapeHTML
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
