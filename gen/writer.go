package gen

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"
)

// byteOrder puts and appends.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// PcapWriter writes a classic pcap file (one link type) with microsecond or
// nanosecond timestamps, in either byte order.
type PcapWriter struct {
	w     io.Writer
	order byteOrder
	nano  bool
	hdr   [16]byte
}

// NewPcapWriter writes the pcap file header. snaplen 0 writes 262144.
func NewPcapWriter(w io.Writer, linkType uint32, snaplen int, nano, bigEndian bool) (*PcapWriter, error) {
	p := &PcapWriter{w: w, order: binary.LittleEndian, nano: nano}
	if bigEndian {
		p.order = binary.BigEndian
	}
	if snaplen == 0 {
		snaplen = 262144
	}
	var h [24]byte
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	p.order.PutUint32(h[0:], magic)
	p.order.PutUint16(h[4:], 2)
	p.order.PutUint16(h[6:], 4)
	p.order.PutUint32(h[16:], uint32(snaplen))
	p.order.PutUint32(h[20:], linkType)
	_, err := w.Write(h[:])
	return p, err
}

// WriteFrame writes one record.
func (p *PcapWriter) WriteFrame(ts time.Time, data []byte, origLen int) error {
	frac := ts.Nanosecond()
	if !p.nano {
		frac /= 1000
	}
	p.order.PutUint32(p.hdr[0:], uint32(ts.Unix()))
	p.order.PutUint32(p.hdr[4:], uint32(frac))
	p.order.PutUint32(p.hdr[8:], uint32(len(data)))
	p.order.PutUint32(p.hdr[12:], uint32(origLen))
	if _, err := p.w.Write(p.hdr[:]); err != nil {
		return err
	}
	_, err := p.w.Write(data)
	return err
}

// PcapNGInterface describes one interface of a pcapng section.
type PcapNGInterface struct {
	Name     string
	LinkType uint32
	Snaplen  int // 0: no limit
}

// PcapNGWriter writes a pcapng file: one section, its interfaces, and
// enhanced packet blocks with nanosecond timestamps.
type PcapNGWriter struct {
	w     io.Writer
	order byteOrder
	buf   []byte
}

// NewPcapNGWriter writes the section header and interface description blocks.
func NewPcapNGWriter(w io.Writer, ifaces []PcapNGInterface, bigEndian bool) (*PcapNGWriter, error) {
	p := &PcapNGWriter{w: w, order: binary.LittleEndian}
	if bigEndian {
		p.order = binary.BigEndian
	}
	// Section header block.
	b := p.order.AppendUint32(nil, 0x1a2b3c4d)
	b = p.order.AppendUint16(b, 1)
	b = p.order.AppendUint16(b, 0)
	b = p.order.AppendUint64(b, 0xffffffffffffffff)
	b = p.option(b, 4, []byte("rocegen")) // shb_userappl
	b = p.option(b, 0, nil)
	if err := p.block(0x0a0d0d0a, b); err != nil {
		return nil, err
	}
	for _, it := range ifaces {
		b = p.order.AppendUint16(b[:0], uint16(it.LinkType))
		b = p.order.AppendUint16(b, 0)
		b = p.order.AppendUint32(b, uint32(it.Snaplen))
		b = p.option(b, 2, []byte(it.Name)) // if_name
		b = p.option(b, 9, []byte{9})       // if_tsresol: nanoseconds
		b = p.option(b, 0, nil)
		if err := p.block(1, b); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *PcapNGWriter) option(b []byte, code uint16, v []byte) []byte {
	b = p.order.AppendUint16(b, code)
	b = p.order.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func (p *PcapNGWriter) block(typ uint32, body []byte) error {
	n := uint32(12 + len(body))
	p.buf = p.order.AppendUint32(p.buf[:0], typ)
	p.buf = p.order.AppendUint32(p.buf, n)
	p.buf = append(p.buf, body...)
	p.buf = p.order.AppendUint32(p.buf, n)
	_, err := p.w.Write(p.buf)
	return err
}

// WriteFrame writes one enhanced packet block.
func (p *PcapNGWriter) WriteFrame(iface int, ts time.Time, data []byte, origLen int) error {
	ns := uint64(ts.UnixNano())
	pad := (4 - len(data)%4) % 4
	n := uint32(32 + len(data) + pad)
	b := p.order.AppendUint32(p.buf[:0], 6)
	b = p.order.AppendUint32(b, n)
	b = p.order.AppendUint32(b, uint32(iface))
	b = p.order.AppendUint32(b, uint32(ns>>32))
	b = p.order.AppendUint32(b, uint32(ns))
	b = p.order.AppendUint32(b, uint32(len(data)))
	b = p.order.AppendUint32(b, uint32(origLen))
	b = append(b, data...)
	b = append(b, make([]byte, pad)...)
	b = p.order.AppendUint32(b, n)
	p.buf = b
	_, err := p.w.Write(b)
	return err
}

// FileExt is the capture file name extension the scenario's format gets:
// .pcap or .pcapng, plus .gz.
func FileExt(s *Scenario) string {
	ext := ".pcap"
	if strings.HasPrefix(s.Format, "pcapng") {
		ext = ".pcapng"
	}
	if s.Gzip {
		ext += ".gz"
	}
	return ext
}

// frameWriter is what Generate writes frames through.
type frameWriter func(f *Frame) error

// Generate writes the scenario's capture to w in its format (gzip, cut_off
// included) and returns its truth.
func Generate(w io.Writer, s *Scenario) (*Truth, error) {
	var (
		zw  *gzip.Writer
		out = w
	)
	if s.Gzip {
		zw = gzip.NewWriter(w) // no name, no mtime: the bytes depend on the input only
		out = zw
	}
	var write frameWriter
	var record func(f *Frame) ([]byte, error)
	if strings.HasPrefix(s.Format, "pcapng") {
		ifs := make([]PcapNGInterface, len(s.Interfaces))
		for i, it := range s.Interfaces {
			lt, _ := linkType(it.Link)
			ifs[i] = PcapNGInterface{Name: it.Name, LinkType: lt, Snaplen: *it.Snaplen}
		}
		be := s.Format == "pcapng-be"
		pw, err := NewPcapNGWriter(out, ifs, be)
		if err != nil {
			return nil, err
		}
		write = func(f *Frame) error { return pw.WriteFrame(f.Interface, f.Time, f.Data, f.OrigLen) }
		record = func(f *Frame) ([]byte, error) {
			var b bytes.Buffer
			rw := &PcapNGWriter{w: &b, order: pw.order}
			err := rw.WriteFrame(f.Interface, f.Time, f.Data, f.OrigLen)
			return b.Bytes(), err
		}
	} else {
		lt, _ := linkType(s.Interfaces[0].Link)
		nano := strings.Contains(s.Format, "-ns")
		be := strings.HasSuffix(s.Format, "-be")
		pw, err := NewPcapWriter(out, lt, *s.Interfaces[0].Snaplen, nano, be)
		if err != nil {
			return nil, err
		}
		write = func(f *Frame) error { return pw.WriteFrame(f.Time, f.Data, f.OrigLen) }
		record = func(f *Frame) ([]byte, error) {
			var b bytes.Buffer
			rw := &PcapWriter{w: &b, order: pw.order, nano: pw.nano}
			err := rw.WriteFrame(f.Time, f.Data, f.OrigLen)
			return b.Bytes(), err
		}
	}
	var last []byte
	var lastF Frame
	truth, err := Run(s, func(f *Frame) error {
		if s.CutOff != nil {
			last = append(last[:0], f.Data...)
			lastF = *f
		}
		return write(f)
	})
	if err != nil {
		return nil, err
	}
	if s.CutOff != nil {
		if last == nil {
			return nil, fmt.Errorf("gen: cut_off needs at least one frame to copy")
		}
		// The capture stops in the middle of one more record: a copy of the
		// last frame a microsecond later.
		lastF.Data = last
		lastF.Time = lastF.Time.Add(time.Microsecond)
		rec, err := record(&lastF)
		if err != nil {
			return nil, err
		}
		if s.CutOff.Bytes >= len(rec) {
			return nil, fmt.Errorf("gen: cut_off.bytes %d must be less than the final record's %d bytes", s.CutOff.Bytes, len(rec))
		}
		if _, err := out.Write(rec[:len(rec)-s.CutOff.Bytes]); err != nil {
			return nil, err
		}
		truth.CutOff = true
		truth.CutOffBytes = s.CutOff.Bytes
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return nil, err
		}
	}
	return truth, nil
}
