package gen

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

var update = flag.Bool("update", false, "rewrite testdata/pcaps/gen from testdata/scenarios")

const (
	scenarioDir = "../testdata/scenarios"
	goldenDir   = "../testdata/pcaps/gen"
)

func scenarioFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(scenarioDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in %s: %v", scenarioDir, err)
	}
	return files
}

func baseName(f string) string { return strings.TrimSuffix(filepath.Base(f), ".yaml") }

func generate(t testing.TB, s *Scenario) ([]byte, []byte) {
	t.Helper()
	var capBuf, truthBuf bytes.Buffer
	tr, err := Generate(&capBuf, s)
	if err != nil {
		t.Fatalf("%s: Generate: %v", s.Name, err)
	}
	if err := tr.WriteJSON(&truthBuf); err != nil {
		t.Fatal(err)
	}
	return capBuf.Bytes(), truthBuf.Bytes()
}

func gunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGolden regenerates every scenario and compares it with the committed
// capture and truth; -update rewrites them. Gzip files are compared
// decompressed, so a change in compress/flate does not break the test.
func TestGolden(t *testing.T) {
	total := 0
	for _, f := range scenarioFiles(t) {
		name := baseName(f)
		t.Run(name, func(t *testing.T) {
			s, err := LoadScenario(f)
			if err != nil {
				t.Fatal(err)
			}
			capture, truth := generate(t, s)
			capPath := filepath.Join(goldenDir, name+FileExt(s))
			truthPath := filepath.Join(goldenDir, name+".truth.json")
			total += len(capture)
			if len(capture) > 200<<10 {
				t.Errorf("%s is %d bytes, keep committed captures under 200 KB", capPath, len(capture))
			}
			if *update {
				if err := os.MkdirAll(goldenDir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(capPath, capture, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(truthPath, truth, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCap, err := os.ReadFile(capPath)
			if err != nil {
				t.Fatalf("%v (run go test ./gen -update)", err)
			}
			if s.Gzip {
				capture, wantCap = gunzip(t, capture), gunzip(t, wantCap)
			}
			if !bytes.Equal(capture, wantCap) {
				t.Errorf("%s differs from a fresh generation (%d vs %d bytes); run go test ./gen -update and review", capPath, len(wantCap), len(capture))
			}
			wantTruth, err := os.ReadFile(truthPath)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(truth, wantTruth) {
				t.Errorf("%s differs from a fresh generation; run go test ./gen -update and review", truthPath)
			}
		})
	}
	if total > 1536<<10 {
		t.Errorf("generated captures total %d bytes, keep them under 1.5 MB", total)
	}
}

// TestDeterminism: the same scenario and seed give the same bytes; the seed
// changes what it should.
func TestDeterminism(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		s1, err := LoadScenario(f)
		if err != nil {
			t.Fatal(err)
		}
		s2, _ := LoadScenario(f)
		c1, t1 := generate(t, s1)
		c2, t2 := generate(t, s2)
		if !bytes.Equal(c1, c2) || !bytes.Equal(t1, t2) {
			t.Errorf("%s: two generations differ", f)
		}
	}
	s, err := LoadScenario(filepath.Join(scenarioDir, "storage.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := generate(t, s)
	s.Seed++
	c2, _ := generate(t, s)
	if bytes.Equal(c1, c2) {
		t.Error("storage: another seed gave the same bytes (comm IDs and ISNs should change)")
	}
}

// TestParseErrors checks that bad scenarios fail with the right line.
func TestParseErrors(t *testing.T) {
	const flow = "flows:\n  - name: a\n    src: 10.0.0.1\n    dst: 10.0.0.2\n    dest_qpn: 0x200\n"
	tests := []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"empty", "", 0, "empty scenario"},
		{"syntax", "name: x\nflows: [\n", 2, "did not find"},
		{"unknown top key", "name: x\nsnaplength: 64\n", 2, "field snaplength not found in scenario"},
		{"unknown flow key", flow + "    mtu: 1024\n    dscpp: 3\n", 7, "field dscpp not found in flow"},
		{"unknown event", flow + "    ops: [{op: write, bytes: 10}]\n    events:\n      - {at_msg: 1, fabric_dorp: {}}\n", 8, "field fabric_dorp not found in event"},
		{"type error", flow + "    mtu: big\n", 6, "cannot unmarshal"},
		{"bad op", flow + "    ops:\n      - {op: writ, bytes: 10}\n", 7, `unknown op "writ"`},
		{"bad mtu", flow + "    mtu: 1500\n", 6, "MTU 1500"},
		{"at_msg range", flow + "    ops: [{op: write, bytes: 10, count: 2}]\n    events:\n      - {at_msg: 3, dscp: 0}\n", 8, "at_msg 3: the flow has messages 1..2"},
		{"offset outside message", flow + "    mtu: 1024\n    ops: [{op: write, bytes: 2048}]\n    events:\n      - {at_msg: 1, fabric_drop: {psn_offset: 2}}\n", 9, "psn_offset 2: message 1 has packets 0..1"},
		{"two kinds", flow + "    ops: [{op: write, bytes: 10}]\n    events:\n      - {at_msg: 1, dscp: 0, nak: remote_access_err}\n", 8, "exactly one of"},
		{"bad nak", flow + "    ops: [{op: write, bytes: 10}]\n    events:\n      - {at_msg: 1, nak: oops}\n", 8, `unknown NAK "oops"`},
		{"psn_seq_err nak", flow + "    ops: [{op: write, bytes: 10}]\n    events:\n      - {at_msg: 1, nak: psn_seq_err}\n", 8, "use fabric_drop"},
		{"family mix", "flows:\n  - {name: a, src: 10.0.0.1, dst: \"fd00::1\", dest_qpn: 1}\n", 2, "IPv4 but dst is IPv6"},
		{"bad address", "flows:\n  - {name: a, src: 10.0.0.300, dst: 10.0.0.1, dest_qpn: 1}\n", 2, "10.0.0.300"},
		{"qpn too big", "flows:\n  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, dest_qpn: 0x1000000}\n", 2, "does not fit 24 bits"},
		{"duplicate flow", "flows:\n  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, dest_qpn: 1}\n  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, dest_qpn: 2}\n", 3, "duplicate flow name"},
		{"ud write", "flows:\n  - name: a\n    transport: UD\n    src: 10.0.0.1\n    dst: 10.0.0.2\n    ops: [{op: write, bytes: 8}]\n", 6, "UD has SEND only"},
		{"encap two kinds", "encap:\n  - {vlan: 1, qinq: [1, 2]}\n", 2, "exactly one of vlan"},
		{"vlan on raw", "link: raw\nencap: [{vlan: 5}]\n", 2, "needs link ethernet"},
		{"interfaces need pcapng", "interfaces: [{name: a}]\n", 1, "need format pcapng"},
		{"no such interface", flow + "    interface: eth9\n", 6, `no interface named "eth9"`},
		{"malformed kind", "malformed: [{kind: short}]\n", 1, `unknown malformed kind "short"`},
		{"format", "format: erf\n", 1, `unknown format "erf"`},
		{"mirror_dup ttl", flow + "    mirror_dup: {ttl: 0}\n", 6, "TTL 0 out of range"},
		{"mirror_dup ecn", flow + "    mirror_dup: {delay_us: 1, ecn: red}\n", 6, `unknown ECN "red"`},
		{"two documents", "name: a\n---\nname: b\n", 2, "more than one YAML document"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseScenario([]byte(tc.yaml), "x.yaml")
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v, want *ParseError", err, err)
			}
			if pe.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q (line %d), want line %d and %q", err, pe.Line, tc.line, tc.want)
			}
		})
	}
}

func TestSegmentation(t *testing.T) {
	tests := []struct{ bytes, mtu, n, last int }{
		{0, 1024, 1, 0}, {1, 1024, 1, 1}, {1024, 1024, 1, 1024}, {1025, 1024, 2, 1},
		{65536, 4096, 16, 4096}, {3000, 1024, 3, 952},
	}
	for _, tc := range tests {
		if n := npkts(tc.bytes, tc.mtu); n != tc.n {
			t.Errorf("npkts(%d, %d) = %d, want %d", tc.bytes, tc.mtu, n, tc.n)
		}
		if l := segLen(tc.bytes, tc.mtu, tc.n-1); l != tc.last {
			t.Errorf("segLen(%d, %d, last) = %d, want %d", tc.bytes, tc.mtu, l, tc.last)
		}
	}
	for _, tc := range []struct {
		p    uint32
		d    int
		want uint32
	}{{0xffffff, 1, 0}, {0xfffffe, 5, 3}, {0, -1, 0xffffff}, {100, 0, 100}} {
		if got := psnAdd(tc.p, tc.d); got != tc.want {
			t.Errorf("psnAdd(%#x, %d) = %#x, want %#x", tc.p, tc.d, got, tc.want)
		}
	}
}

// TestPSNWrap follows a flow's PSNs across 2^24 in the frames themselves.
func TestPSNWrap(t *testing.T) {
	s, err := ParseScenario([]byte(`
flows:
  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 1, dest_qpn: 2, start_psn: 0xfffffd, mtu: 256,
     ops: [{op: write, bytes: 1024, count: 2}, {op: read, bytes: 512}]}
`), "wrap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var psns []uint32
	tr, err := Run(s, func(f *Frame) error {
		w, err := walk("ethernet", f.Data, f.OrigLen)
		if err != nil {
			return err
		}
		if w.destQP == 2 {
			psns = append(psns, w.psn)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{0xfffffd, 0xfffffe, 0xffffff, 0, 1, 2, 3, 4, 5}
	if fmt.Sprint(psns) != fmt.Sprint(want) {
		t.Errorf("requester PSNs %v, want %v", psns, want)
	}
	rq := tr.Flow("a", "requester")
	if *rq.FirstPSN != 0xfffffd || *rq.LastPSN != 5 || rq.MessagesCompleted != 3 {
		t.Errorf("truth first %d last %d completed %d", *rq.FirstPSN, *rq.LastPSN, rq.MessagesCompleted)
	}
	if rs := tr.Flow("a", "responder"); *rs.LastPSN != 6 {
		t.Errorf("last READ response PSN %d, want 6", *rs.LastPSN)
	}
}

// TestFrames walks every frame of every scenario: IP, GRH and UDP lengths
// agree with the frame, IPv4 header checksums hold, every whole RoCE frame's
// ICRC verifies except the injected bad ones, and the counts match the truth.
func TestFrames(t *testing.T) {
	for _, f := range scenarioFiles(t) {
		t.Run(baseName(f), func(t *testing.T) {
			s, err := LoadScenario(f)
			if err != nil {
				t.Fatal(err)
			}
			var frames, truncated, roceWhole, icrcBad int
			tr, err := Run(s, func(fr *Frame) error {
				frames++
				if len(fr.Data) < fr.OrigLen {
					truncated++
				}
				link := s.Interfaces[fr.Interface].Link
				w, err := walk(link, fr.Data, fr.OrigLen)
				if err != nil {
					return fmt.Errorf("frame %d: %v", frames, err)
				}
				if w.roce && !w.v1 && w.udpLen != w.udpRoom && w.udpLen != w.udpRoom+64 {
					return fmt.Errorf("frame %d: UDP length %d, IP leaves %d", frames, w.udpLen, w.udpRoom)
				}
				if !w.roce || !w.whole {
					return nil
				}
				st := bth.VerifyICRCv2(w.datagram)
				if w.v1 {
					st = bth.VerifyICRCv1(w.datagram)
				}
				switch {
				case st == bth.ICRCOK:
					roceWhole++
				case w.destQP == 0xbad && w.opcode == bth.OpSendOnly:
					icrcBad++
				case w.opcode == 0xff: // garbage_after_4791
				default:
					return fmt.Errorf("frame %d (%v): ICRC %v", frames, w, st)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Frames != frames || tr.TruncatedFrames != truncated {
				t.Errorf("truth frames %d truncated %d, counted %d and %d", tr.Frames, tr.TruncatedFrames, frames, truncated)
			}
			if tr.ICRCBadFrames != tr.Malformed["bad_icrc"] || icrcBad != tr.Malformed["bad_icrc"] {
				t.Errorf("ICRC-bad frames: truth %d, counted %d (bad_icrc %d, bad_udp_len %d)", tr.ICRCBadFrames, icrcBad, tr.Malformed["bad_icrc"], tr.Malformed["bad_udp_len"])
			}
			if truncated == 0 {
				// every well-formed RoCE frame verified, plus reserved_opcode
				// and bad_udp_len, whose ICRC covers the bytes as sent
				if want := tr.RoCEFrames + tr.Malformed["reserved_opcode"] + tr.Malformed["bad_udp_len"]; roceWhole != want {
					t.Errorf("%d frames with a good ICRC, truth says %d RoCE frames (+ reserved_opcode, bad_udp_len)", roceWhole, want)
				}
			}
			if tr.Frames != tr.RoCEFrames+tr.NonRoCEFrames+tr.MalformedFrames {
				t.Errorf("frames %d != roce %d + non-roce %d + malformed %d", tr.Frames, tr.RoCEFrames, tr.NonRoCEFrames, tr.MalformedFrames)
			}
			var flowPkts int64
			for _, ft := range tr.Flows {
				flowPkts += ft.Packets + int64(ft.MirrorDuplicates)
			}
			cmPkts := 0
			for _, c := range tr.CM {
				for _, n := range c.Messages {
					cmPkts += n
				}
			}
			if flowPkts+int64(cmPkts) != int64(tr.RoCEFrames) {
				t.Errorf("flow packets %d + CM %d != roce_frames %d", flowPkts, cmPkts, tr.RoCEFrames)
			}
		})
	}
}

// TestScenarioTruth spot-checks the truth of the committed scenarios against
// what each event must produce.
func TestScenarioTruth(t *testing.T) {
	load := func(name string) *Truth {
		t.Helper()
		s, err := LoadScenario(filepath.Join(scenarioDir, name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		tr, err := Run(s, func(*Frame) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := load("retransmissions")
	checks := []struct {
		flow, role, what string
		got, want        int
	}{
		{"gbn-seen", "responder", "psn_seq_err NAKs", tr.Flow("gbn-seen", "responder").NAKs["psn_seq_err"], 1},
		{"gbn-seen", "requester", "retransmitted", tr.Flow("gbn-seen", "requester").Retransmitted, 3},
		{"gbn-gap", "requester", "retransmitted", tr.Flow("gbn-gap", "requester").Retransmitted, 1},
		{"gbn-gap", "requester", "fabric drops", tr.Flow("gbn-gap", "requester").FabricDrops, 2},
		{"timeout", "requester", "timeouts", tr.Flow("timeout", "requester").Timeouts, 1},
		{"rnr", "responder", "RNR NAKs", tr.Flow("rnr", "responder").RNRNAKs, 1},
		{"nak-invalid-request", "responder", "NAKs", tr.Flow("nak-invalid-request", "responder").NAKs["invalid_request"], 1},
		{"nak-remote-access", "responder", "NAKs", tr.Flow("nak-remote-access", "responder").NAKs["remote_access_err"], 1},
		{"nak-remote-op", "responder", "NAKs", tr.Flow("nak-remote-op", "responder").NAKs["remote_op_err"], 1},
		{"nak-invalid-rd-request", "responder", "NAKs", tr.Flow("nak-invalid-rd-request", "responder").NAKs["invalid_rd_request"], 1},
		{"nak-remote-op", "requester", "completed", tr.Flow("nak-remote-op", "requester").MessagesCompleted, 0},
		{"mirror-gap", "requester", "mirror drops", tr.Flow("mirror-gap", "requester").MirrorDrops, 2},
		{"mirror-gap", "requester", "retransmitted", tr.Flow("mirror-gap", "requester").Retransmitted, 0},
		{"read-loss", "responder", "retransmitted", tr.Flow("read-loss", "responder").Retransmitted, 3},
		{"read-loss", "requester", "re-issued READs", tr.Flow("read-loss", "requester").Retransmitted, 1},
	}
	tc := load("congestion")
	checks = append(checks, []struct {
		flow, role, what string
		got, want        int
	}{
		{"ce-cnp", "requester", "CE", tc.Flow("ce-cnp", "requester").CEMarked, 5},
		{"ce-cnp", "responder", "CNPs", tc.Flow("ce-cnp", "responder").CNPs, 5},
		{"ce-cnp", "responder", "CNP 0x80", int(tc.Flow("ce-cnp", "responder").Opcodes["CNP_0x80"]), 2},
		{"ce-no-cnp", "responder", "CNPs", tc.Flow("ce-no-cnp", "responder").CNPs, 0},
		{"wrong-dscp", "requester", "DSCP 0", tc.Flow("wrong-dscp", "requester").DSCP["0"], 2},
		{"fecn-becn", "requester", "FECN", tc.Flow("fecn-becn", "requester").FECN, 2},
		{"fecn-becn", "requester", "CNPs about READ responses", tc.Flow("fecn-becn", "requester").CNPs, 2},
		{"pfc", "", "frames", tc.PFC.Frames, 4},
	}...)
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s %s %s: %d, want %d", c.flow, c.role, c.what, c.got, c.want)
		}
	}
}

// TestMirrorDup checks the copies mirror_dup makes: every frame of the
// flow, both ways, CNPs too, delay_us after it, identical but for the TTL,
// the DSCP and ECN and, for a routed copy, the source MAC address; and the
// truth: the copies of all but the CNPs counted in mirror_duplicates only
// (the CNP's copy comes before a second CNP showed that its sender's IPv4
// IDs vary, so it counts as a CNP).
func TestMirrorDup(t *testing.T) {
	s, err := ParseScenario([]byte(`
flows:
  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 1, dest_qpn: 2, mtu: 1024,
     mirror_dup: {delay_us: 2, ttl: 63, dscp: 10, ecn: ce},
     ops: [{op: write, bytes: 2048, count: 2, gap_us: 10}],
     events: [{at_msg: 2, ce_mark: {packets: 1, cnp: true}}]}
  - {name: b, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 3, dest_qpn: 4, start_us: 1, ops: [{op: send, bytes: 8}]}
`), "dup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type frame struct {
		t    time.Time
		data []byte
	}
	var frames []frame
	tr, err := Run(s, func(f *Frame) error {
		frames = append(frames, frame{f.Time, bytes.Clone(f.Data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Ethernet, then IPv4: TOS at 15, TTL at 22, addresses at 26 and 30.
	type key struct{ ip, payload string }
	orig := map[key]frame{}
	copies := 0
	for _, f := range frames {
		d := f.data
		k := key{string(d[26:34]), string(d[34:])} // addresses and all after the IP header
		if d[22] == 64 {
			orig[k] = f
			continue
		}
		copies++
		o, ok := orig[k]
		switch {
		case !ok:
			t.Errorf("a copy at %v with no packet before it", f.t)
		case f.t.Sub(o.t) != 2*time.Microsecond:
			t.Errorf("a copy %v after its packet, want 2µs", f.t.Sub(o.t))
		case d[22] != 63 || d[15] != 10<<2|3 || !bytes.Equal(d[6:12], routerMAC[:]) || !bytes.Equal(d[:6], o.data[:6]):
			t.Errorf("copy: TTL %d, TOS %#x, MACs % x; want 63, %#x, the router's source and the packet's destination", d[22], d[15], d[:12], 10<<2|3)
		case !bytes.Equal(d[18:20], o.data[18:20]):
			t.Errorf("copy: IPv4 ID % x, its packet's % x", d[18:20], o.data[18:20])
		}
	}
	// Flow a's packets each carry an IPv4 ID of their own (the copies
	// repeat it); flow b, not copied, sends 0.
	ids := map[string]bool{}
	for k, f := range orig {
		id, flowB := string(f.data[18:20]), k.ip[2] == 1 // 10.0.1.x
		if flowB != (id == "\x00\x00") || !flowB && ids[k.ip[:4]+id] {
			t.Errorf("packet from %v: IPv4 ID % x, repeated or wrong for its flow", []byte(k.ip[:4]), f.data[18:20])
		}
		ids[k.ip[:4]+id] = true
	}
	req, resp := tr.Flow("a", "requester"), tr.Flow("a", "responder")
	if copies != len(frames)-copies-2 || copies != int(req.Packets+resp.Packets-int64(resp.CNPs)/2) {
		t.Errorf("%d copies of %d frames (flow b has 2, uncopied), flow a: %d and %d packets, %d CNPs", copies, len(frames), req.Packets, resp.Packets, resp.CNPs)
	}
	if req.MirrorDuplicates != int(req.Packets) || resp.CNPs != 2 || resp.MirrorDuplicates != int(resp.Packets)-resp.CNPs {
		t.Errorf("truth: requester %d packets %d copies, responder %d packets %d CNPs %d copies; want every packet copied, the CNP's copy a CNP",
			req.Packets, req.MirrorDuplicates, resp.Packets, resp.CNPs, resp.MirrorDuplicates)
	}
	if b := tr.Flow("b", "requester"); b.MirrorDuplicates != 0 {
		t.Errorf("flow b: %d copies, want none", b.MirrorDuplicates)
	}
}

// TestStreamBounded checks that pending packets do not grow with the number
// of messages: 100k messages keep no more than a message's worth queued.
func TestStreamBounded(t *testing.T) {
	s, err := ParseScenario([]byte(`
flows:
  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 1, dest_qpn: 2, mtu: 1024, ack_every: 4,
     ops: [{op: write, bytes: 16384, count: 20000, gap_us: 0.1}, {op: read, bytes: 8192, count: 5000, gap_us: 0.1}]}
  - {name: b, src: 10.0.0.3, dst: 10.0.0.4, src_qpn: 3, dest_qpn: 4, mtu: 4096,
     ops: [{op: send, bytes: 4096, count: 50000}]}
`), "big.yaml")
	if err != nil {
		t.Fatal(err)
	}
	g := newGenerator(s)
	n, maxPending := 0, 0
	for {
		if _, ok := g.next(); !ok {
			break
		}
		n++
		pending := 0
		for _, src := range g.sources {
			pending += len(src.h)
		}
		maxPending = max(maxPending, pending)
	}
	if n < 400000 {
		t.Fatalf("only %d packets", n)
	}
	if maxPending > 100 {
		t.Errorf("up to %d packets pending over %d packets, want a bounded queue", maxPending, n)
	}
}

// TestCrossCheckTshark has tshark decode every committed capture and compares
// each frame's opcode, destination QP and PSN with the test walker's.
func TestCrossCheckTshark(t *testing.T) {
	if testing.Short() {
		t.Skip("tshark cross-check skipped in -short mode")
	}
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	for _, f := range scenarioFiles(t) {
		name := baseName(f)
		t.Run(name, func(t *testing.T) {
			s, err := LoadScenario(f)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			_, err = Run(s, func(fr *Frame) error {
				w, _ := walk(s.Interfaces[fr.Interface].Link, fr.Data, fr.OrigLen)
				line := ""
				if w.roce && w.opcode != 0xff && !(s.Interfaces[fr.Interface].Link == "ethernet" && len(fr.Data) < 14) {
					line = fmt.Sprintf("%d\t0x%06x\t%d", w.opcode, w.destQP, w.psn)
				}
				want = append(want, line)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(goldenDir, name+FileExt(s))
			cmd := exec.Command(tshark, "-n", "-r", path, "-T", "fields",
				"-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn")
			out, err := cmd.Output()
			if err != nil && s.CutOff == nil {
				t.Fatalf("tshark: %v", err)
			}
			got := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
			if len(got) != len(want) {
				t.Fatalf("tshark read %d frames, generated %d", len(got), len(want))
			}
			bad := 0
			for i := range want {
				g := strings.TrimRight(got[i], "\t")
				if strings.HasPrefix(want[i], "255\t") || (want[i] == "" && g != "") {
					continue // garbage that happens to decode
				}
				if g != want[i] {
					if bad < 5 {
						t.Errorf("frame %d: tshark %q, generated %q", i+1, g, want[i])
					}
					bad++
				}
			}
		})
	}
}

func ExampleStream() {
	s, err := ParseScenario([]byte(`
name: tiny
start: 2026-11-01T10:00:00Z
flows:
  - name: a
    src: 10.0.0.1
    dst: 10.0.0.2
    src_qpn: 0x100
    dest_qpn: 0x200
    mtu: 1024
    ops: [{op: write, bytes: 2048}]
    events: [{at_msg: 1, ce_mark: {packets: 1, cnp: true}}]
`), "tiny.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = Stream(s, func(ts time.Time, frame []byte, origLen int) error {
		fmt.Println(ts.Format("15:04:05.000000"), origLen)
		return nil
	})
	// Output:
	// 10:00:00.000000 1098
	// 10:00:00.000000 1082
	// 10:00:00.000004 74
	// 10:00:00.000004 62
}

func ExampleParseScenario_error() {
	_, err := ParseScenario([]byte("flows:\n  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, dest_qpn: 1, mtu: 1500}\n"), "bad.yaml")
	fmt.Println(err)
	// Output:
	// bad.yaml:2: flows[0].mtu: MTU 1500: want 256, 512, 1024, 2048 or 4096
}

func BenchmarkStream(b *testing.B) {
	s, err := ParseScenario([]byte(`
flows:
  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 1, dest_qpn: 2, mtu: 4096,
     ops: [{op: write, bytes: 65536, count: 100000, gap_us: 0}]}
`), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var n, bytes int
	for i := 0; i < b.N; i++ {
		s.Flows[0].Ops[0].Count = 1000
		n, bytes = 0, 0
		if err := Stream(s, func(_ time.Time, f []byte, _ int) error {
			n++
			bytes += len(f)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(bytes))
	b.ReportMetric(float64(n), "frames/op")
	_ = strconv.Itoa
}

// TestPFCQuanta: a pfc entry's quanta is written as given, 0 (an XON,
// IEEE 802.1Qbb) included; left out, it is 65535 (0 was taken for left out:
// an XON came out as an XOFF of 65535).
func TestPFCQuanta(t *testing.T) {
	const yml = `
name: pfc_quanta
pfc:
  - {src_mac: "02:00:00:00:0f:01", priorities: [3], quanta: 0, at_us: 0}
  - {src_mac: "02:00:00:00:0f:01", priorities: [3], quanta: 7, at_us: 1}
  - {src_mac: "02:00:00:00:0f:01", priorities: [3], at_us: 2}
`
	s, err := ParseScenario([]byte(yml), "pfc_quanta.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []uint16
	if _, err := Run(s, func(fr *Frame) error {
		// Ethernet, then MAC control: opcode, class-enable vector, 8 times.
		got = append(got, binary.BigEndian.Uint16(fr.Data[14+4+2*3:]))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := []uint16{0, 7, 65535}; !slices.Equal(got, want) {
		t.Fatalf("priority 3 pause times %v, want %v", got, want)
	}
}

// TestCNPPCP: cnp_pcp puts CNPs on their own priority in the innermost
// 802.1Q tag (IEEE 802.1Q §6.9.3: the top 3 bits of the TCI); every other
// frame keeps the tag's pcp, and an outer tag is left as it is.
func TestCNPPCP(t *testing.T) {
	for _, tc := range []struct {
		name, encap string
		tci         int // offset of the innermost tag's TCI
		cnpPCP      byte
	}{
		{"tag", `[{vlan: 100, pcp: 3}]`, 14, 6},
		{"no cnp_pcp", `[{vlan: 100, pcp: 3}]`, 14, 3},
		{"tag under a tag", `[{vlan: 200, pcp: 1}, {vlan: 100, pcp: 3}]`, 18, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			yml := "encap: " + tc.encap + "\n"
			if tc.name != "no cnp_pcp" {
				yml += "cnp_pcp: 6\n"
			}
			yml += `flows:
  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 1, dest_qpn: 2, mtu: 1024,
     ops: [{op: write, bytes: 4096}], events: [{at_msg: 1, ce_mark: {packets: 2, cnp: true}}]}
`
			s, err := ParseScenario([]byte(yml), "cnp_pcp.yaml")
			if err != nil {
				t.Fatal(err)
			}
			var cnps, others int
			if _, err := Run(s, func(fr *Frame) error {
				d := fr.Data
				pcp := d[tc.tci] >> 5
				if tc.tci == 18 && d[14]>>5 != 1 {
					t.Errorf("outer tag priority %d, want 1", d[14]>>5)
				}
				// IPv4 after the tags, UDP, then the BTH's opcode.
				if bth.Opcode(d[tc.tci+2+2+20+8]).IsCNP() {
					cnps++
					if pcp != tc.cnpPCP {
						t.Errorf("CNP on priority %d, want %d", pcp, tc.cnpPCP)
					}
				} else if others++; pcp != 3 {
					t.Errorf("data frame on priority %d, want 3", pcp)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if cnps != 2 || others == 0 {
				t.Errorf("%d CNPs and %d other frames, want 2 and some", cnps, others)
			}
		})
	}
	if _, err := ParseScenario([]byte("cnp_pcp: 8\n"), "x.yaml"); err == nil || !strings.Contains(err.Error(), "PCP 8 out of range 0..7") {
		t.Errorf("cnp_pcp 8: %v, want out of range", err)
	}
}
