package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// PcapngWriter writes a little-endian pcapng file with one section. Its
// interfaces are either given with AddInterface (name, description,
// timestamp resolution, snap length and FCS length kept) or added by
// WritePacket the first time it sees a link type (snap length 0,
// nanosecond if_tsresol), so frames of several link types can share one
// file. It writes straight to w: wrap w in a bufio.Writer for speed.
type PcapngWriter struct {
	w      io.Writer
	ifaces []ifaceOut
	hdr    [blockHeadLen + 20]byte // EPB head and fixed fields
	tail   [3 + 4]byte             // padding and trailing length
}

// ifaceOut is an interface of the output.
type ifaceOut struct {
	lt    LinkType
	tps   uint64 // timestamp ticks per second: 1e9 or a divisor-free if_tsresol up to it
	byLT  bool   // added by WritePacket for its link type
	maxTS int64  // seconds: a time from here on does not fit in 64 bits of ticks
}

// pcapng Enhanced Packet Block fixed part.
const epbOverhead = blockOverhead + 20

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
	ifID, err := w.iface(lt)
	if err != nil {
		return err
	}
	return w.WriteInterfacePacket(ifID, ts, data, origLen)
}

// WriteInterfacePacket writes one Enhanced Packet Block for a frame of
// interface ifID (as AddInterface or WritePacket numbered it), its time
// in that interface's resolution. An origLen less than len(data) is raised
// to match. The timestamp must not be before 1970.
func (w *PcapngWriter) WriteInterfacePacket(ifID int, ts time.Time, data []byte, origLen int) error {
	if ifID < 0 || ifID >= len(w.ifaces) {
		return fmt.Errorf("capture: pcapng writer: no interface %d", ifID)
	}
	ifc := &w.ifaces[ifID]
	if ts.Unix() < 0 || ts.Unix() >= ifc.maxTS {
		return fmt.Errorf("capture: pcapng writer: timestamp %v out of range: %w", ts, ErrUnsupported)
	}
	if len(data) > maxRecordLen {
		return fmt.Errorf("capture: pcapng writer: %d-byte packet too large: %w", len(data), ErrUnsupported)
	}
	pad := (4 - len(data)%4) % 4
	total := uint32(epbOverhead + len(data) + pad)
	ticks := toTicks(ts, ifc.tps)
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
	_, err := w.w.Write(w.tail[:pad+4])
	return err
}

// iface returns the interface index for lt among those WritePacket
// added, writing its Interface Description Block the first time.
func (w *PcapngWriter) iface(lt LinkType) (int, error) {
	for i, l := range w.ifaces {
		if l.byLT && l.lt == lt {
			return i, nil
		}
	}
	id, err := w.AddInterface(Interface{LinkType: lt, FCSLen: -1, TicksPerSecond: 1e9})
	if err == nil {
		w.ifaces[id].byLT = true
	}
	return id, err
}

// AddInterface writes an Interface Description Block for ifc: its link
// type and snap length, and as options its name and description (when
// not empty), its FCS length (when known), and its timestamp resolution.
// The resolution is ifc's when it is a power of 10 or 2 no finer than a
// nanosecond, which a time.Time holds exactly; else nanoseconds. (Its
// TSOffset is not written: the times written are absolute.) It returns the
// interface's index for WriteInterfacePacket.
func (w *PcapngWriter) AddInterface(ifc Interface) (int, error) {
	if ifc.LinkType > pcapLinkTypeMask {
		return 0, fmt.Errorf("capture: pcapng writer: link type %d does not fit in 16 bits", ifc.LinkType)
	}
	if ifc.SnapLen < 0 || uint64(ifc.SnapLen) > 1<<32-1 {
		return 0, fmt.Errorf("capture: pcapng writer: snap length %d out of range", ifc.SnapLen)
	}
	tps, resol := outResolution(ifc.TicksPerSecond)
	le := binary.LittleEndian
	b := make([]byte, 16, 64)
	le.PutUint32(b[0:], blockIDB)
	le.PutUint16(b[8:], uint16(ifc.LinkType))
	le.PutUint32(b[12:], uint32(ifc.SnapLen))
	opt := func(code uint16, val []byte) {
		if len(val) > 0xffff {
			val = val[:0xffff]
		}
		b = le.AppendUint16(b, code)
		b = le.AppendUint16(b, uint16(len(val)))
		b = append(b, val...)
		b = append(b, make([]byte, (4-len(val)%4)%4)...)
	}
	if ifc.Name != "" {
		opt(optIfName, []byte(ifc.Name))
	}
	if ifc.Description != "" {
		opt(optIfDescr, []byte(ifc.Description))
	}
	opt(optIfTSResol, []byte{resol})
	if ifc.FCSLen >= 0 && ifc.FCSLen <= 0xff {
		opt(optIfFCSLen, []byte{byte(ifc.FCSLen)})
	}
	b = append(b, 0, 0, 0, 0) // opt_endofopt
	b = le.AppendUint32(b, 0)
	le.PutUint32(b[4:], uint32(len(b)))
	le.PutUint32(b[len(b)-4:], uint32(len(b)))
	if _, err := w.w.Write(b); err != nil {
		return 0, err
	}
	w.ifaces = append(w.ifaces, ifaceOut{lt: ifc.LinkType, tps: tps, maxTS: int64(uint64(1<<63-1) / tps)})
	return len(w.ifaces) - 1, nil
}

// outResolution is the timestamp resolution an output interface takes for
// an input one of tps ticks per second: tps itself, with its if_tsresol
// byte, when it is 10^n or 2^n and no finer than a nanosecond; else
// nanoseconds.
func outResolution(tps uint64) (uint64, byte) {
	p := uint64(1)
	for n := range 10 {
		if tps == p {
			return tps, byte(n)
		}
		p *= 10
	}
	for n := 1; n <= 29; n++ { // 2^29 < 1e9 < 2^30
		if tps == 1<<n {
			return tps, 0x80 | byte(n)
		}
	}
	return 1e9, 9
}

// toTicks is ts, at or after 1970, in ticks of tps per second (tps no more
// than 1e9). It inverts Interface.timestamp: a time read at that
// resolution, rounded down to a nanosecond, gives back its ticks exactly
// (the smallest tick count not before ts).
func toTicks(ts time.Time, tps uint64) uint64 {
	sec, nsec := uint64(ts.Unix()), uint64(ts.Nanosecond())
	if tps == 1e9 {
		return sec*1e9 + nsec
	}
	return sec*tps + (nsec*tps+1e9-1)/1e9
}
