package bth

import (
	"errors"
	"reflect"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// layerTypes lists the layer types of a packet.
func layerTypes(p gopacket.Packet) []gopacket.LayerType {
	var ts []gopacket.LayerType
	for _, l := range p.Layers() {
		ts = append(ts, l.LayerType())
	}
	return ts
}

// realFrame returns the whole Ethernet frame of a real capture.
func realFrame(t *testing.T, name string, number int) []byte {
	t.Helper()
	for _, f := range roceFrames(t, name) {
		if f.Number == number {
			return append([]byte(nil), f.IP[:len(f.IP)]...)
		}
	}
	t.Fatalf("%s: no frame %d", name, number)
	return nil
}

// ethernet prefixes an Ethernet header with the given EtherType.
func ethernet(etherType uint16, body []byte) []byte {
	h := []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, byte(etherType >> 8), byte(etherType)}
	return append(h, body...)
}

func TestNewPacketLayers(t *testing.T) {
	var (
		eth, ip4, udp = layers.LayerTypeEthernet, layers.LayerTypeIPv4, layers.LayerTypeUDP
		payload       = gopacket.LayerTypePayload
	)
	cnp := roceV2Frame(t, &BTH{Opcode: OpcodeCNP, PKey: 0xffff, DestQP: 0x2b, BECN: true}, make([]byte, 16))
	writeImm := roceV2Frame(t, &BTH{Opcode: 0x0b, RETH: wantRETH, ImmDt: wantImmDt}, tPayload)
	rd := roceV2Frame(t, &BTH{Opcode: 0x4b, RDETH: wantRDETH, DETH: wantDETH, RETH: wantRETH, ImmDt: wantImmDt}, tPayload)
	tests := []struct {
		name  string
		frame []byte
		want  []gopacket.LayerType
	}{
		{"RC ACK", ethernet(0x0800, realFrame(t, "linlinw5_rping.pcap", 5)),
			[]gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeAETH, payload}},
		{"RC WRITE_FIRST", ethernet(0x0800, realIPv4(t)),
			[]gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeRETH, payload}},
		{"RC WRITE_ONLY_IMM", writeImm,
			[]gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeRETH, LayerTypeImmDt, payload}},
		{"RD WRITE_ONLY_IMM", rd,
			[]gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeRDETH, LayerTypeDETH, LayerTypeRETH, LayerTypeImmDt, payload}},
		{"CM REQ", ethernet(0x0800, realFrame(t, "linlinw5_rping.pcap", 1)),
			[]gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeDETH, LayerTypeCMMAD}},
		{"CNP", cnp, []gopacket.LayerType{eth, ip4, udp, LayerTypeBTH, LayerTypeCNP}},
		{"RoCEv1 ACK", ethernet(0x8915, roceV1()),
			[]gopacket.LayerType{eth, LayerTypeGRH, LayerTypeBTH, LayerTypeAETH, payload}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := gopacket.NewPacket(tt.frame, layers.LinkTypeEthernet, gopacket.Default)
			if el := p.ErrorLayer(); el != nil {
				t.Fatalf("decode error: %v", el.Error())
			}
			if got := layerTypes(p); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("layers: want %v, got %v", tt.want, got)
			}
		})
	}
}

func TestNewPacketValues(t *testing.T) {
	frame := roceV2Frame(t, &BTH{Opcode: 0x0b, PSN: 0x123, DestQP: 0x45, RETH: wantRETH, ImmDt: wantImmDt}, tPayload)
	p := gopacket.NewPacket(frame, layers.LinkTypeEthernet, gopacket.Default)
	b, ok := p.Layer(LayerTypeBTH).(*BTH)
	if !ok || b.PSN != 0x123 || b.DestQP != 0x45 {
		t.Fatalf("BTH layer: got %#v", p.Layer(LayerTypeBTH))
	}
	if r, ok := p.Layer(LayerTypeRETH).(*RETH); !ok || *r != wantRETH {
		t.Errorf("RETH layer: want %+v, got %#v", wantRETH, p.Layer(LayerTypeRETH))
	}
	if i, ok := p.Layer(LayerTypeImmDt).(*ImmDt); !ok || *i != wantImmDt {
		t.Errorf("ImmDt layer: want %+v, got %#v", wantImmDt, p.Layer(LayerTypeImmDt))
	}
	if app := p.ApplicationLayer(); app == nil || len(app.Payload()) != len(tPayload)+ICRCLen {
		t.Errorf("payload: want %d bytes (payload and ICRC), got %v", len(tPayload)+ICRCLen, app)
	}
	m := gopacket.NewPacket(ethernet(0x0800, realFrame(t, "linlinw5_rping.pcap", 1)), layers.LinkTypeEthernet, gopacket.Default)
	if cm, ok := m.Layer(LayerTypeCMMAD).(*CMMAD); !ok || cm.AttributeID != CMAttrREQ || cm.Port() != 7174 {
		t.Errorf("CMMAD layer: got %#v", m.Layer(LayerTypeCMMAD))
	}
	v1 := gopacket.NewPacket(ethernet(0x8915, roceV1()), layers.LinkTypeEthernet, gopacket.Default)
	if g, ok := v1.Layer(LayerTypeGRH).(*GRH); !ok || g.FlowLabel != 0x12345 {
		t.Errorf("GRH layer: got %#v", v1.Layer(LayerTypeGRH))
	}
	if layers.EthernetType(EtherTypeRoCEv1).String() != "RoCEv1" {
		t.Errorf("EtherType 0x8915: want RoCEv1, got %v", layers.EthernetType(EtherTypeRoCEv1))
	}
	for _, lt := range []gopacket.LayerType{LayerTypeBTH, LayerTypeRETH, LayerTypeAETH, LayerTypeDETH, LayerTypeImmDt,
		LayerTypeIETH, LayerTypeAtomicETH, LayerTypeAtomicAckETH, LayerTypeRDETH, LayerTypeXRCETH, LayerTypeFETH,
		LayerTypeGRH, LayerTypeCMMAD, LayerTypeCNP} {
		if lt < 1000 || lt > 1999 || lt.String() == "" || lt.String()[0] == 'L' {
			t.Errorf("layer type %d: want a registered name in 1000-1999, got %q", int(lt), lt.String())
		}
	}
}

func TestNewPacketErrors(t *testing.T) {
	t.Run("reserved opcode", func(t *testing.T) {
		frame := roceV2Frame(t, &BTH{Opcode: 0x15, PSN: 7}, tPayload)
		p := gopacket.NewPacket(frame, layers.LinkTypeEthernet, gopacket.Default)
		el := p.ErrorLayer()
		if el == nil || !errors.Is(el.Error(), ErrReservedOpcode) {
			t.Fatalf("want ErrReservedOpcode, got %v", el)
		}
		if b, ok := p.Layer(LayerTypeBTH).(*BTH); !ok || b.PSN != 7 {
			t.Errorf("want the BTH layer kept, got %v", layerTypes(p))
		}
	})
	t.Run("truncated", func(t *testing.T) {
		frame := realIPv4(t)
		frame = ethernet(0x0800, frame)[:14+20+8+12+10]
		p := gopacket.NewPacket(frame, layers.LinkTypeEthernet, gopacket.Default)
		b, ok := p.Layer(LayerTypeBTH).(*BTH)
		if !ok || !b.Truncated || !p.Metadata().Truncated {
			t.Errorf("want truncated BTH and packet, got %v", layerTypes(p))
		}
		if p.Layer(LayerTypeRETH) != nil {
			t.Error("want no RETH layer from a cut RETH")
		}
	})
}
