package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// readJSONPacket is the part of `rocedump read --format json` that the
// differential test compares with tshark.
type readJSONPacket struct {
	Frame     int     `json:"frame"`
	Opcode    *uint64 `json:"opcode"`
	DestQPN   uint64  `json:"dest_qpn"`
	PSN       uint64  `json:"psn"`
	PKey      uint64  `json:"pkey"`
	Malformed string  `json:"malformed"`
	RoCE      uint64  `json:"roce_version"`
	IPVersion uint64  `json:"ip_version"`
	TTL       *uint64 `json:"ttl"`
	FlowLabel *uint64 `json:"flow_label"`
	Transport string  `json:"transport"`
	AtomicETH *struct {
		VA   uint64 `json:"va"`
		RKey uint64 `json:"rkey"`
	} `json:"atomic_eth"`
	RETH *struct {
		VA     uint64 `json:"va"`
		RKey   uint64 `json:"rkey"`
		DMALen uint64 `json:"dma_len"`
	} `json:"reth"`
	AETH *struct {
		Syndrome uint64 `json:"syndrome"`
		MSN      uint64 `json:"msn"`
	} `json:"aeth"`
	DETH *struct {
		QKey  uint64 `json:"qkey"`
		SrcQP uint64 `json:"src_qp"`
	} `json:"deth"`
}

// tsharkFields are the tshark fields compared, in -e order.
var tsharkFields = []string{
	"frame.number",
	"infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.p_key",
	"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
	"infiniband.aeth.syndrome", "infiniband.aeth.msn",
	"infiniband.deth.q_key", "infiniband.deth.srcqp",
	// The last of each: a mirror's outer header comes first.
	"ip.ttl", "ipv6.hlim", "ipv6.flow", "infiniband.grh.hoplmt", "infiniband.grh.flowlabel",
}

// TestReadMatchesTshark is the differential test: for every RoCE capture in
// testdata, rocedump read --format json and tshark agree on opcode, dest QP,
// PSN, P_Key, RETH, AETH and DETH for every packet.
func TestReadMatchesTshark(t *testing.T) {
	tshark := needTool(t, "tshark")
	files := append(captures(t, "real", "linlinw5_*.pcap"), captures(t, "real", "pcapplusplus_*.pcap")...)
	files = append(files, captures(t, "gen", "*.pcap*")...)
	if len(files) < 10 {
		t.Fatalf("found only %d RoCE captures under testdata/pcaps", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			ours := readJSON(t, file)
			theirs := tsharkIB(t, tshark, file)
			if len(theirs) == 0 {
				t.Fatalf("tshark found no InfiniBand packets in %s", file)
			}
			compareTsharkFrames(t, ours, theirs)
			for frame, p := range ours {
				if _, ok := theirs[frame]; !ok && p.Opcode != nil && p.Malformed == "" {
					t.Errorf("frame %d: rocedump decodes opcode %d, tshark finds no BTH", frame, *p.Opcode)
				}
			}
		})
	}
}

func readJSON(t *testing.T, file string) map[int]readJSONPacket {
	t.Helper()
	out, errOut, code := runCLI(t, "read", "--format", "json", file)
	if code != 0 {
		t.Fatalf("rocedump read exited %d: %s", code, errOut)
	}
	pkts := map[int]readJSONPacket{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p readJSONPacket
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("bad JSON line %q: %v", sc.Text(), err)
		}
		pkts[p.Frame] = p
	}
	return pkts
}

// tsharkIB runs tshark over file and returns its fields per frame that has a BTH.
func tsharkIB(t *testing.T, tshark, file string) map[int][]string {
	t.Helper()
	return tsharkIBWith(t, tshark, file)
}

// tsharkIBWith is tsharkIB with more tshark options (such as
// "-o", "ip.defragment:FALSE").
func tsharkIBWith(t *testing.T, tshark, file string, opts ...string) map[int][]string {
	t.Helper()
	args := append([]string{"-n", "-r", file}, opts...)
	args = append(args, "-Y", "infiniband.bth", "-T", "fields", "-E", "separator=/t", "-E", "occurrence=l")
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// tshark exits 2 on a file cut off mid-record, after printing every
	// whole record; rocedump must agree on those.
	if err != nil && !strings.Contains(stderr.String(), "cut short in the middle of a packet") {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	res := map[int][]string{}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		for len(f) < len(tsharkFields) {
			f = append(f, "")
		}
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("tshark line %q: %v", line, err)
		}
		res[n] = f
	}
	return res
}

// compareTsharkFrames checks every frame in which tshark decodes a BTH
// against the packet rocedump printed for it (comparePacket), which must
// be there.
func compareTsharkFrames(t *testing.T, ours map[int]readJSONPacket, theirs map[int][]string) {
	t.Helper()
	for frame, tf := range theirs {
		p, ok := ours[frame]
		if !ok {
			t.Errorf("frame %d: tshark decodes a BTH (opcode %s), rocedump printed nothing", frame, tf[1])
			continue
		}
		comparePacket(t, frame, p, tf)
	}
}

// comparePacket checks one frame's fields; tf holds tshark's values in
// tsharkFields order. An empty tshark value means tshark did not decode the
// header, which rocedump must then not print either.
func comparePacket(t *testing.T, frame int, p readJSONPacket, tf []string) {
	t.Helper()
	check := func(name, theirs string, ours uint64, present bool) {
		t.Helper()
		if theirs == "" {
			if present {
				t.Errorf("frame %d %s: rocedump %d, tshark none", frame, name, ours)
			}
			return
		}
		v, err := strconv.ParseUint(theirs, 0, 64)
		if err != nil {
			t.Errorf("frame %d %s: tshark value %q: %v", frame, name, theirs, err)
			return
		}
		if !present {
			t.Errorf("frame %d %s: tshark %d, rocedump none", frame, name, v)
			return
		}
		if v != ours {
			t.Errorf("frame %d %s: tshark %d, rocedump %d", frame, name, v, ours)
		}
	}
	if p.Opcode == nil && p.Malformed != "" {
		// rocedump stopped below the BTH (e.g. a UDP length past the IP
		// payload); tshark dissects the bytes anyway. The frame is counted
		// as malformed, which is the point.
		return
	}
	if p.Opcode == nil {
		t.Errorf("frame %d: tshark decodes opcode %s, rocedump has no BTH", frame, tf[1])
		return
	}
	compareIP(t, frame, p, tf, check)
	check("opcode", tf[1], *p.Opcode, true)
	check("dest_qpn", tf[2], p.DestQPN, true)
	check("psn", tf[3], p.PSN, true)
	check("pkey", tf[4], p.PKey, true)
	if p.Transport == "XRC" || p.Transport == "RD" {
		// tshark 4.0 does not dissect the XRCETH and reads the RD headers
		// 4-8 bytes late (its RDETH/DETH order differs from IBTA §9.2 and
		// rxe), so only the BTH is comparable for these transports; their
		// extended headers are checked by decode/bth's table tests.
		return
	}
	reth := p.RETH != nil
	var va, rkey, dlen uint64
	if reth {
		va, rkey, dlen = p.RETH.VA, p.RETH.RKey, p.RETH.DMALen
	}
	if p.AtomicETH != nil {
		// tshark shows an AtomicETH's VA and R_Key in its reth fields.
		reth, va, rkey = true, p.AtomicETH.VA, p.AtomicETH.RKey
	}
	check("reth.va", tf[5], va, reth)
	check("reth.rkey", tf[6], rkey, reth)
	if p.AtomicETH == nil {
		check("reth.dma_len", tf[7], dlen, reth)
	}
	aeth := p.AETH != nil
	var syn, msn uint64
	if aeth {
		syn, msn = p.AETH.Syndrome, p.AETH.MSN
	}
	check("aeth.syndrome", tf[8], syn, aeth)
	check("aeth.msn", tf[9], msn, aeth)
	deth := p.DETH != nil
	var qkey, srcqp uint64
	if deth {
		qkey, srcqp = p.DETH.QKey, p.DETH.SrcQP
	}
	check("deth.qkey", tf[10], qkey, deth)
	check("deth.src_qp", tf[11], srcqp, deth)
}

// tsharkEpochNanos returns the capture time of every frame of file, in
// nanoseconds since the epoch, as tshark reads it (frame.time_epoch).
func tsharkEpochNanos(t *testing.T, tshark, file string) map[int]int64 {
	t.Helper()
	out, err := exec.Command(tshark, "-n", "-r", file, "-T", "fields", "-e", "frame.number", "-e", "frame.time_epoch").Output()
	if err != nil {
		t.Fatalf("tshark -r %s: %v", file, err)
	}
	res := map[int]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		n, _ := strconv.Atoi(f[0])
		res[n] = parseSeconds(t, f[1])
	}
	return res
}

// parseSeconds reads "S.NNNNNNNNN" (9 decimals, maybe negative) as
// nanoseconds.
func parseSeconds(t *testing.T, s string) int64 {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	sec, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	si, err1 := strconv.ParseInt(sec, 10, 64)
	fi, err2 := strconv.ParseInt(frac, 10, 64)
	if !ok || len(frac) != 9 || err1 != nil || err2 != nil {
		t.Fatalf("time %q: want seconds with 9 decimals", s)
	}
	ns := si*1e9 + fi
	if neg {
		ns = -ns
	}
	return ns
}

// TestReadTimeRelMatchesTshark: --time rel counts from the first frame
// read, printed or not, as tshark's frame.time_relative does: with a
// filter, with -c, and with several captures (whose first frame is that of
// the first capture, so a later capture that starts earlier gives negative
// times). Each printed packet's frame number comes from -v.
func TestReadTimeRelMatchesTshark(t *testing.T) {
	tshark := needTool(t, "tshark")
	real := func(name string) string { return filepath.Join(repoRoot, "testdata", "pcaps", "real", name) }
	bw, cm := real("linlinw5_rdma_write_bw.pcap"), real("linlinw5_rdma_cm.pcap")
	tests := []struct {
		name  string
		files []string
		args  []string
	}{
		{"whole", []string{bw}, nil},
		{"count", []string{bw}, []string{"-c", "1"}},
		{"filter", []string{bw}, []string{"-f", "src host 10.1.16.61"}},
		{"opcode", []string{cm}, []string{"--opcode", "ack"}},
		{"two captures", []string{bw, cm}, nil},
		{"two captures, the first one later (negative times)", []string{cm, bw}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			epochs := make([]map[int]int64, len(tt.files))
			for i, f := range tt.files {
				epochs[i] = tsharkEpochNanos(t, tshark, f)
			}
			zero := epochs[0][1]
			args := append(append([]string{"read", "-v", "--time", "rel"}, tt.args...), tt.files...)
			out, errOut, code := runCLI(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			file, checked := 0, 0
			for i, line := range lines {
				if !strings.HasPrefix(line, "    frame ") {
					continue
				}
				var n int
				fmt.Sscanf(line, "    frame %d:", &n)
				summary := lines[i-1]
				if summary[0] == ' ' {
					t.Fatalf("no summary line before %q", line)
				}
				if len(tt.files) > 1 {
					// Lines start with the file's name.
					name, rest, _ := strings.Cut(summary, " ")
					for file < len(tt.files) && tt.files[file] != name {
						file++
					}
					if file == len(tt.files) {
						t.Fatalf("line of an unknown file: %q", summary)
					}
					summary = rest
				}
				ts, _, _ := strings.Cut(summary, " ")
				got := parseSeconds(t, ts)
				if want := epochs[file][n] - zero; got != want {
					t.Errorf("%s frame %d: --time rel %s, want %d ns since the first frame read", filepath.Base(tt.files[file]), n, ts, want)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no packet printed")
			}
		})
	}
}

// compareIP checks the TTL or hop limit and the flow label of the header
// that carries the BTH (tf in tsharkFields order; check as comparePacket's).
func compareIP(t *testing.T, frame int, p readJSONPacket, tf []string, check func(name, theirs string, ours uint64, present bool)) {
	t.Helper()
	if p.TTL == nil {
		t.Errorf("frame %d: no ttl in rocedump's JSON", frame)
		return
	}
	label, hasLabel := uint64(0), p.FlowLabel != nil
	if hasLabel {
		label = *p.FlowLabel
	}
	switch {
	case p.RoCE == 1:
		check("grh.hoplmt", tf[15], *p.TTL, true)
		check("grh.flowlabel", tf[16], label, hasLabel)
	case p.IPVersion == 6:
		check("ipv6.hlim", tf[13], *p.TTL, true)
		check("ipv6.flow", tf[14], label, hasLabel)
	default:
		check("ip.ttl", tf[12], *p.TTL, true)
		if hasLabel {
			t.Errorf("frame %d: a flow label on IPv4", frame)
		}
	}
}
