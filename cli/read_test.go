package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// genTruth is the part of a generator truth file that read's summary reports.
type genTruth struct {
	Frames          int  `json:"frames"`
	RoCEFrames      int  `json:"roce_frames"`
	MalformedFrames int  `json:"malformed_frames"`
	TruncatedFrames int  `json:"truncated_frames"`
	ICRCBadFrames   int  `json:"icrc_bad_frames"`
	CutOff          bool `json:"cut_off"`
	Flows           []struct {
		Name  string         `json:"flow"`
		NAKs  map[string]int `json:"naks"`
		RNR   int            `json:"rnr_naks"`
		CNPs  int            `json:"cnps"`
		Ops   map[string]int `json:"opcodes"`
		Extra map[string]any `json:"-"`
	} `json:"flows"`
}

func loadTruth(t *testing.T, capture string) genTruth {
	t.Helper()
	base := capture[:strings.Index(capture, ".pcap")]
	b, err := os.ReadFile(base + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	var tr genTruth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// summaryRE matches read's summary line; "(N RoCE)" after the truncated
// count says how many of them are RoCE when some are not
// (TestTruncatedCountsEveryFrame checks it).
var summaryRE = regexp.MustCompile(`rocedump: (\d+) packets? read, (\d+) RoCE, (\d+) malformed, (\d+) truncated(?: \(\d+ RoCE\))?, (\d+) ICRC bad`)

// parseSummary returns the five counts of read's summary line.
func parseSummary(t *testing.T, stderr string) [5]int {
	t.Helper()
	m := summaryRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no summary line in stderr:\n%s", stderr)
	}
	var n [5]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return n
}

// TestReadSummaryMatchesTruth checks read's summary counts against what the
// generator knows it wrote, for every generated capture. The generator
// counts a frame with a deliberately bad ICRC among its malformed frames;
// rocedump decodes it as RoCE and counts it as ICRC bad.
func TestReadSummaryMatchesTruth(t *testing.T) {
	files := captures(t, "gen", "*.pcap*")
	if len(files) == 0 {
		t.Fatal("no generated captures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			tr := loadTruth(t, f)
			_, stderr, code := runCLI(t, "read", f)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got := parseSummary(t, stderr)
			want := [5]int{tr.Frames, tr.RoCEFrames + tr.ICRCBadFrames, tr.MalformedFrames - tr.ICRCBadFrames, tr.TruncatedFrames, tr.ICRCBadFrames}
			if got != want {
				t.Errorf("summary (read, RoCE, malformed, truncated, ICRC bad): want %v, got %v", want, got)
			}
			if cut := strings.Contains(stderr, "file cut off"); cut != tr.CutOff {
				t.Errorf("cut-off warning: want %v, got %v\n%s", tr.CutOff, cut, stderr)
			}
		})
	}
}

// TestReadOpcodeClasses counts NAKs, RNR NAKs and CNPs selected by --opcode
// and compares them with the generator's truth.
func TestReadOpcodeClasses(t *testing.T) {
	for _, name := range []string{"retransmissions.pcap", "congestion.pcap"} {
		f := filepath.Join(repoRoot, "testdata", "pcaps", "gen", name)
		tr := loadTruth(t, f)
		var naks, rnr, cnps int
		for _, fl := range tr.Flows {
			for _, n := range fl.NAKs {
				naks += n
			}
			rnr += fl.RNR
			cnps += fl.CNPs
		}
		for class, want := range map[string]int{"nak": naks + rnr, "rnr": rnr, "cnp": cnps} {
			out, stderr, code := runCLI(t, "read", "--opcode", class, f)
			if code != ExitOK {
				t.Fatalf("%s --opcode %s: exit %d: %s", name, class, code, stderr)
			}
			if got := strings.Count(out, "\n"); got != want {
				t.Errorf("%s --opcode %s: want %d lines, got %d", name, class, want, got)
			}
		}
	}
}

func TestReadSelection(t *testing.T) {
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	erspan := filepath.Join(repoRoot, "testdata", "pcaps", "gen", "mirror_erspan2_vlan_trunc.pcap")
	tests := []struct {
		name  string
		args  []string
		lines int
		want  string // every line contains it
	}{
		// Expected counts are tshark's: -Y "infiniband.bth.opcode==17" gives 37 ACKs,
		// -Y "infiniband && ip.src==10.1.16.62" 54 frames.
		{"count", []string{"read", "-c", "5", cm}, 5, ""},
		{"qpn hex", []string{"read", "--qpn", "0x3b", cm}, 32, "qp 0x00003b"},
		{"qpn decimal list", []string{"read", "--qpn", "59,61", cm}, 64, "qp 0x00003"},
		{"opcode number", []string{"read", "--opcode", "0x11", cm}, 37, "RC_ACKNOWLEDGE"},
		{"opcode name without transport", []string{"read", "--opcode", "rdma_write_first", cm}, 5, "RC_RDMA_WRITE_FIRST"},
		{"opcode class cm", []string{"read", "--opcode", "cm", cm}, 12, " CM "},
		{"filter after --", []string{"read", cm, "--", "udp", "and", "src", "host", "10.1.16.62"}, 54, "10.1.16.62."},
		{"filter flag", []string{"read", "-f", "ip proto 47", erspan}, 32, "erspan2"},
		{"filter excludes all", []string{"read", "-f", "not ip proto 47", erspan}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, tt.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			if out == "" {
				lines = nil
			}
			if len(lines) != tt.lines {
				t.Errorf("want %d lines, got %d:\n%s", tt.lines, len(lines), out)
			}
			for _, l := range lines {
				if !strings.Contains(l, tt.want) {
					t.Errorf("line lacks %q: %s", tt.want, l)
				}
			}
		})
	}
}

// TestReadEmptySelection: --qpn "" or --opcode "" (a script's empty
// variable, --qpn "$QPN") selected nothing and so printed every packet,
// where "--qpn 0x11,,0x12" is a usage error: an empty selection is one
// too.
func TestReadEmptySelection(t *testing.T) {
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	for _, flag := range []string{"--qpn", "--opcode"} {
		for _, v := range []string{"", " "} {
			out, stderr, code := runCLI(t, "read", flag, v, cm)
			if code != ExitUsage || out != "" || !strings.Contains(stderr, flag) {
				t.Errorf("read %s %q: exit %d, %d bytes out, stderr %q: want exit %d naming %s", flag, v, code, len(out), stderr, ExitUsage, flag)
			}
		}
	}
}

// writeERF writes a one-record pcap of link type ERF (197), which rocedump
// does not read.
func writeERF(t *testing.T) string {
	t.Helper()
	return writeOfLinkType(t, 197, "native-ib.erf.pcap")
}

// writeOfLinkType writes a pcap file NAME of one 20-byte frame of link
// type lt and returns its path.
func writeOfLinkType(t *testing.T, lt uint32, name string) string {
	t.Helper()
	var b bytes.Buffer
	hdr := []uint32{0xa1b2c3d4, 0x00040002, 0, 0, 65535, lt}
	for i, v := range hdr {
		if i == 1 {
			binary.Write(&b, binary.LittleEndian, uint16(2))
			binary.Write(&b, binary.LittleEndian, uint16(4))
			continue
		}
		binary.Write(&b, binary.LittleEndian, v)
	}
	binary.Write(&b, binary.LittleEndian, []uint32{1, 0, 20, 20})
	b.Write(make([]byte, 20))
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("Hello, this is not a capture\n"), 0o644)
	cm := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing file", []string{"read", filepath.Join(dir, "nope.pcap")}, ExitUsage, "no such file"},
		{"not a capture", []string{"read", text}, ExitUsage, "not a pcap or pcapng file"},
		{"unknown link type", []string{"read", writeERF(t)}, ExitUsage, "unsupported link type ERF (197)"},
		{"bad filter", []string{"read", "-f", "udp prot 4791", cm}, ExitUsage, "filter"},
		{"bad qpn", []string{"read", "--qpn", "0x1000000", cm}, ExitUsage, "24-bit QP number"},
		{"bad opcode", []string{"read", "--opcode", "teleport", cm}, ExitUsage, "not an opcode"},
		{"bad format", []string{"read", "--format", "xml", cm}, ExitUsage, "want text or json"},
		{"no file", []string{"read"}, ExitUsage, "no capture given: rocedump read [flags] CAPTURE..."},
		{"unknown flag", []string{"read", "--frobnicate", cm}, ExitUsage, "unknown flag"},
		{"negative count", []string{"read", "-c", "-1", cm}, ExitUsage, "--count"},
		// tcpdump's order, a filter after the files with no "--".
		{"filter as files", []string{"read", cm, "udp", "port", "4791"}, ExitUsage,
			"udp: no such file; a capture filter goes after -- or in --filter: rocedump read " + cm + " -- 'udp port 4791'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != tt.code {
				t.Errorf("want exit %d, got %d", tt.code, code)
			}
			if !strings.Contains(stderr, tt.msg) {
				t.Errorf("stderr lacks %q:\n%s", tt.msg, stderr)
			}
		})
	}
}

// TestReadUnsupportedLinkType: a file whose frames are all of a link type
// rocedump does not decode is skipped with a warning and the other files
// are read, wherever it comes in the list; the run is an input error
// (exit 2) only when no file had a frame rocedump decodes. read agrees
// with flows and report on every case.
func TestReadUnsupportedLinkType(t *testing.T) {
	erf := writeERF(t) // one frame of link type ERF (197)
	good := genCapture("congestion.pcap")
	alone, aloneErr, _ := runCLI(t, "read", good)
	want := parseSummary(t, aloneErr)
	tests := []struct {
		name  string
		files []string
		code  int
	}{
		{"undecodable first", []string{erf, good}, ExitOK},
		{"undecodable last", []string{good, erf}, ExitOK},
		{"only undecodable", []string{erf}, ExitUsage},
		{"two undecodable", []string{erf, erf}, ExitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, stderr, code := runCLI(t, append([]string{"read"}, tt.files...)...)
			if code != tt.code {
				t.Fatalf("want exit %d, got %d: %s", tt.code, code, stderr)
			}
			if !strings.Contains(stderr, "skipped 1 frame: unsupported link type ERF (197)") {
				t.Errorf("stderr does not name the skipped frames:\n%s", stderr)
			}
			extracted := filepath.Join(t.TempDir(), "x.pcap")
			for _, cmd := range [][]string{{"flows"}, {"report", "--fail-on", "never"}, {"extract", "--flow", "1", "-o", extracted}} {
				_, e, c := runCLI(t, append(cmd, tt.files...)...)
				if c != tt.code {
					t.Errorf("%s exits %d, read %d: %s", cmd[0], c, code, e)
				}
				if !strings.Contains(e, "unsupported link type ERF (197)") {
					t.Errorf("%s does not name the skipped frames:\n%s", cmd[0], e)
				}
			}
			if tt.code != ExitOK {
				return
			}
			if strings.Count(out, "\n") != strings.Count(alone, "\n") {
				t.Errorf("read printed %d lines, want those of %s alone, %d", strings.Count(out, "\n"), good, strings.Count(alone, "\n"))
			}
			got := parseSummary(t, stderr)
			if got[0] != want[0]+1 || got[1] != want[1] {
				t.Errorf("summary: want %d packets, %d RoCE; got %v", want[0]+1, want[1], got)
			}
		})
	}
}

// TestReadCutOff: a file cut mid-record is read up to the cut, the cut is
// reported, and the run still succeeds.
func TestReadCutOff(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_write_bw.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	whole, _, _ := runCLI(t, "read", "--format", "json", filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_write_bw.pcap"))
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(cut, src[:len(src)-500], 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, "read", "--format", "json", cut)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "file cut off in record") {
		t.Errorf("no cut-off warning:\n%s", stderr)
	}
	if out == "" || !strings.HasPrefix(whole, out) {
		t.Errorf("output of the cut file is not a prefix of the whole file's output")
	}
}

// TestReadGolden pins the text, verbose and JSON output on real and
// generated captures (go test ./cli -update rewrites the files).
func TestReadGolden(t *testing.T) {
	tests := []goldenCase{
		{"rdma_cm_text", []string{"read", "real/linlinw5_rdma_cm.pcap"}},
		{"atomic_verbose", []string{"read", "-v", "real/linlinw5_rdma_atomic_bw.pcap"}},
		{"rping_json", []string{"read", "--format", "json", "real/linlinw5_rping.pcap"}},
		{"retransmissions_text", []string{"read", "--time", "rel", "gen/retransmissions.pcap"}},
		{"congestion_json", []string{"read", "--format", "json", "gen/congestion.pcap"}},
		{"transports_verbose", []string{"read", "-v", "gen/transports.pcap"}},
		{"erspan3_ipv6_text", []string{"read", "--time", "date", "gen/mirror_erspan3_ipv6.pcapng"}},
		{"malformed_text", []string{"read", "gen/malformed.pcap"}},
		{"storage_cm_verbose", []string{"read", "-v", "--opcode", "cm", "gen/storage.pcap"}},
	}
	runGoldenCases(t, "read", tests)
}
