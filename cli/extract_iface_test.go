package cli

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestExtractKeepsInterfaces: an extract to pcapng keeps, per input
// interface, its if_name, if_description, snap length and timestamp
// resolution (so times stay exact), also when frames of two files and two
// sections of a pcapng are merged: each input interface is one output
// interface. The writer made one interface per link type, named nothing
// (tshark: "unknown"), at nanoseconds and snap length 0.
func TestExtractKeepsInterfaces(t *testing.T) {
	le := binary.LittleEndian
	opt := func(code uint16, val []byte) []byte {
		b := le.AppendUint16(le.AppendUint16(nil, code), uint16(len(val)))
		return append(append(b, val...), make([]byte, -len(val)&3)...)
	}
	shb := pcapngBlock(0x0a0d0d0a, le.AppendUint64(le.AppendUint16(le.AppendUint16(le.AppendUint32(nil, 0x1a2b3c4d), 1), 0), ^uint64(0)))
	type iface struct {
		lt          capture.LinkType
		snap        uint32
		name, descr string
		resol       byte
		tps         uint64
	}
	idb := func(i iface) []byte {
		b := le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, uint16(i.lt)), 0), i.snap)
		if i.name != "" {
			b = append(b, opt(2, []byte(i.name))...)
		}
		if i.descr != "" {
			b = append(b, opt(3, []byte(i.descr))...)
		}
		b = append(b, opt(9, []byte{i.resol})...)
		return pcapngBlock(1, append(b, 0, 0, 0, 0))
	}
	sec1 := []iface{
		{capture.LinkTypeEthernet, 262144, "eth0", "uplink to leaf 3", 6, 1e6},
		{capture.LinkTypeRaw, 65535, "tun0", "", 0x80 | 20, 1 << 20},
		{capture.LinkTypeEthernet, 0, "ens1f0", "", 10, 1e10}, // finer than a nanosecond
	}
	sec2 := iface{capture.LinkTypeEthernet, 1500, "eth9", "", 3, 1e3}
	file1 := append(slices.Clone(shb), idb(sec1[0])...)
	file1 = append(append(file1, idb(sec1[1])...), idb(sec1[2])...)
	var file2 []byte // pcap, microseconds
	file2 = le.AppendUint32(file2, 0xa1b2c3d4)
	file2 = le.AppendUint32(le.AppendUint16(le.AppendUint16(file2, 2), 4), 0)
	file2 = le.AppendUint32(le.AppendUint32(le.AppendUint32(file2, 0), 9000), uint32(capture.LinkTypeEthernet))
	const t0 = 1762000000_000000000
	inSec2 := false
	eachRealRecord(t, "linlinw5_rdma_write_bw.pcap", func(n int, rec *capture.Record) {
		ns := uint64(t0 + n*123_456_789 + n*n*1_013)
		data := rec.Data
		if n%5 == 0 {
			file2 = le.AppendUint32(le.AppendUint32(file2, uint32(ns/1e9)), uint32(ns%1e9/1e3))
			file2 = le.AppendUint32(le.AppendUint32(file2, uint32(len(data))), uint32(rec.OrigLen))
			file2 = append(file2, data...)
			return
		}
		id, ifc := n%3, sec1[n%3]
		if n > 35 {
			if !inSec2 {
				file1 = append(append(file1, shb...), idb(sec2)...)
				inSec2 = true
			}
			id, ifc = 0, sec2
		}
		if ifc.lt == capture.LinkTypeRaw {
			data = data[14:]
		}
		ticks := ns/1e9*ifc.tps + ns%1e9*ifc.tps/1e9
		if ifc.tps > 1e9 {
			ticks = ns/1e9*ifc.tps + ns%1e9*(ifc.tps/1e9) + uint64(n%7) // below a nanosecond
		}
		epb := le.AppendUint32(le.AppendUint32(le.AppendUint32(nil, uint32(id)), uint32(ticks>>32)), uint32(ticks))
		epb = le.AppendUint32(le.AppendUint32(epb, uint32(len(data))), uint32(rec.OrigLen-(rec.CapLen-len(data))))
		file1 = append(file1, pcapngBlock(6, append(epb, data...))...)
	})
	dir := t.TempDir()
	in1, in2 := filepath.Join(dir, "in1.pcapng"), filepath.Join(dir, "in2.pcap")
	if err := os.WriteFile(in1, file1, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in2, file2, 0o644); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "out.pcapng")
	_, stderr, code := runCLI(t, "extract", "--pair", "10.1.16.62,10.1.16.61", "-o", dst, in1, in2)
	if code != ExitOK || !strings.Contains(stderr, "wrote 20 packets of 2 flows") {
		t.Fatalf("extract: exit %d: %s", code, stderr)
	}

	// What each input frame is: its interface and its time and bytes as read.
	type frame struct {
		ifc  capture.Interface
		nano int64
		data string
		orig int
	}
	key := func(f frame) string {
		return fmt.Sprintf("%s|%q|%d|%d|%d|%d|%d|%x", f.ifc.Name, f.ifc.Description, f.ifc.LinkType, f.ifc.SnapLen, f.ifc.TicksPerSecond, f.nano, f.orig, f.data)
	}
	// chosen says whether an input frame (Ethernet or raw IPv4) is RoCE
	// between the pair extracted.
	chosen := func(d []byte) bool {
		if len(d) > 0 && d[0]>>4 != 4 {
			d = d[14:]
		}
		a, b := string(d[12:16]), string(d[16:20])
		x, y := "\x0a\x01\x10\x3d", "\x0a\x01\x10\x3e"
		return d[9] == 17 && binary.BigEndian.Uint16(d[22:]) == 4791 && (a == x && b == y || a == y && b == x)
	}
	var wantTshark []string
	read := func(path string) (frames []string, ifaces int) {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var rec capture.Record
		for {
			if err := r.Next(&rec); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			_, ifc, ok := r.InterfaceOf(&rec)
			if !ok {
				t.Fatalf("%s: frame %d: no interface", path, rec.Number)
			}
			frames = append(frames, key(frame{ifc, rec.TimeNanos, string(rec.Data), rec.OrigLen}))
			if path != dst {
				name := ifc.Name
				if name == "" {
					name = "unknown"
				}
				if chosen(rec.Data) {
					wantTshark = append(wantTshark, fmt.Sprintf("%s\t%s\t%d.%09d\t%d\t%d", name, ifc.Description,
						rec.TimeNanos/1e9, rec.TimeNanos%1e9, rec.OrigLen, rec.CapLen))
				}
			}
		}
		return frames, len(r.Interfaces())
	}
	got, nIfaces := read(dst)
	in, _ := read(in1)
	in2f, _ := read(in2)
	in = append(in, in2f...)
	for _, g := range got {
		i := slices.Index(in, g)
		if i < 0 {
			// The 10^-10 interface is written at nanoseconds: the
			// finest a time.Time holds.
			if strings.HasPrefix(g, "ens1f0|") {
				i = slices.Index(in, strings.Replace(g, "|1000000000|", "|10000000000|", 1))
			}
			if i < 0 {
				t.Errorf("output frame %.80s... is no input frame, interface and time", g)
				continue
			}
		}
		in = slices.Delete(in, i, i+1)
	}
	if nIfaces != 5 {
		t.Errorf("output has %d interfaces, want 5 (every input one)", nIfaces)
	}
	// tshark reads the output's frames with their interface's name
	// ("unknown" for the pcap's, which has none), times and lengths as
	// rocedump reads the inputs. (tshark 4.0 itself gives the frames of
	// in1's second section the first section's interface 0: eth0.)
	if tshark, err := exec.LookPath("tshark"); err == nil {
		out, err := exec.Command(tshark, "-r", dst, "-T", "fields", "-e", "frame.interface_name",
			"-e", "frame.interface_description", "-e", "frame.time_epoch", "-e", "frame.len", "-e", "frame.cap_len").Output()
		if err != nil {
			t.Fatalf("tshark: %v", err)
		}
		have := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		want := wantTshark
		slices.Sort(have)
		slices.Sort(want)
		if !slices.Equal(want, have) {
			t.Errorf("tshark reads the output as\n%s\nwant\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
		}
	}
}
