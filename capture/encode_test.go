package capture

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"testing"
	"time"
)

// This file holds a small test-only encoder for pcap and pcapng, written
// from the specifications independently of the reader, plus helpers to read
// a capture back.

// pkt is a frame to encode.
type pkt struct {
	sec, frac uint32 // pcap timestamp fields
	data      []byte
	orig      uint32 // 0: len(data)
}

// pcapSpec is a pcap file header.
type pcapSpec struct {
	order    byteOrder
	nano     bool
	major    uint16 // 0: 2
	snaplen  uint32
	linkType uint32
}

// encodePcap returns a pcap file and the offset just past each record.
func encodePcap(s pcapSpec, pkts []pkt) (file []byte, ends []int) {
	o := s.order
	magic := uint32(0xa1b2c3d4)
	if s.nano {
		magic = 0xa1b23c4d
	}
	major := s.major
	if major == 0 {
		major = 2
	}
	b := o.AppendUint32(nil, magic)
	b = o.AppendUint16(b, major)
	b = o.AppendUint16(b, 4)
	b = o.AppendUint32(b, 0) // thiszone
	b = o.AppendUint32(b, 0) // sigfigs
	b = o.AppendUint32(b, s.snaplen)
	b = o.AppendUint32(b, s.linkType)
	for _, p := range pkts {
		orig := p.orig
		if orig == 0 {
			orig = uint32(len(p.data))
		}
		b = o.AppendUint32(b, p.sec)
		b = o.AppendUint32(b, p.frac)
		b = o.AppendUint32(b, uint32(len(p.data)))
		b = o.AppendUint32(b, orig)
		b = append(b, p.data...)
		ends = append(ends, len(b))
	}
	return b, ends
}

// ngFile builds a pcapng file block by block.
type ngFile struct {
	o          byteOrder
	b          []byte
	boundaries []int // offset after each block
	packets    []int // offset after each packet block
}

// block appends a block of type typ with the given body, padded to 4 bytes.
func (f *ngFile) block(typ uint32, body []byte) {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	f.b = f.o.AppendUint32(f.b, typ)
	f.b = f.o.AppendUint32(f.b, n)
	f.b = append(f.b, body...)
	f.b = f.o.AppendUint32(f.b, n)
	f.boundaries = append(f.boundaries, len(f.b))
	if typ == 2 || typ == 3 || typ == 6 {
		f.packets = append(f.packets, len(f.b))
	}
}

// shb starts a section in byte order o.
func (f *ngFile) shb(o byteOrder, opts ...[]byte) {
	f.o = o
	body := o.AppendUint32(nil, 0x1a2b3c4d)
	body = o.AppendUint16(body, 1)
	body = o.AppendUint16(body, 0)
	body = o.AppendUint64(body, ^uint64(0))
	f.block(0x0a0d0d0a, append(body, f.opts(opts)...))
}

// opt encodes one option, padded.
func (f *ngFile) opt(code uint16, val []byte) []byte {
	b := f.o.AppendUint16(nil, code)
	b = f.o.AppendUint16(b, uint16(len(val)))
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// opts concatenates options and appends opt_endofopt if there are any.
func (f *ngFile) opts(opts [][]byte) []byte {
	if len(opts) == 0 {
		return nil
	}
	var b []byte
	for _, o := range opts {
		b = append(b, o...)
	}
	return append(b, 0, 0, 0, 0)
}

// idb declares an interface.
func (f *ngFile) idb(lt uint16, snap uint32, opts ...[]byte) {
	body := f.o.AppendUint16(nil, lt)
	body = f.o.AppendUint16(body, 0)
	body = f.o.AppendUint32(body, snap)
	f.block(1, append(body, f.opts(opts)...))
}

// epb appends an Enhanced Packet Block.
func (f *ngFile) epb(iface uint32, ticks uint64, data []byte, orig uint32, opts ...[]byte) {
	body := f.o.AppendUint32(nil, iface)
	body = f.o.AppendUint32(body, uint32(ticks>>32))
	body = f.o.AppendUint32(body, uint32(ticks))
	body = f.o.AppendUint32(body, uint32(len(data)))
	body = f.o.AppendUint32(body, orig)
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	f.block(6, append(body, f.opts(opts)...))
}

// pb appends an obsolete Packet Block.
func (f *ngFile) pb(iface uint16, ticks uint64, data []byte, orig uint32) {
	body := f.o.AppendUint16(nil, iface)
	body = f.o.AppendUint16(body, 0) // drops count
	body = f.o.AppendUint32(body, uint32(ticks>>32))
	body = f.o.AppendUint32(body, uint32(ticks))
	body = f.o.AppendUint32(body, uint32(len(data)))
	body = f.o.AppendUint32(body, orig)
	f.block(2, append(body, data...))
}

// spb appends a Simple Packet Block.
func (f *ngFile) spb(data []byte, orig uint32) {
	f.block(3, append(f.o.AppendUint32(nil, orig), data...))
}

// raw appends bytes as they are (for malformed blocks).
func (f *ngFile) raw(b ...[]byte) {
	for _, x := range b {
		f.b = append(f.b, x...)
	}
}

// u32 encodes v in the file's current byte order.
func (f *ngFile) u32(v uint32) []byte { return f.o.AppendUint32(nil, v) }

// gz compresses b as one gzip member.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// gzMulti compresses b as two concatenated gzip members.
func gzMulti(b []byte) []byte {
	half := len(b) / 2
	return append(gz(b[:half]), gz(b[half:])...)
}

// frame fills n bytes with a pattern derived from seed.
func frame(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i)
	}
	return b
}

// readAll reads every record of r, copying the data, and returns the error
// that ended the reading (io.EOF at a clean end).
func readAll(tb testing.TB, r *Reader) ([]Record, error) {
	tb.Helper()
	var recs []Record
	var rec Record
	for {
		err := r.Next(&rec)
		if err != nil {
			if again := r.Next(&rec); again != err {
				tb.Errorf("error not sticky: first %v, then %v", err, again)
			}
			return recs, err
		}
		if rec.CapLen != len(rec.Data) {
			tb.Fatalf("record %d: CapLen %d but len(Data) %d", rec.Number, rec.CapLen, len(rec.Data))
		}
		if !nextNumber(recs, rec.Number) {
			tb.Fatalf("record number %d after %d records: want frame numbers from 1 up", rec.Number, len(recs))
		}
		rec.Data = bytes.Clone(rec.Data)
		recs = append(recs, rec)
	}
}

// nextNumber says whether n may be the frame number of the record after
// recs: one more than the last, or more where blocks without a packet took
// numbers (pcapng Custom Blocks, as Wireshark numbers them).
func nextNumber(recs []Record, n int) bool {
	if len(recs) == 0 {
		return n >= 1
	}
	return n > recs[len(recs)-1].Number
}

// readBytes opens b with NewReader (or a small-buffer reader when small is
// set) and reads it all; the error is NewReader's or the one ending Next.
func readBytes(tb testing.TB, b []byte, name string, small bool) (*Reader, []Record, error) {
	tb.Helper()
	size := bufSize
	if small {
		size = minBufSize
	}
	r, err := newReaderSize(bytes.NewReader(b), name, size)
	if err != nil {
		return nil, nil, err
	}
	recs, err := readAll(tb, r)
	return r, recs, err
}

// utc builds a UTC time.
func utc(sec, nsec int64) time.Time { return time.Unix(sec, nsec).UTC() }

// byteOrder is what binary.LittleEndian and binary.BigEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}
