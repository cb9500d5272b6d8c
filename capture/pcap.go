package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"time"
)

// pcap layout (draft-ietf-opsawg-pcap).
const (
	pcapFileHeaderLen   = 24
	pcapRecordHeaderLen = 16

	// The LinkType field of the file header: the link type in the low 16
	// bits; when bit 0x04000000 is set, the top 4 bits give the FCS length
	// in 16-bit words (libpcap's LT_LINKTYPE, LT_FCS_LENGTH_PRESENT,
	// LT_FCS_LENGTH).
	pcapLinkTypeMask   = 0x0000ffff
	pcapFCSPresentFlag = 0x04000000
	pcapFCSShift       = 28

	// pcapJoinedSec: a record whose ts_sec is at least this (2055 on)
	// may be another pcap's file header, its magic read as ts_sec (as
	// files joined with cat, or gzip members joined so, leave it; see
	// joinedHeader). The block path's hot loop leaves such a record, and
	// one whose ts_sec is 0 (it may be zeros filling the file, see
	// zeroTail), to nextPcap.
	pcapJoinedSec = 0xa1b20000
)

// readPcapHeader reads the 24-byte pcap file header.
func (r *Reader) readPcapHeader(m magic) error {
	h, err := r.peek(pcapFileHeaderLen)
	if len(h) < pcapFileHeaderLen {
		return r.readErr(err, 0, len(h), pcapFileHeaderLen)
	}
	o := m.order
	major, minor := o.Uint16(h[4:]), o.Uint16(h[6:])
	if major != 2 {
		return &FileError{Name: r.name, Reason: fmt.Sprintf("unsupported pcap version %d.%d", major, minor), Err: ErrUnsupported}
	}
	snap := o.Uint32(h[16:])
	ltField := o.Uint32(h[20:])
	r.discard(pcapFileHeaderLen)
	r.off = pcapFileHeaderLen

	r.order = o
	r.format = Format{Kind: KindPcap, Nanosecond: m.nano, ByteOrder: o, Gzip: r.format.Gzip, Major: int(major), Minor: int(minor)}
	ifc := Interface{
		LinkType:       LinkType(ltField & pcapLinkTypeMask),
		SnapLen:        int(snap),
		FCSLen:         -1,
		TicksPerSecond: 1e6,
	}
	if m.nano {
		ifc.TicksPerSecond = 1e9
	}
	if ltField&pcapFCSPresentFlag != 0 {
		ifc.FCSLen = int(ltField>>pcapFCSShift) * 2
	}
	r.maxCapLen = min(max(ifc.SnapLen, defaultMaxCapLen), maxRecordLen)
	r.addInterface(ifc)
	r.bigEndian = o == binary.BigEndian
	r.maxCap = uint32(r.maxCapLen)
	r.linkType = ifc.LinkType
	r.fracScale = 1e3
	if m.nano {
		r.fracScale = 1
	}
	return nil
}

// nextPcap reads one pcap record: ts_sec, ts_frac, incl_len, orig_len, data.
// It is the generic code; Next's block-path hot loop is its fast copy and
// must stay equivalent to it.
func (r *Reader) nextPcap(rec *Record) error {
	num := r.n + 1
	r.recOff = r.pos()
	h, err := r.peek(pcapRecordHeaderLen)
	if len(h) < pcapRecordHeaderLen {
		if len(h) == 0 && err == io.EOF {
			return io.EOF
		}
		return r.readErr(err, num, len(h), pcapRecordHeaderLen)
	}
	o := r.order
	sec, frac := o.Uint32(h[0:]), o.Uint32(h[4:])
	incl, orig := o.Uint32(h[8:]), o.Uint32(h[12:])
	if sec == 0 && frac == 0 && incl == 0 && orig == 0 {
		if end, err := r.zeroTail(num); end {
			return err
		}
	}
	if sec >= pcapJoinedSec && joinedHeader(h) {
		return r.badRecord(num, "another pcap file header (% x) where a record should start: captures joined with cat? give them as separate files, or join them with mergecap", h[:4])
	}
	if uint64(incl) > uint64(r.maxCapLen) {
		if m, ok := magicOf(h[:4]); ok && m.kind == KindPcapNG {
			return r.badRecord(num, "a pcapng file header (% x) where a record should start: captures joined with cat? give them as separate files, or join them with mergecap", h[:4])
		}
		return r.badRecord(num, "captured length %d is implausible", incl)
	}
	capLen := int(incl)
	p, err := r.read(pcapRecordHeaderLen+capLen, num)
	if err != nil {
		return err
	}
	ifc := &r.ifaces[0]
	nsec := uint64(frac)
	if !r.format.Nanosecond {
		nsec *= 1e3
	}
	r.n = num
	rec.set(time.Unix(int64(sec), int64(nsec)).UTC(), int64(sec)*1e9+int64(nsec), capLen, max(int(orig), capLen), ifc.LinkType, 0, num, p[pcapRecordHeaderLen:])
	return nil
}

// joinedHeader says whether the record header h is the start of another
// pcap file header: a pcap magic, then major version 2. Read as a record
// it is a frame of thiszone bytes at a time in 2055 or later, and what
// follows is garbage ("captured length 1781621760 is implausible") or, in
// a gzip stream, a cut: the second capture's frames were lost with no word
// on why.
func joinedHeader(h []byte) bool {
	m, ok := magicOf(h[:4])
	return ok && m.kind == KindPcap && m.order.Uint16(h[4:]) == 2
}

// zeroTail is nextPcap at a record header of zeros: an empty frame at
// time 0 (an empty Simple Packet Block written to pcap is one), or the
// start of zeros that fill the file from a record boundary to its end, as
// a capture host that crashed (a file system that had extended the file),
// a preallocated file or a copy leaves. Read as records, those were
// thousands of empty frames of 1970: the capture spanned 56 years, and
// its clock went back. When the next 16 bytes are not zeros too, it is
// the frame (end false: nextPcap reads it). Else zeros to the end are
// ignored, as zeros after a gzip stream are, and Trailing says so (end
// true, with io.EOF); zeros and then data are a bad record. What it
// decides does not depend on the read buffer's size.
func (r *Reader) zeroTail(num int) (end bool, err error) {
	p, err := r.peek(2 * pcapRecordHeaderLen)
	if slices.ContainsFunc(p, nonZero) || len(p) < 2*pcapRecordHeaderLen && err != io.EOF {
		return false, nil
	}
	at, n := r.pos(), int64(0)
	var buf [4096]byte
	for src := r.source(); err != io.EOF; {
		var k int
		k, err = src.Read(buf[:])
		if i := slices.IndexFunc(buf[:k], nonZero); i >= 0 {
			return true, r.badRecord(num, "zeros where a record should start, from byte %d to byte %d, then data", at, at+n+int64(i))
		}
		n += int64(k)
		if err != nil && err != io.EOF {
			return true, r.readErr(err, num, 0, pcapRecordHeaderLen)
		}
	}
	r.trailing = &FileError{Name: r.name, Err: ErrTrailingData,
		Reason: fmt.Sprintf("zeros from byte %d to the end (%d bytes) after the last record are not records", at, n)}
	return true, io.EOF
}

func nonZero(c byte) bool { return c != 0 }
