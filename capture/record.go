package capture

import "time"

// Record is one captured frame.
//
// Data aliases the Reader's buffer and is valid only until the next call to
// Next: copy it to keep it.
type Record struct {
	Timestamp time.Time // from the capture, in UTC; zero for a pcapng Simple Packet Block
	CapLen    int       // bytes captured: len(Data)
	OrigLen   int       // length on the wire; never less than CapLen
	LinkType  LinkType  // of the interface the frame came from
	Interface int       // pcapng interface index within its section; 0 for pcap
	Number    int       // 1-based frame number in the file
	Data      []byte
}

// Interface describes one capture interface: the pcap file header, or a
// pcapng Interface Description Block.
type Interface struct {
	LinkType LinkType
	SnapLen  int    // 0: no limit
	FCSLen   int    // bytes of FCS at the end of every frame; -1 if the file does not say
	Name     string // pcapng if_name, "" if absent

	// TicksPerSecond is the timestamp resolution: 1e6 for microsecond
	// pcap, 1e9 for nanosecond pcap, 10^n or 2^n from pcapng if_tsresol.
	TicksPerSecond uint64
	// TSOffset is pcapng if_tsoffset: seconds added to every timestamp.
	TSOffset int64
}

// timestamp converts a count of ticks since the epoch (plus TSOffset) to a
// time.Time in UTC without allocating or overflowing.
func (i *Interface) timestamp(ticks uint64) time.Time {
	var sec, nsec uint64
	switch tps := i.TicksPerSecond; tps {
	case 1e6:
		sec, nsec = ticks/1e6, ticks%1e6*1e3
	case 1e9:
		sec, nsec = ticks/1e9, ticks%1e9
	default:
		sec, nsec = scaleTicks(ticks, tps)
	}
	return time.Unix(int64(sec)+i.TSOffset, int64(nsec)).UTC()
}
