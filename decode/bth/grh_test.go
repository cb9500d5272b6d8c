package bth

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"testing"

	"github.com/google/gopacket"
)

// tGRH is a hand-built GRH: IPVer 6, TClass 0xa5, FlowLabel 0x12345,
// PayLen 0x0020, NxtHdr 0x1b, HopLmt 0x40, SGID ::ffff:10.0.0.1,
// DGID fe80::2.
var tGRH = []byte{
	0x6a, 0x51, 0x23, 0x45, 0x00, 0x20, 0x1b, 0x40,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1,
	0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
}

func TestGRHDecode(t *testing.T) {
	data := append(append([]byte(nil), tGRH...), bthBytes(0x11)...)
	var g GRH
	if err := g.DecodeFromBytes(data, nil); err != nil {
		t.Fatalf("want no error, got %v", err)
	}
	want := GRH{IPVersion: 6, TrafficClass: 0xa5, FlowLabel: 0x12345, PayloadLength: 0x20,
		NextHeader: NextHeaderIBA, HopLimit: 0x40, SGID: [16]byte(tGRH[8:24]), DGID: [16]byte(tGRH[24:40])}
	got := g
	got.BaseLayer.Contents, got.BaseLayer.Payload = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("want %+v\n got %+v", want, got)
	}
	if !bytes.Equal(g.LayerContents(), tGRH) || len(g.LayerPayload()) != BTHLen {
		t.Errorf("Contents/Payload: want 40/12 bytes, got %d/%d", len(g.LayerContents()), len(g.LayerPayload()))
	}
	if g.SrcAddr() != netip.MustParseAddr("10.0.0.1") || g.DstAddr() != netip.MustParseAddr("fe80::2") {
		t.Errorf("addresses: want 10.0.0.1 and fe80::2, got %v and %v", g.SrcAddr(), g.DstAddr())
	}
	if g.NextLayerType() != LayerTypeBTH || g.LayerType() != LayerTypeGRH || g.CanDecode() != LayerTypeGRH {
		t.Errorf("layer types: got next %v, type %v", g.NextLayerType(), g.LayerType())
	}
	if enc := g.AppendTo(nil); !bytes.Equal(enc, tGRH) {
		t.Errorf("AppendTo: want % x\n got % x", tGRH, enc)
	}
	g.NextHeader = 0x11
	if g.NextLayerType() != gopacket.LayerTypePayload {
		t.Errorf("NextHeader 0x11: want Payload, got %v", g.NextLayerType())
	}
}

func TestGRHShort(t *testing.T) {
	var g GRH
	err := g.DecodeFromBytes(tGRH[:39], nil)
	var he *HeaderError
	if !errors.As(err, &he) || !errors.Is(err, ErrShortHeader) || he.Header != "GRH" || he.Have != 39 || he.Need != 40 {
		t.Errorf("want HeaderError{GRH 39 40}, got %v", err)
	}
}

func TestGRHSerialize(t *testing.T) {
	g := GRH{IPVersion: 6, TrafficClass: 0xa5, FlowLabel: 0x12345, NextHeader: NextHeaderIBA, HopLimit: 0x40,
		SGID: [16]byte(tGRH[8:24]), DGID: [16]byte(tGRH[24:40])}
	buf := gopacket.NewSerializeBuffer()
	payload := make([]byte, 0x20)
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, &g, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	if got := buf.Bytes()[:GRHLen]; !bytes.Equal(got, tGRH) {
		t.Errorf("want % x\n got % x", tGRH, got)
	}
}

func TestCNPDecode(t *testing.T) {
	body := make([]byte, CNPPayloadLen+ICRCLen)
	body[0], body[15], body[16] = 0xaa, 0xbb, 0xcc
	var c CNP
	if err := c.DecodeFromBytes(body, nil); err != nil || c.Truncated {
		t.Fatalf("want whole decode, got %v, truncated %v", err, c.Truncated)
	}
	if c.Reserved[0] != 0xaa || c.Reserved[15] != 0xbb || len(c.LayerPayload()) != ICRCLen || c.LayerPayload()[0] != 0xcc {
		t.Errorf("want reserved aa..bb and 4 ICRC bytes after, got %x, payload %x", c.Reserved, c.LayerPayload())
	}
	var fb feedback
	if err := c.DecodeFromBytes(body[:10], &fb); err != nil || !c.Truncated || fb.truncated != 1 || c.Reserved[15] != 0 {
		t.Errorf("10 bytes: want truncated, cleared, got %v %v %d %x", err, c.Truncated, fb.truncated, c.Reserved)
	}
	buf := gopacket.NewSerializeBuffer()
	c.Reserved[3] = 7
	if err := c.SerializeTo(buf, gopacket.SerializeOptions{}); err != nil || len(buf.Bytes()) != 16 || buf.Bytes()[3] != 7 {
		t.Errorf("SerializeTo: want 16 bytes, got %v % x", err, buf.Bytes())
	}
	if c.LayerType() != LayerTypeCNP || c.CanDecode() != LayerTypeCNP || c.NextLayerType() != gopacket.LayerTypeZero {
		t.Error("CNP layer types wrong")
	}
}
