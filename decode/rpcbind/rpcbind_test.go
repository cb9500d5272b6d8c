package rpcbind

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The UDP payloads of captured exchanges, as tshark shows them
// (tshark -T fields -e udp.payload):
const (
	// suricata-verify nfs3-01, frames 1 and 2: a version 3 GETADDR for
	// MOUNT (100005) v3 over "udp", answered "139.25.22.102.4.24".
	getaddrCall  = "38434f690000000000000002000186a0000000030000000300000000000000000000000000000000000186a50000000300000003756470000000000000000000"
	getaddrReply = "38434f690000000100000000000000000000000000000000000000123133392e32352e32322e3130322e342e32340000"
	// Wireshark wiki nfs_bad_stalls, frames 7021 and 7022: a version 2
	// GETPORT for MOUNT v1 over TCP, answered 1023; frame 20, a GETPORT
	// for NFS v3 over TCP cut by the snap length inside its port.
	getportCall  = "5c2191fe0000000000000002000186a0000000020000000300000000000000000000000000000000000186a500000001000000060000"
	getportReply = "5c2191fe0000000100000000000000000000000000000000000003ff"
	getportCut   = "3c7de83a0000000000000002000186a0000000020000000300000000000000000000000000000000000186a300000003000000060000"
)

// TestParseGETADDR reads a captured version 3 GETADDR call and its reply
// as tshark does (Program MOUNT (100005), Version 3, Network Id udp;
// Universal Address 139.25.22.102.4.24, port 4·256+24).
func TestParseGETADDR(t *testing.T) {
	xid, q, ok := ParseCall(unhex(t, getaddrCall))
	if want := (Query{Version: 3, Prog: 100005, Vers: 3, Proto: 17}); !ok || xid != 0x38434f69 || q != want {
		t.Fatalf("call: xid %#x %+v %v, want 0x38434f69 %+v", xid, q, ok, want)
	}
	rxid, res, ok := ParseReply(unhex(t, getaddrReply))
	if !ok || rxid != xid {
		t.Fatalf("reply: xid %#x %v", rxid, ok)
	}
	host, port, ok := q.Port(res)
	if !ok || port != 1048 || host != netip.MustParseAddr("139.25.22.102") {
		t.Errorf("reply names %v port %d (%v), want 139.25.22.102 port 1048", host, port, ok)
	}
	if _, _, ok := ParseCall(unhex(t, getaddrReply)); ok {
		t.Error("a reply read as a call")
	}
	if _, _, ok := ParseReply(unhex(t, getaddrCall)); ok {
		t.Error("a call read as a reply")
	}
}

// TestParseGETPORT reads captured version 2 GETPORT calls (one cut by the
// snap length inside its port, which tshark still reads as "NFS(100003)
// V:3 TCP") and a reply (Port: 1023).
func TestParseGETPORT(t *testing.T) {
	xid, q, ok := ParseCall(unhex(t, getportCall))
	if want := (Query{Version: 2, Prog: 100005, Vers: 1, Proto: 6}); !ok || xid != 0x5c2191fe || q != want {
		t.Fatalf("call: xid %#x %+v %v, want %+v", xid, q, ok, want)
	}
	rxid, res, ok := ParseReply(unhex(t, getportReply))
	if !ok || rxid != xid {
		t.Fatalf("reply: xid %#x %v", rxid, ok)
	}
	if host, port, ok := q.Port(res); !ok || port != 1023 || host.IsValid() {
		t.Errorf("reply: %v port %d (%v), want port 1023 and no host", host, port, ok)
	}
	if _, q, ok := ParseCall(unhex(t, getportCut)); !ok || q != (Query{Version: 2, Prog: 100003, Vers: 3, Proto: 6}) {
		t.Errorf("cut call: %+v %v, want NFS v3 over TCP", q, ok)
	}
}

// rpcCall builds a call to rpcbind version vers, procedure proc, with an
// AUTH_UNIX credential of 12 bytes, and args.
func rpcCall(xid, vers, proc uint32, args ...byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, xid)
	for _, v := range []uint32{msgCall, rpcVersion, Program, vers, proc, 1, 12, 7, 0, 0, 0, 0} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return append(b, args...)
}

// rpcReply builds an accepted reply with accept_stat stat and results.
func rpcReply(xid, stat uint32, results ...byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, xid)
	for _, v := range []uint32{msgReply, msgAccepted, 0, 0, stat} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	return append(b, results...)
}

func words(v ...uint32) []byte {
	var b []byte
	for _, w := range v {
		b = binary.BigEndian.AppendUint32(b, w)
	}
	return b
}

// xdrString is s as an XDR string, padded to 4 bytes.
func xdrString(s string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(s)))
	b = append(b, s...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// TestParseGETADDRv4IPv6: a version 4 GETADDR over "tcp6" for NLM
// (100021) v4, answered with an IPv6 universal address; a credential
// other than AUTH_NULL is skipped.
func TestParseGETADDRv4IPv6(t *testing.T) {
	args := append(words(100021, 4), xdrString("tcp6")...)
	args = append(append(args, xdrString("")...), xdrString("")...)
	xid, q, ok := ParseCall(rpcCall(9, 4, procGetPort, args...))
	if want := (Query{Version: 4, Prog: 100021, Vers: 4, Proto: 6}); !ok || xid != 9 || q != want {
		t.Fatalf("call: %+v %v, want %+v", q, ok, want)
	}
	_, res, ok := ParseReply(rpcReply(9, success, xdrString("2001:db8::7.128.1")...))
	if !ok {
		t.Fatal("reply not read")
	}
	if host, port, ok := q.Port(res); !ok || port != 32769 || host != netip.MustParseAddr("2001:db8::7") {
		t.Errorf("reply: %v port %d (%v), want 2001:db8::7 port 32769", host, port, ok)
	}
}

// TestNotRegistered: a GETPORT reply of port 0 and a GETADDR reply of an
// empty address say the program is not registered: no port.
func TestNotRegistered(t *testing.T) {
	v2, v3 := Query{Version: 2, Prog: 100005, Vers: 3, Proto: 17}, Query{Version: 3, Prog: 100005, Vers: 3, Proto: 17}
	if _, _, ok := v2.Port(words(0)); ok {
		t.Error("GETPORT port 0 read as a port")
	}
	if _, _, ok := v3.Port(xdrString("")); ok {
		t.Error("GETADDR empty address read as a port")
	}
}

// TestNotAnExchange: other procedures, programs, netids, denied or failed
// replies and malformed addresses are not read.
func TestNotAnExchange(t *testing.T) {
	mapping := words(100005, 3, 17, 0)
	calls := map[string][]byte{
		"DUMP":         rpcCall(1, 2, 4),
		"version 5":    rpcCall(1, 5, procGetPort, mapping...),
		"prot ICMP":    rpcCall(1, 2, procGetPort, words(100005, 3, 1, 0)...),
		"netid rdma":   rpcCall(1, 3, procGetPort, append(words(100003, 4), xdrString("rdma")...)...),
		"rpc version":  append(words(1, msgCall, 3), rpcCall(1, 2, procGetPort, mapping...)[12:]...),
		"huge cred":    append(words(1, msgCall, rpcVersion, Program, 2, procGetPort, 1, 401), make([]byte, 420)...),
		"cut in netid": rpcCall(1, 3, procGetPort, append(words(100003, 4, 3), 'u')...),
	}
	for name, b := range calls {
		if _, q, ok := ParseCall(b); ok {
			t.Errorf("%s: read as a call: %+v", name, q)
		}
	}
	if _, _, ok := ParseReply(rpcReply(1, 1, words(1048)...)); ok {
		t.Error("PROG_UNAVAIL reply read")
	}
	if _, _, ok := ParseReply(words(1, msgReply, 1, 0, 0)); ok {
		t.Error("MSG_DENIED reply read")
	}
	v3 := Query{Version: 3, Prog: 100005, Vers: 3, Proto: 17}
	for _, a := range []string{"1.2.3.4.4", "1.2.3.4.256.1", "1.2.3.4.04.1", "1.2.3.4.x.1", "1.2.3.4..1", "1.2.3.4.5.0.0",
		"a.b.c.d.4.24", "1.2.3.4.0.0", "fe80::1%eth0.4.24", "::1::2.4.24", ".4.24", "1.2.3.-4.4.24"} {
		if h, p, ok := v3.Port(xdrString(a)); ok {
			t.Errorf("address %q read as %v port %d", a, h, p)
		}
	}
}

// TestEveryCut: every prefix of the captured messages decodes without a
// panic, and one cut before what it needs is not read.
func TestEveryCut(t *testing.T) {
	call, reply := unhex(t, getaddrCall), unhex(t, getaddrReply)
	for n := range len(call) {
		_, _, ok := ParseCall(call[:n])
		// The call is read once its netid "udp" (bytes 52-54; its
		// padding may be cut) was captured: r_addr and r_owner are not
		// read.
		if want := n >= 55; ok != want {
			t.Errorf("call cut to %d bytes: read %v, want %v", n, ok, want)
		}
	}
	_, q, _ := ParseCall(call)
	for n := range len(reply) {
		if _, res, ok := ParseReply(reply[:n]); ok {
			if _, _, ok := q.Port(res); ok && n < 46 {
				t.Errorf("reply cut to %d bytes read a port", n)
			}
		}
	}
}

// TestRecord: TCP record marking (RFC 5531 §11).
func TestRecord(t *testing.T) {
	msg := unhex(t, getportReply)
	rec := append(words(1<<31|uint32(len(msg))), msg...)
	if got, ok := Record(rec); !ok || string(got) != string(msg) {
		t.Errorf("record not read: %v", ok)
	}
	if _, ok := Record(rec[:len(rec)-1]); ok {
		t.Error("a record cut short read")
	}
	if _, ok := Record(append(words(uint32(len(msg))), msg...)); ok {
		t.Error("a first fragment of several read")
	}
	if _, ok := Record([]byte{0x80, 0}); ok {
		t.Error("a marker cut short read")
	}
}

// TestParseAllocatesNothing: reading an IPv4 exchange allocates nothing.
func TestParseAllocatesNothing(t *testing.T) {
	call, reply := unhex(t, getaddrCall), unhex(t, getaddrReply)
	n := testing.AllocsPerRun(100, func() {
		_, q, _ := ParseCall(call)
		_, res, _ := ParseReply(reply)
		q.Port(res)
	})
	if n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// FuzzParse reads arbitrary bytes as a call, a reply of each version and
// a TCP record: nothing panics, and what is read is consistent.
func FuzzParse(f *testing.F) {
	for _, s := range []string{getaddrCall, getaddrReply, getportCall, getportReply, getportCut} {
		f.Add(unhex(f, s))
	}
	f.Add(rpcReply(9, success, xdrString("2001:db8::7.128.1")...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, q, ok := ParseCall(b); ok {
			if q.Version < 2 || q.Version > 4 || q.Proto != protoTCP && q.Proto != protoUDP {
				t.Errorf("call read as %+v", q)
			}
		}
		if _, res, ok := ParseReply(b); ok {
			for v := uint32(2); v <= 4; v++ {
				if _, port, ok := (Query{Version: v}).Port(res); ok && port == 0 {
					t.Error("port 0 read as registered")
				}
			}
		}
		if m, ok := Record(b); ok && len(m) > len(b)-4 {
			t.Error("record longer than its segment")
		}
		ParseUniversalAddr(b)
	})
}
