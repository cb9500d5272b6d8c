package flowtable

import (
	"strconv"
	"time"
)

// HumanBytes formats a byte count with decimal units: 950 B, 1.23 KB,
// 45.6 MB, 7.89 GB, 1.02 TB.
func HumanBytes(n uint64) string { return string(appendHumanBytes(nil, n)) }

func appendHumanBytes(b []byte, n uint64) []byte {
	const unit = 1000
	if n < unit {
		return append(strconv.AppendUint(b, n, 10), " B"...)
	}
	v := float64(n)
	for _, u := range []string{"KB", "MB", "GB", "TB", "PB"} {
		v /= unit
		if v < roundsTo1000 || u == "PB" {
			return append(append(appendThreeDigits(b, v), ' '), u...)
		}
	}
	return b
}

// HumanRate formats bits per second: 512 bps, 12.3 Kbps, 4.56 Mbps,
// 398 Gbps.
func HumanRate(bps float64) string { return string(appendHumanRate(nil, bps)) }

func appendHumanRate(b []byte, bps float64) []byte {
	if bps < roundsTo1000 {
		return append(strconv.AppendFloat(b, bps, 'f', 0, 64), " bps"...)
	}
	for _, u := range []string{"Kbps", "Mbps", "Gbps", "Tbps"} {
		bps /= 1000
		if bps < roundsTo1000 || u == "Tbps" {
			return append(append(appendThreeDigits(b, bps), ' '), u...)
		}
	}
	return b
}

// HumanDuration formats a duration with three significant digits: 0 s,
// 850 ns, 12.3 µs, 4.56 ms, 1.23 s, 2m05s.
func HumanDuration(d time.Duration) string { return string(appendHumanDuration(nil, d)) }

func appendHumanDuration(b []byte, d time.Duration) []byte {
	switch {
	case d <= 0:
		return append(b, "0 s"...)
	case d < time.Microsecond:
		return append(strconv.AppendInt(b, int64(d), 10), " ns"...)
	case float64(d)/1e3 < roundsTo1000:
		return append(appendThreeDigits(b, float64(d)/1e3), " µs"...)
	case float64(d)/1e6 < roundsTo1000:
		return append(appendThreeDigits(b, float64(d)/1e6), " ms"...)
	case d < time.Minute:
		return append(appendThreeDigits(b, d.Seconds()), " s"...)
	}
	return append(b, d.Round(time.Second).String()...)
}

// roundsTo1000 is where a value written with no decimals becomes "1000":
// the units above switch to the next one there, so that 999,999 bytes
// are "1.00 MB", not "1000 KB".
const roundsTo1000 = 999.5

// appendThreeDigits appends v (>= 1, or just below 1 after a switch to
// the next unit) with three significant digits. A v that rounds up to the
// next power of ten (9.996, 99.96) gets one decimal fewer, so that it
// keeps three: "10.0", "100", not "10.00", "100.0".
func appendThreeDigits(b []byte, v float64) []byte {
	dec := 2
	switch {
	case v >= 100:
		dec = 0
	case v >= 10:
		dec = 1
	}
	n := len(b)
	b = strconv.AppendFloat(b, v, 'f', dec, 64)
	if dec > 0 && len(b)-n > 4 { // "10.00" or "100.0": a digit too many
		b = strconv.AppendFloat(b[:n], v, 'f', dec-1, 64)
	}
	return b
}

func itoa(v int) string { return strconv.Itoa(v) }

func hex64(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
