package packet

import (
	"encoding/binary"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// madFrame is a RoCEv2 frame carrying to QP1 a copy of madREQ with its
// base version, management class, method and attribute ID set.
func madFrame(base, class, method uint8, attr bth.CMAttribute) []byte {
	m := append([]byte(nil), madREQ...)
	m[0], m[1], m[3] = base, class, method
	binary.BigEndian.PutUint16(m[16:], uint16(attr))
	return eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(cmREQ, m)))))
}

// TestMADIsCMMessage: only the MADs the Communication Manager sends are CM
// (HasCM): class 0x07, base version 1, a message attribute (REQ to APR) with
// method Send, or ClassPortInfo with Get, Set or GetResp (IBTA vol 1
// §12.6, §13.4.2). Any other MAD to QP1, class 0x07 included, is a generic
// MAD: HasMAD with its header decoded, and no CM message fields. (tshark
// names every class-0x07 MAD after its attribute, whatever its method.)
func TestMADIsCMMessage(t *testing.T) {
	const get, set, getResp = 0x01, 0x02, 0x81
	for _, c := range []struct {
		name                string
		base, class, method uint8
		attr                bth.CMAttribute
		cm                  bool
	}{
		{"REQ", 1, 7, bth.MethodSend, bth.CMAttrREQ, true},
		{"APR", 1, 7, bth.MethodSend, bth.CMAttrAPR, true},
		{"Get ClassPortInfo", 1, 7, get, bth.CMAttrClassPortInfo, true},
		{"Set ClassPortInfo", 1, 7, set, bth.CMAttrClassPortInfo, true},
		{"GetResp ClassPortInfo", 1, 7, getResp, bth.CMAttrClassPortInfo, true},
		{"Get REQ", 1, 7, get, bth.CMAttrREQ, false},
		{"GetResp REQ", 1, 7, getResp, bth.CMAttrREQ, false},
		{"Send ClassPortInfo", 1, 7, bth.MethodSend, bth.CMAttrClassPortInfo, false},
		{"Send 0x0020", 1, 7, bth.MethodSend, 0x0020, false},
		{"Send 0x000f", 1, 7, bth.MethodSend, 0x000f, false},
		{"base version 2 REQ", 2, 7, bth.MethodSend, bth.CMAttrREQ, false},
		{"PerfMgt Get", 1, 4, get, 0x0012, false},
	} {
		var d Decoder
		var p Packet
		if err := d.Decode(capture.LinkTypeEthernet, madFrame(c.base, c.class, c.method, c.attr), 0, &p); err != nil {
			t.Fatal(err)
		}
		if p.HasCM != c.cm || !p.HasMAD {
			t.Errorf("%s: HasCM %v HasMAD %v, want HasCM %v HasMAD true", c.name, p.HasCM, p.HasMAD, c.cm)
		}
		m := &p.CM
		if m.BaseVersion != c.base || m.MgmtClass != c.class || m.Method != c.method || m.AttributeID != c.attr {
			t.Errorf("%s: header base %d class %#x method %#x attr %v", c.name, m.BaseVersion, m.MgmtClass, m.Method, m.AttributeID)
		}
		if want := c.cm && c.attr != bth.CMAttrClassPortInfo; m.Has(bth.CMFieldLocalCommID) != want || want != (m.LocalCommID == 0xcafe0001) {
			t.Errorf("%s: LocalCommID %#x captured %v, want it only in a CM message", c.name, m.LocalCommID, m.Has(bth.CMFieldLocalCommID))
		}
	}
}
