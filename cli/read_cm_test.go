package cli

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cutCapture writes file cut to snap bytes a frame by editcap, an
// independent tool, and returns the copy's path.
func cutCapture(t *testing.T, file string, snap int) string {
	t.Helper()
	editcap := needTool(t, "editcap")
	out := filepath.Join(t.TempDir(), strconv.Itoa(snap)+"_"+filepath.Base(file))
	if b, err := exec.Command(editcap, "-s", strconv.Itoa(snap), file, out).CombinedOutput(); err != nil {
		t.Fatalf("editcap -s %d %s: %v\n%s", snap, file, err, b)
	}
	return out
}

// cmMADOffset is where the MAD starts in the frames of the real CM
// captures: Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8.
const cmMADOffset = 62

// cmJSONField is a field of read's cm object that tshark also decodes:
// where it ends in the MAD (IBTA vol 1 §12.6: the 24-byte MAD header, then
// the message's offset and size) and tshark's name for it, per message.
type cmJSONField struct {
	name   string
	end    map[string]int    // message → end offset in the MAD
	tshark map[string]string // message → tshark field
}

var cmJSONFields = []cmJSONField{
	{"local_comm_id", map[string]int{"REQ": 28, "REP": 28, "RTU": 28, "DREQ": 28, "DREP": 28},
		map[string]string{"REQ": "infiniband.cm.req", "REP": "infiniband.cm.rep", "RTU": "infiniband.cm.rtu.localcommid",
			"DREQ": "infiniband.cm.dreq.localcommid", "DREP": "infiniband.cm.drsp.localcommid"}},
	{"remote_comm_id", map[string]int{"REP": 32, "RTU": 32, "DREQ": 32, "DREP": 32},
		map[string]string{"REP": "infiniband.cm.rep.remotecommid", "RTU": "infiniband.cm.rtu.remotecommid",
			"DREQ": "infiniband.cm.dreq.remotecommid", "DREP": "infiniband.cm.drsp.remotecommid"}},
	{"service_id", map[string]int{"REQ": 40}, map[string]string{"REQ": "infiniband.cm.req.serviceid"}},
	{"local_qpn", map[string]int{"REQ": 59, "REP": 39},
		map[string]string{"REQ": "infiniband.cm.req.localqpn", "REP": "infiniband.cm.rep.localqpn"}},
	{"starting_psn", map[string]int{"REQ": 71, "REP": 47},
		map[string]string{"REQ": "infiniband.cm.req.startpsn", "REP": "infiniband.cm.rep.startpsn"}},
}

// tsharkCM returns, per frame of file, its CM message name and tshark's
// value of every cmJSONFields field the message has.
func tsharkCM(t *testing.T, file string) map[int]map[string]uint64 {
	t.Helper()
	tshark := needTool(t, "tshark")
	names := []string{"REQ", "REP", "RTU", "DREQ", "DREP"}
	args := []string{"-n", "-r", file, "-Y", "infiniband.mad", "-T", "fields", "-E", "occurrence=f", "-e", "frame.number"}
	type col struct{ field, msg string }
	var cols []col
	for _, f := range cmJSONFields {
		for _, msg := range names {
			if tf, ok := f.tshark[msg]; ok {
				cols = append(cols, col{f.name, msg})
				args = append(args, "-e", tf)
			}
		}
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	res := map[int]map[string]uint64{}
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		f := strings.Split(line, "\t")
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("tshark line %q", line)
		}
		vals := map[string]uint64{}
		for i, c := range cols {
			if i+1 >= len(f) || f[i+1] == "" {
				continue
			}
			v, err := strconv.ParseUint(f[i+1], 0, 64)
			if err != nil {
				t.Fatalf("tshark %s %q: %v", c.field, f[i+1], err)
			}
			vals[c.field] = v
			vals["msg:"+c.msg] = 1
		}
		res[n] = vals
	}
	return res
}

// TestReadCutCMMatchesTshark cuts the real RDMA CM captures to every snap
// length that ends inside their CM messages (and a few past) and checks
// read's cm objects against tshark's reading of the whole capture: a
// field appears exactly when its bytes were captured, with tshark's value,
// and the object says "truncated" exactly when the MAD was cut. The text
// line drops the same fields and ends the CM part with "[|cm]".
func TestReadCutCMMatchesTshark(t *testing.T) {
	snaps := []int{cmMADOffset + 24, cmMADOffset + 30, cmMADOffset + 256, cmMADOffset + 256 + 4}
	for end := 28; end <= 71; end++ {
		snaps = append(snaps, cmMADOffset+end-1, cmMADOffset+end)
	}
	for _, name := range []string{"linlinw5_rdma_cm.pcap", "linlinw5_rping.pcap"} {
		whole := filepath.Join(repoRoot, "testdata", "pcaps", "real", name)
		want := tsharkCM(t, whole)
		if len(want) < 5 {
			t.Fatalf("%s: tshark found %d CM MADs", name, len(want))
		}
		for _, snap := range snaps {
			file := cutCapture(t, whole, snap)
			out, errOut, code := runCLI(t, "read", "--format", "json", "--opcode", "cm", file)
			if code != ExitOK {
				t.Fatalf("%s cut to %d: exit %d: %s", name, snap, code, errOut)
			}
			seen := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var p struct {
					Frame int            `json:"frame"`
					CM    map[string]any `json:"cm"`
				}
				if err := json.Unmarshal([]byte(line), &p); err != nil {
					t.Fatal(err)
				}
				w, ok := want[p.Frame]
				if !ok || p.CM == nil {
					t.Fatalf("%s cut to %d frame %d: cm %v, tshark's %v", name, snap, p.Frame, p.CM, w)
				}
				seen++
				msg, _ := p.CM["message"].(string)
				if w["msg:"+msg] != 1 {
					t.Errorf("%s cut to %d frame %d: message %s, tshark's fields %v", name, snap, p.Frame, msg, w)
				}
				captured := snap - cmMADOffset
				for _, f := range cmJSONFields {
					end, has := f.end[msg]
					got, present := p.CM[f.name].(float64)
					switch {
					case has && end <= captured && !present:
						t.Errorf("%s cut to %d frame %d %s: %s captured (ends at %d of %d), not printed", name, snap, p.Frame, msg, f.name, end, captured)
					case (!has || end > captured) && present:
						t.Errorf("%s cut to %d frame %d %s: %s printed (%v), but not captured", name, snap, p.Frame, msg, f.name, got)
					case present && uint64(got) != w[f.name]:
						t.Errorf("%s cut to %d frame %d %s: %s %v, tshark %d", name, snap, p.Frame, msg, f.name, got, w[f.name])
					}
				}
				if cut, _ := p.CM["truncated"].(bool); cut != (captured < 256) {
					t.Errorf("%s cut to %d frame %d: cm truncated %v, want %v", name, snap, p.Frame, cut, captured < 256)
				}
			}
			if seen != len(want) {
				t.Errorf("%s cut to %d: %d CM MADs printed, tshark has %d", name, snap, seen, len(want))
			}
			text, _, _ := runCLI(t, "read", "--opcode", "cm", file)
			for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
				if strings.Contains(line, " CM REQ ") && strings.Contains(line, "start-psn") != (snap >= cmMADOffset+71) {
					t.Errorf("%s cut to %d: %q: start-psn printed: %v", name, snap, line, !(snap >= cmMADOffset+71))
				}
				if strings.Contains(line, "[|cm]") != (snap < cmMADOffset+256) {
					t.Errorf("%s cut to %d: %q: [|cm] mark wrong", name, snap, line)
				}
			}
		}
	}
}

// TestFlowsCutCMAgreesWithWhole: flows on the real CM captures cut to
// lengths that end inside their CM messages never says something the
// whole capture contradicts: a source QPN, partner, service ID or starting
// PSN is the whole capture's or is left out, never a zero from bytes that
// were not captured.
func TestFlowsCutCMAgreesWithWhole(t *testing.T) {
	type cmRec struct {
		ServiceID *string `json:"service_id"`
		StartPSN  *uint64 `json:"start_psn"`
		Frame     int     `json:"frame"`
	}
	type flowRec struct {
		ID         int     `json:"id"`
		DestQPN    uint64  `json:"dest_qpn"`
		SrcQPN     *uint64 `json:"src_qpn"`
		PartnerQPN *uint64 `json:"partner_qpn"`
		PairedBy   string  `json:"paired_by"`
		CM         *cmRec  `json:"cm"`
	}
	flowsOf := func(file string) map[int]flowRec {
		out, errOut, code := runCLI(t, "flows", "--format", "json", "--sort", "id", file)
		if code != ExitOK {
			t.Fatalf("flows %s: exit %d: %s", file, code, errOut)
		}
		var recs []flowRec
		if err := json.Unmarshal([]byte(out), &recs); err != nil {
			t.Fatal(err)
		}
		m := map[int]flowRec{}
		for _, r := range recs {
			m[r.ID] = r
		}
		return m
	}
	same := func(a, b *uint64) bool { return a == nil || b != nil && *a == *b }
	whole := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	want := flowsOf(whole)
	// Each length cuts a REQ or REP field: the comm IDs, the REQ's
	// service ID and QPN, the REP's QPN and start PSN, the REQ's start PSN.
	for _, snap := range []int{86, 89, 90, 93, 100, 101, 102, 120, 121, 128, 132, 133, 200} {
		got := flowsOf(cutCapture(t, whole, snap))
		if len(got) != len(want) {
			t.Fatalf("cut to %d: %d flows, the whole capture %d", snap, len(got), len(want))
		}
		for id, g := range got {
			w := want[id]
			if g.DestQPN != w.DestQPN || !same(g.SrcQPN, w.SrcQPN) || !same(g.PartnerQPN, w.PartnerQPN) {
				t.Errorf("cut to %d flow %d: dest %d src %v partner %v; whole capture: dest %d src %v partner %v",
					snap, id, g.DestQPN, deref(g.SrcQPN), deref(g.PartnerQPN), w.DestQPN, deref(w.SrcQPN), deref(w.PartnerQPN))
			}
			if g.CM == nil {
				continue
			}
			if w.CM == nil || g.CM.Frame != w.CM.Frame || !same(g.CM.StartPSN, w.CM.StartPSN) ||
				g.CM.ServiceID != nil && (w.CM.ServiceID == nil || *g.CM.ServiceID != *w.CM.ServiceID) {
				t.Errorf("cut to %d flow %d: cm %+v, whole capture's %+v", snap, id, *g.CM, w.CM)
			}
		}
	}
}

// deref shows a JSON number that may be null.
func deref(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}

// lengthRE finds the frame length in a text line of read.
var lengthRE = regexp.MustCompile(`, length (\d+)`)

// TestReadCutInsideBTH cuts a real capture to every length from the end
// of its UDP ports to past its BTH and RETH. While the BTH is cut the
// packet says headers_truncated and has no payload_len (unknown without
// the opcode; the text line has no payload either); once the BTH is whole
// its payload_len is the whole capture's, from the UDP length. read -v
// gives the UDP length once its field was captured, and "[|udp]" before,
// not a length of 0.
func TestReadCutInsideBTH(t *testing.T) {
	whole := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_write_bw.pcap")
	type pkt struct {
		Frame            int  `json:"frame"`
		Opcode           *int `json:"opcode"`
		HeadersTruncated bool `json:"headers_truncated"`
		PayloadLen       *int `json:"payload_len"`
		Truncated        bool `json:"truncated"`
		CapLen           int  `json:"cap_len"`
	}
	parse := func(out string) map[int]pkt {
		m := map[int]pkt{}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			var p pkt
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("%v: %s", err, line)
			}
			m[p.Frame] = p
		}
		return m
	}
	out, _, _ := runCLI(t, "read", "--format", "json", whole)
	want := parse(out)
	const udpEnd = 14 + 20 + 8 // Ethernet, IPv4, UDP
	const bthEnd = udpEnd + 12 // and the BTH
	for snap := udpEnd - 4; snap <= bthEnd+16; snap++ {
		file := cutCapture(t, whole, snap)
		out, errOut, code := runCLI(t, "read", "--format", "json", file)
		if code != ExitOK {
			t.Fatalf("cut to %d: exit %d: %s", snap, code, errOut)
		}
		got := parse(out)
		if len(got) != len(want) {
			t.Fatalf("cut to %d: %d RoCE packets, the whole capture %d", snap, len(got), len(want))
		}
		for n, g := range got {
			w := want[n]
			if snap < bthEnd {
				if g.Opcode != nil || !g.HeadersTruncated || g.PayloadLen != nil || !g.Truncated {
					t.Errorf("cut to %d frame %d: opcode %v headers_truncated %v payload_len %v truncated %v; want no opcode nor payload_len, headers_truncated and truncated",
						snap, n, g.Opcode, g.HeadersTruncated, g.PayloadLen, g.Truncated)
				}
				continue
			}
			if g.PayloadLen == nil || *g.PayloadLen != *w.PayloadLen {
				t.Errorf("cut to %d frame %d: payload_len %v, whole capture %d", snap, n, g.PayloadLen, *w.PayloadLen)
			}
		}
		text, _, _ := runCLI(t, "read", file)
		for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
			var wire int
			if m := lengthRE.FindStringSubmatch(line); m != nil {
				wire, _ = strconv.Atoi(m[1])
			}
			cut := snap < bthEnd
			if strings.Contains(line, "[|bth]") != cut || strings.Contains(line, ", payload ") == cut ||
				strings.Contains(line, fmt.Sprintf("[truncated to %d]", snap)) != (wire > snap) {
				t.Errorf("cut to %d: %q: want [|bth] %v, a payload %v, [truncated to %d] %v", snap, line, cut, !cut, snap, wire > snap)
			}
		}
		verbose, _, _ := runCLI(t, "read", "-v", file)
		udpLines := 0
		for _, line := range strings.Split(verbose, "\n") {
			if !strings.HasPrefix(line, "    UDP ") {
				continue
			}
			udpLines++
			lenCut := snap < udpEnd
			if strings.Contains(line, "[|udp]") != lenCut || strings.Contains(line, " length ") == lenCut ||
				strings.HasSuffix(line, " length 0") {
				t.Errorf("cut to %d: %q: want [|udp] %v, a length %v", snap, line, lenCut, !lenCut)
			}
		}
		if udpLines != len(want) {
			t.Errorf("cut to %d: read -v printed %d UDP lines for %d RoCE packets", snap, udpLines, len(want))
		}
	}
}
