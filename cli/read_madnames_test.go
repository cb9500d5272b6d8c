package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// madNameJSON is what read --format json says of a MAD's names.
type madNameJSON struct {
	Frame int `json:"frame"`
	CM    *struct {
		Message    string  `json:"message"`
		Method     *uint64 `json:"method"`
		MethodName string  `json:"method_name"`
	} `json:"cm"`
	MAD *struct {
		Class         uint64  `json:"class"`
		ClassName     *string `json:"class_name"`
		Method        uint64  `json:"method"`
		MethodName    *string `json:"method_name"`
		Attribute     uint64  `json:"attribute"`
		AttributeName *string `json:"attribute_name"`
	} `json:"mad"`
}

// tsharkMADNames is, per frame, tshark's name of the MAD's method (the
// Method field of -V, "" for Unknown), of its attribute (from the Info
// column: "SubnGet(NodeInfo)", "PERF (PortCounters)", "(Unknown
// SubManagement Method!)NodeInfo)"; "" when it has
// none) and the class label its Info column starts with (SubnGet,
// SubnAdmGet, PERF, BM, DEV_MGT, CM, SNMP, VENDOR, APP, RESERVED).
type tsharkMADName struct{ method, attr, info string }

func tsharkMADNames(t *testing.T, file string) map[int]tsharkMADName {
	t.Helper()
	tshark := needTool(t, "tshark")
	res := map[int]tsharkMADName{}
	out, err := exec.Command(tshark, "-n", "-r", file, "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	attrRE := regexp.MustCompile(`[()]([A-Za-z_]+)\)\s*$`)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 2)
		n, _ := strconv.Atoi(f[0])
		info := strings.TrimPrefix(f[1], "UD Send Only QP=0x000001 ")
		r := tsharkMADName{info: info}
		if m := attrRE.FindStringSubmatch(info); m != nil {
			r.attr = m[1]
		}
		res[n] = r
	}
	out, err = exec.Command(tshark, "-n", "-r", file, "-V").Output()
	if err != nil {
		t.Fatalf("tshark -V: %v", err)
	}
	frameRE := regexp.MustCompile(`^Frame (\d+):`)
	methodRE := regexp.MustCompile(`^\s+Method: (\w+)\(\) \(0x`)
	frame := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := frameRE.FindStringSubmatch(sc.Text()); m != nil {
			frame, _ = strconv.Atoi(m[1])
		} else if m := methodRE.FindStringSubmatch(sc.Text()); m != nil {
			r := res[frame]
			r.method = m[1]
			res[frame] = r
		}
	}
	return res
}

// TestReadMADNames: a MAD to QP1 that is not a CM message is named, its
// numbers kept: the JSON mad object adds class_name, method_name and
// attribute_name (the last two when known), the text line its class and
// Method(Attribute), -v each name after its number. The names are
// tshark's where it gives them, but for the differences bth's madnames.go
// documents: tshark names the subnet administration methods for every
// class, the common attributes (ClassPortInfo, Notice, InformInfo) for
// the subnet administration and performance classes only, not the
// performance sampling attributes, and calls class 0x21 (congestion
// control, IBTA vol 1 Annex A10) APP.
func TestReadMADNames(t *testing.T) {
	classes := []uint8{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0f, 0x10, 0x21, 0x2f, 0x30, 0x4f, 0x50, 0x81, 0x82}
	methods := []uint8{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x12, 0x13, 0x14, 0x15, 0x81, 0x86, 0x92, 0x94, 0x95}
	attrs := []uint16{0x0001, 0x0002, 0x0003, 0x0010, 0x0011, 0x0012, 0x0013, 0x0015, 0x001c, 0x001d, 0x0020, 0x0031, 0x0035, 0x0038, 0x00f3, 0xff00}
	var mads []testMAD
	for _, c := range classes {
		for _, m := range methods {
			for _, a := range attrs {
				mads = append(mads, testMAD{1, c, m, a, false})
			}
		}
	}
	file := writeMADCapture(t, mads, false, 0)
	theirs := tsharkMADNames(t, file)
	out, errOut, code := runCLI(t, "read", "--format", "json", file)
	if code != ExitOK {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	// tshark's Info labels of the classes.
	// Subnet management and administration MADs of a method tshark does
	// not know start "(Unknown SubManagement Method!)" and
	// "(Unknown SubAdministration Method!)".
	infoClass := map[string]string{"SubnAdm": "SubnAdm", "Subn": "SubnMgt",
		"(Unknown SubAdministration": "SubnAdm", "(Unknown SubManagement": "SubnMgt", "PERF": "PerfMgt", "BM": "BM", "DEV_MGT": "DevMgt",
		"CM": "CM", "SNMP": "SNMP", "VENDOR": "Vendor", "APP": "Application", "RESERVED": "Reserved"}
	saMethods := map[string]bool{"GetTable": true, "GetTableResp": true, "GetTraceTable": true, "GetMulti": true, "GetMultiResp": true, "Delete": true, "DeleteResp": true}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	names := map[int]string{} // the text line's names, from the JSON ones
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(mads) {
		t.Fatalf("%d packets, want %d", len(lines), len(mads))
	}
	nMAD := 0
	for _, line := range lines {
		var p madNameJSON
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		if p.MAD == nil {
			continue // a CM message
		}
		nMAD++
		m, th := p.MAD, theirs[p.Frame]
		where := fmt.Sprintf("frame %d class 0x%02x method 0x%02x attr 0x%04x (tshark %q, method %q)", p.Frame, m.Class, m.Method, m.Attribute, th.info, th.method)
		if m.ClassName == nil {
			t.Fatalf("%s: no class_name:\n%s", where, line)
		}
		cls := *m.ClassName
		want := ""
		for label := range infoClass {
			if strings.HasPrefix(th.info, label) && len(label) > len(want) {
				want = label
			}
		}
		if want = infoClass[want]; m.Class == 0x81 && want == "SubnMgt" {
			want = "SubnMgtDR"
		} else if m.Class == 0x21 && want == "Application" {
			want = "CongestionControl"
		}
		if cls != want {
			t.Errorf("%s: class_name %q, want %q", where, cls, want)
		}
		switch method := str(m.MethodName); {
		case method == th.method:
		case method == "" && saMethods[th.method] && m.Class != 0x03:
		default:
			t.Errorf("%s: method_name %q, tshark's %q", where, method, th.method)
		}
		attr := str(m.AttributeName)
		switch {
		case m.Class == 0x07:
			// tshark's CM names are long ones (ConnectRequest); the
			// cm object's message names are kept.
			if want := map[uint64]string{0x0001: "ClassPortInfo", 0x0010: "REQ", 0x0011: "MRA", 0x0012: "REJ", 0x0013: "REP", 0x0015: "DREQ"}[m.Attribute]; attr != want {
				t.Errorf("%s: attribute_name %q, want %q", where, attr, want)
			}
		case attr == th.attr:
		case th.attr == "" && m.Class != 0x01 && m.Class != 0x81 && m.Attribute <= 0x0003:
			// common attributes of every general services class
		case th.attr == "" && m.Class == 0x04 && (m.Attribute == 0x0010 || m.Attribute == 0x0011):
			// PortSamplesControl, PortSamplesResult
		default:
			t.Errorf("%s: attribute_name %q, tshark's %q", where, attr, th.attr)
		}
		if (m.MethodName != nil && *m.MethodName == "") || (m.AttributeName != nil && *m.AttributeName == "") {
			t.Errorf("%s: an empty name is given, not left out:\n%s", where, line)
		}
		s := cls
		switch method := str(m.MethodName); {
		case method != "" && attr != "":
			s += " " + method + "(" + attr + ")"
		case method != "":
			s += " " + method
		case attr != "":
			s += " (" + attr + ")"
		}
		names[p.Frame] = fmt.Sprintf(" MAD class 0x%02x method 0x%02x attr 0x%04x %s,", m.Class, m.Method, m.Attribute, s)
	}
	if nMAD < len(mads)-10 {
		t.Fatalf("%d MADs of %d", nMAD, len(mads))
	}
	text, errOut, code := runCLI(t, "read", file)
	if code != ExitOK {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if want, ok := names[i+1]; ok && !strings.Contains(line, want) {
			t.Errorf("read line %d: %q does not have %q", i+1, line, want)
		}
	}
	for _, want := range []string{
		" MAD class 0x04 method 0x01 attr 0x0012 PerfMgt Get(PortCounters),",
		" MAD class 0x03 method 0x92 attr 0x0035 SubnAdm GetTableResp(PathRecord),",
		" MAD class 0x81 method 0x81 attr 0x0015 SubnMgtDR GetResp(PortInfo),",
		" MAD class 0x09 method 0x04 attr 0xff00 Vendor,",
		" MAD class 0x05 method 0x04 attr 0x0001 BM (ClassPortInfo),",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("read does not show %q", want)
		}
	}
	// -v: each name after its number.
	verbose, errOut, code := runCLI(t, "read", "-v", writeMADCapture(t, []testMAD{{1, 3, 0x12, 0x0035, false}, {1, 0x50, 0x04, 0xff00, false}}, false, 0))
	if code != ExitOK {
		t.Fatalf("read -v: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"MAD base_version 1 class 0x03 (SubnAdm) class_version 2 method 0x12 (GetTable) status 0x0004 tid 0x1122334455667788 attribute 0x0035 (PathRecord) modifier 0x0a0b0c0d\n",
		"MAD base_version 1 class 0x50 (Reserved) class_version 2 method 0x04 status 0x0004 tid 0x1122334455667788 attribute 0xff00 modifier 0x0a0b0c0d\n",
	} {
		if !strings.Contains(verbose, want) {
			t.Errorf("read -v does not show %q:\n%s", want, verbose)
		}
	}
}

// TestReadCMMethod: read's cm object has the MAD's method, number and
// name, as the mad object has: a Get, a Set and a GetResp of
// ClassPortInfo are told apart; -v names it after its number. tshark's
// method field is the oracle.
func TestReadCMMethod(t *testing.T) {
	mads := []testMAD{
		{1, 7, 0x03, 0x0010, true}, // Send(REQ)
		{1, 7, 0x01, 0x0001, true}, // Get(ClassPortInfo)
		{1, 7, 0x02, 0x0001, true}, // Set(ClassPortInfo)
		{1, 7, 0x81, 0x0001, true}, // GetResp(ClassPortInfo)
	}
	file := writeMADCapture(t, mads, false, 0)
	theirs := tsharkMADNames(t, file)
	out, errOut, code := runCLI(t, "read", "--format", "json", file)
	if code != ExitOK {
		t.Fatalf("read: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(mads) {
		t.Fatalf("%d packets, want %d", len(lines), len(mads))
	}
	for i, line := range lines {
		var p madNameJSON
		if err := json.Unmarshal([]byte(line), &p); err != nil {
			t.Fatal(err)
		}
		if p.CM == nil {
			t.Fatalf("frame %d: no cm object:\n%s", i+1, line)
		}
		if p.CM.Method == nil || *p.CM.Method != uint64(mads[i].method) || p.CM.MethodName != theirs[p.Frame].method {
			t.Errorf("frame %d: cm method %v %q, want %d %q:\n%s", p.Frame, p.CM.Method, p.CM.MethodName, mads[i].method, theirs[p.Frame].method, line)
		}
	}
	verbose, errOut, code := runCLI(t, "read", "-v", file)
	if code != ExitOK {
		t.Fatalf("read -v: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"CM MAD REQ class 0x07 method 0x03 (Send) tid ", "CM MAD ClassPortInfo class 0x07 method 0x81 (GetResp) tid "} {
		if !strings.Contains(verbose, want) {
			t.Errorf("read -v does not show %q:\n%s", want, verbose)
		}
	}
}
