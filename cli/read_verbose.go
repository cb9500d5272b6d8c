package cli

import (
	"strconv"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// appendVerbose writes every header field of a packet, one header per
// indented line, after its summary line (rocedump read -v).
func appendVerbose(b []byte, rec *capture.Record, pkt *packet.Packet) []byte {
	b = append(b, "\n    frame "...)
	b = strconv.AppendInt(b, int64(rec.Number), 10)
	b = append(b, ": "...)
	b = strconv.AppendInt(b, int64(pkt.OrigLen), 10)
	b = append(b, " bytes on wire, "...)
	b = strconv.AppendInt(b, int64(pkt.CapLen), 10)
	b = append(b, " captured, link "...)
	b = append(b, rec.LinkType.Name()...) // String() would allocate
	b = append(b, " ("...)
	b = strconv.AppendUint(b, uint64(rec.LinkType), 10)
	b = append(b, ')')
	if pkt.NEncap > 0 {
		b = append(b, ", encap"...)
		for _, e := range pkt.EncapLayers() {
			b = append(b, ' ')
			b = e.AppendString(b)
		}
	}
	if pkt.HasVLAN {
		b = append(b, "\n    802.1Q vlan "...)
		b = strconv.AppendUint(b, uint64(pkt.VLAN), 10)
		b = append(b, " pcp "...)
		b = strconv.AppendUint(b, uint64(pkt.PCP), 10)
	}
	switch {
	case pkt.RoCEVersion == 1 && pkt.IPVersion == 0:
		// The GRH was cut or is not one: nothing of it to print.
	case pkt.RoCEVersion == 1:
		b = append(b, "\n    GRH sgid "...)
		b = pkt.Src.AppendTo(b)
		b = append(b, " dgid "...)
		b = pkt.Dst.AppendTo(b)
		b = append(b, " tclass dscp "...)
		b = strconv.AppendUint(b, uint64(pkt.DSCP), 10)
		b = append(b, " ecn "...)
		b = append(b, ecnName(pkt.ECN)...)
		b = appendFlowLabel(b, pkt.FlowLabel)
		b = append(b, " hoplmt "...)
		b = strconv.AppendUint(b, uint64(pkt.TTL), 10)
	default:
		if pkt.IPVersion == 6 {
			b = append(b, "\n    IPv6 "...)
		} else {
			b = append(b, "\n    IPv4 "...)
		}
		b = pkt.Src.AppendTo(b)
		b = append(b, " > "...)
		b = pkt.Dst.AppendTo(b)
		b = append(b, " dscp "...)
		b = strconv.AppendUint(b, uint64(pkt.DSCP), 10)
		b = append(b, " ecn "...)
		b = append(b, ecnName(pkt.ECN)...)
		if pkt.IPVersion == 6 {
			b = appendFlowLabel(b, pkt.FlowLabel)
			b = append(b, " hlim "...)
		} else {
			b = append(b, " ttl "...)
		}
		b = strconv.AppendUint(b, uint64(pkt.TTL), 10)
		b = append(b, " length "...)
		b = strconv.AppendInt(b, int64(pkt.IPTotalLen), 10)
		b = append(b, "\n    UDP sport "...)
		b = strconv.AppendUint(b, uint64(pkt.SrcPort), 10)
		b = append(b, " dport "...)
		b = strconv.AppendUint(b, uint64(pkt.DstPort), 10)
		if udpLenRead(pkt) {
			b = append(b, " length "...)
			b = strconv.AppendInt(b, int64(pkt.UDPLen), 10)
		} else {
			b = append(b, " [|udp]"...) // the length field was not captured
		}
	}
	if !pkt.HasBTH {
		if pkt.Kind == packet.KindRoCE && pkt.IPVersion == 0 {
			b = append(b, "\n    GRH cut off by the snap length"...)
		} else if pkt.Kind == packet.KindRoCE {
			b = append(b, "\n    BTH cut off by the snap length"...)
		}
		return b
	}
	h := &pkt.BTH
	b = append(b, "\n    BTH opcode "...)
	b = appendHex(b, uint64(h.Opcode), 2)
	b = append(b, " ("...)
	b = append(b, h.Opcode.String()...)
	b = append(b, ") se "...)
	b = appendBit(b, h.SolicitedEvent)
	b = append(b, " m "...)
	b = appendBit(b, h.MigReq)
	b = append(b, " pad "...)
	b = strconv.AppendUint(b, uint64(h.PadCount), 10)
	b = append(b, " tver "...)
	b = strconv.AppendUint(b, uint64(h.TransportVersion), 10)
	b = append(b, " pkey "...)
	b = appendHex(b, uint64(h.PKey), 4)
	b = append(b, " fecn "...)
	b = appendBit(b, h.FECN)
	b = append(b, " becn "...)
	b = appendBit(b, h.BECN)
	b = append(b, " dqpn "...)
	b = appendHex(b, uint64(h.DestQP), 6)
	b = append(b, " ackreq "...)
	b = appendBit(b, h.AckReq)
	b = append(b, " psn "...)
	b = strconv.AppendUint(b, uint64(h.PSN), 10)
	if h.Ext&bth.HasRDETH != 0 {
		b = append(b, "\n    RDETH ee_context "...)
		b = appendHex(b, uint64(h.RDETH.EECnxt), 6)
	}
	if h.Ext&bth.HasDETH != 0 {
		b = append(b, "\n    DETH qkey "...)
		b = appendHex(b, uint64(h.DETH.QKey), 8)
		b = append(b, " src_qp "...)
		b = appendHex(b, uint64(h.DETH.SrcQP), 6)
	}
	if h.Ext&bth.HasXRCETH != 0 {
		b = append(b, "\n    XRCETH xrc_srq "...)
		b = appendHex(b, uint64(h.XRCETH.XRCSRQ), 6)
	}
	if h.Ext&bth.HasFETH != 0 {
		b = append(b, "\n    FETH placement_type "...)
		b = strconv.AppendUint(b, uint64(h.FETH.PlacementType()), 10)
		b = append(b, " selectivity_level "...)
		b = strconv.AppendUint(b, uint64(h.FETH.SelectivityLevel()), 10)
		b = append(b, " ("...)
		b = appendHex(b, uint64(h.FETH.Raw), 8)
		b = append(b, ')')
	}
	if h.Ext&bth.HasRETH != 0 {
		b = append(b, "\n    RETH va "...)
		b = appendHex(b, h.RETH.VA, 16)
		b = append(b, " rkey "...)
		b = appendHex(b, uint64(h.RETH.RKey), 8)
		b = append(b, " dma_len "...)
		b = strconv.AppendUint(b, uint64(h.RETH.DMALen), 10)
	}
	if h.Ext&bth.HasAtomicETH != 0 {
		b = append(b, "\n    AtomicETH va "...)
		b = appendHex(b, h.AtomicETH.VA, 16)
		b = append(b, " rkey "...)
		b = appendHex(b, uint64(h.AtomicETH.RKey), 8)
		b = append(b, " swap_add "...)
		b = appendHex(b, h.AtomicETH.SwapData, 16)
		b = append(b, " compare "...)
		b = appendHex(b, h.AtomicETH.CompareData, 16)
	}
	if h.Ext&bth.HasAETH != 0 {
		b = append(b, "\n    AETH syndrome "...)
		b = appendHex(b, uint64(h.AETH.Syndrome), 2)
		b = append(b, " ("...)
		b = append(b, h.AETH.Kind().String()...)
		switch h.AETH.Kind() {
		case bth.AckKindACK:
			b = append(b, ", credits "...)
			b = strconv.AppendUint(b, uint64(h.AETH.Credits()), 10)
		case bth.AckKindRNRNAK:
			b = append(b, ", timer "...)
			b = strconv.AppendUint(b, uint64(h.AETH.RNRTimer()), 10)
			b = append(b, " = "...)
			b = append(b, bth.RNRTimerDuration(h.AETH.RNRTimer()).String()...)
		case bth.AckKindNAK:
			b = append(b, ", "...)
			b = append(b, h.AETH.NAKCode().String()...)
		}
		b = append(b, ") msn "...)
		b = strconv.AppendUint(b, uint64(h.AETH.MSN), 10)
	}
	if h.Ext&bth.HasAtomicAckETH != 0 {
		b = append(b, "\n    AtomicAckETH orig_remote_data "...)
		b = appendHex(b, h.AtomicAckETH.OrigRemoteData, 16)
	}
	if h.Ext&bth.HasImmDt != 0 {
		b = append(b, "\n    ImmDt "...)
		b = appendHex(b, uint64(h.ImmDt.Data), 8)
	}
	if h.Ext&bth.HasIETH != 0 {
		b = append(b, "\n    IETH rkey "...)
		b = appendHex(b, uint64(h.IETH.RKey), 8)
	}
	if pkt.HasCM {
		b = appendCMVerbose(b, &pkt.CM)
	} else if pkt.HasMAD {
		b = appendMADVerbose(b, &pkt.CM)
	}
	b = append(b, "\n    "...)
	if payloadKnown(pkt) {
		b = append(b, "payload "...)
		b = strconv.AppendInt(b, int64(pkt.PayloadLen), 10)
		b = append(b, " bytes, "...)
	}
	b = append(b, "icrc "...)
	b = append(b, pkt.ICRC.String()...)
	if pkt.Truncated {
		b = append(b, ", truncated"...)
	}
	if headersCut(pkt) {
		b = append(b, " (extended headers cut off)"...)
	}
	return b
}

// appendMADVerbose writes the common header (IBTA vol 1 §13.4.3) of a MAD
// to QP1 that is not a CM message; "(cut off)" ends a MAD the snap length
// cut.
func appendMADVerbose(b []byte, m *bth.CMMAD) []byte {
	b = append(b, "\n    MAD base_version "...)
	b = strconv.AppendUint(b, uint64(m.BaseVersion), 10)
	b = append(b, " class "...)
	b = appendHex(b, uint64(m.MgmtClass), 2)
	b = appendParenName(b, bth.MgmtClassName(m.MgmtClass))
	b = append(b, " class_version "...)
	b = strconv.AppendUint(b, uint64(m.ClassVersion), 10)
	b = append(b, " method "...)
	b = appendHex(b, uint64(m.Method), 2)
	b = appendParenName(b, bth.MADMethodName(m.MgmtClass, m.Method))
	b = append(b, " status "...)
	b = appendHex(b, uint64(m.Status), 4)
	b = append(b, " tid "...)
	b = appendHex(b, m.TransactionID, 16)
	b = append(b, " attribute "...)
	b = appendHex(b, uint64(m.AttributeID), 4)
	b = appendParenName(b, bth.MADAttributeName(m.MgmtClass, uint16(m.AttributeID)))
	b = append(b, " modifier "...)
	b = appendHex(b, uint64(m.AttributeModifier), 8)
	if m.Truncated {
		b = append(b, " (cut off)"...)
	}
	return b
}

// appendParenName writes " (name)" after a number, or nothing when name
// is "".
func appendParenName(b []byte, name string) []byte {
	if name == "" {
		return b
	}
	b = append(b, " ("...)
	b = append(b, name...)
	return append(b, ')')
}

// appendCMVerbose writes the CM MAD's header and the message fields that
// were captured; "(cut off)" ends a MAD the snap length cut.
func appendCMVerbose(b []byte, m *bth.CMMAD) []byte {
	b = append(b, "\n    CM MAD "...)
	b = append(b, m.AttributeID.String()...)
	b = append(b, " class "...)
	b = appendHex(b, uint64(m.MgmtClass), 2)
	b = append(b, " method "...)
	b = appendHex(b, uint64(m.Method), 2)
	b = appendParenName(b, bth.MADMethodName(m.MgmtClass, m.Method))
	b = append(b, " tid "...)
	b = appendHex(b, m.TransactionID, 16)
	if m.Has(bth.CMFieldLocalCommID) {
		b = append(b, " local_comm_id "...)
		b = appendHex(b, uint64(m.LocalCommID), 8)
	}
	if m.Has(bth.CMFieldRemoteCommID) {
		b = append(b, " remote_comm_id "...)
		b = appendHex(b, uint64(m.RemoteCommID), 8)
	}
	switch m.AttributeID {
	case bth.CMAttrREQ:
		if m.Has(bth.CMFieldServiceID) {
			b = append(b, " service_id "...)
			b = appendHex(b, m.ServiceID, 16)
			if m.IsIPService() {
				b = append(b, " ("...)
				b = append(b, bth.PortSpaceName(m.PortSpace())...)
				b = append(b, " port "...)
				b = strconv.AppendUint(b, uint64(m.Port()), 10)
				b = append(b, ')')
			}
		}
		fallthrough
	case bth.CMAttrREP:
		if m.Has(bth.CMFieldLocalQPN) {
			b = append(b, " local_qpn "...)
			b = appendHex(b, uint64(m.LocalQPN), 6)
		}
		if m.Has(bth.CMFieldStartingPSN) {
			b = append(b, " starting_psn "...)
			b = strconv.AppendUint(b, uint64(m.StartingPSN), 10)
		}
	case bth.CMAttrDREQ:
		if m.Has(bth.CMFieldRemoteQPN) {
			b = append(b, " remote_qpn "...)
			b = appendHex(b, uint64(m.RemoteQPN), 6)
		}
	case bth.CMAttrREJ:
		if m.Has(bth.CMFieldRejectReason) {
			b = append(b, " reason "...)
			b = strconv.AppendUint(b, uint64(m.RejectReason), 10)
		}
	}
	if m.Truncated {
		b = append(b, " (cut off)"...)
	}
	if m.IP.Valid {
		b = append(b, "\n    IP CM src "...)
		b = m.IP.SrcIP.AppendTo(b)
		b = append(b, " port "...)
		b = strconv.AppendUint(b, uint64(m.IP.SrcPort), 10)
		b = append(b, " dst "...)
		b = m.IP.DstIP.AppendTo(b)
	}
	return b
}

// udpLenRead says whether the walk read the UDP length field of a packet
// it took to be RoCEv2: a UDP length is 8 or more unless it is malformed
// (packet.ReasonBadUDPLength), so a 0 otherwise means the header ended
// before the field, cut by the snap length (or by the IP length, which
// makes the packet malformed: packet.ReasonShortUDP).
func udpLenRead(pkt *packet.Packet) bool {
	return pkt.UDPLen != 0 || pkt.Kind == packet.KindMalformed && pkt.Malformed == packet.ReasonBadUDPLength
}

func appendBit(b []byte, v bool) []byte {
	if v {
		return append(b, '1')
	}
	return append(b, '0')
}

// appendFlowLabel writes an IPv6 or GRH flow label as tcpdump -v does.
func appendFlowLabel(b []byte, label uint32) []byte {
	b = append(b, " flowlabel "...)
	return appendHex(b, uint64(label), 5)
}

// ecnName names the two ECN bits of the IP header (RFC 3168).
func ecnName(ecn uint8) string {
	switch ecn & 3 {
	case 1:
		return "ect1"
	case 2:
		return "ect0"
	case 3:
		return "ce"
	}
	return "not-ect"
}
