package capture

import "encoding/binary"

// Kind is the container format of a capture file.
type Kind uint8

// Container formats.
const (
	KindPcap   Kind = iota + 1 // libpcap savefile
	KindPcapNG                 // pcap next generation
)

// String returns "pcap" or "pcapng".
func (k Kind) String() string {
	switch k {
	case KindPcap:
		return "pcap"
	case KindPcapNG:
		return "pcapng"
	}
	return "unknown"
}

// Format describes how a capture file is encoded.
type Format struct {
	Kind       Kind
	Nanosecond bool             // pcap: nanosecond magic a1b23c4d
	ByteOrder  binary.ByteOrder // of the pcap header, or of the first pcapng section
	Gzip       bool             // the file was gzip-compressed
	Major      int              // version from the pcap header or first Section Header Block
	Minor      int
}

// String returns "pcap", "pcap (ns)" or "pcapng", with " (gzip)" appended
// when the file was compressed. The byte order is in the ByteOrder field.
func (f Format) String() string {
	s := f.Kind.String()
	if f.Nanosecond {
		s += " (ns)"
	}
	if f.Gzip {
		s += " (gzip)"
	}
	return s
}
