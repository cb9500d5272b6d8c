package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"time"
)

// pcapng block types and layout (draft-ietf-opsawg-pcapng).
const (
	blockSHB uint32 = 0x0a0d0d0a // Section Header Block (palindromic: same in both byte orders)
	blockIDB uint32 = 0x00000001 // Interface Description Block
	blockPB  uint32 = 0x00000002 // Packet Block (obsolete)
	blockSPB uint32 = 0x00000003 // Simple Packet Block
	blockEPB uint32 = 0x00000006 // Enhanced Packet Block

	byteOrderMagic        = 0x1a2b3c4d
	byteOrderMagicSwapped = 0x4d3c2b1a

	blockHeadLen  = 8  // block type, block total length
	blockOverhead = 12 // head plus trailing block total length
	shbPeekLen    = 12 // head plus byte-order magic
	maxBlockLen   = maxRecordLen + 64<<10
)

// minBlockLen is the smallest valid block total length of each type.
func minBlockLen(typ uint32) uint32 {
	switch typ {
	case blockSHB:
		return blockOverhead + 16 // BOM, version, section length
	case blockIDB:
		return blockOverhead + 8 // link type, reserved, snaplen
	case blockEPB, blockPB:
		return blockOverhead + 20
	case blockSPB:
		return blockOverhead + 4
	}
	return blockOverhead
}

// blockName names a block type for messages.
func blockName(typ uint32) string {
	switch typ {
	case blockSHB:
		return "Section Header Block"
	case blockIDB:
		return "Interface Description Block"
	case blockPB:
		return "Packet Block"
	case blockSPB:
		return "Simple Packet Block"
	case blockEPB:
		return "Enhanced Packet Block"
	case 4:
		return "Name Resolution Block"
	case 5:
		return "Interface Statistics Block"
	case 9:
		return "systemd Journal Export Block"
	case 10:
		return "Decryption Secrets Block"
	case 0x00000bad, 0x40000bad:
		return "Custom Block"
	}
	return fmt.Sprintf("block of type 0x%08x", typ)
}

func isPacketBlock(typ uint32) bool {
	return typ == blockEPB || typ == blockSPB || typ == blockPB
}

// readPcapngHeader reads the first Section Header Block, then every block up
// to the first packet, so that SnapLen and LinkTypes are known. An error
// after the first Section Header Block is kept for Next.
func (r *Reader) readPcapngHeader() error {
	if err := r.readSHB(0); err != nil {
		return err
	}
	for {
		h, _ := r.peek(blockHeadLen)
		if len(h) < blockHeadLen || isPacketBlock(r.order.Uint32(h)) {
			return nil // Next reports the end, or reads the packet
		}
		if err := r.otherBlock(h, r.n+1); err != nil {
			r.fail(err)
			return nil
		}
	}
}

// nextPcapng reads blocks until one holds a packet.
func (r *Reader) nextPcapng(rec *Record) error {
	for {
		num := r.n + 1
		r.recOff = r.pos()
		h, err := r.peek(blockHeadLen)
		if len(h) < blockHeadLen {
			if len(h) == 0 && err == io.EOF {
				return io.EOF
			}
			return r.readErr(err, num, len(h), blockHeadLen)
		}
		typ := r.order.Uint32(h)
		if !isPacketBlock(typ) {
			if err := r.otherBlock(h, num); err != nil {
				return err
			}
			continue
		}
		body, err := r.block(r.order, typ, r.order.Uint32(h[4:]), num)
		if err != nil {
			return err
		}
		return r.packet(typ, body, rec, num)
	}
}

// otherBlock handles a block that holds no packet; h is its 8-byte head.
func (r *Reader) otherBlock(h []byte, num int) error {
	r.recOff = r.pos()
	typ, length := r.order.Uint32(h), r.order.Uint32(h[4:])
	switch typ {
	case blockSHB:
		return r.readSHB(num)
	case blockIDB:
		body, err := r.block(r.order, typ, length, num)
		if err != nil {
			return err
		}
		return r.decodeIDB(body, num)
	}
	if err := r.skipBlock(typ, length, num); err != nil {
		return err
	}
	if isNumberedBlock(typ) {
		r.n = num
	}
	return nil
}

// isNumberedBlock says whether a block that holds no packet takes a frame
// number all the same: Wireshark shows a Custom Block and a systemd
// Journal Export Block as frames, so the packets after one are numbered
// as Wireshark numbers them (Record.Number).
func isNumberedBlock(typ uint32) bool {
	return typ == 0x00000bad || typ == 0x40000bad || typ == 9
}

// checkBlockLen validates a block total length before anything is read.
func (r *Reader) checkBlockLen(typ, length uint32, num int) error {
	switch {
	case length%4 != 0:
		return r.badRecord(num, "%s length %d is not a multiple of 4", blockName(typ), length)
	case length < minBlockLen(typ):
		return r.badRecord(num, "%s length %d is too short (minimum %d)", blockName(typ), length, minBlockLen(typ))
	case length > maxBlockLen:
		return r.badRecord(num, "%s length %d is implausible", blockName(typ), length)
	}
	return nil
}

// block reads a whole block and returns its body: what lies between the
// 8-byte head and the trailing length, which must repeat the leading one.
func (r *Reader) block(o binary.ByteOrder, typ, length uint32, num int) ([]byte, error) {
	if err := r.checkBlockLen(typ, length, num); err != nil {
		return nil, err
	}
	p, err := r.read(int(length), num)
	if err != nil {
		return nil, err
	}
	if trail := o.Uint32(p[length-4:]); trail != length {
		return nil, r.badRecord(num, "%s trailing length %d does not match leading length %d", blockName(typ), trail, length)
	}
	return p[blockHeadLen : length-4], nil
}

// skipBlock consumes a block without decoding it, checking its lengths.
func (r *Reader) skipBlock(typ, length uint32, num int) error {
	if err := r.checkBlockLen(typ, length, num); err != nil {
		return err
	}
	n := int(length) - 4
	if m, err := r.discard(n); m < n {
		return r.readErr(err, num, m, int(length))
	}
	p, err := r.peek(4)
	if len(p) < 4 {
		return r.readErr(err, num, n+len(p), int(length))
	}
	if trail := r.order.Uint32(p); trail != length {
		return r.badRecord(num, "%s trailing length %d does not match leading length %d", blockName(typ), trail, length)
	}
	r.discard(4)
	r.off += int64(length)
	return nil
}

// readSHB reads a Section Header Block, which sets the byte order of the
// section and forgets the interfaces of the previous one. num is 0 for the
// first block of the file.
func (r *Reader) readSHB(num int) error {
	r.recOff = r.pos()
	h, err := r.peek(shbPeekLen)
	if len(h) < shbPeekLen {
		return r.readErr(err, num, len(h), shbPeekLen)
	}
	var o binary.ByteOrder
	switch binary.LittleEndian.Uint32(h[8:]) {
	case byteOrderMagic:
		o = binary.LittleEndian
	case byteOrderMagicSwapped:
		o = binary.BigEndian
	default:
		if num == 0 {
			reason := fmt.Sprintf("not a pcap or pcapng file (pcapng signature, but byte-order magic % x)", h[8:12])
			return &FileError{Name: r.name, Reason: r.inGzip(reason), Err: ErrNotCapture}
		}
		return r.badRecord(num, "Section Header Block has bad byte-order magic % x", h[8:12])
	}
	body, err := r.block(o, blockSHB, o.Uint32(h[4:]), num)
	if err != nil {
		return err
	}
	major, minor := o.Uint16(body[4:]), o.Uint16(body[6:])
	if major != 1 {
		return r.recordErr(num, ErrUnsupported, "unsupported pcapng version %d.%d", major, minor)
	}
	r.order = o
	r.bigEndian = o == binary.BigEndian
	r.ifaces = r.ifaces[:0]
	r.sectionNum = num // its start is noted at its first interface (addInterface)
	r.sections++
	if r.sections == 1 {
		r.format = Format{Kind: KindPcapNG, ByteOrder: o, Gzip: r.format.Gzip, Major: int(major), Minor: int(minor)}
	}
	return nil
}

// packet decodes an Enhanced, Simple or obsolete Packet Block body into rec.
func (r *Reader) packet(typ uint32, body []byte, rec *Record, num int) error {
	o := r.order
	var (
		ifID          uint32
		ticks         uint64
		capLen, orig  uint64
		data          []byte
		hasTimestamp  = true
		room          = uint64(len(body))
		fixedFieldLen = uint64(20)
	)
	switch typ {
	case blockEPB, blockPB:
		// EPB: interface ID (32 bits); PB: interface ID and drops count
		// (16 bits each). Then timestamp high, low, captured and original
		// length, data.
		if typ == blockEPB {
			ifID = o.Uint32(body)
		} else {
			ifID = uint32(o.Uint16(body))
		}
		ticks = uint64(o.Uint32(body[4:]))<<32 | uint64(o.Uint32(body[8:]))
		capLen, orig = uint64(o.Uint32(body[12:])), uint64(o.Uint32(body[16:]))
		if capLen > room-fixedFieldLen {
			return r.badRecord(num, "%s captured length %d exceeds the block (room for %d)", blockName(typ), capLen, room-fixedFieldLen)
		}
	case blockSPB:
		// Original length, data. The captured length is implied: the
		// original length, limited by the interface's snap length and by
		// the block.
		fixedFieldLen = 4
		hasTimestamp = false
		r.untimed = true
		orig = uint64(o.Uint32(body))
		capLen = min(orig, room-fixedFieldLen)
	}
	if uint64(ifID) >= uint64(len(r.ifaces)) {
		if len(r.ifaces) == 0 {
			// "but the section declares 0" left the reader to guess 0 what.
			return r.badRecord(num, "%s on interface %d, but the section declares no interface (no Interface Description Block before it)", blockName(typ), ifID)
		}
		return r.badRecord(num, "%s on interface %d, but the section declares %d", blockName(typ), ifID, len(r.ifaces))
	}
	ifc := &r.ifaces[ifID]
	if typ == blockSPB && ifc.SnapLen > 0 {
		capLen = min(capLen, uint64(ifc.SnapLen))
	}
	data = body[fixedFieldLen : fixedFieldLen+capLen : fixedFieldLen+capLen]
	var ts time.Time
	var nanos int64
	if hasTimestamp {
		ts, nanos = ifc.timestamp(ticks)
	}
	r.n = num
	rec.set(ts, nanos, int(capLen), int(max(orig, capLen)), ifc.LinkType, int(ifID), num, data)
	return nil
}

// epbHeadLen is the part of an Enhanced Packet Block before the packet
// data: block head, interface ID, timestamp (high, low), captured and
// original length.
const epbHeadLen = blockHeadLen + 20

// nextEPB is the block path's pcapng hot loop: it takes an Enhanced Packet
// Block that lies whole in the block and is well-formed (the checks of
// checkBlockLen, block and packet), fills rec and returns true. For anything
// else it consumes nothing and returns false, and the generic code reads
// (and reports) what is there. It must stay equivalent to that code.
func (r *Reader) nextEPB(rec *Record) bool {
	b := &r.blk
	p := b.buf[b.lo:b.hi]
	if len(p) < epbHeadLen {
		return false
	}
	h := (*[epbHeadLen]byte)(p)
	var typ, length, ifID, tsHigh, tsLow, capLen, orig uint32
	if r.bigEndian {
		o := binary.BigEndian
		typ, length, ifID = o.Uint32(h[0:]), o.Uint32(h[4:]), o.Uint32(h[8:])
		tsHigh, tsLow, capLen, orig = o.Uint32(h[12:]), o.Uint32(h[16:]), o.Uint32(h[20:]), o.Uint32(h[24:])
	} else {
		o := binary.LittleEndian
		typ, length, ifID = o.Uint32(h[0:]), o.Uint32(h[4:]), o.Uint32(h[8:])
		tsHigh, tsLow, capLen, orig = o.Uint32(h[12:]), o.Uint32(h[16:]), o.Uint32(h[20:]), o.Uint32(h[24:])
	}
	const minLen = epbHeadLen + 4 // minBlockLen(blockEPB)
	if typ != blockEPB || length%4 != 0 || length < minLen || length > maxBlockLen || uint64(length) > uint64(len(p)) ||
		capLen > length-minLen || uint64(ifID) >= uint64(len(r.ifaces)) {
		return false
	}
	trail := binary.LittleEndian.Uint32(p[length-4:])
	if r.bigEndian {
		trail = bits.ReverseBytes32(trail)
	}
	if trail != length {
		return false
	}
	ifc := &r.ifaces[ifID]
	var ts time.Time
	var nanos int64
	if ticks := uint64(tsHigh)<<32 | uint64(tsLow); ifc.TicksPerSecond == 1e6 {
		// The default resolution, inlined; Interface.timestamp does the
		// same for every resolution.
		sec, nsec := int64(ticks/1e6)+ifc.TSOffset, int64(ticks%1e6*1e3)
		ts, nanos = time.Unix(sec, nsec).UTC(), sec*1e9+nsec
	} else {
		ts, nanos = ifc.timestamp(ticks)
	}
	end := epbHeadLen + int(capLen)
	b.lo += int(length)
	r.n++
	rec.set(ts, nanos, int(capLen), int(max(orig, capLen)), ifc.LinkType, int(ifID), r.n, p[epbHeadLen:end:end])
	return true
}
