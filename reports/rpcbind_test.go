package reports

import (
	"bufio"
	"encoding/binary"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// rpcFrame is one crafted frame of an rpcbind test capture: an Ethernet
// frame with IPv4 and UDP (or TCP with ACK|PSH, or a bare SYN) carrying
// payload.
type rpcFrame struct {
	src, dst     string
	sport, dport uint16
	tcp          bool
	syn          bool
	payload      []byte
}

func (f rpcFrame) bytes() []byte {
	var l4 []byte
	proto := byte(17)
	if f.tcp {
		proto = 6
		l4 = make([]byte, 20)
		binary.BigEndian.PutUint16(l4, f.sport)
		binary.BigEndian.PutUint16(l4[2:], f.dport)
		l4[12] = 5 << 4
		l4[13] = 0x18 // ACK, PSH
		if f.syn {
			l4[13] = 0x02
		}
	} else {
		l4 = binary.BigEndian.AppendUint16(nil, f.sport)
		l4 = binary.BigEndian.AppendUint16(l4, f.dport)
		l4 = binary.BigEndian.AppendUint16(l4, uint16(8+len(f.payload)))
		l4 = append(l4, 0, 0)
	}
	l4 = append(l4, f.payload...)
	ip := binary.BigEndian.AppendUint16([]byte{0x45, 0}, uint16(20+len(l4)))
	ip = append(ip, 0, 0, 0x40, 0, 64, proto, 0, 0) // DF, TTL 64
	s, d := netip.MustParseAddr(f.src).As4(), netip.MustParseAddr(f.dst).As4()
	ip = append(append(ip, s[:]...), d[:]...)
	frame := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}
	frame = append(append(frame, ip...), l4...)
	for len(frame) < 60 {
		frame = append(frame, 0) // Ethernet padding
	}
	return frame
}

// writeRPCCapture writes frames, 1 ms apart, to a pcap and returns its path.
func writeRPCCapture(t testing.TB, frames []rpcFrame) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rpcbind.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	w, err := capture.NewPcapWriter(bw, capture.LinkTypeEthernet, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, fr := range frames {
		b := fr.bytes()
		if err := w.WritePacket(time.Unix(1700000000, int64(i)*1e6), b, len(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

func xdrWords(v ...uint32) []byte {
	var b []byte
	for _, w := range v {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

func xdrStr(s string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
	b = append(b, s...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// rpcCallMsg is an ONC RPC call (RFC 5531 §9) to program prog version
// vers, procedure proc, with AUTH_NULL credentials, and args.
func rpcCallMsg(xid, prog, vers, proc uint32, args ...byte) []byte {
	return append(xdrWords(xid, 0, 2, prog, vers, proc, 0, 0, 0, 0), args...)
}

// rpcReplyMsg is an accepted, successful reply with results.
func rpcReplyMsg(xid uint32, results ...byte) []byte {
	return append(xdrWords(xid, 1, 0, 0, 0, 0), results...)
}

// getaddrCall is a version 3 RPCBPROC_GETADDR call for prog v3 over netid.
func getaddrCall(xid, prog uint32, netid string) []byte {
	args := append(xdrWords(prog, 3), xdrStr(netid)...)
	args = append(append(args, xdrStr("")...), xdrStr("")...)
	return rpcCallMsg(xid, 100000, 3, 3, args...)
}

// getportCall is a version 2 PMAPPROC_GETPORT call for prog over proto.
func getportCall(xid, prog, vers, proto uint32) []byte {
	return rpcCallMsg(xid, 100000, 2, 3, xdrWords(prog, vers, proto, 0)...)
}

// record puts msg behind a TCP record marker (RFC 5531 §11).
func record(msg []byte) []byte {
	return append(xdrWords(1<<31|uint32(len(msg))), msg...)
}

const (
	nfsClient = "139.25.22.2"
	nfsServer = "139.25.22.102"
)

// suricataNFS3 is the start and end of suricata-verify's nfs3-01 capture
// as tshark shows it: a version 3 GETADDR for MOUNT over udp answered
// "139.25.22.102.4.24" (port 1048), MOUNT calls to udp/1048 from client
// ports 3296, 706 and 722, a GETADDR for NFS answered 2049, and NFS.
func suricataNFS3() []rpcFrame {
	mnt := func(sport uint16, xid uint32) []rpcFrame {
		return []rpcFrame{
			{src: nfsClient, dst: nfsServer, sport: sport, dport: 1048, payload: rpcCallMsg(xid, 100005, 3, 1, xdrStr("/export")...)},
			{src: nfsServer, dst: nfsClient, sport: 1048, dport: sport, payload: rpcReplyMsg(xid, 0, 0, 0, 0)},
		}
	}
	fs := []rpcFrame{
		{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: getaddrCall(0x38434f69, 100005, "udp")},
		{src: nfsServer, dst: nfsClient, sport: 111, dport: 3295, payload: rpcReplyMsg(0x38434f69, xdrStr("139.25.22.102.4.24")...)},
	}
	fs = append(fs, mnt(3296, 2)...)
	fs = append(fs, mnt(706, 3)...)
	fs = append(fs,
		rpcFrame{src: nfsClient, dst: nfsServer, sport: 3297, dport: 111, payload: getaddrCall(0x3843e329, 100003, "udp")},
		rpcFrame{src: nfsServer, dst: nfsClient, sport: 111, dport: 3297, payload: rpcReplyMsg(0x3843e329, xdrStr("139.25.22.102.8.1")...)},
		rpcFrame{src: nfsClient, dst: nfsServer, sport: 1022, dport: 2049, payload: rpcCallMsg(5, 100003, 3, 1)},
		rpcFrame{src: nfsServer, dst: nfsClient, sport: 2049, dport: 1022, payload: rpcReplyMsg(5, 0)},
	)
	return append(fs, mnt(722, 4)...)
}

// storageDetails are the detail lines of in's one storage finding.
func storageDetails(t *testing.T, in *Input) []string {
	t.Helper()
	st := ofKind(runAll(in), KindStorageOnCompute)
	if len(st) != 1 {
		t.Fatalf("want one storage finding, got %s", summary(st))
	}
	return st[0].Evidence.Details
}

// TestRPCBindNamesMountdPort: mountd on the port a GETADDR reply handed
// out (udp/1048), reached from client ports 706 and 722 below it, is one
// conversation on udp/1048, named mountd, and an NFS helper in the
// storage finding. Before, the lower-port rule named it udp/706 and
// udp/722 (and udp/1048 for the client port 3296 above it), none of them
// storage.
func TestRPCBindNamesMountdPort(t *testing.T) {
	in := loadInput(t, writeRPCCapture(t, suricataNFS3()), "")
	var got []string
	for _, c := range in.Collect.Conversations() {
		got = append(got, c.Src.String()+">"+c.Dst.String()+" "+convPort(c))
		if c.ServicePort == 1048 && (c.Packets != 6 || c.RPCProgram != rpcMountd) {
			t.Errorf("udp/1048: %d packets, program %d; want 6 packets of mountd (100005)", c.Packets, c.RPCProgram)
		}
	}
	want := []string{nfsClient + ">" + nfsServer + " udp/111", nfsClient + ">" + nfsServer + " udp/1048 (mountd)",
		nfsClient + ">" + nfsServer + " udp/2049"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("conversations %q, want %q", got, want)
	}
	details := storageDetails(t, in)
	if !slices.ContainsFunc(details, func(l string) bool {
		return strings.HasPrefix(l, "NFS helpers (mountd, udp/1048): "+nfsClient+" > "+nfsServer)
	}) {
		t.Errorf("storage details %q: want mountd on udp/1048", details)
	}
	for _, l := range details {
		if strings.Contains(l, "udp/706") || strings.Contains(l, "udp/722") || strings.Contains(l, "(nfs") {
			t.Errorf("storage detail %q: a client port, or NFS's program named again", l)
		}
	}
}

// TestRPCBindGETPORTOverTCP: a version 2 GETPORT over TCP (record
// marking) teaches NLM's UDP port on that server alone: NLM from a client
// port below it is named by it; the same port on another host is not.
func TestRPCBindGETPORTOverTCP(t *testing.T) {
	const other = "139.25.22.103"
	fs := []rpcFrame{
		{src: nfsClient, dst: nfsServer, sport: 900, dport: 111, tcp: true, syn: true},
		{src: nfsClient, dst: nfsServer, sport: 900, dport: 111, tcp: true, payload: record(getportCall(77, 100021, 4, 17))},
		{src: nfsServer, dst: nfsClient, sport: 111, dport: 900, tcp: true, payload: record(rpcReplyMsg(77, xdrWords(40000)...))},
		{src: nfsClient, dst: nfsServer, sport: 801, dport: 40000, payload: rpcCallMsg(8, 100021, 4, 7)},
		{src: nfsServer, dst: nfsClient, sport: 40000, dport: 801, payload: rpcReplyMsg(8, 0, 0, 0, 0)},
		{src: nfsClient, dst: other, sport: 801, dport: 40000, payload: rpcCallMsg(9, 100021, 4, 7)},
	}
	in := loadInput(t, writeRPCCapture(t, fs), "")
	var nlm, lower int
	for _, c := range in.Collect.Conversations() {
		switch {
		case c.ServicePort == 40000 && c.Dst == netip.MustParseAddr(nfsServer) && c.RPCProgram == rpcNLM && c.Packets == 2:
			nlm++
		case c.ServicePort == 801 && c.RPCProgram == 0 && c.Src == netip.MustParseAddr(other):
			lower++
		}
	}
	if nlm != 1 || lower != 1 {
		t.Errorf("want NLM on udp/40000 of %s and the lower-port rule on %s, got %d and %d", nfsServer, other, nlm, lower)
	}
	if d := storageDetails(t, in); !slices.ContainsFunc(d, func(l string) bool { return strings.HasPrefix(l, "NFS helpers (nlockmgr, udp/40000)") }) {
		t.Errorf("storage details %q: want NLM", d)
	}
}

// TestRPCBindTeachesNothing: a call without its reply, a reply of port 0
// (not registered), a reply whose XID or ends match no call, and a
// truncated or garbage message teach no port: mountd stays named by the
// lower-port rule.
func TestRPCBindTeachesNothing(t *testing.T) {
	call := getaddrCall(1, 100005, "udp")
	cases := map[string][]rpcFrame{
		"no reply": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: call}},
		"port 0": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: getportCall(1, 100005, 3, 17)},
			{src: nfsServer, dst: nfsClient, sport: 111, dport: 3295, payload: rpcReplyMsg(1, xdrWords(0)...)}},
		"empty address": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: call},
			{src: nfsServer, dst: nfsClient, sport: 111, dport: 3295, payload: rpcReplyMsg(1, xdrStr("")...)}},
		"other xid": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: call},
			{src: nfsServer, dst: nfsClient, sport: 111, dport: 3295, payload: rpcReplyMsg(2, xdrStr("139.25.22.102.4.24")...)}},
		"other client port": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: call},
			{src: nfsServer, dst: nfsClient, sport: 111, dport: 3296, payload: rpcReplyMsg(1, xdrStr("139.25.22.102.4.24")...)}},
		"cut reply": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: call},
			{src: nfsServer, dst: nfsClient, sport: 111, dport: 3295, payload: rpcReplyMsg(1, xdrStr("139.25.22.102.4.24")...)[:40]}},
		"garbage": {{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: []byte{0xff, 1, 2}},
			{src: nfsServer, dst: nfsClient, sport: 111, dport: 3295, payload: []byte{0, 0, 0, 1, 0, 0, 0, 1}}},
	}
	for name, fs := range cases {
		fs = append(fs, rpcFrame{src: nfsClient, dst: nfsServer, sport: 706, dport: 1048, payload: rpcCallMsg(3, 100005, 3, 1)})
		in := loadInput(t, writeRPCCapture(t, fs), "")
		for _, c := range in.Collect.Conversations() {
			if c.ServicePort == 1048 || c.RPCProgram != 0 {
				t.Errorf("%s: conversation %s named %d", name, convPort(c), c.RPCProgram)
			}
		}
	}
}

// TestRPCBindTableBounded: the learnt ports stop at maxLearntPorts (one
// already learnt may still change), and a call waits among the last
// maxPendingCalls only.
func TestRPCBindTableBounded(t *testing.T) {
	var r rpcbindTable
	a := netip.MustParseAddr(nfsServer)
	for i := range maxLearntPorts + 10 {
		r.learn(rpcService{a, protoUDP, uint16(1000 + i)}, rpcMountd)
	}
	if len(r.learnt) != maxLearntPorts {
		t.Errorf("%d ports learnt, want %d", len(r.learnt), maxLearntPorts)
	}
	r.learn(rpcService{a, protoUDP, 1000}, rpcNLM)
	if r.learnt[rpcService{a, protoUDP, 1000}] != rpcNLM {
		t.Error("a learnt port did not change program")
	}

	var q rpcbindTable
	client, server := netip.MustParseAddr(nfsClient), netip.MustParseAddr(nfsServer)
	call := &packet.Packet{Proto: protoUDP, Src: client, Dst: server, SrcPort: 3000, DstPort: 111}
	reply := &packet.Packet{Proto: protoUDP, Src: server, Dst: client, SrcPort: 111, DstPort: 3000}
	for xid := range uint32(maxPendingCalls + 1) {
		q.observe(call, getaddrCall(xid, 100005, "udp"))
	}
	q.observe(reply, rpcReplyMsg(0, xdrStr("139.25.22.102.4.24")...)) // the first call, forgotten
	q.observe(reply, rpcReplyMsg(maxPendingCalls, xdrStr("139.25.22.102.4.25")...))
	if _, ok := q.learnt[rpcService{server, protoUDP, 1048}]; ok || len(q.learnt) != 1 {
		t.Errorf("learnt %v: want only port 1049 of the last call", q.learnt)
	}
}

// TestRPCBindSteadyStateAllocatesNothing: once the port is learnt, the
// packets of the conversation on it allocate nothing.
func TestRPCBindSteadyStateAllocatesNothing(t *testing.T) {
	var dec packet.Decoder
	col := NewCollector(flows.NewTable(flows.Config{}), Config{})
	col.ReadPayloadsFrom(&dec)
	var p packet.Packet
	n := 0
	add := func(f rpcFrame) {
		b := f.bytes()
		if err := dec.Decode(capture.LinkTypeEthernet, b, len(b), &p); err != nil {
			t.Fatal(err)
		}
		n++
		col.Add(&p, flows.FrameRef{Frame: n, Time: time.Unix(1700000000, int64(n)*1e6), Seq: uint64(n)})
	}
	for _, f := range suricataNFS3() {
		add(f)
	}
	mnt := rpcFrame{src: nfsClient, dst: nfsServer, sport: 706, dport: 1048, payload: rpcCallMsg(3, 100005, 3, 1)}
	getaddr := rpcFrame{src: nfsClient, dst: nfsServer, sport: 3295, dport: 111, payload: getaddrCall(0x38434f69, 100005, "udp")}
	b1, b2 := mnt.bytes(), getaddr.bytes()
	if allocs := testing.AllocsPerRun(100, func() {
		for _, b := range [][]byte{b1, b2} {
			dec.Decode(capture.LinkTypeEthernet, b, len(b), &p)
			n++
			col.Add(&p, flows.FrameRef{Frame: n, Time: time.Unix(1700000000, int64(n)*1e6), Seq: uint64(n)})
		}
	}); allocs != 0 {
		t.Errorf("%v allocations per mountd call and rpcbind call", allocs)
	}
}
