package capture

import "time"

// Record is one captured frame.
//
// Data aliases the Reader's buffer and is valid only until the next call to
// Next or NextBatch (or to Close): copy it to keep it. Its capacity ends with the frame,
// so appending to it never writes over the next one.
type Record struct {
	Timestamp time.Time // from the capture, in UTC; zero for a pcapng Simple Packet Block
	CapLen    int       // bytes captured: len(Data)
	OrigLen   int       // length on the wire; never less than CapLen
	LinkType  LinkType  // of the interface the frame came from
	Interface int       // pcapng interface index within its section; 0 for pcap
	Number    int       // 1-based frame number in the file, as Wireshark numbers it (a pcapng Custom Block takes one)
	Data      []byte

	// TimeNanos is Timestamp in nanoseconds since the Unix epoch, exactly
	// what Timestamp.UnixNano() returns (so, like it, meaningless for
	// times before 1678 or after 2262), computed without going through
	// the time.Time: for integer time arithmetic on the hot path (time
	// bins, deltas, ordering). It is 0 when Timestamp is the zero Time (a
	// Simple Packet Block has no time): tell that case from the epoch with
	// Timestamp.IsZero. Every Reader, Merger and LiveHandle fills it; a
	// Record built by other code has it only if that code sets it.
	TimeNanos int64
}

// unixNanos returns what Record.TimeNanos holds for ts: ts.UnixNano(), or 0
// for the zero Time.
func unixNanos(ts time.Time) int64 {
	if ts.IsZero() {
		return 0
	}
	return ts.UnixNano()
}

// set fills every field of rec. The readers use it instead of assigning a
// composite literal, which the compiler builds on the stack and then copies
// with 16-byte loads of 8-byte stores: a store-forwarding stall on every
// record.
func (rec *Record) set(ts time.Time, nanos int64, capLen, origLen int, lt LinkType, iface, num int, data []byte) {
	rec.Timestamp = ts
	rec.TimeNanos = nanos
	rec.CapLen = capLen
	rec.OrigLen = origLen
	rec.LinkType = lt
	rec.Interface = iface
	rec.Number = num
	rec.Data = data
}

// Interface describes one capture interface: the pcap file header, or a
// pcapng Interface Description Block.
type Interface struct {
	LinkType LinkType
	SnapLen  int    // 0: no limit
	FCSLen   int    // bytes of FCS at the end of every frame; -1 if the file does not say
	Name     string // pcapng if_name, "" if absent
	// Description is pcapng if_description, "" if absent.
	Description string

	// TicksPerSecond is the timestamp resolution: 1e6 for microsecond
	// pcap, 1e9 for nanosecond pcap, 10^n or 2^n from pcapng if_tsresol.
	TicksPerSecond uint64
	// TSOffset is pcapng if_tsoffset: seconds added to every timestamp.
	TSOffset int64
}

// timestamp converts a count of ticks since the epoch (plus TSOffset) to a
// time.Time in UTC without allocating or overflowing, and to what its
// UnixNano method returns (computed in the same wrapping arithmetic).
func (i *Interface) timestamp(ticks uint64) (time.Time, int64) {
	var sec, nsec uint64
	switch tps := i.TicksPerSecond; tps {
	case 1e6:
		sec, nsec = ticks/1e6, ticks%1e6*1e3
	case 1e9:
		sec, nsec = ticks/1e9, ticks%1e9
	default:
		sec, nsec = scaleTicks(ticks, tps)
	}
	s := int64(sec) + i.TSOffset
	return time.Unix(s, int64(nsec)).UTC(), s*1e9 + int64(nsec)
}
