package gen

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// validator checks a decoded scenario, fills its defaults and reports the
// first problem with the line it sits on.
type validator struct {
	file string
	root *yaml.Node
	path []any // string keys and int indexes
	err  error
}

func (v *validator) at(elems ...any) func() {
	n := len(v.path)
	v.path = append(v.path, elems...)
	return func() { v.path = v.path[:n] }
}

// failf records the first error at the current path plus key (if not "").
func (v *validator) failf(key string, format string, args ...any) {
	if v.err != nil {
		return
	}
	p := v.path
	if key != "" {
		p = append(p[:len(p):len(p)], key)
	}
	v.err = &ParseError{File: v.file, Line: lineOf(v.root, p), Path: pathString(p), Msg: fmt.Sprintf(format, args...)}
}

func pathString(p []any) string {
	var b strings.Builder
	for _, e := range p {
		switch e := e.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(e)
		case int:
			fmt.Fprintf(&b, "[%d]", e)
		}
	}
	return b.String()
}

// lineOf finds the line of the node at path, or of the deepest node found.
func lineOf(n *yaml.Node, path []any) int {
	line := n.Line
	for _, e := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch e := e.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == e {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			if n.Kind != yaml.SequenceNode || e >= len(n.Content) {
				return line
			}
			n = n.Content[e]
			line = n.Line
		}
	}
	return line
}

func oneOf(s string, allowed ...string) bool {
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}

func ecnValue(s string) (uint8, bool) {
	switch s {
	case "not_ect", "non_ect":
		return 0, true
	case "ect1":
		return 1, true
	case "ect0":
		return 2, true
	case "ce":
		return 3, true
	}
	return 0, false
}

func intp(i int) *int { return &i }

// Link type names and their pcap LINKTYPE values.
var linkTypes = []struct {
	name string
	lt   uint32
}{{"ethernet", 1}, {"raw", 101}, {"sll", 113}, {"sll2", 276}}

func linkType(name string) (uint32, bool) {
	for _, l := range linkTypes {
		if l.name == name {
			return l.lt, true
		}
	}
	return 0, false
}

func (v *validator) scenario(s *Scenario) {
	if s.Name == "" {
		s.Name = "scenario"
	}
	if s.Start.IsZero() {
		s.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if s.Format == "" {
		s.Format = "pcap"
	}
	if !oneOf(s.Format, "pcap", "pcap-ns", "pcap-be", "pcap-ns-be", "pcapng", "pcapng-be") {
		v.failf("format", "unknown format %q (want pcap, pcap-ns, pcap-be, pcap-ns-be, pcapng or pcapng-be)", s.Format)
	}
	if s.Link == "" {
		s.Link = "ethernet"
	}
	if _, ok := linkType(s.Link); !ok {
		v.failf("link", "unknown link %q (want ethernet, raw, sll or sll2)", s.Link)
	}
	v.snaplen("snaplen", s.Snaplen)
	if s.LinkGbps == 0 {
		s.LinkGbps = 400
	}
	if s.LinkGbps < 0 {
		v.failf("link_gbps", "must be positive")
	}
	if s.DSCP == nil {
		s.DSCP = intp(26)
	}
	v.dscp("dscp", *s.DSCP)
	if s.CNPDSCP == nil {
		s.CNPDSCP = intp(48)
	}
	v.dscp("cnp_dscp", *s.CNPDSCP)
	if s.CNPPCP != nil && (*s.CNPPCP < 0 || *s.CNPPCP > 7) {
		v.failf("cnp_pcp", "PCP %d out of range 0..7", *s.CNPPCP)
	}
	if s.ECN == "" {
		s.ECN = "ect0"
	}
	if _, ok := ecnValue(s.ECN); !ok {
		v.failf("ecn", "unknown ECN %q (want not_ect, ect0, ect1 or ce)", s.ECN)
	}
	v.encaps("encap", s.Encap)
	if len(s.Interfaces) > 0 && !strings.HasPrefix(s.Format, "pcapng") {
		v.failf("interfaces", "several interfaces need format pcapng")
	}
	if len(s.Interfaces) == 0 {
		v.linkEncap(s.Link, s.Encap)
		s.Interfaces = []Interface{{Name: "eth0", Link: s.Link, Encap: s.Encap}}
	}
	names := map[string]bool{}
	for i := range s.Interfaces {
		done := v.at("interfaces", i)
		it := &s.Interfaces[i]
		if it.Name == "" {
			it.Name = "eth" + strconv.Itoa(i)
		}
		if names[it.Name] {
			v.failf("name", "duplicate interface %q", it.Name)
		}
		names[it.Name] = true
		if it.Link == "" {
			it.Link = s.Link
		}
		if _, ok := linkType(it.Link); !ok {
			v.failf("link", "unknown link %q (want ethernet, raw, sll or sll2)", it.Link)
		}
		if it.Snaplen == nil {
			it.Snaplen = intp(s.Snaplen)
		}
		v.snaplen("snaplen", *it.Snaplen)
		if it.Encap == nil {
			it.Encap = s.Encap
		} else {
			v.encaps("encap", it.Encap)
		}
		v.linkEncap(it.Link, it.Encap)
		done()
	}
	iface := func(key, name string) {
		if name != "" && !names[name] {
			v.failf(key, "no interface named %q", name)
		}
	}
	flowNames := map[string]bool{}
	for i := range s.Flows {
		done := v.at("flows", i)
		f := &s.Flows[i]
		if f.Name == "" {
			f.Name = "flow" + strconv.Itoa(i+1)
		}
		if flowNames[f.Name] {
			v.failf("name", "duplicate flow name %q", f.Name)
		}
		flowNames[f.Name] = true
		v.flow(s, i, f)
		iface("interface", f.Interface)
		if f.RoCE == "v1" {
			for _, it := range s.Interfaces {
				if (f.Interface == "" || f.Interface == it.Name) && it.Link == "raw" && !hasTunnel(it.Encap) {
					v.failf("roce", "RoCEv1 has no IP header: it cannot be captured on link raw")
				}
				if f.Interface == "" {
					break
				}
			}
		}
		done()
	}
	for i := range s.CM {
		done := v.at("cm", i)
		c := &s.CM[i]
		if c.Name == "" {
			c.Name = "cm" + strconv.Itoa(i+1)
		}
		v.addrPair("client", c.Client, "server", c.Server)
		if c.Port <= 0 || c.Port > 65535 {
			v.failf("port", "service port %d out of range 1..65535", c.Port)
		}
		if c.ClientPort == 0 {
			c.ClientPort = 40000 + i
		}
		v.qpn("client_qpn", c.ClientQPN)
		v.qpn("server_qpn", c.ServerQPN)
		v.psn("client_psn", c.ClientPSN)
		v.psn("server_psn", c.ServerPSN)
		if c.Disconnect == nil {
			t := true
			c.Disconnect = &t
		}
		if c.DisconnectUS == 0 {
			c.DisconnectUS = 1000
		}
		v.nonNeg("at_us", c.AtUS)
		iface("interface", c.Interface)
		done()
	}
	for i := range s.TCP {
		done := v.at("tcp", i)
		t := &s.TCP[i]
		if t.Name == "" {
			t.Name = "tcp" + strconv.Itoa(i+1)
		}
		v.addrPair("client", t.Client, "server", t.Server)
		if t.Port <= 0 || t.Port > 65535 {
			v.failf("port", "port %d out of range 1..65535", t.Port)
		}
		if t.ClientPort == 0 {
			t.ClientPort = 50000 + i
		}
		if t.MSS == 0 {
			t.MSS = 1448
		}
		if t.MSS < 64 || t.MSS > 9000 {
			v.failf("mss", "mss %d out of range 64..9000", t.MSS)
		}
		if t.Bytes < 0 || t.RespBytes < 0 {
			v.failf("bytes", "negative byte count")
		}
		v.nonNeg("at_us", t.AtUS)
		iface("interface", t.Interface)
		done()
	}
	for i := range s.PFC {
		done := v.at("pfc", i)
		p := &s.PFC[i]
		if p.Count == 0 {
			p.Count = 1
		}
		if p.Quanta == nil {
			p.Quanta = new(int)
			*p.Quanta = 65535
		}
		if q := *p.Quanta; q < 0 || q > 65535 {
			v.failf("quanta", "quanta %d out of range 0..65535", q)
		}
		if len(p.Priorities) == 0 {
			v.failf("priorities", "give the paused priorities, e.g. [3]")
		}
		for _, pr := range p.Priorities {
			if pr < 0 || pr > 7 {
				v.failf("priorities", "priority %d out of range 0..7", pr)
			}
		}
		if p.Src == "" {
			p.Src = "02:00:00:00:0f:01"
		}
		if _, err := parseMAC(p.Src); err != nil {
			v.failf("src_mac", "%v", err)
		}
		v.nonNeg("at_us", p.AtUS)
		iface("interface", p.Interface)
		for _, it := range s.Interfaces {
			if (p.Interface == "" || p.Interface == it.Name) && it.Link != "ethernet" && !hasTunnel(it.Encap) {
				v.failf("interface", "pause frames need an Ethernet link (interface %s is %s)", it.Name, it.Link)
			}
			if p.Interface == "" {
				break
			}
		}
		done()
	}
	for i := range s.Malformed {
		done := v.at("malformed", i)
		m := &s.Malformed[i]
		if !oneOf(m.Kind, malformedKinds...) {
			v.failf("kind", "unknown malformed kind %q (want one of %s)", m.Kind, strings.Join(malformedKinds, ", "))
		}
		if m.Count == 0 {
			m.Count = 1
		}
		if m.Count < 0 {
			v.failf("count", "negative count")
		}
		if !m.Src.IsValid() {
			m.Src = netip.MustParseAddr("10.255.0.1")
		}
		if !m.Dst.IsValid() {
			m.Dst = netip.MustParseAddr("10.255.0.2")
		}
		v.addrPair("src", m.Src, "dst", m.Dst)
		if m.Bytes == 0 {
			m.Bytes = 40
		}
		if m.Bytes < 0 || m.Bytes > 9000 {
			v.failf("bytes", "bytes %d out of range 1..9000", m.Bytes)
		}
		v.nonNeg("at_us", m.AtUS)
		iface("interface", m.Interface)
		done()
	}
	if s.CutOff != nil && s.CutOff.Bytes <= 0 {
		v.failf("cut_off", "bytes must be positive")
	}
}

var malformedKinds = []string{"garbage_after_4791", "short_bth", "bad_icrc", "reserved_opcode", "bad_udp_len"}

func hasTunnel(es []Encap) bool {
	for _, e := range es {
		if e.isTunnel() {
			return true
		}
	}
	return false
}

func (e *Encap) isTunnel() bool {
	return e.ERSPAN1 != nil || e.ERSPAN2 != nil || e.ERSPAN3 != nil || e.GRETEB != nil || e.VXLAN != nil
}

func (v *validator) snaplen(key string, n int) {
	if n != 0 && (n < 64 || n > 262144) {
		v.failf(key, "snaplen %d: use 0 for whole frames or 64..262144", n)
	}
}

func (v *validator) dscp(key string, d int) {
	if d < 0 || d > 63 {
		v.failf(key, "DSCP %d out of range 0..63", d)
	}
}

// mirrorDup checks a flow's mirror_dup.
func (v *validator) mirrorDup(m *MirrorDup) {
	done := v.at("mirror_dup")
	defer done()
	v.nonNeg("delay_us", m.DelayUS)
	if m.TTL != nil && (*m.TTL < 1 || *m.TTL > 255) {
		v.failf("ttl", "TTL %d out of range 1..255", *m.TTL)
	}
	if m.DSCP != nil {
		v.dscp("dscp", *m.DSCP)
	}
	if _, ok := ecnValue(m.ECN); m.ECN != "" && !ok {
		v.failf("ecn", "unknown ECN %q (want not_ect, ect0, ect1 or ce)", m.ECN)
	}
}

func (v *validator) nonNeg(key string, f float64) {
	if f < 0 {
		v.failf(key, "must not be negative")
	}
}

func (v *validator) qpn(key string, q uint32) {
	if q > 0xffffff {
		v.failf(key, "QPN %#x does not fit 24 bits", q)
	}
}

func (v *validator) psn(key string, p uint32) {
	if p > 0xffffff {
		v.failf(key, "PSN %#x does not fit 24 bits", p)
	}
}

func (v *validator) addrPair(k1 string, a1 netip.Addr, k2 string, a2 netip.Addr) {
	switch {
	case !a1.IsValid():
		v.failf(k1, "missing IP address")
	case !a2.IsValid():
		v.failf(k2, "missing IP address")
	case a1.Is4() != a2.Is4():
		v.failf(k2, "%s is IPv%d but %s is IPv%d", k1, ipVer(a1), k2, ipVer(a2))
	}
}

func ipVer(a netip.Addr) int {
	if a.Is4() {
		return 4
	}
	return 6
}

func (v *validator) encaps(key string, es []Encap) {
	for i := range es {
		done := v.at(key, i)
		e := &es[i]
		n := 0
		if e.VLAN != nil {
			n++
			if *e.VLAN < 0 || *e.VLAN > 4095 {
				v.failf("vlan", "VLAN ID %d out of range 0..4095", *e.VLAN)
			}
		}
		if e.PCP < 0 || e.PCP > 7 {
			v.failf("pcp", "PCP %d out of range 0..7", e.PCP)
		}
		if e.QinQ != nil {
			n++
			if len(e.QinQ) != 2 {
				v.failf("qinq", "want [outer S-VLAN, inner C-VLAN]")
			}
			for _, id := range e.QinQ {
				if id < 0 || id > 4095 {
					v.failf("qinq", "VLAN ID %d out of range 0..4095", id)
				}
			}
		}
		for _, t := range []struct {
			key string
			t   *Tunnel
		}{{"erspan1", e.ERSPAN1}, {"erspan2", e.ERSPAN2}, {"erspan3", e.ERSPAN3}, {"gre_teb", e.GRETEB}, {"vxlan", e.VXLAN}} {
			if t.t == nil {
				continue
			}
			n++
			tn := t.t
			if !tn.Src.IsValid() {
				tn.Src = netip.MustParseAddr(map[bool]string{false: "192.0.2.1", true: "2001:db8:ffff::1"}[tn.IPv6])
			}
			if !tn.Dst.IsValid() {
				tn.Dst = netip.MustParseAddr(map[bool]string{false: "192.0.2.2", true: "2001:db8:ffff::2"}[tn.IPv6])
			}
			done2 := v.at(t.key)
			v.addrPair("src", tn.Src, "dst", tn.Dst)
			if tn.Session < 0 || tn.Session > 1023 {
				v.failf("session", "ERSPAN session %d out of range 0..1023", tn.Session)
			}
			if tn.Index < 0 || tn.Index > 0xfffff {
				v.failf("index", "ERSPAN index out of range")
			}
			if tn.HWID < 0 || tn.HWID > 63 {
				v.failf("hw_id", "hardware ID %d out of range 0..63", tn.HWID)
			}
			if tn.VNI < 0 || tn.VNI > 0xffffff {
				v.failf("vni", "VNI out of range")
			}
			done2()
		}
		if n != 1 {
			v.failf("", "each encap entry is exactly one of vlan, qinq, erspan1, erspan2, erspan3, gre_teb, vxlan")
		}
		done()
	}
}

// linkEncap checks that tags sit where there is an Ethernet header.
func (v *validator) linkEncap(link string, es []Encap) {
	if link == "ethernet" {
		return
	}
	for _, e := range es {
		if e.isTunnel() {
			return
		}
		v.failf("encap", "a VLAN tag outside every tunnel needs link ethernet (link is %s)", link)
		return
	}
}

func (v *validator) flow(s *Scenario, idx int, f *Flow) {
	if f.Transport == "" {
		f.Transport = "RC"
	}
	f.Transport = strings.ToUpper(f.Transport)
	if !oneOf(f.Transport, "RC", "UC", "UD", "XRC", "RD") {
		v.failf("transport", "unknown transport %q (want RC, UC, UD, XRC or RD)", f.Transport)
	}
	if f.RoCE == "" {
		f.RoCE = "v2"
	}
	if !oneOf(f.RoCE, "v1", "v2") {
		v.failf("roce", "roce is v1 or v2, not %q", f.RoCE)
	}
	v.addrPair("src", f.Src, "dst", f.Dst)
	v.qpn("src_qpn", f.SrcQPN)
	v.qpn("dest_qpn", f.DestQPN)
	v.psn("start_psn", f.StartPSN)
	if f.DestQPN == 0 && f.Transport != "UD" {
		v.failf("dest_qpn", "give the responder's QPN")
	}
	if f.PKey == nil {
		p := uint16(0xffff)
		f.PKey = &p
	}
	if f.MTU == 0 {
		f.MTU = 4096
	}
	if !oneOf(strconv.Itoa(f.MTU), "256", "512", "1024", "2048", "4096") {
		v.failf("mtu", "MTU %d: want 256, 512, 1024, 2048 or 4096", f.MTU)
	}
	if f.UDPSport == 0 {
		f.UDPSport = 0xc000 | int(f.SrcQPN&0x3fff)
	}
	if f.UDPSport < 0 || f.UDPSport > 65535 {
		v.failf("udp_sport", "port %d out of range", f.UDPSport)
	}
	if f.DSCP == nil {
		f.DSCP = intp(*s.DSCP)
	}
	v.dscp("dscp", *f.DSCP)
	if f.ECN == "" {
		f.ECN = s.ECN
	}
	if _, ok := ecnValue(f.ECN); !ok {
		v.failf("ecn", "unknown ECN %q (want not_ect, ect0, ect1 or ce)", f.ECN)
	}
	if f.QKey == 0 {
		f.QKey = 0x11111111
	}
	v.qpn("xrc_srq", f.XRCSRQ)
	v.qpn("ee_context", f.EECnxt)
	if f.RTTUS == 0 {
		f.RTTUS = 4
	}
	if f.TimeoutUS == 0 {
		f.TimeoutUS = 4096
	}
	v.nonNeg("start_us", f.StartUS)
	v.nonNeg("rtt_us", f.RTTUS)
	v.nonNeg("timeout_us", f.TimeoutUS)
	if f.AckEvery < 0 {
		v.failf("ack_every", "must not be negative")
	}
	if f.CNPOpcode == nil {
		f.CNPOpcode = intp(0x81)
	}
	v.cnpOpcode("cnp_opcode", *f.CNPOpcode)
	if m := f.MirrorDup; m != nil {
		v.mirrorDup(m)
	}
	msgs := 0
	for i := range f.Ops {
		done := v.at("ops", i)
		op := &f.Ops[i]
		if op.Count == 0 {
			op.Count = 1
		}
		if op.Count < 0 {
			v.failf("count", "negative count")
		}
		if op.GapUS == 0 {
			op.GapUS = 1
		}
		v.nonNeg("gap_us", op.GapUS)
		if op.Bytes < 0 || op.Bytes > 1<<31-1 {
			v.failf("bytes", "bytes %d out of range 0..2^31-1", op.Bytes)
		}
		switch op.Op {
		case "write", "send":
			if op.Imm && op.Inv {
				v.failf("inv", "a message has either immediate data or invalidate, not both")
			}
			if op.Op == "write" && op.Inv {
				v.failf("inv", "only SEND has invalidate")
			}
			if op.Inv && !oneOf(f.Transport, "RC", "XRC") {
				v.failf("inv", "SEND with invalidate is RC or XRC only")
			}
			if op.Op == "write" && f.Transport == "UD" {
				v.failf("op", "UD has SEND only")
			}
			if f.Transport == "UD" && op.Bytes > f.MTU {
				v.failf("bytes", "a UD message fits one packet: %d > MTU %d", op.Bytes, f.MTU)
			}
		case "read", "cmp_swap", "fetch_add":
			if oneOf(f.Transport, "UC", "UD") {
				v.failf("op", "%s is not allowed on %s", op.Op, f.Transport)
			}
			if op.Imm || op.Inv {
				v.failf("op", "%s has no immediate data or invalidate", op.Op)
			}
		default:
			v.failf("op", "unknown op %q (want write, send, read, cmp_swap or fetch_add)", op.Op)
		}
		msgs += op.Count
		done()
	}
	for i := range f.Events {
		done := v.at("events", i)
		v.event(f, &f.Events[i], msgs)
		if v.err == nil {
			v.eventOffsets(&f.Events[i], msgPackets(f, f.Events[i].AtMsg))
		}
		done()
	}
}

// msgPackets is the number of data packets of message at (1-based): the
// requester's packets of a WRITE or SEND, the responses of a READ, 1 for an
// atomic.
func msgPackets(f *Flow, at int) int {
	for _, op := range f.Ops {
		if at <= op.Count {
			if op.Op == "cmp_swap" || op.Op == "fetch_add" {
				return 1
			}
			return npkts(op.Bytes, f.MTU)
		}
		at -= op.Count
	}
	return 0
}

// eventOffsets checks that an event's first packet is inside its message.
func (v *validator) eventOffsets(e *Event, n int) {
	check := func(key string, off int) {
		if off >= n {
			v.failf(key, "psn_offset %d: message %d has packets 0..%d", off, e.AtMsg, n-1)
		}
	}
	for _, d := range []struct {
		key string
		d   *Drop
	}{{"fabric_drop", e.FabricDrop}, {"timeout_drop", e.TimeoutDrop}, {"mirror_drop", e.MirrorDrop}} {
		if d.d != nil && d.d.PSNOffset != nil {
			check(d.key, *d.d.PSNOffset)
		}
	}
	if e.CEMark != nil {
		check("ce_mark", e.CEMark.PSNOffset)
	}
	if e.FECN != nil {
		check("fecn", e.FECN.PSNOffset)
	}
}

func (v *validator) cnpOpcode(key string, op int) {
	if op != 0x80 && op != 0x81 {
		v.failf(key, "CNP opcode %#x: want 0x81 (ConnectX) or 0x80", op)
	}
}

// nakCodes maps NAK names to codes (IBTA vol 1 Table 43).
var nakCodes = []struct {
	name string
	code uint8
}{
	{"psn_seq_err", 0}, {"invalid_request", 1}, {"remote_access_err", 2},
	{"remote_op_err", 3}, {"invalid_rd_request", 4},
}

func nakName(code uint8) string {
	for _, n := range nakCodes {
		if n.code == code {
			return n.name
		}
	}
	return "reserved_" + strconv.Itoa(int(code))
}

func parseNAK(s string) (uint8, bool) {
	for _, n := range nakCodes {
		if n.name == s {
			return n.code, true
		}
	}
	if c, err := strconv.ParseUint(strings.TrimPrefix(s, "reserved_"), 0, 8); err == nil && c >= 5 && c <= 31 {
		return uint8(c), true
	}
	return 0, false
}

func (v *validator) event(f *Flow, e *Event, msgs int) {
	if e.AtMsg < 1 || e.AtMsg > msgs {
		v.failf("at_msg", "at_msg %d: the flow has messages 1..%d", e.AtMsg, msgs)
	}
	n := 0
	reliable := oneOf(f.Transport, "RC", "XRC", "RD")
	drop := func(key string, d *Drop) {
		n++
		if d.Packets == 0 {
			d.Packets = 1
		}
		if d.Packets < 0 {
			v.failf(key, "negative packets")
		}
		if d.PSNOffset != nil && *d.PSNOffset < 0 {
			v.failf(key, "negative psn_offset")
		}
	}
	if e.FabricDrop != nil {
		drop("fabric_drop", e.FabricDrop)
	}
	if e.TimeoutDrop != nil {
		drop("timeout_drop", e.TimeoutDrop)
		if !reliable {
			v.failf("timeout_drop", "%s has no retransmission timeout; use fabric_drop", f.Transport)
		}
	}
	if e.MirrorDrop != nil {
		drop("mirror_drop", e.MirrorDrop)
		if e.MirrorDrop.Seen != nil {
			v.failf("mirror_drop", "seen makes no sense for a mirror drop")
		}
	}
	if e.RNRNAK != nil {
		n++
		if e.RNRNAK.Timer < 0 || e.RNRNAK.Timer > 31 {
			v.failf("rnr_nak", "RNR timer %d out of range 0..31", e.RNRNAK.Timer)
		}
		if !reliable {
			v.failf("rnr_nak", "%s has no NAKs", f.Transport)
		}
	}
	if e.NAK != nil {
		n++
		code, ok := parseNAK(*e.NAK)
		switch {
		case !ok:
			v.failf("nak", "unknown NAK %q (want invalid_request, remote_access_err, remote_op_err, invalid_rd_request or reserved_5..31)", *e.NAK)
		case code == 0:
			v.failf("nak", "psn_seq_err comes from a loss: use fabric_drop")
		case !reliable:
			v.failf("nak", "%s has no NAKs", f.Transport)
		}
	}
	if e.CEMark != nil {
		n++
		if e.CEMark.Packets == 0 {
			e.CEMark.Packets = 1
		}
		if e.CEMark.CNPOpcode == nil {
			e.CEMark.CNPOpcode = f.CNPOpcode
		}
		v.cnpOpcode("ce_mark", *e.CEMark.CNPOpcode)
		if e.CEMark.Packets < 0 || e.CEMark.PSNOffset < 0 {
			v.failf("ce_mark", "negative packets or psn_offset")
		}
		if e.CEMark.Resends && e.CEMark.CNP {
			v.failf("ce_mark", "cnp answers first transmissions only: not with resends")
		}
	}
	if e.FECN != nil {
		n++
		if e.FECN.Packets == 0 {
			e.FECN.Packets = 1
		}
		if e.FECN.Packets < 0 || e.FECN.PSNOffset < 0 {
			v.failf("fecn", "negative packets or psn_offset")
		}
	}
	if e.DSCP != nil {
		n++
		v.dscp("dscp", *e.DSCP)
	}
	if n != 1 {
		v.failf("", "each event is at_msg plus exactly one of fabric_drop, timeout_drop, mirror_drop, rnr_nak, nak, ce_mark, fecn, dscp")
	}
}
