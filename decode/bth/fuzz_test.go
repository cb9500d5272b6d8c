package bth

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// fuzzCaptures are the real captures whose packets seed the fuzzers: between
// them every opcode, ETH and CM message the captures hold.
var fuzzCaptures = []string{
	"linlinw5_rping.pcap", "linlinw5_rdma_atomic_bw.pcap", "linlinw5_rdma_read_bw.pcap",
	"linlinw5_pingpong_uc.pcap", "linlinw5_pingpong_ud.pcap", "linlinw5_nccl_tree2_node0.pcap",
	"linlinw5_rdma_send_bw.pcap",
}

// seedRoCE adds up to two real frames per opcode of each capture, through
// pick (which returns what the fuzzer takes from a frame, or nil to skip).
func seedRoCE(f *testing.F, pick func(roceFrame) []byte) {
	for _, name := range fuzzCaptures {
		seen := map[byte]int{}
		for _, fr := range roceFrames(f, name) {
			if seen[fr.UDP[0]] >= 2 {
				continue
			}
			if d := pick(fr); d != nil {
				seen[fr.UDP[0]]++
				f.Add(append([]byte(nil), d...))
			}
		}
	}
}

// dirtyBTH is decoded into a reused struct before each fuzz input, so that
// any field the decoder forgets to reset shows.
var dirtyBTH = cat([]byte{0x4b, 0xf0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	tRDETH, tDETH, tRETH, tImmDt, tPayload)

func FuzzBTHDecode(f *testing.F) {
	seedRoCE(f, func(fr roceFrame) []byte { return fr.UDP })
	for op := 0; op < 256; op += 7 {
		f.Add(cat(bthBytes(Opcode(op)), tRDETH, tDETH, tXRCETH, tRETH, tAtomicETH))
	}
	f.Add(cat(bthBytes(0x81), make([]byte, 20)))
	f.Add(bthBytes(0x11)[:11])
	f.Fuzz(func(t *testing.T, data []byte) {
		var fresh, reused BTH
		errFresh := fresh.DecodeFromBytes(data, &feedback{})
		if err := reused.DecodeFromBytes(dirtyBTH, nil); err != nil {
			t.Fatal(err)
		}
		errReused := reused.DecodeFromBytes(data, nil)
		if (errFresh == nil) != (errReused == nil) || !reflect.DeepEqual(fresh, reused) {
			t.Fatalf("reused struct differs:\n%+v (%v)\nfresh:\n%+v (%v)", reused, errReused, fresh, errFresh)
		}
		// DecodeReused, into a BTH full of another packet's headers, and
		// the decode as it was (refDecode) agree with it.
		checkDecodeRef(t, data, &reused)
		b := &fresh
		if len(data) < BTHLen {
			if !errors.Is(errFresh, ErrShortHeader) {
				t.Fatalf("%d bytes: want ErrShortHeader, got %v", len(data), errFresh)
			}
			return
		}
		if errFresh != nil {
			if !errors.Is(errFresh, ErrBadVersion) && !errors.Is(errFresh, ErrReservedOpcode) {
				t.Fatalf("unexpected error %v", errFresh)
			}
			if b.Ext != 0 {
				t.Fatalf("error with Ext %v", b.Ext)
			}
		}
		// Contents and Payload split the input at HeaderLen.
		if b.HeaderLen() != len(b.Contents) || len(b.Contents)+len(b.Payload) != len(data) ||
			!bytes.Equal(b.Contents, data[:len(b.Contents)]) {
			t.Fatalf("HeaderLen %d, Contents %d, Payload %d, data %d", b.HeaderLen(), len(b.Contents), len(b.Payload), len(data))
		}
		if errFresh == nil && !b.Truncated && b.Ext != b.Opcode.Headers() {
			t.Fatalf("whole decode: Ext %v, opcode wants %v", b.Ext, b.Opcode.Headers())
		}
		if b.Truncated != (b.Ext != b.Opcode.Headers() && errFresh == nil) {
			t.Fatalf("Truncated %v with Ext %v of %v", b.Truncated, b.Ext, b.Opcode.Headers())
		}
		// Re-encoding gives the header bytes decoded.
		enc := b.AppendHeaders(nil)
		if len(enc) != b.Opcode.HeaderLen() || !bytes.Equal(enc[:len(b.Contents)], b.Contents) {
			t.Fatalf("AppendHeaders:\n got % x\nwant % x", enc, b.Contents)
		}
		if n := b.PayloadLen(len(data)); n < 0 || n > len(data) {
			t.Fatalf("PayloadLen %d of %d bytes", n, len(data))
		}
		if err := b.CheckLength(len(data)); err == nil && !b.Opcode.IsCNP() && b.PayloadLen(len(data)) != len(data)-b.Opcode.HeaderLen()-int(b.PadCount)-ICRCLen {
			t.Fatalf("CheckLength passed but PayloadLen clamped")
		}
		_ = b.NextLayerType()
		_ = b.Opcode.String()
	})
}

func FuzzGRHDecode(f *testing.F) {
	f.Add(roceV1())
	f.Add(tGRH[:39])
	f.Add(append(append([]byte(nil), tGRH...), 0xff))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fresh, reused GRH
		errFresh := fresh.DecodeFromBytes(data, nil)
		_ = reused.DecodeFromBytes(roceV1(), nil)
		errReused := reused.DecodeFromBytes(data, nil)
		if (errFresh == nil) != (errReused == nil) || !reflect.DeepEqual(fresh, reused) {
			t.Fatalf("reused struct differs:\n%+v\nfresh:\n%+v", reused, fresh)
		}
		if (errFresh != nil) != (len(data) < GRHLen) {
			t.Fatalf("%d bytes: error %v", len(data), errFresh)
		}
		if errFresh == nil {
			if enc := fresh.AppendTo(nil); !bytes.Equal(enc, data[:GRHLen]) {
				t.Fatalf("AppendTo:\n got % x\nwant % x", enc, data[:GRHLen])
			}
			_ = fresh.NextLayerType()
			_, _ = fresh.SrcAddr(), fresh.DstAddr()
		}
		_ = VerifyICRCv1(data)
	})
}

func FuzzCMMADDecode(f *testing.F) {
	seedRoCE(f, func(fr roceFrame) []byte {
		var b BTH
		if b.DecodeFromBytes(fr.UDP, nil) != nil || b.NextLayerType() != LayerTypeCMMAD {
			return nil
		}
		return b.Payload
	})
	for _, a := range []CMAttribute{CMAttrREJ, CMAttrMRA, CMAttrSIDRREQ, CMAttrSIDRREP, CMAttrLAP, CMAttrAPR, 0x99} {
		f.Add(madBytes(MgmtClassCM, a, func(d []byte) { d[0] = 0xff }))
	}
	f.Add(madBytes(0x03, 0x35, nil)[:100])
	f.Fuzz(func(t *testing.T, data []byte) {
		var fresh, reused CMMAD
		errFresh := fresh.DecodeFromBytes(data, nil)
		reqIP := madBytes(MgmtClassCM, CMAttrREQ, func(d []byte) {
			for i := range d {
				d[i] = 0xff
			}
			binary.BigEndian.PutUint64(d[8:], 0x0000000001060bb8)
			d[141] = 0x40
		})
		_ = reused.DecodeFromBytes(reqIP, nil)
		errReused := reused.DecodeFromBytes(data, nil)
		if (errFresh == nil) != (errReused == nil) || !reflect.DeepEqual(fresh, reused) {
			t.Fatalf("reused struct differs:\n%+v\nfresh:\n%+v", reused, fresh)
		}
		if (errFresh != nil) != (len(data) < MADHeaderLen) {
			t.Fatalf("%d bytes: error %v", len(data), errFresh)
		}
		if errFresh == nil {
			n := min(len(data), MADLen)
			if len(fresh.Contents) != n || len(fresh.Payload) != len(data)-n || fresh.Truncated != (n < MADLen) {
				t.Fatalf("Contents %d Payload %d Truncated %v for %d bytes", len(fresh.Contents), len(fresh.Payload), fresh.Truncated, len(data))
			}
			if fresh.IP.Valid && (!fresh.IsIPService() || fresh.AttributeID != CMAttrREQ) {
				t.Fatalf("IP data valid on %v service %#x", fresh.AttributeID, fresh.ServiceID)
			}
			for f := CMFieldLocalCommID; f <= CMFieldRejectReason; f <<= 1 {
				if v := cmFieldValue(&fresh, f); !fresh.Has(f) && v != 0 {
					t.Fatalf("field %#x not captured, but reads %#x", f, v)
				}
			}
			if fresh.Captured != 0 && !fresh.IsCM() {
				t.Fatalf("class %#x: CM fields %#x captured", fresh.MgmtClass, fresh.Captured)
			}
			_ = fresh.AttributeID.String()
			_ = PortSpaceName(fresh.PortSpace())
		}
	})
}

func FuzzICRCv2(f *testing.F) {
	seedRoCE(f, func(fr roceFrame) []byte { return fr.IP })
	f.Add(roceV2IPv6())
	f.Add(withOptions(roceV2IPv6()))
	f.Add([]byte{0x45})
	f.Fuzz(func(t *testing.T, ip []byte) {
		checkICRC(t, ip) // against the plain computation, and ICRCv1 too
		crc, err := ICRCv2(ip)
		st := VerifyICRCv2(ip)
		switch {
		case err != nil:
			if st != ICRCUnchecked {
				t.Fatalf("error %v but status %v", err, st)
			}
			if !errors.Is(err, ErrShortHeader) && !errors.Is(err, ErrNotRoCEv2) {
				t.Fatalf("unexpected error %v", err)
			}
		case binary.LittleEndian.Uint32(ip[len(ip)-ICRCLen:]) == crc:
			if st != ICRCOK {
				t.Fatalf("trailer matches %#x but status %v", crc, st)
			}
		default:
			if st != ICRCBad {
				t.Fatalf("trailer differs from %#x but status %v", crc, st)
			}
			// Writing the computed ICRC makes the packet good.
			p := append([]byte(nil), ip...)
			binary.LittleEndian.PutUint32(p[len(p)-ICRCLen:], crc)
			if VerifyICRCv2(p) != ICRCOK {
				t.Fatal("packet with its computed ICRC is not ok")
			}
		}
	})
}
