package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// A minimal classic-pcap reader and writer for the tests, kept here so
// that the filter tests need no other rocedump package.

// pcapRecord is one record of a pcap file.
type pcapRecord struct {
	sec, frac uint32
	origLen   int
	data      []byte
}

// pcapFile is a whole classic pcap file.
type pcapFile struct {
	linkType uint32
	snapLen  uint32
	records  []pcapRecord
}

// parsePcap reads a classic pcap file of either byte order and either
// timestamp resolution.
func parsePcap(b []byte) (*pcapFile, error) {
	if len(b) < 24 {
		return nil, errors.New("pcap: short file header")
	}
	var order binary.ByteOrder
	switch binary.LittleEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xa1b23c4d:
		order = binary.LittleEndian
	case 0xd4c3b2a1, 0x4d3cb2a1:
		order = binary.BigEndian
	default:
		return nil, fmt.Errorf("pcap: bad magic %x", b[:4])
	}
	f := &pcapFile{snapLen: order.Uint32(b[16:]), linkType: order.Uint32(b[20:]) & 0x0fffffff}
	for off := 24; off < len(b); {
		if len(b)-off < 16 {
			return nil, fmt.Errorf("pcap: short record header at %d", off)
		}
		h := b[off : off+16]
		capLen := int(order.Uint32(h[8:]))
		off += 16
		if capLen > len(b)-off {
			return nil, fmt.Errorf("pcap: record at %d wants %d bytes, has %d", off, capLen, len(b)-off)
		}
		f.records = append(f.records, pcapRecord{
			sec: order.Uint32(h), frac: order.Uint32(h[4:]),
			origLen: int(order.Uint32(h[12:])), data: b[off : off+capLen],
		})
		off += capLen
	}
	return f, nil
}

// encode writes the file as little-endian microsecond pcap.
func (f *pcapFile) encode() []byte {
	var w bytes.Buffer
	le := binary.LittleEndian
	hdr := make([]byte, 24)
	le.PutUint32(hdr, 0xa1b2c3d4)
	le.PutUint16(hdr[4:], 2)
	le.PutUint16(hdr[6:], 4)
	snap := f.snapLen
	if snap == 0 {
		snap = 262144
	}
	le.PutUint32(hdr[16:], snap)
	le.PutUint32(hdr[20:], f.linkType)
	w.Write(hdr)
	for _, r := range f.records {
		rh := make([]byte, 16)
		le.PutUint32(rh, r.sec)
		le.PutUint32(rh[4:], r.frac)
		le.PutUint32(rh[8:], uint32(len(r.data)))
		le.PutUint32(rh[12:], uint32(r.origLen))
		w.Write(rh)
		w.Write(r.data)
	}
	return w.Bytes()
}

// tcpdumpRejectsAll is libpcap's error for a filter that is constant
// false; it is not an error for this package.
const tcpdumpRejectsAll = "expression rejects all packets"

// tcpdumpMatch runs tcpdump over the file with the expression and returns
// the indices of the records it selects. A compile error comes back as
// the error, with tcpdump's message.
func tcpdumpMatch(f *pcapFile, expr string) ([]int, error) {
	cmd := exec.Command("tcpdump", "-r", "-", "-w", "-", "--", expr)
	cmd.Stdin = bytes.NewReader(f.encode())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, tcpdumpRejectsAll) {
			return nil, nil
		}
		return nil, fmt.Errorf("tcpdump: %v: %s", err, msg)
	}
	out, err := parsePcap(stdout.Bytes())
	if err != nil {
		return nil, err
	}
	// tcpdump writes the selected records in order; find each in turn.
	var idx []int
	i := 0
	for _, r := range out.records {
		for ; i < len(f.records); i++ {
			in := f.records[i]
			if in.sec == r.sec && in.frac == r.frac && in.origLen == r.origLen && bytes.Equal(in.data, r.data) {
				break
			}
		}
		if i == len(f.records) {
			return nil, fmt.Errorf("tcpdump wrote a record that is not in the input")
		}
		idx = append(idx, i)
		i++
	}
	return idx, nil
}

// ourMatch returns the indices of the records that the filter selects.
func ourMatch(flt *Filter, f *pcapFile) []int {
	var idx []int
	for i, r := range f.records {
		if flt.MatchLen(r.data, r.origLen) {
			idx = append(idx, i)
		}
	}
	return idx
}

func needTcpdump(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump not on PATH; skipping the differential test against libpcap")
	}
}

func readPcapFile(t testing.TB, path string) *pcapFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parsePcap(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return f
}
