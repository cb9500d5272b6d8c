package packet

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

const realDir = "../../testdata/pcaps/real"

// frame is one record of a capture file, its data copied.
type frame struct {
	lt      capture.LinkType
	data    []byte
	origLen int
}

// readCapture returns every frame of a capture file.
func readCapture(tb testing.TB, path string) []frame {
	tb.Helper()
	r, err := capture.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var frames []frame
	var rec capture.Record
	for {
		err := r.Next(&rec)
		if errors.Is(err, io.EOF) {
			return frames
		}
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		frames = append(frames, frame{rec.LinkType, bytes.Clone(rec.Data), rec.OrigLen})
	}
}

// tshark returns, per frame, the values of the given fields as tshark
// decodes them. It skips the test when tshark is not installed.
func tshark(t *testing.T, path string, fields ...string) [][]string {
	t.Helper()
	if testing.Short() {
		t.Skip("tshark cross-check skipped in -short mode")
	}
	bin, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	args := []string{"-n", "-r", path, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("tshark %s: %v", path, err)
	}
	var rows [][]string
	for line := range strings.SplitSeq(strings.TrimRight(string(out), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows
}

// innermostIP finds the innermost IP header in a tshark frame.protocols
// list, ignoring headers quoted inside ICMP errors: its index among the ip
// (or ipv6) layers, whether it is IPv6, and whether it lies inside the
// innermost Ethernet frame (or there is no inner one). ok is false if the
// frame has no IP header.
func innermostIP(protocols string) (index int, v6, inInnermostFrame, ok bool) {
	lastEth, lastIP := -1, -1
	n4, n6 := 0, 0
	for i, p := range strings.Split(protocols, ":") {
		switch p {
		case "icmp", "icmpv6":
			return index, v6, lastIP > lastEth, lastIP >= 0
		case "eth":
			lastEth = i
		case "ip":
			lastIP, index, v6 = i, n4, false
			n4++
		case "ipv6":
			lastIP, index, v6 = i, n6, true
			n6++
		}
	}
	return index, v6, lastIP > lastEth, lastIP >= 0
}

// nth returns the i-th comma-separated value of list.
func nth(list string, i int) string {
	vals := strings.Split(list, ",")
	if i < len(vals) {
		return vals[i]
	}
	return ""
}

// TestRealMirrors checks the innermost IP addresses and protocol of every
// frame of the real ERSPAN and GRE captures against tshark's.
func TestRealMirrors(t *testing.T) {
	var files []string
	for _, g := range []string{"tcpdump_erspan-type-*.pcap", "zeek_erspan*.pcap", "zeek_gre-erspan3-dot1q.pcap",
		"suricata-verify_decode-erspan-*.pcap", "arkime_gre-erspan-vxlan.pcap"} {
		m, _ := filepath.Glob(filepath.Join(realDir, g))
		files = append(files, m...)
	}
	if len(files) < 17 {
		t.Fatalf("found %d mirror captures, want 17", len(files))
	}
	var d Decoder
	var p Packet
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			frames := readCapture(t, path)
			rows := tshark(t, path, "frame.number", "frame.protocols", "ip.src", "ip.dst", "ip.proto", "ipv6.src", "ipv6.dst")
			if len(rows) != len(frames) {
				t.Fatalf("tshark has %d frames, capture %d", len(rows), len(frames))
			}
			for i, f := range frames {
				if err := d.Decode(f.lt, f.data, f.origLen, &p); err != nil {
					t.Fatal(err)
				}
				row := rows[i]
				protocols := row[1]
				idx, v6, inner, ok := innermostIP(protocols)
				switch {
				case !ok || !inner:
					if p.IPVersion != 0 {
						t.Errorf("frame %d (%s): IPv%d %v > %v, tshark has no IP in the innermost frame",
							i+1, protocols, p.IPVersion, p.Src, p.Dst)
					}
				case v6:
					src, dst := netip.MustParseAddr(nth(row[5], idx)), netip.MustParseAddr(nth(row[6], idx))
					if p.IPVersion != 6 || p.Src != src || p.Dst != dst {
						t.Errorf("frame %d (%s): IPv%d %v > %v, tshark %v > %v", i+1, protocols, p.IPVersion, p.Src, p.Dst, src, dst)
					}
				default:
					src, dst := netip.MustParseAddr(nth(row[2], idx)), netip.MustParseAddr(nth(row[3], idx))
					proto, _ := strconv.Atoi(nth(row[4], idx))
					if p.IPVersion != 4 || p.Src != src || p.Dst != dst || int(p.Proto) != proto {
						t.Errorf("frame %d (%s): IPv%d %v > %v proto %d, tshark %v > %v proto %d",
							i+1, protocols, p.IPVersion, p.Src, p.Dst, p.Proto, src, dst, proto)
					}
				}
				// Every ERSPAN layer tshark reached an inner frame through is in Encap.
				want := strings.Count(protocols, "erspan:eth")
				got := 0
				for _, e := range p.EncapLayers() {
					switch e.Kind {
					case EncapERSPAN1, EncapERSPAN2, EncapERSPAN3:
						got++
					}
				}
				if got != want {
					t.Errorf("frame %d (%s): Encap %s has %d ERSPAN layers, want %d", i+1, protocols, p.AppendEncap(nil), got, want)
				}
				if p.Kind == KindMalformed {
					t.Errorf("frame %d (%s): malformed: %v", i+1, protocols, p.Malformed)
				}
			}
		})
	}
}

// TestRealRoCE checks every RoCE frame of the real RoCEv2 captures against
// tshark's InfiniBand dissector: Kind RoCE, ICRC good, and the same opcode,
// destination QP, PSN and CM attribute.
func TestRealRoCE(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(realDir, "linlinw5_*.pcap"))
	files = append(files, filepath.Join(realDir, "pcapplusplus_InfiniBandPacket_1pkt.pcap"))
	if len(files) < 20 {
		t.Fatalf("found %d RoCE captures, want 20", len(files))
	}
	var d Decoder
	var p Packet
	total := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			frames := readCapture(t, path)
			rows := tshark(t, path, "frame.number", "infiniband.bth.opcode", "infiniband.bth.destqp",
				"infiniband.bth.psn", "infiniband.mad.mgmtclass", "infiniband.mad.attributeid")
			if len(rows) != len(frames) {
				t.Fatalf("tshark has %d frames, capture %d", len(rows), len(frames))
			}
			for i, f := range frames {
				if err := d.Decode(f.lt, f.data, f.origLen, &p); err != nil {
					t.Fatal(err)
				}
				row := rows[i]
				if row[1] == "" {
					if p.Kind != KindOther {
						t.Errorf("frame %d: %v, tshark says not InfiniBand", i+1, p.Kind)
					}
					continue
				}
				total++
				op, _ := strconv.ParseUint(row[1], 0, 8)
				qp, _ := strconv.ParseUint(row[2], 0, 32)
				psn, _ := strconv.ParseUint(row[3], 0, 32)
				if p.Kind != KindRoCE || p.RoCEVersion != 2 || !p.HasBTH || p.ICRC != bth.ICRCOK {
					t.Errorf("frame %d: %v v%d HasBTH %v ICRC %v %q, want good RoCEv2", i+1, p.Kind, p.RoCEVersion, p.HasBTH, p.ICRC, p.Malformed)
				}
				if uint64(p.BTH.Opcode) != op || uint64(p.BTH.DestQP) != qp || uint64(p.BTH.PSN) != psn {
					t.Errorf("frame %d: opcode %d QP %#x PSN %d, tshark %d %#x %d", i+1, p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN, op, qp, psn)
				}
				if want := row[4] == "0x07"; p.HasCM != want {
					t.Errorf("frame %d: HasCM %v, tshark MAD class %q", i+1, p.HasCM, row[4])
				} else if want {
					attr, _ := strconv.ParseUint(row[5], 0, 16)
					if uint64(p.CM.AttributeID) != attr {
						t.Errorf("frame %d: CM %v, tshark attribute %s", i+1, p.CM.AttributeID, row[5])
					}
				}
				if p.Truncated || p.NEncap != 0 {
					t.Errorf("frame %d: Truncated %v, Encap %s", i+1, p.Truncated, p.AppendEncap(nil))
				}
			}
		})
	}
	t.Logf("%d RoCE frames checked", total)
}
