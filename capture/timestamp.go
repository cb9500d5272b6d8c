package capture

import (
	"fmt"
	"math/bits"
)

// maxDecimalExp is the largest n for which 10^n fits in a uint64.
const maxDecimalExp = 19

// ticksPerSecond decodes a pcapng if_tsresol byte: with the high bit clear
// the resolution is 10^-n seconds, with it set 2^-n seconds.
func ticksPerSecond(tsresol byte) (uint64, error) {
	n := tsresol & 0x7f
	if tsresol&0x80 != 0 {
		if n > 63 {
			return 0, fmt.Errorf("if_tsresol 2^-%d does not fit in 64 bits", n)
		}
		return 1 << n, nil
	}
	if n > maxDecimalExp {
		return 0, fmt.Errorf("if_tsresol 10^-%d does not fit in 64 bits", n)
	}
	tps := uint64(1)
	for range n {
		tps *= 10
	}
	return tps, nil
}

// scaleTicks splits ticks at tps ticks per second into whole seconds and
// nanoseconds (rounded down), in 128-bit arithmetic so that no resolution
// overflows.
func scaleTicks(ticks, tps uint64) (sec, nsec uint64) {
	if tps == 0 {
		return 0, 0
	}
	sec, frac := ticks/tps, ticks%tps
	hi, lo := bits.Mul64(frac, 1e9)
	nsec, _ = bits.Div64(hi, lo, tps) // hi < tps because frac < tps
	return sec, nsec
}
