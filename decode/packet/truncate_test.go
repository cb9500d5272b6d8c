package packet

import (
	"slices"
	"testing"

	"github.com/rocedump/rocedump/decode/bth"
)

// encapNoEth returns the Encap layers without the "eth" entries, which are
// inserted only once the walk knows a frame carries a tunnel.
func encapNoEth(p *Packet) []EncapLayer {
	var out []EncapLayer
	for _, e := range p.EncapLayers() {
		if e.Kind != EncapEthernet {
			out = append(out, e)
		}
	}
	return out
}

// TestDecodeTruncated decodes every case cut at every length from 0 to the
// whole frame, as a snap length would cut it: the walk must not panic, must
// say Truncated, must not call a cut valid frame malformed, and must agree
// with the whole frame on every field it got far enough to decode.
func TestDecodeTruncated(t *testing.T) {
	var d Decoder
	var full, q Packet
	for _, c := range decodeCases() {
		t.Run(c.name, func(t *testing.T) {
			if err := d.Decode(c.lt, c.data, len(c.data), &full); err != nil {
				t.Fatal(err)
			}
			fullEncap := encapNoEth(&full)
			for n := range len(c.data) {
				if err := d.Decode(c.lt, c.data[:n], len(c.data), &q); err != nil {
					t.Fatal(err)
				}
				checkPrefix(t, n, &q, &full, fullEncap)
			}
		})
	}
}

func checkPrefix(t *testing.T, n int, q, full *Packet, fullEncap []EncapLayer) {
	t.Helper()
	if !q.Truncated {
		t.Errorf("cut at %d: Truncated false", n)
	}
	if q.CapLen != n || q.OrigLen != full.CapLen {
		t.Errorf("cut at %d: CapLen, OrigLen = %d, %d", n, q.CapLen, q.OrigLen)
	}
	if full.Malformed == ReasonNone && (q.Malformed != ReasonNone || q.Kind == KindMalformed) {
		t.Errorf("cut at %d: %v %q, whole frame is fine", n, q.Kind, q.Malformed)
	}
	if full.Kind != KindMalformed && q.Kind == KindRoCE && full.Kind != KindRoCE {
		t.Errorf("cut at %d: RoCE, whole frame is %v", n, full.Kind)
	}
	qEncap := encapNoEth(q)
	if len(qEncap) > len(fullEncap) || !slices.Equal(qEncap, fullEncap[:len(qEncap)]) {
		t.Errorf("cut at %d: Encap %s is not a prefix of the whole frame's %s", n, q.AppendEncap(nil), full.AppendEncap(nil))
	}
	if q.ICRC != bth.ICRCUnchecked && q.ICRC != full.ICRC {
		t.Errorf("cut at %d: ICRC %v, whole frame %v", n, q.ICRC, full.ICRC)
	}
	if !slices.Equal(qEncap, fullEncap) || q.Note != full.Note {
		return // the cut frame stopped in an outer frame
	}
	if q.IPVersion != 0 {
		if q.IPVersion != full.IPVersion || q.Src != full.Src || q.Dst != full.Dst ||
			q.DSCP != full.DSCP || q.ECN != full.ECN || q.IPTotalLen != full.IPTotalLen {
			t.Errorf("cut at %d: IP fields differ: %v %v>%v %d, whole %v %v>%v %d", n,
				q.IPVersion, q.Src, q.Dst, q.IPTotalLen, full.IPVersion, full.Src, full.Dst, full.IPTotalLen)
		}
		if q.IPVersion == 4 && q.Proto != full.Proto {
			t.Errorf("cut at %d: Proto %d, whole %d", n, q.Proto, full.Proto)
		}
	}
	if q.DstPort != 0 && (q.SrcPort != full.SrcPort || q.DstPort != full.DstPort) {
		t.Errorf("cut at %d: ports %d>%d, whole %d>%d", n, q.SrcPort, q.DstPort, full.SrcPort, full.DstPort)
	}
	if q.UDPLen != 0 && q.UDPLen != full.UDPLen {
		t.Errorf("cut at %d: UDPLen %d, whole %d", n, q.UDPLen, full.UDPLen)
	}
	if q.HasBTH {
		if q.BTH.Opcode != full.BTH.Opcode || q.BTH.DestQP != full.BTH.DestQP || q.BTH.PSN != full.BTH.PSN {
			t.Errorf("cut at %d: BTH %v QP %d PSN %d, whole %v QP %d PSN %d", n,
				q.BTH.Opcode, q.BTH.DestQP, q.BTH.PSN, full.BTH.Opcode, full.BTH.DestQP, full.BTH.PSN)
		}
		if full.Kind == KindRoCE && q.PayloadLen != full.PayloadLen {
			t.Errorf("cut at %d: PayloadLen %d, whole %d", n, q.PayloadLen, full.PayloadLen)
		}
	}
	if q.HasCM && q.CM.AttributeID != full.CM.AttributeID {
		t.Errorf("cut at %d: CM %v, whole %v", n, q.CM.AttributeID, full.CM.AttributeID)
	}
	if q.HasPFC && q.PFC != full.PFC {
		t.Errorf("cut at %d: PFC %+v, whole %+v", n, q.PFC, full.PFC)
	}
}
