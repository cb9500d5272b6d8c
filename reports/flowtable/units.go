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
		if v < unit || u == "PB" {
			return append(append(appendThreeDigits(b, v), ' '), u...)
		}
	}
	return b
}

// HumanRate formats bits per second: 512 bps, 12.3 Kbps, 4.56 Mbps,
// 398 Gbps.
func HumanRate(bps float64) string { return string(appendHumanRate(nil, bps)) }

func appendHumanRate(b []byte, bps float64) []byte {
	if bps < 1000 {
		return append(strconv.AppendFloat(b, bps, 'f', 0, 64), " bps"...)
	}
	for _, u := range []string{"Kbps", "Mbps", "Gbps", "Tbps"} {
		bps /= 1000
		if bps < 1000 || u == "Tbps" {
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
	case d < time.Millisecond:
		return append(appendThreeDigits(b, float64(d)/1e3), " µs"...)
	case d < time.Second:
		return append(appendThreeDigits(b, float64(d)/1e6), " ms"...)
	case d < time.Minute:
		return append(appendThreeDigits(b, d.Seconds()), " s"...)
	}
	return append(b, d.Round(time.Second).String()...)
}

// appendThreeDigits appends v (>= 1) with three significant digits.
func appendThreeDigits(b []byte, v float64) []byte {
	switch {
	case v >= 100:
		return strconv.AppendFloat(b, v, 'f', 0, 64)
	case v >= 10:
		return strconv.AppendFloat(b, v, 'f', 1, 64)
	}
	return strconv.AppendFloat(b, v, 'f', 2, 64)
}

func itoa(v int) string { return strconv.Itoa(v) }

func hex64(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
