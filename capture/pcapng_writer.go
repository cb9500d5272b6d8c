package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// PcapngWriter writes a little-endian pcapng file with one section. It adds
// an interface (snap length 0, nanosecond if_tsresol) the first time it sees
// a link type, so frames of several link types can share one file. It
// writes straight to w: wrap w in a bufio.Writer for speed.
type PcapngWriter struct {
	w      io.Writer
	ifaces []LinkType
	hdr    [blockHeadLen + 20]byte // EPB head and fixed fields
	tail   [3 + 4]byte             // padding and trailing length
}

// pcapng Enhanced Packet Block fixed part and IDB with if_tsresol=9.
const (
	epbOverhead = blockOverhead + 20
	idbLen      = blockOverhead + 8 + 8 + 4 // fixed fields, if_tsresol (padded), opt_endofopt
)

// NewPcapngWriter writes a Section Header Block (version 1.0, section
// length unknown) to w.
func NewPcapngWriter(w io.Writer) (*PcapngWriter, error) {
	var b [28]byte
	le := binary.LittleEndian
	le.PutUint32(b[0:], blockSHB)
	le.PutUint32(b[4:], 28)
	le.PutUint32(b[8:], byteOrderMagic)
	le.PutUint16(b[12:], 1)
	le.PutUint16(b[14:], 0)
	le.PutUint64(b[16:], ^uint64(0)) // section length -1: not given
	le.PutUint32(b[24:], 28)
	if _, err := w.Write(b[:]); err != nil {
		return nil, err
	}
	return &PcapngWriter{w: w}, nil
}

// WritePacket writes one Enhanced Packet Block for a frame of link type lt,
// preceded by an Interface Description Block the first time lt appears. An
// origLen less than len(data) is raised to match. The timestamp must not be
// before 1970.
func (w *PcapngWriter) WritePacket(ts time.Time, lt LinkType, data []byte, origLen int) error {
	if lt > pcapLinkTypeMask {
		return fmt.Errorf("capture: pcapng writer: link type %d does not fit in 16 bits", lt)
	}
	if ts.Unix() < 0 || ts.Unix() >= (1<<63-1)/1_000_000_000 {
		return fmt.Errorf("capture: pcapng writer: timestamp %v out of range: %w", ts, ErrUnsupported)
	}
	if len(data) > maxRecordLen {
		return fmt.Errorf("capture: pcapng writer: %d-byte packet too large: %w", len(data), ErrUnsupported)
	}
	ifID, err := w.iface(lt)
	if err != nil {
		return err
	}
	pad := (4 - len(data)%4) % 4
	total := uint32(epbOverhead + len(data) + pad)
	ticks := uint64(ts.UnixNano())
	le := binary.LittleEndian
	le.PutUint32(w.hdr[0:], blockEPB)
	le.PutUint32(w.hdr[4:], total)
	le.PutUint32(w.hdr[8:], uint32(ifID))
	le.PutUint32(w.hdr[12:], uint32(ticks>>32))
	le.PutUint32(w.hdr[16:], uint32(ticks))
	le.PutUint32(w.hdr[20:], uint32(len(data)))
	le.PutUint32(w.hdr[24:], uint32(min(max(origLen, len(data)), 1<<32-1)))
	w.tail = [7]byte{}
	le.PutUint32(w.tail[pad:], total)
	if _, err := w.w.Write(w.hdr[:]); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		return err
	}
	_, err = w.w.Write(w.tail[:pad+4])
	return err
}

// iface returns the interface index for lt, writing its Interface
// Description Block the first time.
func (w *PcapngWriter) iface(lt LinkType) (int, error) {
	for i, l := range w.ifaces {
		if l == lt {
			return i, nil
		}
	}
	var b [idbLen]byte
	le := binary.LittleEndian
	le.PutUint32(b[0:], blockIDB)
	le.PutUint32(b[4:], idbLen)
	le.PutUint16(b[8:], uint16(lt))
	// reserved and snap length (0: no limit) stay 0.
	le.PutUint16(b[16:], optIfTSResol)
	le.PutUint16(b[18:], 1)
	b[20] = 9 // nanoseconds; then 3 bytes of padding, and opt_endofopt
	le.PutUint32(b[idbLen-4:], idbLen)
	if _, err := w.w.Write(b[:]); err != nil {
		return 0, err
	}
	w.ifaces = append(w.ifaces, lt)
	return len(w.ifaces) - 1, nil
}
