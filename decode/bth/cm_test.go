package bth

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/gopacket"
)

// realMAD returns the MAD (and the ICRC after it) carried by a frame of a
// real capture.
func realMAD(t *testing.T, name string, number int) []byte {
	t.Helper()
	for _, f := range roceFrames(t, name) {
		if f.Number != number {
			continue
		}
		var b BTH
		if err := b.DecodeFromBytes(f.UDP, nil); err != nil {
			t.Fatal(err)
		}
		if b.NextLayerType() != LayerTypeCMMAD {
			t.Fatalf("%s frame %d: not a MAD on QP1 (%v to QP %d)", name, number, b.Opcode, b.DestQP)
		}
		return b.LayerPayload()
	}
	t.Fatalf("%s: no RoCE frame %d", name, number)
	return nil
}

// cmFields returns m without its BaseLayer and Captured, for comparing the
// values (TestCMMADCaptured checks Captured).
func cmFields(m CMMAD) CMMAD {
	m.BaseLayer.Contents, m.BaseLayer.Payload = nil, nil
	m.Captured = 0
	return m
}

// TestCMMADReal decodes the CM MADs of the rping and rdma_cm captures. The
// wanted values are those `tshark -V` shows for the same frames.
func TestCMMADReal(t *testing.T) {
	hdr := func(tid uint64, attr CMAttribute, set func(*CMMAD)) CMMAD {
		m := CMMAD{BaseVersion: 1, MgmtClass: MgmtClassCM, ClassVersion: 2, Method: MethodSend,
			TransactionID: tid, AttributeID: attr}
		set(&m)
		return m
	}
	ip4 := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	tests := []struct {
		file   string
		frame  int
		want   CMMAD
		port   uint16
		pspace string
	}{
		{"linlinw5_rping.pcap", 1, hdr(0x26dc5c06e, CMAttrREQ, func(m *CMMAD) {
			m.LocalCommID, m.ServiceID, m.LocalCAGUID = 0x6ec0c56d, 0x0000000001061c06, 0x025056fffea77d03
			m.LocalQPN, m.ResponderResources, m.InitiatorDepth = 0x2c, 1, 1
			m.StartingPSN, m.PKey = 0x003da6, 0xffff
			m.IP = IPCMData{Valid: true, IPVersion: 4, SrcPort: 0xbd69, SrcIP: ip4("10.1.16.62"), DstIP: ip4("10.1.16.61")}
		}), 7174, "TCP"},
		{"linlinw5_rping.pcap", 2, hdr(0x26dc5c06e, CMAttrREP, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID, m.LocalQPN, m.StartingPSN = 0x9d88f456, 0x6ec0c56d, 0x2b, 0xfebd3d
			m.ResponderResources, m.InitiatorDepth, m.LocalCAGUID = 1, 1, 0x025056fffea7129f
		}), 0, "0x00"},
		{"linlinw5_rping.pcap", 3, hdr(0x26dc5c06e, CMAttrRTU, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID = 0x6ec0c56d, 0x9d88f456
		}), 0, "0x00"},
		{"linlinw5_rping.pcap", 64, hdr(0x26dc5c06e, CMAttrDREQ, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID, m.RemoteQPN = 0x6ec0c56d, 0x9d88f456, 0x2b
		}), 0, "0x00"},
		{"linlinw5_rping.pcap", 65, hdr(0x26dc5c06e, CMAttrDREP, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID = 0x9d88f456, 0x6ec0c56d
		}), 0, "0x00"},
		{"linlinw5_rdma_cm.pcap", 24, hdr(0x26dc5c065, CMAttrREQ, func(m *CMMAD) {
			m.LocalCommID, m.ServiceID, m.LocalCAGUID = 0x65c0c56d, 0x0000000001064853, 0x025056fffea77d03
			m.LocalQPN, m.StartingPSN, m.PKey = 0x3e, 0xaf834f, 0xffff
			m.IP = IPCMData{Valid: true, IPVersion: 4, SrcPort: 0xc6be, SrcIP: ip4("10.1.16.62"), DstIP: ip4("10.1.16.61")}
		}), 0x4853, "TCP"},
		{"linlinw5_rdma_cm.pcap", 25, hdr(0x26dc5c065, CMAttrREP, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID, m.LocalQPN, m.StartingPSN = 0x8b88f456, 0x65c0c56d, 0x3c, 0x7d2388
			m.LocalCAGUID = 0x025056fffea7129f
		}), 0, "0x00"},
		{"linlinw5_rdma_cm.pcap", 30, hdr(0x26dc5c065, CMAttrRTU, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID = 0x65c0c56d, 0x8b88f456
		}), 0, "0x00"},
		{"linlinw5_rdma_cm.pcap", 91, hdr(0x26dc5c065, CMAttrDREQ, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID, m.RemoteQPN = 0x65c0c56d, 0x8b88f456, 0x3c
		}), 0, "0x00"},
		{"linlinw5_rdma_cm.pcap", 93, hdr(0x26dc5c065, CMAttrDREP, func(m *CMMAD) {
			m.LocalCommID, m.RemoteCommID = 0x8b88f456, 0x65c0c56d
		}), 0, "0x00"},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+strconv.Itoa(tt.frame), func(t *testing.T) {
			data := realMAD(t, tt.file, tt.frame)
			var fb feedback
			var m CMMAD
			if err := m.DecodeFromBytes(data, &fb); err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if got := cmFields(m); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("want %+v\n got %+v", tt.want, got)
			}
			if len(m.LayerContents()) != MADLen || len(m.LayerPayload()) != ICRCLen || fb.truncated != 0 {
				t.Errorf("want 256 bytes of MAD, the ICRC after, not truncated; got %d, %d, %d",
					len(m.LayerContents()), len(m.LayerPayload()), fb.truncated)
			}
			if m.IsIPService() != (tt.port != 0) || m.Port() != tt.port || PortSpaceName(m.PortSpace()) != tt.pspace {
				t.Errorf("service: want IP %v port %d space %s, got %v %d %s", tt.port != 0, tt.port, tt.pspace,
					m.IsIPService(), m.Port(), PortSpaceName(m.PortSpace()))
			}
		})
	}
}

// TestCMMADMatchesTshark compares the MAD header and the REQ and REP fields
// of every CM MAD in the real captures with tshark.
func TestCMMADMatchesTshark(t *testing.T) {
	type field struct {
		name string
		get  func(m *CMMAD) (uint64, bool)
	}
	is := func(a CMAttribute) func(m *CMMAD) bool { return func(m *CMMAD) bool { return m.AttributeID == a } }
	req, rep := is(CMAttrREQ), is(CMAttrREP)
	fields := []field{
		{"infiniband.mad.mgmtclass", func(m *CMMAD) (uint64, bool) { return uint64(m.MgmtClass), true }},
		{"infiniband.mad.transactionid", func(m *CMMAD) (uint64, bool) { return m.TransactionID, true }},
		{"infiniband.mad.attributeid", func(m *CMMAD) (uint64, bool) { return uint64(m.AttributeID), true }},
		{"infiniband.cm.req.serviceid", func(m *CMMAD) (uint64, bool) { return m.ServiceID, req(m) }},
		{"infiniband.cm.req.localqpn", func(m *CMMAD) (uint64, bool) { return uint64(m.LocalQPN), req(m) }},
		{"infiniband.cm.req.startpsn", func(m *CMMAD) (uint64, bool) { return uint64(m.StartingPSN), req(m) }},
		{"infiniband.cm.req.transpsvctype", func(m *CMMAD) (uint64, bool) { return uint64(m.TransportServiceType), req(m) }},
		{"infiniband.cm.req.ip_cm.sport", func(m *CMMAD) (uint64, bool) { return uint64(m.IP.SrcPort), req(m) }},
		{"infiniband.cm.rep.localqpn", func(m *CMMAD) (uint64, bool) { return uint64(m.LocalQPN), rep(m) }},
		{"infiniband.cm.rep.startpsn", func(m *CMMAD) (uint64, bool) { return uint64(m.StartingPSN), rep(m) }},
		{"infiniband.cm.rep.remotecommid", func(m *CMMAD) (uint64, bool) { return uint64(m.RemoteCommID), rep(m) }},
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	for _, file := range []string{"linlinw5_rping.pcap", "linlinw5_rdma_cm.pcap"} {
		rows := tsharkFields(t, filepath.Join(realDir, file), "infiniband.mad", names...)
		if len(rows) == 0 {
			t.Fatalf("%s: tshark found no MADs", file)
		}
		for n, row := range rows {
			var m CMMAD
			if err := m.DecodeFromBytes(realMAD(t, file, n), nil); err != nil {
				t.Fatalf("%s frame %d: %v", file, n, err)
			}
			for i, f := range fields {
				want, wantOK := tsharkUint(t, row[i], false)
				got, gotOK := f.get(&m)
				if wantOK != gotOK || (wantOK && want != got) {
					t.Errorf("%s frame %d %v: %s: want %#x (%v), got %#x (%v)", file, n, m.AttributeID, f.name, want, wantOK, got, gotOK)
				}
			}
		}
	}
}

// madBytes builds a MAD with the given class and attribute whose data is
// filled by set.
func madBytes(class uint8, attr CMAttribute, set func(d []byte)) []byte {
	m := make([]byte, MADLen)
	m[0], m[1], m[2], m[3] = 1, class, 2, MethodSend
	binary.BigEndian.PutUint64(m[8:], 0x1122334455667788)
	binary.BigEndian.PutUint16(m[16:], uint16(attr))
	binary.BigEndian.PutUint32(m[20:], 0xa0a0a0a0)
	if set != nil {
		set(m[MADHeaderLen:])
	}
	return m
}

func TestCMMADMessages(t *testing.T) {
	commIDs := func(d []byte) {
		binary.BigEndian.PutUint32(d[0:], 0x01010101)
		binary.BigEndian.PutUint32(d[4:], 0x02020202)
	}
	base := func(class uint8, attr CMAttribute, set func(*CMMAD)) CMMAD {
		m := CMMAD{BaseVersion: 1, MgmtClass: class, ClassVersion: 2, Method: MethodSend,
			TransactionID: 0x1122334455667788, AttributeID: attr, AttributeModifier: 0xa0a0a0a0}
		if set != nil {
			set(&m)
		}
		return m
	}
	ids := func(m *CMMAD) { m.LocalCommID, m.RemoteCommID = 0x01010101, 0x02020202 }
	tests := []struct {
		name string
		data []byte
		want CMMAD
	}{
		{"REJ", madBytes(MgmtClassCM, CMAttrREJ, func(d []byte) {
			commIDs(d)
			d[8] = 0x40 // MsgRejected 1 (REP)
			d[9] = 0x02 << 1
			binary.BigEndian.PutUint16(d[10:], 28) // consumer reject
		}), base(MgmtClassCM, CMAttrREJ, func(m *CMMAD) { ids(m); m.MsgRejected, m.RejectReason = 1, 28 })},
		{"MRA", madBytes(MgmtClassCM, CMAttrMRA, commIDs), base(MgmtClassCM, CMAttrMRA, ids)},
		{"LAP", madBytes(MgmtClassCM, CMAttrLAP, commIDs), base(MgmtClassCM, CMAttrLAP, ids)},
		{"APR", madBytes(MgmtClassCM, CMAttrAPR, commIDs), base(MgmtClassCM, CMAttrAPR, ids)},
		{"SIDR_REQ", madBytes(MgmtClassCM, CMAttrSIDRREQ, func(d []byte) {
			binary.BigEndian.PutUint32(d[0:], 0x0a0b0c0d)
			binary.BigEndian.PutUint16(d[4:], 0x8001)
			binary.BigEndian.PutUint64(d[8:], 0x0000000001110035)
		}), base(MgmtClassCM, CMAttrSIDRREQ, func(m *CMMAD) {
			m.LocalCommID, m.PKey, m.ServiceID = 0x0a0b0c0d, 0x8001, 0x0000000001110035
		})},
		{"SIDR_REP", madBytes(MgmtClassCM, CMAttrSIDRREP, func(d []byte) {
			binary.BigEndian.PutUint32(d[0:], 0x0a0b0c0d)
			binary.BigEndian.PutUint32(d[8:], 0x00123400)
			binary.BigEndian.PutUint64(d[12:], 0x0000000001110035)
			binary.BigEndian.PutUint32(d[20:], 0x80010000)
		}), base(MgmtClassCM, CMAttrSIDRREP, func(m *CMMAD) {
			m.LocalCommID, m.LocalQPN, m.ServiceID, m.LocalQKey = 0x0a0b0c0d, 0x1234, 0x0000000001110035, 0x80010000
		})},
		{"ClassPortInfo", madBytes(MgmtClassCM, CMAttrClassPortInfo, commIDs), base(MgmtClassCM, CMAttrClassPortInfo, nil)},
		{"REQ IPv6, not IP service", madBytes(MgmtClassCM, CMAttrREQ, func(d []byte) {
			binary.BigEndian.PutUint64(d[8:], 0x0002c90300001234)
			d[140+1] = 0x60
		}), base(MgmtClassCM, CMAttrREQ, func(m *CMMAD) { m.ServiceID = 0x0002c90300001234 })},
		{"REQ IPv6", madBytes(MgmtClassCM, CMAttrREQ, func(d []byte) {
			binary.BigEndian.PutUint64(d[8:], 0x0000000001060bb8)
			d[43] = 0x3 << 1 // XRC
			p := d[140:]
			p[0], p[1] = 0x12, 0x60
			binary.BigEndian.PutUint16(p[2:], 5000)
			copy(p[4:20], netip.MustParseAddr("fe80::1").AsSlice())
			copy(p[20:36], netip.MustParseAddr("2001:db8::2").AsSlice())
		}), base(MgmtClassCM, CMAttrREQ, func(m *CMMAD) {
			m.ServiceID, m.TransportServiceType = 0x0000000001060bb8, 3
			m.IP = IPCMData{Valid: true, MajorVersion: 1, MinorVersion: 2, IPVersion: 6, SrcPort: 5000,
				SrcIP: netip.MustParseAddr("fe80::1"), DstIP: netip.MustParseAddr("2001:db8::2")}
		})},
		{"REQ IP service, bad IP version", madBytes(MgmtClassCM, CMAttrREQ, func(d []byte) {
			binary.BigEndian.PutUint64(d[8:], 0x0000000001060bb8)
			d[140+1] = 0x50
		}), base(MgmtClassCM, CMAttrREQ, func(m *CMMAD) {
			m.ServiceID = 0x0000000001060bb8
			m.IP = IPCMData{IPVersion: 5}
		})},
		{"SA class: header only", madBytes(0x03, 0x0035, commIDs), base(0x03, 0x0035, nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m CMMAD
			if err := m.DecodeFromBytes(tt.data, nil); err != nil {
				t.Fatalf("want no error, got %v", err)
			}
			if got := cmFields(m); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("want %+v\n got %+v", tt.want, got)
			}
		})
	}
}

// TestCMMADREJMatchesTshark checks the REJ offsets, absent from the real
// captures, against tshark with a synthesized frame.
func TestCMMADREJMatchesTshark(t *testing.T) {
	mad := madBytes(MgmtClassCM, CMAttrREJ, func(d []byte) {
		binary.BigEndian.PutUint32(d[0:], 0x01010101)
		binary.BigEndian.PutUint32(d[4:], 0x02020202)
		d[8], d[9] = 0x80, 0x04
		binary.BigEndian.PutUint16(d[10:], 28)
	})
	b := &BTH{Opcode: OpcodeUDSendOnly, PKey: 0xffff, DestQP: CMQPN, DETH: DETH{QKey: 0x80010000, SrcQP: 1}}
	path := filepath.Join(t.TempDir(), "rej.pcap")
	writePcap(t, path, [][]byte{roceV2Frame(t, b, mad)})
	rows := tsharkFields(t, path, "infiniband.mad", "infiniband.cm.rej.localcommid",
		"infiniband.cm.rej.remotecommid", "infiniband.cm.rej.msgrej", "infiniband.cm.rej.reason")
	var m CMMAD
	if err := m.DecodeFromBytes(mad, nil); err != nil {
		t.Fatal(err)
	}
	got := []uint64{uint64(m.LocalCommID), uint64(m.RemoteCommID), uint64(m.MsgRejected), uint64(m.RejectReason)}
	for i, s := range rows[1] {
		if want, _ := tsharkUint(t, s, false); want != got[i] {
			t.Errorf("field %d: tshark says %#x, we say %#x", i, want, got[i])
		}
	}
}

func TestCMMADTruncated(t *testing.T) {
	full := realMAD(t, "linlinw5_rping.pcap", 1)[:MADLen]
	var whole CMMAD
	if err := whole.DecodeFromBytes(full, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		n    int
		want func(m CMMAD) CMMAD
	}{
		{MADHeaderLen, func(m CMMAD) CMMAD {
			return CMMAD{BaseVersion: m.BaseVersion, MgmtClass: m.MgmtClass, ClassVersion: m.ClassVersion,
				Method: m.Method, TransactionID: m.TransactionID, AttributeID: m.AttributeID, Truncated: true}
		}},
		{MADHeaderLen + 30, func(m CMMAD) CMMAD {
			m.LocalQKey, m.LocalQPN, m.ResponderResources, m.InitiatorDepth = 0, 0, 0, 0
			m.StartingPSN, m.PKey, m.IP, m.Truncated = 0, 0, IPCMData{}, true
			return m
		}},
		{MADHeaderLen + 140 + 35, func(m CMMAD) CMMAD { m.IP, m.Truncated = IPCMData{}, true; return m }},
		{MADHeaderLen + 140 + 36, func(m CMMAD) CMMAD { m.Truncated = true; return m }},
		{MADLen - 1, func(m CMMAD) CMMAD { m.Truncated = true; return m }},
	}
	for _, tt := range tests {
		var fb feedback
		var m CMMAD
		if err := m.DecodeFromBytes(full[:tt.n], &fb); err != nil {
			t.Fatalf("%d bytes: want no error, got %v", tt.n, err)
		}
		if want := tt.want(cmFields(whole)); !reflect.DeepEqual(cmFields(m), want) {
			t.Errorf("%d bytes: want %+v\n got %+v", tt.n, want, cmFields(m))
		}
		if fb.truncated != 1 {
			t.Errorf("%d bytes: want one SetTruncated, got %d", tt.n, fb.truncated)
		}
	}
	var m CMMAD
	err := m.DecodeFromBytes(full[:23], nil)
	var he *HeaderError
	if !errors.As(err, &he) || he.Header != "MAD" || he.Have != 23 || he.Need != 24 {
		t.Errorf("23 bytes: want HeaderError{MAD 23 24}, got %v", err)
	}
}

func TestCMAttributeString(t *testing.T) {
	want := map[CMAttribute]string{
		CMAttrClassPortInfo: "ClassPortInfo", CMAttrREQ: "REQ", CMAttrMRA: "MRA", CMAttrREJ: "REJ",
		CMAttrREP: "REP", CMAttrRTU: "RTU", CMAttrDREQ: "DREQ", CMAttrDREP: "DREP",
		CMAttrSIDRREQ: "SIDR_REQ", CMAttrSIDRREP: "SIDR_REP", CMAttrLAP: "LAP", CMAttrAPR: "APR",
		0x0035: "CMAttribute(0x0035)",
	}
	for a, w := range want {
		if got := a.String(); got != w {
			t.Errorf("CMAttribute(%#x): want %q, got %q", uint16(a), w, got)
		}
	}
	for ps, w := range map[uint8]string{0x02: "IPoIB", 0x06: "TCP", 0x11: "UDP", 0x3f: "IB", 0x07: "0x07"} {
		if got := PortSpaceName(ps); got != w {
			t.Errorf("PortSpaceName(%#x): want %q, got %q", ps, w, got)
		}
	}
	var m CMMAD
	if m.LayerType() != LayerTypeCMMAD || m.CanDecode() != LayerTypeCMMAD || m.NextLayerType() != gopacket.LayerTypeZero {
		t.Error("CMMAD layer types wrong")
	}
}

// cmFieldValue reads one CM message field of m, for TestCMMADCaptured.
func cmFieldValue(m *CMMAD, f CMFields) uint64 {
	switch f {
	case CMFieldLocalCommID:
		return uint64(m.LocalCommID)
	case CMFieldRemoteCommID:
		return uint64(m.RemoteCommID)
	case CMFieldServiceID:
		return m.ServiceID
	case CMFieldLocalCAGUID:
		return m.LocalCAGUID
	case CMFieldLocalQKey:
		return uint64(m.LocalQKey)
	case CMFieldLocalQPN:
		return uint64(m.LocalQPN)
	case CMFieldStartingPSN:
		return uint64(m.StartingPSN)
	case CMFieldPKey:
		return uint64(m.PKey)
	case CMFieldResponderResources:
		return uint64(m.ResponderResources)
	case CMFieldInitiatorDepth:
		return uint64(m.InitiatorDepth)
	case CMFieldTransportServiceType:
		return uint64(m.TransportServiceType)
	case CMFieldRemoteQPN:
		return uint64(m.RemoteQPN)
	case CMFieldMsgRejected:
		return uint64(m.MsgRejected)
	case CMFieldRejectReason:
		return uint64(m.RejectReason)
	}
	panic("unknown CM field")
}

// TestCMMADCaptured cuts a MAD of every CM message at every length and
// checks Captured: a field is in it exactly when the message has it (IBTA
// vol 1 §12.6.5-§12.6.11, §12.8, §12.11; the offsets below are the spec's,
// counted from the end of the 24-byte MAD header) and all its bytes were
// captured; a captured field has its value in the whole MAD, any other
// reads as zero.
func TestCMMADCaptured(t *testing.T) {
	type at struct {
		f         CMFields
		off, size int
	}
	ids := []at{{CMFieldLocalCommID, 0, 4}, {CMFieldRemoteCommID, 4, 4}}
	msgs := []struct {
		attr   CMAttribute
		fields []at
	}{
		{CMAttrREQ, []at{{CMFieldLocalCommID, 0, 4}, {CMFieldServiceID, 8, 8}, {CMFieldLocalCAGUID, 16, 8},
			{CMFieldLocalQKey, 28, 4}, {CMFieldLocalQPN, 32, 3}, {CMFieldResponderResources, 35, 1},
			{CMFieldInitiatorDepth, 39, 1}, {CMFieldTransportServiceType, 43, 1}, {CMFieldStartingPSN, 44, 3},
			{CMFieldPKey, 48, 2}}},
		{CMAttrREP, append(ids[:2:2], at{CMFieldLocalQKey, 8, 4}, at{CMFieldLocalQPN, 12, 3},
			at{CMFieldStartingPSN, 20, 3}, at{CMFieldResponderResources, 24, 1}, at{CMFieldInitiatorDepth, 25, 1},
			at{CMFieldLocalCAGUID, 28, 8})},
		{CMAttrREJ, append(ids[:2:2], at{CMFieldMsgRejected, 8, 1}, at{CMFieldRejectReason, 10, 2})},
		{CMAttrDREQ, append(ids[:2:2], at{CMFieldRemoteQPN, 8, 3})},
		{CMAttrMRA, ids}, {CMAttrRTU, ids}, {CMAttrDREP, ids}, {CMAttrLAP, ids}, {CMAttrAPR, ids},
		{CMAttrSIDRREQ, []at{{CMFieldLocalCommID, 0, 4}, {CMFieldPKey, 4, 2}, {CMFieldServiceID, 8, 8}}},
		{CMAttrSIDRREP, []at{{CMFieldLocalCommID, 0, 4}, {CMFieldLocalQPN, 8, 3}, {CMFieldServiceID, 12, 8},
			{CMFieldLocalQKey, 20, 4}}},
		{CMAttrClassPortInfo, nil},
	}
	for _, msg := range msgs {
		t.Run(msg.attr.String(), func(t *testing.T) {
			data := madBytes(MgmtClassCM, msg.attr, func(d []byte) {
				for i := range d {
					d[i] = 0xc0 | byte(i*7+1) // no field, nor its top bits, is zero
				}
			})
			var whole CMMAD
			if err := whole.DecodeFromBytes(data, nil); err != nil {
				t.Fatal(err)
			}
			for n := MADHeaderLen; n <= MADLen; n++ {
				var m CMMAD
				if err := m.DecodeFromBytes(data[:n], nil); err != nil {
					t.Fatalf("%d bytes: %v", n, err)
				}
				var want CMFields
				for _, a := range msg.fields {
					if MADHeaderLen+a.off+a.size <= n {
						want |= a.f
					}
				}
				if m.Captured != want {
					t.Fatalf("%d bytes: Captured %#x, want %#x", n, m.Captured, want)
				}
				for f := CMFieldLocalCommID; f <= CMFieldRejectReason; f <<= 1 {
					got, full := cmFieldValue(&m, f), cmFieldValue(&whole, f)
					switch {
					case m.Has(f) && got != full:
						t.Errorf("%d bytes: field %#x is %#x, %#x in the whole MAD", n, f, got, full)
					case !m.Has(f) && got != 0:
						t.Errorf("%d bytes: field %#x not captured but reads %#x", n, f, got)
					case m.Has(f) && full == 0:
						t.Errorf("%d bytes: field %#x reads zero: the test data should make it nonzero", n, f)
					}
				}
			}
		})
	}
}
