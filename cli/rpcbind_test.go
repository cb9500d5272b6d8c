package cli

import (
	"encoding/binary"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rpcbindCapture writes the UDP exchanges of suricata-verify's nfs3-01
// capture that matter here: a version 3 GETADDR (RFC 1833 §2.2.1) for
// MOUNT (100005) v3 over udp, answered "139.25.22.102.4.24" (port 1048),
// then MOUNT calls and replies on udp/1048 from client ports 706 and 722.
func rpcbindCapture(t *testing.T) string {
	t.Helper()
	const client, server = "\x8b\x19\x16\x02", "\x8b\x19\x16\x66" // 139.25.22.2, 139.25.22.102
	words := func(v ...uint32) []byte {
		var b []byte
		for _, w := range v {
			b = binary.BigEndian.AppendUint32(b, w)
		}
		return b
	}
	str := func(s string) []byte {
		b := append(words(uint32(len(s))), s...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return b
	}
	frame := func(src, dst string, sport, dport uint16, msg []byte) []byte {
		udp := binary.BigEndian.AppendUint16(nil, sport)
		udp = binary.BigEndian.AppendUint16(udp, dport)
		udp = binary.BigEndian.AppendUint16(udp, uint16(8+len(msg)))
		udp = append(append(udp, 0, 0), msg...)
		ip := binary.BigEndian.AppendUint16([]byte{0x45, 0}, uint16(20+len(udp)))
		ip = append(append(append(ip, 0, 0, 0x40, 0, 64, 17, 0, 0), src...), dst...)
		return append(append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00}, ip...), udp...)
	}
	// An RPC call (RFC 5531 §9) with AUTH_NULL credentials, and an
	// accepted, successful reply.
	call := func(xid, prog, vers, proc uint32, args ...byte) []byte {
		return append(words(xid, 0, 2, prog, vers, proc, 0, 0, 0, 0), args...)
	}
	reply := func(xid uint32, res ...byte) []byte { return append(words(xid, 1, 0, 0, 0, 0), res...) }
	getaddr := append(append(append(words(100005, 3), str("udp")...), str("")...), str("")...)
	frames := [][]byte{
		frame(client, server, 3295, 111, call(0x38434f69, 100000, 3, 3, getaddr...)),
		frame(server, client, 111, 3295, reply(0x38434f69, str("139.25.22.102.4.24")...)),
		frame(client, server, 706, 1048, call(2, 100005, 3, 1, str("/export")...)),
		frame(server, client, 1048, 706, reply(2, 0, 0, 0, 0)),
		frame(client, server, 722, 1048, call(3, 100005, 1, 3, str("/export")...)),
		frame(server, client, 1048, 722, reply(3)),
	}
	return writeTestPcap(t, "nfs3-mount.pcap", time.Unix(944207397, 0), 10*time.Millisecond, wholeFrames(frames...))
}

// TestReportRPCBindPort: the report names mountd's conversation by the
// port rpcbind handed out (udp/1048), not by the client ports below it
// (udp/706, udp/722, as before), on one worker and on several (the
// conversations are shard 0's), and lists it as an NFS helper.
func TestReportRPCBindPort(t *testing.T) {
	path := rpcbindCapture(t)
	for _, workers := range []string{"1", "3"} {
		out, errOut, code := runCLI(t, "report", "--format", "json", "--workers", workers, path)
		if code != 0 {
			t.Fatalf("workers %s: exit %d: %s", workers, code, errOut)
		}
		for _, want := range []string{
			`"139.25.22.2 > 139.25.22.102 udp/1048 (mountd): 4 packets, `,
			`"NFS helpers (mountd, udp/1048): 139.25.22.2 > 139.25.22.102, 4 packets, `,
			`"nfs_helpers_conversations": 2`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("workers %s: no %s in\n%s", workers, want, out)
			}
		}
		if strings.Contains(out, "udp/706") || strings.Contains(out, "udp/722") {
			t.Errorf("workers %s: a client port named as the service:\n%s", workers, out)
		}
	}
}

// TestRPCBindCaptureTshark: tshark reads the crafted capture as the
// report does: a GETADDR for MOUNT answered with port 1048's universal
// address, and MOUNT on udp/1048.
func TestRPCBindCaptureTshark(t *testing.T) {
	tshark := needTool(t, "tshark")
	path := rpcbindCapture(t)
	out, err := exec.Command(tshark, "-r", path, "-Y", "portmap || mount", "-T", "fields",
		"-e", "frame.number", "-e", "rpc.program", "-e", "portmap.rpcb.prog", "-e", "portmap.rpcb.netid", "-e", "portmap.uaddr", "-e", "udp.port").Output()
	if err != nil {
		t.Fatal(err)
	}
	// tshark repeats a reply's program from its call.
	want := "1\t100000\t100005\tudp\t\t3295,111\n2\t100000\t\t\t139.25.22.102.4.24\t111,3295\n" +
		"3\t100005\t\t\t\t706,1048\n4\t100005\t\t\t\t1048,706\n5\t100005\t\t\t\t722,1048\n6\t100005\t\t\t\t1048,722\n"
	if string(out) != want {
		t.Errorf("tshark:\n%s\nwant\n%s", out, want)
	}
}
