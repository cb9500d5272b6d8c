package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// writerPkts are frames to write: data, original length, and time.
type writerPkt struct {
	ts   time.Time
	lt   LinkType
	data []byte
	orig int
}

func writerPkts() []writerPkt {
	return []writerPkt{
		{utc(1700000000, 123456789), LinkTypeEthernet, frame(1, 60), 60},
		{utc(1700000001, 1), LinkTypeLinuxSLL2, frame(2, 97), 1500},
		{utc(0, 0), LinkTypeEthernet, nil, 0},
		{utc(4294967295, 999999999), LinkTypeLinuxSLL2, frame(3, 9000), 10}, // orig below caplen: raised
	}
}

func TestPcapWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewPcapWriter(&buf, LinkTypeLinuxSLL2, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range writerPkts() {
		if err := w.WritePacket(p.ts, p.data, p.orig); err != nil {
			t.Fatal(err)
		}
	}
	r, recs, err := readBytes(t, buf.Bytes(), "w.pcap", false)
	if err != io.EOF || len(recs) != len(writerPkts()) {
		t.Fatalf("got %d records and %v", len(recs), err)
	}
	if r.Format().String() != "pcap (ns)" || r.SnapLen() != 262144 {
		t.Errorf("format %v, snap length %d; want pcap (ns), 262144", r.Format(), r.SnapLen())
	}
	for i, p := range writerPkts() {
		checkRecord(t, recs[i], Record{Timestamp: p.ts, CapLen: len(p.data), OrigLen: max(p.orig, len(p.data)),
			LinkType: LinkTypeLinuxSLL2, Number: i + 1, Data: p.data})
	}
	tsharkAgrees(t, "w.pcap", buf.Bytes())
}

func TestPcapWriterSnapLen(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewPcapWriter(&buf, LinkTypeEthernet, 64)
	if err := w.WritePacket(utc(1, 0), frame(1, 100), 100); err != nil {
		t.Fatal(err)
	}
	_, recs, err := readBytes(t, buf.Bytes(), "snap.pcap", false)
	if err != io.EOF || len(recs) != 1 || recs[0].CapLen != 64 || recs[0].OrigLen != 100 {
		t.Fatalf("got %+v and %v, want one record of 64 of 100 bytes", recs, err)
	}
}

func TestWriterErrors(t *testing.T) {
	if _, err := NewPcapWriter(io.Discard, LinkTypeEthernet, -1); err == nil {
		t.Error("negative snap length accepted")
	}
	if _, err := NewPcapWriter(io.Discard, 70000, 0); err == nil {
		t.Error("link type beyond 16 bits accepted")
	}
	w, _ := NewPcapWriter(io.Discard, LinkTypeEthernet, 0)
	for _, ts := range []time.Time{utc(-1, 0), utc(1<<32, 0)} {
		if err := w.WritePacket(ts, nil, 0); !errors.Is(err, ErrUnsupported) {
			t.Errorf("pcap timestamp %v: error %v, want ErrUnsupported", ts, err)
		}
	}
	nw, _ := NewPcapngWriter(io.Discard)
	if err := nw.WritePacket(utc(-1, 0), LinkTypeEthernet, nil, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("pcapng timestamp before 1970: error %v, want ErrUnsupported", err)
	}
	boom := errors.New("boom")
	if _, err := NewPcapWriter(failingWriter{boom}, LinkTypeEthernet, 0); !errors.Is(err, boom) {
		t.Errorf("write error lost: %v", err)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestPcapngWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range writerPkts() {
		if err := w.WritePacket(p.ts, p.lt, p.data, p.orig); err != nil {
			t.Fatal(err)
		}
	}
	r, recs, err := readBytes(t, buf.Bytes(), "w.pcapng", false)
	if err != io.EOF || len(recs) != len(writerPkts()) {
		t.Fatalf("got %d records and %v", len(recs), err)
	}
	ifaceOf := map[LinkType]int{LinkTypeEthernet: 0, LinkTypeLinuxSLL2: 1}
	for i, p := range writerPkts() {
		checkRecord(t, recs[i], Record{Timestamp: p.ts, CapLen: len(p.data), OrigLen: max(p.orig, len(p.data)),
			LinkType: p.lt, Interface: ifaceOf[p.lt], Number: i + 1, Data: p.data})
	}
	if got := r.LinkTypes(); len(got) != 2 || got[0] != LinkTypeEthernet || got[1] != LinkTypeLinuxSLL2 {
		t.Errorf("LinkTypes() = %v", got)
	}
	tsharkAgrees(t, "w.pcapng", buf.Bytes())
}

// tsharkAgrees writes b to a file and compares tshark's reading with ours.
func tsharkAgrees(t *testing.T, name string, b []byte) {
	t.Helper()
	if _, err := exec.LookPath("tshark"); err != nil {
		return
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	compareFrames(t, name, ourFrames(t, name, b), tsharkFrames(t, path))
}

// TestPcapngWriterInterfaces: AddInterface writes an interface's name,
// description, snap length, FCS length and timestamp resolution, and
// WriteInterfacePacket a time read at that resolution back exactly; a
// resolution finer than a nanosecond becomes nanoseconds. Reader.InterfaceOf
// tells the interfaces of two sections apart.
func TestPcapngWriterInterfaces(t *testing.T) {
	ifaces := []Interface{
		{LinkType: LinkTypeEthernet, SnapLen: 262144, FCSLen: -1, Name: "eth0", Description: "uplink to leaf 3", TicksPerSecond: 1e6},
		{LinkType: LinkTypeRaw, SnapLen: 65535, FCSLen: 4, Name: "tun0", TicksPerSecond: 1 << 20},
		{LinkType: LinkTypeEthernet, FCSLen: -1, TicksPerSecond: 1e3},
		{LinkType: LinkTypeEthernet, FCSLen: -1, Name: "ens1f0", TicksPerSecond: 1e12},
	}
	// Times as a reader gives them at each resolution: whole ticks,
	// rounded down to a nanosecond.
	times := []time.Time{utc(1762000000, 123457000), utc(1762000000, 941899299), utc(1762000001, 7000000), utc(1762000000, 500123456)}
	var buf bytes.Buffer
	w, err := NewPcapngWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for i, ifc := range ifaces {
		id, err := w.AddInterface(ifc)
		if err != nil || id != i {
			t.Fatalf("AddInterface(%+v) = %d, %v", ifc, id, err)
		}
	}
	for i := range ifaces {
		if err := w.WriteInterfacePacket(i, times[i], frame(i, 60), 64); err != nil {
			t.Fatal(err)
		}
	}
	// A second section: its interface 0 is another one.
	first := buf.Len()
	w2, _ := NewPcapngWriter(&buf)
	w2.AddInterface(Interface{LinkType: LinkTypeEthernet, FCSLen: -1, Name: "eth9", TicksPerSecond: 1e9})
	w2.WriteInterfacePacket(0, times[0], frame(9, 60), 60)
	if err := w.WriteInterfacePacket(4, times[0], nil, 0); err == nil {
		t.Error("WriteInterfacePacket on an interface not added: no error")
	}
	if err := w.WriteInterfacePacket(0, utc(1<<62, 0), nil, 0); err == nil {
		t.Error("a time beyond 64 bits of microseconds: no error")
	}
	if buf.Len() != first+28+40+92 { // SHB, IDB with eth9, EPB of 60 bytes
		t.Fatalf("the failed writes wrote %d bytes", buf.Len()-first-28-40-92)
	}

	r, recs, err := readBytes(t, buf.Bytes(), "w.pcapng", false)
	if err != io.EOF || len(recs) != 5 {
		t.Fatalf("got %d records and %v", len(recs), err)
	}
	want := slices.Clone(ifaces)
	want[3].TicksPerSecond = 1e9
	want = append(want, Interface{LinkType: LinkTypeEthernet, FCSLen: -1, Name: "eth9", TicksPerSecond: 1e9})
	for i, rec := range recs {
		idx, ifc, ok := r.InterfaceOf(&rec)
		if !ok || idx != i || ifc != want[i] {
			t.Errorf("frame %d: interface %d %+v %v, want %d %+v", i+1, idx, ifc, ok, i, want[i])
		}
		if wt := times[i%4]; !rec.Timestamp.Equal(wt) {
			t.Errorf("frame %d: time %v, want %v", i+1, rec.Timestamp, wt)
		}
	}
	tsharkAgrees(t, "w.pcapng", buf.Bytes())
}

// TestInterfaceOfBounded: a file of many sections, each declaring an
// interface, keeps at most maxKeptInterfaces of them for InterfaceOf
// (memory that follows the file's size otherwise); the frames of the
// sections past the bound have no known interface, those before keep
// theirs.
func TestInterfaceOfBounded(t *testing.T) {
	var buf bytes.Buffer
	const sections = maxKeptInterfaces + 3
	for i := range sections {
		w, err := NewPcapngWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.AddInterface(Interface{LinkType: LinkTypeEthernet, FCSLen: -1, Name: fmt.Sprintf("eth%d", i), TicksPerSecond: 1e9}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteInterfacePacket(0, utc(1762000000, int64(i)), frame(i, 60), 60); err != nil {
			t.Fatal(err)
		}
	}
	r, recs, err := readBytes(t, buf.Bytes(), "many.pcapng", false)
	if err != io.EOF || len(recs) != sections {
		t.Fatalf("got %d records and %v", len(recs), err)
	}
	if len(r.allIfaces) > maxKeptInterfaces || len(r.sectionStarts) > maxKeptInterfaces {
		t.Errorf("kept %d interfaces and %d section starts, more than %d", len(r.allIfaces), len(r.sectionStarts), maxKeptInterfaces)
	}
	for _, i := range []int{0, 1, maxKeptInterfaces - 1, maxKeptInterfaces, sections - 1} {
		idx, ifc, ok := r.InterfaceOf(&recs[i])
		want := i < maxKeptInterfaces
		if ok != want || ok && (idx != i || ifc.Name != fmt.Sprintf("eth%d", i)) {
			t.Errorf("frame of section %d: interface %d %q %v, want known %v", i, idx, ifc.Name, ok, want)
		}
	}
}
