package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// PcapWriter writes a nanosecond-resolution, little-endian pcap file
// (magic a1b23c4d, version 2.4) with a single link type. It writes straight
// to w, two writes per packet: wrap w in a bufio.Writer for speed.
type PcapWriter struct {
	w       io.Writer
	snapLen int
	hdr     [pcapRecordHeaderLen]byte
}

// NewPcapWriter writes the pcap file header to w. A snaplen of 0 means no
// limit; the header then says 262144 (libpcap's maximum), since some
// readers refuse a snap length of 0.
func NewPcapWriter(w io.Writer, lt LinkType, snaplen int) (*PcapWriter, error) {
	if snaplen < 0 || snaplen > maxRecordLen {
		return nil, fmt.Errorf("capture: pcap writer: snap length %d out of range", snaplen)
	}
	if lt > pcapLinkTypeMask {
		return nil, fmt.Errorf("capture: pcap writer: link type %d does not fit in 16 bits", lt)
	}
	var h [pcapFileHeaderLen]byte
	le := binary.LittleEndian
	le.PutUint32(h[0:], 0xa1b23c4d)
	le.PutUint16(h[4:], 2)
	le.PutUint16(h[6:], 4)
	// thiszone and sigfigs stay 0.
	header := snaplen
	if header == 0 {
		header = defaultMaxCapLen
	}
	le.PutUint32(h[16:], uint32(header))
	le.PutUint32(h[20:], uint32(lt))
	if _, err := w.Write(h[:]); err != nil {
		return nil, err
	}
	return &PcapWriter{w: w, snapLen: snaplen}, nil
}

// WritePacket writes one record. Data beyond the snap length is cut off; an
// origLen less than the bytes written is raised to match. The timestamp must
// lie between 1970 and 2106 (pcap's unsigned 32-bit seconds). It allocates
// nothing.
func (w *PcapWriter) WritePacket(ts time.Time, data []byte, origLen int) error {
	sec := ts.Unix()
	if sec < 0 || sec > 1<<32-1 {
		return fmt.Errorf("capture: pcap writer: timestamp %v out of range: %w", ts, ErrUnsupported)
	}
	if w.snapLen > 0 && len(data) > w.snapLen {
		data = data[:w.snapLen]
	}
	if len(data) > maxRecordLen {
		return fmt.Errorf("capture: pcap writer: %d-byte packet too large: %w", len(data), ErrUnsupported)
	}
	origLen = min(max(origLen, len(data)), 1<<32-1)
	le := binary.LittleEndian
	le.PutUint32(w.hdr[0:], uint32(sec))
	le.PutUint32(w.hdr[4:], uint32(ts.Nanosecond()))
	le.PutUint32(w.hdr[8:], uint32(len(data)))
	le.PutUint32(w.hdr[12:], uint32(origLen))
	if _, err := w.w.Write(w.hdr[:]); err != nil {
		return err
	}
	_, err := w.w.Write(data)
	return err
}
