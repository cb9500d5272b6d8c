package cli

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// testMAD is a MAD to QP1 for the tests: its header fields, and whether it
// is a CM message (bth.CMMAD.IsCMMessage).
type testMAD struct {
	base, class, method uint8
	attr                uint16
	cm                  bool
}

// madTestMADs are CM messages and MADs that are not: class 0x07 with a
// method or attribute the CM does not send, another base version, another
// class.
var madTestMADs = []testMAD{
	{1, 7, 0x03, 0x0010, true},  // REQ
	{1, 7, 0x81, 0x0001, true},  // GetResp(ClassPortInfo)
	{1, 7, 0x01, 0x0001, true},  // Get(ClassPortInfo)
	{1, 7, 0x03, 0x0020, false}, // Send of an attribute the CM has not
	{1, 7, 0x01, 0x0010, false}, // Get(REQ)
	{2, 7, 0x03, 0x0010, false}, // base version 2
	{1, 4, 0x01, 0x0012, false}, // PerfMgt Get(PortCounters)
	{1, 7, 0x81, 0x0013, false}, // GetResp(REP)
	{1, 7, 0x03, 0x0001, false}, // Send(ClassPortInfo)
}

// madBytes is the 256-byte MAD of m; a REQ's fields (local comm ID, IP CM
// service ID for TCP port 4420, QPN, starting PSN) are set whatever its
// method, so that a MAD taken for a REQ shows them.
func (m testMAD) bytes() []byte {
	b := make([]byte, bth.MADLen)
	b[0], b[1], b[2], b[3] = m.base, m.class, 2, m.method
	binary.BigEndian.PutUint16(b[4:], 0x0004)
	binary.BigEndian.PutUint64(b[8:], 0x1122334455667788)
	binary.BigEndian.PutUint16(b[16:], m.attr)
	binary.BigEndian.PutUint32(b[20:], 0x0a0b0c0d)
	d := b[bth.MADHeaderLen:]
	binary.BigEndian.PutUint32(d[0:], 0xaabbccdd)
	binary.BigEndian.PutUint64(d[8:], 0x0000000001061144)
	binary.BigEndian.PutUint32(d[32:], 0x123456<<8)
	binary.BigEndian.PutUint32(d[44:], 0x654321<<8)
	return b
}

// writeMADCapture writes one RoCEv2 UD SEND_ONLY to QP1 a MAD, over IPv4
// or IPv6, each cut to snap bytes when snap is not 0.
func writeMADCapture(t *testing.T, mads []testMAD, v6 bool, snap int) string {
	t.Helper()
	frames := make([]capturedFrame, len(mads))
	for i, m := range mads {
		h := bth.BTH{Opcode: bth.OpcodeUDSendOnly, PKey: 0xffff, DestQP: bth.CMQPN, PSN: uint32(i)}
		h.DETH = bth.DETH{QKey: 0x80010000, SrcQP: 1}
		frames[i] = capturedFrame{fuzzFrame(0, 1, 0, v6, false, append(h.AppendHeaders(nil), m.bytes()...)), snap}
	}
	return writeTestPcap(t, "mads.pcap", time.Unix(1700000000, 0), time.Second, frames)
}

// readMADJSON is what read --format json says of a MAD.
type readMADJSON struct {
	Frame int `json:"frame"`
	CM    *struct {
		Message   string  `json:"message"`
		LocalComm *uint64 `json:"local_comm_id"`
	} `json:"cm"`
	MAD *struct {
		BaseVersion  uint64 `json:"base_version"`
		Class        uint64 `json:"class"`
		ClassVersion uint64 `json:"class_version"`
		Method       uint64 `json:"method"`
		Status       uint64 `json:"status"`
		TID          uint64 `json:"transaction_id"`
		Attribute    uint64 `json:"attribute"`
		Modifier     uint64 `json:"attribute_modifier"`
		Truncated    bool   `json:"truncated"`
	} `json:"mad"`
}

// TestReadMADNotCMMessage: a MAD to QP1 is a CM message only with the base
// version, class, method and attribute the CM sends (IBTA vol 1 §12.6:
// Send of REQ to APR, Get, Set or GetResp of ClassPortInfo); every other
// one, class 0x07 included, is shown as a MAD (its header: the JSON mad
// object, "MAD class ... method ... attr ..." and their names in text),
// not as a CM REQ with fields it does not have. The header fields are
// tshark's; tshark names every class-0x07 MAD after its attribute,
// whatever its method.
func TestReadMADNotCMMessage(t *testing.T) {
	for _, v6 := range []bool{false, true} {
		// tshark decodes no MAD in a frame cut short ("Invalid Packet
		// Length"): its fields are those of the whole frames.
		theirs := tsharkMADHeaders(t, writeMADCapture(t, madTestMADs, v6, 0))
		for _, snap := range []int{0, 256} {
			file := writeMADCapture(t, madTestMADs, v6, snap)
			out, errOut, code := runCLI(t, "read", "--format", "json", file)
			if code != ExitOK {
				t.Fatalf("read: exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != len(madTestMADs) {
				t.Fatalf("v6 %v snap %d: %d packets, want %d", v6, snap, len(lines), len(madTestMADs))
			}
			for i, line := range lines {
				var p readMADJSON
				if err := json.Unmarshal([]byte(line), &p); err != nil {
					t.Fatal(err)
				}
				m := madTestMADs[i]
				switch {
				case m.cm && (p.CM == nil || p.MAD != nil):
					t.Errorf("v6 %v snap %d frame %d %+v: cm %v mad %v, want a cm object only", v6, snap, p.Frame, m, p.CM, p.MAD)
				case !m.cm && (p.CM != nil || p.MAD == nil):
					t.Errorf("v6 %v snap %d frame %d %+v: cm %v mad %v, want a mad object only", v6, snap, p.Frame, m, p.CM, p.MAD)
				case m.cm && m.attr == 0x0001 && (p.CM.Message != "ClassPortInfo" || p.CM.LocalComm != nil):
					t.Errorf("v6 %v snap %d frame %d: cm %+v, want ClassPortInfo with no local_comm_id", v6, snap, p.Frame, *p.CM)
				case p.MAD != nil:
					got := []uint64{p.MAD.BaseVersion, p.MAD.Class, p.MAD.ClassVersion, p.MAD.Method, p.MAD.Status, p.MAD.TID, p.MAD.Attribute, p.MAD.Modifier}
					if want := theirs[p.Frame]; fmtUints(got) != fmtUints(want) {
						t.Errorf("v6 %v snap %d frame %d: mad header %v, tshark's %v", v6, snap, p.Frame, got, want)
					}
					if p.MAD.Truncated != (snap != 0) {
						t.Errorf("v6 %v snap %d frame %d: mad truncated %v", v6, snap, p.Frame, p.MAD.Truncated)
					}
				}
			}
		}
	}
	// --opcode cm selects the CM MADs only.
	out, errOut, code := runCLI(t, "read", "--opcode", "cm", "--format", "json", writeMADCapture(t, madTestMADs, false, 0))
	if n := strings.Count(out, `"cm":{`); code != ExitOK || n != 3 || strings.Count(out, "\n") != 3 {
		t.Errorf("read --opcode cm: exit %d, %d CM MADs, want 3 lines with one each:\n%s%s", code, n, out, errOut)
	}
	// Text: the header of a MAD, the CM message of a CM MAD.
	out, errOut, code = runCLI(t, "read", writeMADCapture(t, madTestMADs, false, 256))
	if code != ExitOK {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, want := range []string{
		" CM REQ comm 0xaabbccdd qpn 0x123456 start-psn 6636321 service TCP:4420 [|cm],",
		" CM ClassPortInfo [|cm],",
		" CM ClassPortInfo [|cm],",
		" MAD class 0x07 method 0x03 attr 0x0020 CM Send [|mad],",
		" MAD class 0x07 method 0x01 attr 0x0010 CM Get(REQ) [|mad],",
		" MAD class 0x07 method 0x03 attr 0x0010 CM Send(REQ) base-version 2 [|mad],",
		" MAD class 0x04 method 0x01 attr 0x0012 PerfMgt Get(PortCounters) [|mad],",
		" MAD class 0x07 method 0x81 attr 0x0013 CM GetResp(REP) [|mad],",
		" MAD class 0x07 method 0x03 attr 0x0001 CM Send(ClassPortInfo) [|mad],",
	} {
		if i >= len(lines) || !strings.Contains(lines[i], want) {
			t.Errorf("read line %d does not have %q:\n%s", i+1, want, out)
		}
	}
}

func fmtUints(v []uint64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatUint(x, 10)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// tsharkMADHeaders returns, per frame of file, tshark's MAD header fields:
// base version, class, class version, method, status, transaction ID,
// attribute ID and modifier.
func tsharkMADHeaders(t *testing.T, file string) map[int][]uint64 {
	t.Helper()
	tshark := needTool(t, "tshark")
	args := []string{"-n", "-r", file, "-Y", "infiniband.mad", "-T", "fields", "-e", "frame.number"}
	for _, f := range []string{"baseversion", "mgmtclass", "classversion", "method", "status", "transactionid", "attributeid", "attributemodifier"} {
		args = append(args, "-e", "infiniband.mad."+f)
	}
	out, err := exec.Command(tshark, args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	res := map[int][]uint64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		n, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("tshark line %q", line)
		}
		for _, v := range f[1:] {
			x, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				t.Fatalf("tshark line %q: %v", line, err)
			}
			res[n] = append(res[n], x)
		}
	}
	return res
}

// TestFlowsMADNotCMSetsNothingUp: the REQs of the real rdma_cm capture
// turned into Get(REQ) MADs (method 0x01, ICRC made again) are not CM
// messages, so they set no connection up: no flow has a cm object or is
// paired by CM, where the capture as it was has both.
func TestFlowsMADNotCMSetsNothingUp(t *testing.T) {
	type flowRec struct {
		ID       int             `json:"id"`
		PairedBy string          `json:"paired_by"`
		CM       json.RawMessage `json:"cm"`
	}
	flowsOf := func(file string) []flowRec {
		out, errOut, code := runCLI(t, "flows", "--format", "json", "--sort", "id", file)
		if code != ExitOK {
			t.Fatalf("flows %s: exit %d: %s", file, code, errOut)
		}
		var recs []flowRec
		if err := json.Unmarshal([]byte(out), &recs); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	whole := filepath.Join(repoRoot, "testdata", "pcaps", "real", "linlinw5_rdma_cm.pcap")
	setUp := 0
	for _, f := range flowsOf(whole) {
		if f.PairedBy == "cm" && string(f.CM) != "null" {
			setUp++
		}
	}
	if setUp == 0 {
		t.Fatal("no flow of the capture as it is was set up by CM")
	}
	path := filepath.Join(t.TempDir(), "get_req.pcap")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewPcapWriter(out, capture.LinkTypeEthernet, 0)
	changed := 0
	for _, rec := range readFrames(t, whole) {
		if err != nil {
			break
		}
		if len(rec.Data) < cmMADOffset+bth.MADLen {
			err = w.WritePacket(rec.Timestamp, rec.Data, rec.OrigLen)
			continue
		}
		mad := rec.Data[cmMADOffset:]
		if mad[1] == bth.MgmtClassCM && mad[3] == bth.MethodSend && binary.BigEndian.Uint16(mad[16:]) == uint16(bth.CMAttrREQ) {
			mad[3] = 0x01 // Get
			icrc, ierr := bth.ICRCv2(rec.Data[14:])
			if ierr != nil {
				t.Fatal(ierr)
			}
			binary.LittleEndian.PutUint32(rec.Data[len(rec.Data)-bth.ICRCLen:], icrc)
			changed++
		}
		err = w.WritePacket(rec.Timestamp, rec.Data, rec.OrigLen)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if changed == 0 {
		t.Fatal("no CM REQ in the capture")
	}
	for _, f := range flowsOf(path) {
		if f.PairedBy == "cm" || string(f.CM) != "null" {
			t.Errorf("flow %d: paired by %q, cm %s: set up by a MAD that is no CM message", f.ID, f.PairedBy, f.CM)
		}
	}
	// And read says of them what they are.
	text, errOut, code := runCLI(t, "read", "--opcode", "cm", path)
	if code != ExitOK {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	if strings.Contains(text, " CM REQ") {
		t.Errorf("read --opcode cm shows a Get(REQ) as a CM REQ:\n%s", text)
	}
}

// TestReportMADCutNotCM: capture_health's cm_mads_cut counts the QP1
// datagrams the snap length cut before their MAD header (which may be CM)
// and CM REQs cut before their service ID; a MAD whose header was
// captured and is not a CM message (a PerfMgt Get, a class-0x07 Get(REQ))
// cannot set a connection up, cut or not, and is not counted: at 256
// bytes, a snap length that keeps what CM needs, every MAD is cut.
func TestReportMADCutNotCM(t *testing.T) {
	// cmMADsCut is the capture_health finding's cm_mads_cut count and
	// the detail of the finding that carries it.
	cmMADsCut := func(file string) (float64, string) {
		out, errOut, code := runCLI(t, "report", "--fail-on", "never", "--format", "json", file)
		if code != ExitOK {
			t.Fatalf("report: exit %d: %s", code, errOut)
		}
		var rep struct {
			Findings []struct {
				Kind     string `json:"kind"`
				Detail   string `json:"detail"`
				Evidence struct {
					Counts map[string]float64 `json:"counts"`
				} `json:"evidence"`
			} `json:"findings"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		n, detail := 0.0, ""
		for _, f := range rep.Findings {
			if f.Kind == "capture_health" && f.Evidence.Counts["cm_mads_cut"] > 0 {
				n, detail = f.Evidence.Counts["cm_mads_cut"], f.Detail
			}
		}
		return n, detail
	}
	notCM := []testMAD{{1, 4, 0x01, 0x0012, false}, {1, 7, 0x01, 0x0010, false}, {1, 3, 0x81, 0x0011, false}}
	if n, _ := cmMADsCut(writeMADCapture(t, notCM, false, 256)); n != 0 {
		t.Errorf("MADs that are no CM messages, cut to 256 bytes: cm_mads_cut %v, want 0", n)
	}
	// Cut inside the MAD header (Ethernet, IPv4, UDP, BTH, DETH: 62 bytes):
	// whether they are CM is unknown.
	// The detail says what was cut: their MAD header (CM has no header
	// of its own; the MAD's says whether a datagram is a CM message).
	n, detail := cmMADsCut(writeMADCapture(t, notCM, false, 70))
	if n != float64(len(notCM)) {
		t.Errorf("MADs cut inside their header: cm_mads_cut %v, want %d", n, len(notCM))
	}
	if want := "3 management datagrams on QP1 were cut before the end of their MAD header"; !strings.Contains(detail, want) {
		t.Errorf("MADs cut inside their header: detail %q, want it to say %q", detail, want)
	}
}
