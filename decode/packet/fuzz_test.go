package packet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
)

// fuzzLinkTypes are the link types FuzzDecode picks from: every supported
// one and one that is not.
var fuzzLinkTypes = []capture.LinkType{
	capture.LinkTypeEthernet, capture.LinkTypeRaw, linkTypeRawBSD, linkTypeRawOpenBSD,
	capture.LinkTypeIPv4, capture.LinkTypeIPv6, capture.LinkTypeLinuxSLL, capture.LinkTypeLinuxSLL2,
	capture.LinkTypeNull, capture.LinkTypeLoop, capture.LinkTypeERF,
}

func linkTypeIndex(lt capture.LinkType) uint8 {
	for i, l := range fuzzLinkTypes {
		if l == lt {
			return uint8(i)
		}
	}
	panic(fmt.Sprint("no fuzz link type ", lt))
}

// dirtyPacket returns a Packet with most fields set, by decoding a CM MAD
// mirrored through ERSPAN, then a PFC frame over it by hand.
func dirtyPacket() Packet {
	var d Decoder
	var p Packet
	for _, c := range decodeCases() {
		if c.name == "cm req" {
			inner := eth(0x0800, c.data[14:], vtag{0x8100, 5, 42})
			frame := mirror(fS|fK, 0x22eb, func(b []byte) []byte { return erspan3(9, 0, true, b) }, inner)
			if err := d.Decode(capture.LinkTypeEthernet, frame[:len(frame)-3], len(frame), &p); err != nil {
				panic(err)
			}
		}
	}
	p.HasPFC, p.PFC = true, PFCFrame{Opcode: 0x0101, ClassEnable: 0xff, Quanta: [8]uint16{1, 2, 3, 4, 5, 6, 7, 8}}
	p.Malformed, p.Note, p.Fragment, p.TCPFlags = ReasonBadTCP, ReasonFragment, true, 0x12
	return p
}

// fuzzSeeds adds the table cases, the mirror frames and, from each real
// capture, the frames that decode to a kind of frame not seen before.
func fuzzSeeds(f *testing.F) {
	for _, c := range decodeCases() {
		f.Add(linkTypeIndex(c.lt), c.data, uint16(0))
		f.Add(linkTypeIndex(c.lt), c.data[:len(c.data)*3/4], uint16(len(c.data)/4))
	}
	for _, m := range mirrorFrames() {
		f.Add(linkTypeIndex(capture.LinkTypeEthernet), m.data, uint16(m.origLen-len(m.data)))
	}
	// IPv6 layouts the table does not have: an AH, a chain of routing,
	// fragment (atomic) and destination options headers, and a jumbogram
	// (payload length 0, hop-by-hop Jumbo Payload option, RFC 2675).
	roce := udp(49152, 4791, ibPayload(rcWrite, payload64))
	ah := cat([]byte{17, 2, 0, 0}, be32(0x100), be32(1), be32(0xdeadbeef), roce)
	chain := cat([]byte{44, 0, 0, 0, 0, 0, 0, 0}, ip6frag(60, 0, false, ip6ext(17, roce)))
	jumbo := ip6("fd00::1", "fd00::2", 0, cat([]byte{17, 0, 0xc2, 4}, be32(uint32(8+len(roce))), roce))
	jumbo[4], jumbo[5] = 0, 0
	for _, b := range [][]byte{
		eth(0x86dd, ip6("fd00::1", "fd00::2", 51, ah)),
		eth(0x86dd, ip6("fd00::1", "fd00::2", 43, chain), vtag{0x88a8, 0, 7}, vtag{0x8100, 3, 100}),
		eth(0x86dd, jumbo),
	} {
		f.Add(linkTypeIndex(capture.LinkTypeEthernet), b, uint16(0))
	}
	files, _ := filepath.Glob(filepath.Join(realDir, "*.pcap"))
	var d Decoder
	var p Packet
	for _, path := range files {
		seen := map[string]bool{}
		for _, fr := range readCapture(f, path) {
			if d.Decode(fr.lt, fr.data, fr.origLen, &p) != nil {
				continue
			}
			key := fmt.Sprint(p.Kind, p.Malformed, p.Note, string(p.AppendEncap(nil)), p.EtherType, p.Proto, p.BTH.Opcode)
			if !seen[key] && len(seen) < 8 {
				seen[key] = true
				f.Add(linkTypeIndex(fr.lt), fr.data, uint16(fr.origLen-len(fr.data)))
			}
		}
	}
}

// FuzzDecode decodes arbitrary bytes under every link type: the walk must
// not panic, must keep its invariants, and must give the same Packet whether
// it decodes into a fresh one or into one full of another frame's fields;
// and Decode, with its fast path, must give the same Packet as the walk
// alone.
func FuzzDecode(f *testing.F) {
	fuzzSeeds(f)
	dirty := dirtyPacket()
	f.Fuzz(func(t *testing.T, sel uint8, data []byte, extra uint16) {
		lt := fuzzLinkTypes[int(sel)%len(fuzzLinkTypes)]
		origLen := len(data) + int(extra)
		var d Decoder
		var fresh Packet
		err := d.Decode(lt, data, origLen, &fresh)
		if Supported(lt) != (err == nil) {
			t.Fatalf("%v: Supported %v, err %v", lt, Supported(lt), err)
		}
		if err != nil {
			if !errors.Is(err, ErrUnknownLinkType) {
				t.Fatalf("error %v does not wrap ErrUnknownLinkType", err)
			}
			return
		}
		checkInvariants(t, &fresh, data, origLen)
		var general Packet
		if err := d.decodeGeneral(lt, data, origLen, &general); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&fresh, &general) {
			t.Fatalf("Decode differs from the walk:\n%s", diffPackets(&general, &fresh))
		}
		if lt == capture.LinkTypeEthernet {
			fast := dirty
			if decodeFast(data, origLen, &fast) && !reflect.DeepEqual(&fast, &general) {
				t.Fatalf("fast path differs from the walk:\n%s", diffPackets(&general, &fast))
			}
		}
		reused := dirty
		if err := d.Decode(lt, data, origLen, &reused); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&reused, &fresh) {
			t.Fatalf("decoding into a used Packet differs:\nfresh  %+v\nreused %+v", summarize(&fresh), summarize(&reused))
		}
		checkPeek(t, lt, data, &fresh)
		if lt == capture.LinkTypeEthernet {
			checkPeekWalk(t, "fuzz", data)
		}
	})
}

// checkPeek checks what PeekRoCEv2IPv4 and PeekRoCEv2IPv4QP promise
// about the frame p was decoded from: a frame they accept is RoCE or
// malformed, a RoCE packet's addresses are the ones they read, and a BTH's
// destination QP the one PeekRoCEv2IPv4QP read.
func checkPeek(t *testing.T, lt capture.LinkType, data []byte, p *Packet) {
	t.Helper()
	src, dst, ok := PeekRoCEv2IPv4(lt, data)
	qsrc, qdst, qp, qok, hasQP := PeekRoCEv2IPv4QP(lt, data)
	if qok != ok || qsrc != src || qdst != dst || (hasQP && !ok) {
		t.Fatalf("PeekRoCEv2IPv4QP = %08x > %08x, %v; PeekRoCEv2IPv4 = %08x > %08x, %v", qsrc, qdst, qok, src, dst, ok)
	}
	if !ok {
		return
	}
	if p.HasBTH && (!hasQP || p.BTH.DestQP != qp) {
		t.Fatalf("peek read QP %#x (found: %v), Decode %#x", qp, hasQP, p.BTH.DestQP)
	}
	if p.Kind == KindOther && (p.IPVersion != 0 || p.Src.IsValid() || p.Dst.IsValid() || p.HasPFC) {
		t.Fatalf("peek accepted a frame that decodes as another kind of frame with addresses (%+v)", summarize(p))
	}
	if p.Kind == KindRoCE {
		if s4, d4 := p.Src.As4(), p.Dst.As4(); !p.Src.Is4() || !p.Dst.Is4() ||
			binary.BigEndian.Uint32(s4[:]) != src || binary.BigEndian.Uint32(d4[:]) != dst {
			t.Fatalf("peek read %08x > %08x, Decode %v > %v", src, dst, p.Src, p.Dst)
		}
	}
}

// checkInvariants checks what holds for every decoded Packet.
func checkInvariants(t *testing.T, p *Packet, data []byte, origLen int) {
	t.Helper()
	switch {
	case p.CapLen != len(data) || p.OrigLen != origLen:
		t.Errorf("CapLen, OrigLen = %d, %d; want %d, %d", p.CapLen, p.OrigLen, len(data), origLen)
	case origLen > len(data) && !p.Truncated:
		t.Errorf("cut frame not Truncated")
	case p.NEncap < 0 || p.NEncap > MaxEncap:
		t.Errorf("NEncap %d", p.NEncap)
	case p.Kind == KindMalformed && p.Malformed == ReasonNone:
		t.Errorf("malformed without a reason")
	case p.Kind == KindRoCE && p.Malformed != ReasonNone:
		t.Errorf("RoCE with Malformed %q", p.Malformed)
	case (p.Kind == KindOther) != (p.RoCEVersion == 0):
		t.Errorf("Kind %v with RoCEVersion %d", p.Kind, p.RoCEVersion)
	case p.HasBTH && p.RoCEVersion == 0:
		t.Errorf("BTH outside RoCE")
	case p.HasMAD && !p.HasBTH:
		t.Errorf("MAD without BTH")
	case p.HasCM && !p.HasMAD:
		t.Errorf("HasCM without HasMAD")
	case p.PayloadLen < 0 || p.PayloadLen > 0xffff:
		t.Errorf("PayloadLen %d", p.PayloadLen)
	case p.Malformed != ReasonNone && p.Note != ReasonNone:
		t.Errorf("both Malformed %q and Note %q", p.Malformed, p.Note)
	}
	for _, e := range p.EncapLayers() {
		if e.Kind == EncapNone || e.Kind >= numEncapKinds {
			t.Errorf("Encap %s has layer kind %d", p.AppendEncap(nil), e.Kind)
		}
	}
	for _, e := range p.Encap[p.NEncap:] {
		if e != (EncapLayer{}) {
			t.Errorf("stale Encap entry %v past NEncap %d", e, p.NEncap)
		}
	}
	reusedInvariants(t, p)
}

// reusedInvariants checks what the fast path relies on in a Packet a Decode
// filled, to clear only what may be set (see decodeFast): a CM MAD is there
// only with HasMAD or CM.Contents, a PFC frame only with HasPFC, and an
// extended header only with its bit in BTH.Ext. (Encap entries past NEncap
// are zero: checkInvariants.)
func reusedInvariants(t *testing.T, p *Packet) {
	t.Helper()
	if !p.HasMAD && p.CM.Contents == nil && !reflect.DeepEqual(p.CM, bth.CMMAD{}) {
		t.Errorf("CM set without HasMAD or CM.Contents: %+v", p.CM)
	}
	if !p.HasPFC && p.PFC != (PFCFrame{}) {
		t.Errorf("PFC set without HasPFC: %+v", p.PFC)
	}
	var b bth.BTH
	for _, f := range []struct {
		h         bth.ExtHeaders
		got, zero any
	}{
		{bth.HasRDETH, p.BTH.RDETH, b.RDETH}, {bth.HasDETH, p.BTH.DETH, b.DETH},
		{bth.HasXRCETH, p.BTH.XRCETH, b.XRCETH}, {bth.HasFETH, p.BTH.FETH, b.FETH},
		{bth.HasRETH, p.BTH.RETH, b.RETH}, {bth.HasAtomicETH, p.BTH.AtomicETH, b.AtomicETH},
		{bth.HasAETH, p.BTH.AETH, b.AETH}, {bth.HasAtomicAckETH, p.BTH.AtomicAckETH, b.AtomicAckETH},
		{bth.HasImmDt, p.BTH.ImmDt, b.ImmDt}, {bth.HasIETH, p.BTH.IETH, b.IETH},
	} {
		if p.BTH.Ext&f.h == 0 && f.got != f.zero {
			t.Errorf("%v set without its bit in BTH.Ext %v: %+v", f.h, p.BTH.Ext, f.got)
		}
	}
}
