package packet

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

func TestLinkTypeError(t *testing.T) {
	var d Decoder
	p := dirtyPacket()
	data := []byte{1, 2, 3}
	err := d.Decode(capture.LinkTypeERF, data, 10, &p)
	const want = "unsupported link type ERF (197): rocedump reads Ethernet, raw IP, Linux cooked (SLL, SLL2) and BSD loopback captures"
	if err == nil || err.Error() != want {
		t.Fatalf("Decode(ERF) = %v, want %q", err, want)
	}
	var lte *LinkTypeError
	if !errors.Is(err, ErrUnknownLinkType) || !errors.As(err, &lte) || lte.LinkType != capture.LinkTypeERF {
		t.Errorf("error %#v does not unwrap to ErrUnknownLinkType / *LinkTypeError{ERF}", err)
	}
	if fresh := (Packet{CapLen: 3, OrigLen: 10}); !reflect.DeepEqual(p, fresh) {
		t.Errorf("Packet after an unsupported link type: %+v", summarize(&p))
	}
	if got := (&LinkTypeError{LinkType: 12345}).Error(); got != "unsupported link type LINKTYPE_12345: rocedump reads Ethernet, raw IP, Linux cooked (SLL, SLL2) and BSD loopback captures" {
		t.Errorf("unknown link type message %q", got)
	}
}

func TestSupported(t *testing.T) {
	for lt, want := range map[capture.LinkType]bool{
		0: true, 1: true, 12: true, 14: true, 101: true, 108: true, 113: true, 228: true, 229: true, 276: true,
		6: false, 9: false, 105: false, 127: false, 197: false, 247: false, 242: false,
	} {
		if Supported(lt) != want {
			t.Errorf("Supported(%v) = %v, want %v", lt, !want, want)
		}
	}
}

func TestEncapLayerString(t *testing.T) {
	for _, c := range []struct {
		e    EncapLayer
		want string
	}{
		{EncapLayer{EncapVLAN, 100}, "vlan:100"},
		{EncapLayer{EncapVLAN, 0}, "vlan:0"},
		{EncapLayer{EncapQinQ, 200}, "qinq:200"},
		{EncapLayer{EncapEthernet, 0}, "eth"},
		{EncapLayer{EncapIPv4, 0}, "ipv4"},
		{EncapLayer{EncapIPv6, 0}, "ipv6"},
		{EncapLayer{EncapUDP, 0}, "udp"},
		{EncapLayer{EncapGRE, 0}, "gre"},
		{EncapLayer{EncapGRE, 4294967295}, "gre:4294967295"},
		{EncapLayer{EncapERSPAN1, 0}, "erspan1"},
		{EncapLayer{EncapERSPAN2, 5}, "erspan2:5"},
		{EncapLayer{EncapERSPAN3, 1023}, "erspan3:1023"},
		{EncapLayer{EncapVXLAN, 5000}, "vxlan:5000"},
		{EncapLayer{EncapSLL, 0}, "sll"},
		{EncapLayer{EncapSLL2, 0}, "sll2"},
		{EncapLayer{EncapNull, 0}, "null"},
		{EncapLayer{99, 1}, "EncapKind(99)"},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("%#v.String() = %q, want %q", c.e, got, c.want)
		}
		if got := string(c.e.AppendString([]byte("x "))); got != "x "+c.want {
			t.Errorf("AppendString = %q", got)
		}
	}
	buf := make([]byte, 0, 64)
	p := Packet{NEncap: 3, Encap: [MaxEncap]EncapLayer{{EncapEthernet, 0}, {EncapIPv4, 0}, {EncapERSPAN2, 5}}}
	if n := testing.AllocsPerRun(10, func() { buf = p.AppendEncap(buf[:0]) }); n != 0 || string(buf) != "eth,ipv4,erspan2:5" {
		t.Errorf("AppendEncap = %q with %v allocations", buf, n)
	}
}

func TestStrings(t *testing.T) {
	for r := range numReasons {
		if r != ReasonNone && r.String() == "" {
			t.Errorf("Reason %d has no name", r)
		}
	}
	if ReasonShortBTH.String() != "short BTH" || Reason(200).String() != "Reason(200)" {
		t.Errorf("Reason strings: %q %q", ReasonShortBTH, Reason(200))
	}
	if KindRoCE.String() != "RoCE" || KindMalformed.String() != "malformed" || KindOther.String() != "other" || Kind(9).String() != "Kind(9)" {
		t.Error("Kind strings")
	}
}

// TestSnapLen checks how far a plain RoCE write is decoded at snap lengths
// that cut it inside each header.
func TestSnapLen(t *testing.T) {
	full := eth(0x0800, rcWrite4)
	var d Decoder
	var p Packet
	for _, c := range []struct {
		snap    int
		kind    Kind
		ip, bth bool
		reth    bool
		payload int
	}{
		{13, KindOther, false, false, false, 0},
		{33, KindOther, false, false, false, 0},
		{34, KindOther, true, false, false, 0},
		{37, KindOther, true, false, false, 0},
		{38, KindRoCE, true, false, false, 0},
		{53, KindRoCE, true, false, false, 0},
		{54, KindRoCE, true, true, false, 64},
		{69, KindRoCE, true, true, false, 64},
		{70, KindRoCE, true, true, true, 64},
		{128, KindRoCE, true, true, true, 64},
	} {
		if err := d.Decode(capture.LinkTypeEthernet, full[:c.snap], len(full), &p); err != nil {
			t.Fatal(err)
		}
		if p.Kind != c.kind || (p.IPVersion == 4) != c.ip || p.HasBTH != c.bth || p.BTH.Ext.Has(bth.HasRETH) != c.reth ||
			p.PayloadLen != c.payload || !p.Truncated || p.ICRC != bth.ICRCUnchecked || p.BTH.Truncated != (c.bth && !c.reth) {
			t.Errorf("snap %d: %v IPv%d HasBTH %v Ext %v PayloadLen %d Truncated %v ICRC %v BTH.Truncated %v",
				c.snap, p.Kind, p.IPVersion, p.HasBTH, p.BTH.Ext, p.PayloadLen, p.Truncated, p.ICRC, p.BTH.Truncated)
		}
	}
	// A CM MAD cut inside its message is still decoded as far as it goes.
	cm := eth(0x0800, withICRC(ip4("10.0.0.1", "10.0.0.2", 17, udp(49152, 4791, ibPayload(cmREQ, madREQ)))))
	for _, snap := range []int{14 + 20 + 8 + 12 + 8 + 23, 14 + 20 + 8 + 12 + 8 + 24, 14 + 20 + 8 + 12 + 8 + 30, 128} {
		if err := d.Decode(capture.LinkTypeEthernet, cm[:snap], len(cm), &p); err != nil {
			t.Fatal(err)
		}
		wantCM := snap >= 14+20+8+12+8+24
		if p.HasCM != wantCM || wantCM && (p.CM.AttributeID != bth.CMAttrREQ || !p.CM.Truncated) {
			t.Errorf("CM cut at %d: HasCM %v %v Truncated %v", snap, p.HasCM, p.CM.AttributeID, p.CM.Truncated)
		}
		if wantCM && snap >= 14+20+8+12+8+28 && p.CM.LocalCommID != 0xcafe0001 {
			t.Errorf("CM cut at %d: LocalCommID %#x", snap, p.CM.LocalCommID)
		}
	}
}

// ExampleDecoder_Decode decodes a RoCE write mirrored by a switch through
// ERSPAN type II.
func ExampleDecoder_Decode() {
	frame := mirror(fS, 0x88be, func(b []byte) []byte { return erspan2(5, false, b) },
		eth(0x0800, rcWrite4, vtag{0x8100, 3, 100}))

	var d Decoder
	var p Packet // reused for every frame
	if err := d.Decode(capture.LinkTypeEthernet, frame, len(frame), &p); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%v v%d %v > %v %v QP %d PSN %d payload %d ICRC %v\n",
		p.Kind, p.RoCEVersion, p.Src, p.Dst, p.BTH.Opcode, p.BTH.DestQP, p.BTH.PSN, p.PayloadLen, p.ICRC)
	fmt.Printf("encap %s, priority %d\n", p.AppendEncap(nil), p.PCP)
	// Output:
	// RoCE v2 10.0.0.1 > 10.0.0.2 RC_RDMA_WRITE_ONLY QP 210 PSN 4660 payload 64 ICRC ok
	// encap eth,ipv4,gre,erspan2:5,vlan:100, priority 3
}
