package flowtable

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rocedump/rocedump/flows"
)

// SortKeys are the values --sort accepts, each ordering biggest first
// (except id and time, which order by first appearance).
var SortKeys = []string{"bytes", "packets", "rate", "peak", "duration", "retx", "gaps", "naks", "cnps", "ce", "id"}

// Sort orders fs in place by key, biggest first, ties broken by flow ID so
// the order is deterministic.
func Sort(fs []*flows.Flow, key string) error {
	var val func(f *flows.Flow) float64
	switch strings.ToLower(key) {
	case "bytes", "":
		val = func(f *flows.Flow) float64 { return float64(f.WireBytes) }
	case "packets":
		val = func(f *flows.Flow) float64 { return float64(f.Packets) }
	case "rate":
		val = func(f *flows.Flow) float64 { return f.MeanBitsPerSecond() }
	case "peak":
		val = func(f *flows.Flow) float64 { return f.PeakBitsPerSecond() }
	case "duration":
		val = func(f *flows.Flow) float64 { return float64(f.Duration()) }
	case "retx":
		val = func(f *flows.Flow) float64 { return float64(f.Retransmitted()) }
	case "gaps":
		val = func(f *flows.Flow) float64 { return float64(f.PSNGaps()) }
	case "naks":
		val = func(f *flows.Flow) float64 { return float64(f.NAKTotal() + f.RNRNAKs) }
	case "cnps":
		val = func(f *flows.Flow) float64 { return float64(f.CNPs) }
	case "ce":
		val = func(f *flows.Flow) float64 { return float64(f.ECNCE) }
	case "id", "first", "time":
		slices.SortFunc(fs, func(a, b *flows.Flow) int { return a.ID - b.ID })
		return nil
	default:
		return fmt.Errorf("unknown sort key %q (want one of %s)", key, strings.Join(SortKeys, ", "))
	}
	slices.SortStableFunc(fs, func(a, b *flows.Flow) int {
		va, vb := val(a), val(b)
		switch {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return a.ID - b.ID
	})
	return nil
}
