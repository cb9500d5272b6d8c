// Package timetext writes capture times as text, in the layouts rocedump
// prints, faster than time.Time.AppendFormat.
//
// A capture holds millions of packets a second, and `rocedump read` prints
// a time for every one: the general layout machinery of AppendFormat cost
// a third of `read --format json`'s time (~230 ns a packet, BENCHMARKS.md).
// A Stamp formats the part of a time up to the second (by hand for RFC
// 3339, with AppendFormat for the other layouts) once for every second the
// times fall in, and appends the nanoseconds by hand: the text is
// AppendFormat's, byte for byte (TestStampMatchesFormat).
package timetext

import "time"

// Stamp appends times in UTC in one layout that ends in seconds with nine
// decimals ("15:04:05.000000000"), reusing the text up to the seconds while
// consecutive times fall in the same second. The zero Stamp is
// RFC3339Nano's; DateTime and Clock make the others. A Stamp is not safe
// for concurrent use; each printer keeps its own.
type Stamp struct {
	// layout is the text up to the seconds, for time.Time.AppendFormat;
	// "" for RFC 3339 (RFC3339Nano), whose head appendRFC3339Head writes
	// and whose suffix is Z.
	layout string
	suffix string // after the nanoseconds
	sec    int64  // the Unix second head holds
	valid  bool   // head holds sec's text
	head   []byte
}

// RFC3339Nano returns a Stamp writing "2006-01-02T15:04:05.000000000Z":
// what AppendFormat writes for a UTC time with the layout
// "2006-01-02T15:04:05.000000000Z07:00" (and time.RFC3339Nano with the
// trailing zeros kept, so that the times are fixed-width and sort as text).
func RFC3339Nano() Stamp { return Stamp{} }

// DateTime returns a Stamp writing "2006-01-02 15:04:05.000000000".
func DateTime() Stamp { return Stamp{layout: "2006-01-02 15:04:05"} }

// Clock returns a Stamp writing the time of day, "15:04:05.000000000".
func Clock() Stamp { return Stamp{layout: "15:04:05"} }

// Append appends t, in UTC, to b.
func (s *Stamp) Append(b []byte, t time.Time) []byte {
	// Unix rounds down: every time of one second, before 1970 too, has
	// the same Unix second and its Nanosecond counts from that second.
	if sec := t.Unix(); !s.valid || sec != s.sec {
		if s.layout == "" {
			s.head = appendRFC3339Head(s.head[:0], t)
		} else {
			s.head = t.UTC().AppendFormat(s.head[:0], s.layout)
		}
		s.sec, s.valid = sec, true
	}
	b = append(b, s.head...)
	b = append(b, '.')
	b = appendNine(b, uint32(t.Nanosecond()))
	if s.layout == "" {
		return append(b, 'Z')
	}
	return append(b, s.suffix...)
}

// AppendRFC3339Nano appends t as the RFC3339Nano Stamp does, without
// keeping anything between calls: for code that writes a time now and
// then and cannot keep a Stamp.
func AppendRFC3339Nano(b []byte, t time.Time) []byte {
	b = appendRFC3339Head(b, t)
	b = append(b, '.')
	b = appendNine(b, uint32(t.Nanosecond()))
	return append(b, 'Z')
}

// appendRFC3339Head appends t in UTC up to its seconds,
// "2006-01-02T15:04:05": by hand for the years 0 to 9999, with
// AppendFormat for the others.
func appendRFC3339Head(b []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(b, "2006-01-02T15:04:05")
	}
	hour, minute, sec := t.Clock()
	b = appendTwo(b, year/100)
	b = appendTwo(b, year%100)
	b = append(b, '-')
	b = appendTwo(b, int(month))
	b = append(b, '-')
	b = appendTwo(b, day)
	b = append(b, 'T')
	b = appendTwo(b, hour)
	b = append(b, ':')
	b = appendTwo(b, minute)
	b = append(b, ':')
	return appendTwo(b, sec)
}

// appendTwo appends v (0 to 99) in two digits.
func appendTwo(b []byte, v int) []byte { return append(b, pairs[2*v], pairs[2*v+1]) }

// appendNine appends v (below 10⁹) in nine digits, zero-padded.
func appendNine(b []byte, v uint32) []byte {
	var d [9]byte
	for i := 7; i >= 1; i -= 2 {
		q := v / 100
		r := (v - q*100) * 2
		d[i], d[i+1] = pairs[r], pairs[r+1]
		v = q
	}
	d[0] = byte('0' + v)
	return append(b, d[:]...)
}

// pairs holds "00" to "99": two digits per division.
const pairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"
