package packet

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// testCaptures lists every capture under testdata/pcaps: the generated ones
// (gen) and the real ones (real).
func testCaptures(tb testing.TB) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir("../../testdata/pcaps", func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := e.Name()
		if !e.IsDir() && (strings.HasSuffix(name, ".pcap") || strings.Contains(name, ".pcapng")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) < 60 {
		tb.Fatalf("found %d captures under testdata/pcaps, want at least 60", len(files))
	}
	return files
}

// testFrame is a frame to decode: from a capture, a table case or a mirror
// frame, whole or cut.
type testFrame struct {
	name     string
	lt       capture.LinkType
	data     []byte
	origLen  int
	fromFile bool // a frame of a capture under testdata/pcaps
}

// testFrames returns every frame of every capture under testdata/pcaps, and
// the table cases and mirror frames cut at every length (the fuzz seeds are
// these table cases and frames of the real captures).
func testFrames(tb testing.TB) []testFrame {
	var out []testFrame
	for _, path := range testCaptures(tb) {
		r, err := capture.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		var rec capture.Record
		// Read up to the end or the first error: some captures end in a
		// record cut short on purpose.
		for i := 1; r.Next(&rec) == nil; i++ {
			out = append(out, testFrame{fmt.Sprintf("%s frame %d", filepath.Base(path), i), rec.LinkType, bytes.Clone(rec.Data), rec.OrigLen, true})
		}
		r.Close()
	}
	add := func(name string, lt capture.LinkType, data []byte, origLen int) {
		for n := 0; n <= len(data); n++ {
			out = append(out, testFrame{fmt.Sprintf("%s cut at %d", name, n), lt, data[:n], max(origLen, len(data)), false})
		}
	}
	for _, c := range decodeCases() {
		add(c.name, c.lt, c.data, len(c.data))
	}
	for _, f := range mirrorFrames() {
		add(f.name, capture.LinkTypeEthernet, f.data, f.origLen)
	}
	return out
}

// checkFast decodes a frame with Decode, into a fresh Packet and into a
// used one, and with the walk alone, and fails unless all three agree. It
// reports whether the fast path took the frame.
func checkFast(t *testing.T, name string, lt capture.LinkType, data []byte, origLen int, used *Packet) bool {
	t.Helper()
	var d Decoder
	var general, fresh Packet
	errG := d.decodeGeneral(lt, data, origLen, &general)
	errF := d.Decode(lt, data, origLen, &fresh)
	errU := d.Decode(lt, data, origLen, used)
	if (errG == nil) != (errF == nil) || (errG == nil) != (errU == nil) {
		t.Fatalf("%s: errors differ: walk %v, Decode %v, Decode into used %v", name, errG, errF, errU)
	}
	if !reflect.DeepEqual(&fresh, &general) {
		t.Fatalf("%s: Decode differs from the walk:\nwalk   %+v\nDecode %+v\n%s", name, summarize(&general), summarize(&fresh), diffPackets(&general, &fresh))
	}
	if !reflect.DeepEqual(used, &general) {
		t.Fatalf("%s: Decode into a used Packet differs from the walk:\n%s", name, diffPackets(&general, used))
	}
	if lt != capture.LinkTypeEthernet {
		return false
	}
	var fast Packet
	took := decodeFast(data, origLen, &fast)
	if took && !reflect.DeepEqual(&fast, &general) {
		t.Fatalf("%s: fast path differs from the walk:\n%s", name, diffPackets(&general, &fast))
	}
	return took
}

// diffPackets names the fields in which two Packets differ.
func diffPackets(want, got *Packet) string {
	var b strings.Builder
	w, g := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
	for i := range w.NumField() {
		if !reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()) {
			fmt.Fprintf(&b, "%s: want %+v, got %+v\n", w.Type().Field(i).Name, w.Field(i).Interface(), g.Field(i).Interface())
		}
	}
	return b.String()
}

// TestFastMatchesWalk decodes every frame of every capture under
// testdata/pcaps, and every table case and mirror frame cut at every length,
// both with the fast path and with the walk alone: the Packets must be
// deeply equal, decoded into a fresh Packet or into the previous frame's.
func TestFastMatchesWalk(t *testing.T) {
	frames := testFrames(t)
	used := dirtyPacket()
	took, roce, roceTook := 0, 0, 0
	for _, f := range frames {
		fast := checkFast(t, f.name, f.lt, f.data, f.origLen, &used)
		if fast {
			took++
		}
		if f.fromFile && used.Kind == KindRoCE && used.RoCEVersion == 2 && f.lt == capture.LinkTypeEthernet {
			roce++
			if fast {
				roceTook++
			}
		}
	}
	t.Logf("%d frames, %d of them through the fast path; of the captures' RoCEv2 frames over Ethernet, %d of %d",
		len(frames), took, roceTook, roce)
	if roceTook < roce*9/10 {
		t.Errorf("only %d of the captures' %d RoCEv2 frames over Ethernet went through the fast path", roceTook, roce)
	}
	for _, f := range mirrorFrames() {
		var p Packet
		if !decodeFast(f.data, f.origLen, &p) {
			t.Errorf("%s: not taken by the fast path", f.name)
		}
	}
}

// TestDecodeReuseAllOrders decodes frame A and then frame B into the same
// Packet, for every ordered pair of a set of frames holding one of each kind
// the captures and cases have (by kind, reasons, encapsulation, protocols,
// opcode, truncation and fast path; the first 200 kinds in -short mode), and
// requires the result to equal B decoded into a zero Packet.
func TestDecodeReuseAllOrders(t *testing.T) {
	var d Decoder
	var p Packet
	seen := map[string]bool{}
	var set []testFrame
	for _, f := range testFrames(t) {
		if d.Decode(f.lt, f.data, f.origLen, &p) != nil {
			continue
		}
		fast := f.lt == capture.LinkTypeEthernet && decodeFast(f.data, f.origLen, new(Packet))
		key := fmt.Sprint(f.lt, p.Kind, p.Malformed, p.Note, string(p.AppendEncap(nil)), p.EtherType, p.IPVersion, p.Proto,
			p.DstPort, p.HasBTH, p.BTH.Opcode, p.BTH.Ext, p.BTH.Truncated, p.Truncated, p.ICRC, p.HasCM, p.HasPFC, fast)
		if !seen[key] {
			seen[key] = true
			set = append(set, f)
		}
	}
	if testing.Short() && len(set) > 200 {
		set = set[:200]
	}
	t.Logf("%d kinds of frame, %d ordered pairs", len(set), len(set)*len(set))
	// What each frame leaves in a Packet, by Decode (a copy of it is as
	// good as the Packet it filled), and what it decodes to from zero, by
	// the walk.
	left := make([]Packet, len(set))
	fresh := make([]Packet, len(set))
	for i, f := range set {
		_ = d.Decode(f.lt, f.data, f.origLen, &left[i])
		if err := d.decodeGeneral(f.lt, f.data, f.origLen, &fresh[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i, a := range set {
		for j, b := range set {
			p = left[i]
			_ = d.Decode(b.lt, b.data, b.origLen, &p)
			if !reflect.DeepEqual(&p, &fresh[j]) {
				t.Fatalf("%s decoded after %s differs:\n%s", b.name, a.name, diffPackets(&fresh[j], &p))
			}
		}
	}
}

// poison sets every field v holds, however deep, to a nonzero value.
func poison(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-0x5a5a)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(0xa5a5a5a5a5)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 3, 3))
	case reflect.Array:
		for i := range v.Len() {
			poison(v.Index(i))
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[netip.Addr]() {
			v.Set(reflect.ValueOf(netip.MustParseAddr("fe80::dead:beef%eth9")))
			return
		}
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				panic("poison: unexported field " + v.Type().Field(i).Name + " in " + v.Type().String())
			}
			poison(v.Field(i))
		}
	default:
		panic("poison: kind " + v.Kind().String())
	}
}

// TestFastOverwritesEveryField decodes the mirror frames into a Packet whose
// every field, however deep, holds garbage, with the fields Decode goes by
// saying that every part may be set (HasMAD, HasPFC, NEncap out of range,
// every bit of BTH.Ext: see Decode and reusedInvariants): the fast path must
// overwrite all of them, including fields added to Packet later.
func TestFastOverwritesEveryField(t *testing.T) {
	for _, f := range mirrorFrames() {
		var want, p Packet
		var d Decoder
		if err := d.decodeGeneral(capture.LinkTypeEthernet, f.data, f.origLen, &want); err != nil {
			t.Fatal(err)
		}
		poison(reflect.ValueOf(&p).Elem())
		p.BTH.Ext = 1<<10 - 1
		if !decodeFast(f.data, f.origLen, &p) {
			t.Fatalf("%s: not taken by the fast path", f.name)
		}
		if !reflect.DeepEqual(&p, &want) {
			t.Errorf("%s: fields left from before:\n%s", f.name, diffPackets(&want, &p))
		}
	}
}

// TestFastAllocs checks that the fast path allocates nothing, on the mirror
// frames whole and cut short.
func TestFastAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocation counts are not meaningful under -cover or -race")
	}
	var d Decoder
	var p Packet
	for _, f := range mirrorFrames() {
		for _, n := range []int{len(f.data), len(f.data) - 3, 60} {
			data := f.data[:n]
			if allocs := testing.AllocsPerRun(100, func() {
				_ = d.Decode(capture.LinkTypeEthernet, data, f.origLen, &p)
			}); allocs != 0 {
				t.Errorf("%s (%d of %d bytes): %v allocations per frame, want 0", f.name, n, len(f.data), allocs)
			}
		}
	}
}

// TestERSPAN2PlainLayout: the mirror frames of ERSPAN type II around a
// plain IPv4 frame take decodeERSPAN2PlainIPv4 (whose result the tests
// above hold against the walk, whole and cut at every length), and the
// other mirror layouts do not.
func TestERSPAN2PlainLayout(t *testing.T) {
	want := map[string]bool{
		"erspan2 write first":                            true,
		"erspan2 ack":                                    true,
		"erspan2 ack whole, T bit set":                   true,
		"erspan2 ack whole, outer length past the frame": true,
	}
	n := 0
	for _, f := range mirrorFrames() {
		got := isERSPAN2PlainIPv4(f.data)
		if got != want[f.name] {
			t.Errorf("%s: isERSPAN2PlainIPv4 %v, want %v", f.name, got, want[f.name])
		}
		if got {
			n++
		}
	}
	if n != len(want) {
		t.Errorf("%d of the %d ERSPAN II frames found", n, len(want))
	}
	// Every bit of the 10-bit session ID, with and without the T bit,
	// whole and cut at every length.
	ack := bth.BTH{Opcode: bth.OpcodeRCAcknowledge, PKey: 0xffff, DestQP: 0x0011c3, PSN: 0x00a0b4, AETH: bth.AETH{Syndrome: 0x1f, MSN: 77}}
	inner := eth(0x0800, roce4("10.0.3.21", "10.0.3.7", ack, nil))
	used := dirtyPacket()
	for _, cut := range []bool{false, true} {
		f := eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fS, 0x88be, 0, erspan2(0x3ff, cut, inner))))
		if !isERSPAN2PlainIPv4(f) {
			t.Fatalf("session 0x3ff, T bit %v: not the layout", cut)
		}
		for n := 0; n <= len(f); n++ {
			checkFast(t, fmt.Sprintf("session 0x3ff, T bit %v, cut at %d", cut, n), capture.LinkTypeEthernet, f[:n], len(f), &used)
		}
		// An Ethernet trailer after the carrying datagram; and a carrying
		// datagram that ends 10 bytes before the mirrored frame does.
		f = append(f, 0xde, 0xad, 0xbe, 0xef)
		if !checkFast(t, fmt.Sprintf("session 0x3ff, T bit %v, trailer", cut), capture.LinkTypeEthernet, f, len(f), &used) {
			t.Errorf("session 0x3ff, T bit %v, trailer: not taken by the fast path", cut)
		}
		write := bth.BTH{Opcode: 0x0a, PKey: 0xffff, DestQP: 0x0012d4, PSN: 7, RETH: bth.RETH{VA: 0x1000, RKey: 9, DMALen: 64}}
		f = eth(0x0800, ip4("192.0.2.10", "192.0.2.20", 47, gre(fS, 0x88be, 0, erspan2(0x3ff, cut, eth(0x0800, roce4("10.0.3.7", "10.0.3.21", write, make([]byte, 64)))))))
		binary.BigEndian.PutUint16(f[16:], binary.BigEndian.Uint16(f[16:])-10)
		if !checkFast(t, fmt.Sprintf("session 0x3ff, T bit %v, datagram ending inside the mirrored frame", cut), capture.LinkTypeEthernet, f, len(f), &used) {
			t.Errorf("session 0x3ff, T bit %v, datagram ending inside the mirrored frame: not taken by the fast path", cut)
		}
	}
}

// TestDecodeRecordMatchesDecode decodes every frame of testFrames (the
// captures under testdata/pcaps, and every table case and mirror frame cut
// at every length, of every link type they have) with DecodeRecord and
// with Decode, each into a fresh Packet and into the one its previous frame
// left: the errors and Packets must be deeply equal.
func TestDecodeRecordMatchesDecode(t *testing.T) {
	var dr, dd Decoder
	var usedR, usedD Packet
	for _, f := range testFrames(t) {
		rec := capture.Record{LinkType: f.lt, Data: f.data, OrigLen: f.origLen, CapLen: len(f.data)}
		var freshR, freshD Packet
		errR, errD := dr.DecodeRecord(&rec, &freshR), dd.Decode(f.lt, f.data, f.origLen, &freshD)
		if fmt.Sprint(errR) != fmt.Sprint(errD) {
			t.Fatalf("%s: DecodeRecord error %v, Decode %v", f.name, errR, errD)
		}
		if !reflect.DeepEqual(&freshR, &freshD) {
			t.Fatalf("%s: DecodeRecord differs from Decode:\n%s", f.name, diffPackets(&freshD, &freshR))
		}
		_, _ = dr.DecodeRecord(&rec, &usedR), dd.Decode(f.lt, f.data, f.origLen, &usedD)
		if !reflect.DeepEqual(&usedR, &usedD) {
			t.Fatalf("%s: DecodeRecord into a used Packet differs from Decode:\n%s", f.name, diffPackets(&usedD, &usedR))
		}
	}
	// A link type neither decodes.
	rec := capture.Record{LinkType: capture.LinkType(9999), Data: []byte{1, 2, 3}, OrigLen: 3, CapLen: 3}
	var p Packet
	if err := dr.DecodeRecord(&rec, &p); err == nil {
		t.Fatal("DecodeRecord of an unknown link type: no error")
	}
}
