package flowtable

import (
	"strconv"
	"time"
)

// HumanBytes formats a byte count with decimal units: 950 B, 1.23 KB,
// 45.6 MB, 7.89 GB, 1.02 TB.
func HumanBytes(n uint64) string {
	const unit = 1000
	if n < unit {
		return strconv.FormatUint(n, 10) + " B"
	}
	v := float64(n)
	for _, u := range []string{"KB", "MB", "GB", "TB", "PB"} {
		v /= unit
		if v < unit || u == "PB" {
			return threeDigits(v) + " " + u
		}
	}
	return ""
}

// HumanRate formats bits per second: 512 bps, 12.3 Kbps, 4.56 Mbps,
// 398 Gbps.
func HumanRate(bps float64) string {
	if bps < 1000 {
		return strconv.FormatFloat(bps, 'f', 0, 64) + " bps"
	}
	for _, u := range []string{"Kbps", "Mbps", "Gbps", "Tbps"} {
		bps /= 1000
		if bps < 1000 || u == "Tbps" {
			return threeDigits(bps) + " " + u
		}
	}
	return ""
}

// HumanDuration formats a duration with three significant digits: 0 s,
// 850 ns, 12.3 µs, 4.56 ms, 1.23 s, 2m05s.
func HumanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0 s"
	case d < time.Microsecond:
		return strconv.FormatInt(int64(d), 10) + " ns"
	case d < time.Millisecond:
		return threeDigits(float64(d)/1e3) + " µs"
	case d < time.Second:
		return threeDigits(float64(d)/1e6) + " ms"
	case d < time.Minute:
		return threeDigits(d.Seconds()) + " s"
	}
	return d.Round(time.Second).String()
}

// threeDigits formats v (>= 1) with three significant digits.
func threeDigits(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func itoa(v int) string { return strconv.Itoa(v) }

func hex64(v uint64) string { return "0x" + strconv.FormatUint(v, 16) }
