package cli

import (
	"strconv"
	"unicode/utf8"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
)

// appendJSON writes one packet as a JSON object (one line of JSON lines).
// Every field is documented in the README ("JSON fields of rocedump read").
// Extended-header objects (reth, aeth, ...) appear only when the opcode
// carries that header and it was captured.
func (p *packetPrinter) appendJSON(b []byte, rec *capture.Record, pkt *packet.Packet) []byte {
	b = append(b, `{"frame":`...)
	b = strconv.AppendInt(b, int64(rec.Number), 10)
	if p.withFile {
		b = append(b, `,"file":`...)
		b = appendJSONString(b, p.file)
	}
	if !rec.Timestamp.IsZero() { // a Simple Packet Block's frame has no time
		b = append(b, `,"time":"`...)
		b = p.jsonStamp.Append(b, rec.Timestamp)
		b = append(b, '"')
	}
	// IPVersion 0: a RoCEv1 frame whose GRH was cut or is not one, so no
	// GIDs, traffic class or hop limit to give (a RoCEv2 frame always has
	// its IP header).
	if pkt.IPVersion != 0 {
		b = append(b, `,"src":"`...)
		b = pkt.Src.AppendTo(b)
		b = append(b, `","dst":"`...)
		b = pkt.Dst.AppendTo(b)
		b = append(b, '"')
	}
	b = append(b, `,"src_port":`...)
	b = strconv.AppendUint(b, uint64(pkt.SrcPort), 10)
	b = append(b, `,"dst_port":`...)
	b = strconv.AppendUint(b, uint64(pkt.DstPort), 10)
	b = append(b, `,"roce_version":`...)
	b = strconv.AppendUint(b, uint64(pkt.RoCEVersion), 10)
	if pkt.IPVersion != 0 {
		b = append(b, `,"ip_version":`...)
		b = strconv.AppendUint(b, uint64(pkt.IPVersion), 10)
		b = append(b, `,"dscp":`...)
		b = strconv.AppendUint(b, uint64(pkt.DSCP), 10)
		b = append(b, `,"ecn":"`...)
		b = append(b, ecnName(pkt.ECN)...)
		b = append(b, '"')
		b = append(b, `,"ttl":`...)
		b = strconv.AppendUint(b, uint64(pkt.TTL), 10)
		if pkt.IPVersion == 6 {
			b = append(b, `,"flow_label":`...)
			b = strconv.AppendUint(b, uint64(pkt.FlowLabel), 10)
		}
	}
	if pkt.HasVLAN {
		b = append(b, `,"vlan":`...)
		b = strconv.AppendUint(b, uint64(pkt.VLAN), 10)
		b = append(b, `,"pcp":`...)
		b = strconv.AppendUint(b, uint64(pkt.PCP), 10)
	}
	if pkt.Kind == packet.KindMalformed {
		b = append(b, `,"malformed":"`...)
		b = append(b, pkt.Malformed.String()...)
		b = append(b, '"')
	}
	switch {
	case pkt.HasBTH:
		b = appendJSONBTH(b, &pkt.BTH)
		if headersCut(pkt) {
			b = append(b, `,"headers_truncated":true`...)
		}
	case pkt.Kind == packet.KindRoCE:
		// Cut inside the BTH by the snap length (a BTH that is not all
		// there and was not cut makes the packet malformed).
		b = append(b, `,"headers_truncated":true`...)
	}
	if pkt.HasCM {
		b = appendJSONCM(b, &pkt.CM)
	} else if pkt.HasMAD {
		b = appendJSONMAD(b, &pkt.CM)
	}
	b = append(b, `,"icrc":"`...)
	b = append(b, pkt.ICRC.String()...)
	b = append(b, `","truncated":`...)
	b = strconv.AppendBool(b, pkt.Truncated)
	if payloadKnown(pkt) {
		b = append(b, `,"payload_len":`...)
		b = strconv.AppendInt(b, int64(pkt.PayloadLen), 10)
	}
	b = append(b, `,"cap_len":`...)
	b = strconv.AppendInt(b, int64(pkt.CapLen), 10)
	b = append(b, `,"wire_len":`...)
	b = strconv.AppendInt(b, int64(pkt.OrigLen), 10)
	b = append(b, `,"encap":[`...)
	for i, e := range pkt.EncapLayers() {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = e.AppendString(b)
		b = append(b, '"')
	}
	b = append(b, "]}"...)
	return b
}

// payloadKnown says whether pkt.PayloadLen is the packet's RDMA payload
// length: the UDP (or GRH) length less the headers its opcode has, so the
// BTH must have been captured, and the packet must not be malformed.
func payloadKnown(pkt *packet.Packet) bool {
	return pkt.HasBTH && pkt.Kind == packet.KindRoCE
}

// headersCut says whether the snap length cut the extended headers of a
// packet whose BTH was decoded. A UDP (or GRH) length too short for them
// leaves them out too, but that makes the packet malformed
// (packet.ReasonBadLength), and nothing was cut.
func headersCut(pkt *packet.Packet) bool {
	return pkt.BTH.Truncated && pkt.Kind == packet.KindRoCE
}

func appendJSONBTH(b []byte, h *bth.BTH) []byte {
	b = append(b, `,"opcode":`...)
	b = strconv.AppendUint(b, uint64(h.Opcode), 10)
	b = append(b, `,"opcode_name":"`...)
	b = append(b, h.Opcode.String()...)
	b = append(b, `","transport":"`...)
	b = append(b, h.Opcode.Transport().String()...)
	b = append(b, `","dest_qpn":`...)
	b = strconv.AppendUint(b, uint64(h.DestQP), 10)
	b = append(b, `,"psn":`...)
	b = strconv.AppendUint(b, uint64(h.PSN), 10)
	b = append(b, `,"pkey":`...)
	b = strconv.AppendUint(b, uint64(h.PKey), 10)
	b = append(b, `,"ack_req":`...)
	b = strconv.AppendBool(b, h.AckReq)
	b = append(b, `,"fecn":`...)
	b = strconv.AppendBool(b, h.FECN)
	b = append(b, `,"becn":`...)
	b = strconv.AppendBool(b, h.BECN)
	b = append(b, `,"se":`...)
	b = strconv.AppendBool(b, h.SolicitedEvent)
	b = append(b, `,"mig_req":`...)
	b = strconv.AppendBool(b, h.MigReq)
	b = append(b, `,"pad_count":`...)
	b = strconv.AppendUint(b, uint64(h.PadCount), 10)
	b = append(b, `,"tver":`...)
	b = strconv.AppendUint(b, uint64(h.TransportVersion), 10)
	if h.Ext&bth.HasRDETH != 0 {
		b = append(b, `,"rdeth":{"ee_context":`...)
		b = strconv.AppendUint(b, uint64(h.RDETH.EECnxt), 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasDETH != 0 {
		b = append(b, `,"deth":{"qkey":`...)
		b = strconv.AppendUint(b, uint64(h.DETH.QKey), 10)
		b = append(b, `,"src_qp":`...)
		b = strconv.AppendUint(b, uint64(h.DETH.SrcQP), 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasXRCETH != 0 {
		b = append(b, `,"xrceth":{"xrc_srq":`...)
		b = strconv.AppendUint(b, uint64(h.XRCETH.XRCSRQ), 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasFETH != 0 {
		b = append(b, `,"feth":{"placement_type":`...)
		b = strconv.AppendUint(b, uint64(h.FETH.PlacementType()), 10)
		b = append(b, `,"selectivity_level":`...)
		b = strconv.AppendUint(b, uint64(h.FETH.SelectivityLevel()), 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasRETH != 0 {
		b = append(b, `,"reth":{"va":`...)
		b = strconv.AppendUint(b, h.RETH.VA, 10)
		b = append(b, `,"rkey":`...)
		b = strconv.AppendUint(b, uint64(h.RETH.RKey), 10)
		b = append(b, `,"dma_len":`...)
		b = strconv.AppendUint(b, uint64(h.RETH.DMALen), 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasAtomicETH != 0 {
		b = append(b, `,"atomic_eth":{"va":`...)
		b = strconv.AppendUint(b, h.AtomicETH.VA, 10)
		b = append(b, `,"rkey":`...)
		b = strconv.AppendUint(b, uint64(h.AtomicETH.RKey), 10)
		b = append(b, `,"swap_add":`...)
		b = strconv.AppendUint(b, h.AtomicETH.SwapData, 10)
		b = append(b, `,"compare":`...)
		b = strconv.AppendUint(b, h.AtomicETH.CompareData, 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasAETH != 0 {
		a := h.AETH
		b = append(b, `,"aeth":{"syndrome":`...)
		b = strconv.AppendUint(b, uint64(a.Syndrome), 10)
		b = append(b, `,"msn":`...)
		b = strconv.AppendUint(b, uint64(a.MSN), 10)
		b = append(b, `,"kind":"`...)
		b = append(b, a.Kind().String()...)
		b = append(b, '"')
		switch a.Kind() {
		case bth.AckKindACK:
			b = append(b, `,"credits":`...)
			b = strconv.AppendUint(b, uint64(a.Credits()), 10)
		case bth.AckKindRNRNAK:
			b = append(b, `,"rnr_timer":`...)
			b = strconv.AppendUint(b, uint64(a.RNRTimer()), 10)
			b = append(b, `,"rnr_delay_us":`...)
			b = strconv.AppendFloat(b, float64(bth.RNRTimerDuration(a.RNRTimer()).Nanoseconds())/1000, 'f', -1, 64)
		case bth.AckKindNAK:
			b = append(b, `,"nak_code":"`...)
			b = append(b, a.NAKCode().String()...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	if h.Ext&bth.HasAtomicAckETH != 0 {
		b = append(b, `,"atomic_ack_eth":{"orig_remote_data":`...)
		b = strconv.AppendUint(b, h.AtomicAckETH.OrigRemoteData, 10)
		b = append(b, '}')
	}
	if h.Ext&bth.HasImmDt != 0 {
		b = append(b, `,"immediate":`...)
		b = strconv.AppendUint(b, uint64(h.ImmDt.Data), 10)
	}
	if h.Ext&bth.HasIETH != 0 {
		b = append(b, `,"ieth":{"rkey":`...)
		b = strconv.AppendUint(b, uint64(h.IETH.RKey), 10)
		b = append(b, '}')
	}
	return b
}

// appendJSONMAD writes the mad object: the common header (IBTA vol 1
// §13.4.3) of a MAD to QP1 that is not a CM message, and the names of its
// class, method and attribute (bth.MgmtClassName, ...), the last two when
// known.
func appendJSONMAD(b []byte, m *bth.CMMAD) []byte {
	b = append(b, `,"mad":{"base_version":`...)
	b = strconv.AppendUint(b, uint64(m.BaseVersion), 10)
	b = append(b, `,"class":`...)
	b = strconv.AppendUint(b, uint64(m.MgmtClass), 10)
	b = append(b, `,"class_name":"`...)
	b = append(b, bth.MgmtClassName(m.MgmtClass)...)
	b = append(b, `","class_version":`...)
	b = strconv.AppendUint(b, uint64(m.ClassVersion), 10)
	b = append(b, `,"method":`...)
	b = strconv.AppendUint(b, uint64(m.Method), 10)
	b = appendJSONName(b, "method_name", bth.MADMethodName(m.MgmtClass, m.Method))
	b = append(b, `,"status":`...)
	b = strconv.AppendUint(b, uint64(m.Status), 10)
	b = append(b, `,"transaction_id":`...)
	b = strconv.AppendUint(b, m.TransactionID, 10)
	b = append(b, `,"attribute":`...)
	b = strconv.AppendUint(b, uint64(m.AttributeID), 10)
	b = appendJSONName(b, "attribute_name", bth.MADAttributeName(m.MgmtClass, uint16(m.AttributeID)))
	b = append(b, `,"attribute_modifier":`...)
	b = strconv.AppendUint(b, uint64(m.AttributeModifier), 10)
	if m.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	return append(b, '}')
}

// appendJSONName writes member key with the name s (bth's MAD names: no
// character to escape), or nothing when s is "".
func appendJSONName(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":"`...)
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONCM writes the cm object: the message, the MAD's method (Send
// for REQ to APR; Get, Set or GetResp for ClassPortInfo), and the fields
// of it that were captured (bth.CMMAD.Captured); a MAD the snap length
// cut says so with "truncated" rather than give the fields it lost as
// zeros.
func appendJSONCM(b []byte, m *bth.CMMAD) []byte {
	b = append(b, `,"cm":{"message":"`...)
	b = append(b, m.AttributeID.String()...)
	b = append(b, `","method":`...)
	b = strconv.AppendUint(b, uint64(m.Method), 10)
	b = appendJSONName(b, "method_name", bth.MADMethodName(m.MgmtClass, m.Method))
	b = append(b, `,"transaction_id":`...)
	b = strconv.AppendUint(b, m.TransactionID, 10)
	if m.Has(bth.CMFieldLocalCommID) {
		b = append(b, `,"local_comm_id":`...)
		b = strconv.AppendUint(b, uint64(m.LocalCommID), 10)
	}
	if m.Has(bth.CMFieldRemoteCommID) {
		b = append(b, `,"remote_comm_id":`...)
		b = strconv.AppendUint(b, uint64(m.RemoteCommID), 10)
	}
	switch m.AttributeID {
	case bth.CMAttrREQ:
		b = appendJSONCMService(b, m)
		fallthrough
	case bth.CMAttrREP:
		if m.Has(bth.CMFieldLocalQPN) {
			b = append(b, `,"local_qpn":`...)
			b = strconv.AppendUint(b, uint64(m.LocalQPN), 10)
		}
		if m.Has(bth.CMFieldStartingPSN) {
			b = append(b, `,"starting_psn":`...)
			b = strconv.AppendUint(b, uint64(m.StartingPSN), 10)
		}
	case bth.CMAttrDREQ:
		if m.Has(bth.CMFieldRemoteQPN) {
			b = append(b, `,"remote_qpn":`...)
			b = strconv.AppendUint(b, uint64(m.RemoteQPN), 10)
		}
	case bth.CMAttrREJ:
		if m.Has(bth.CMFieldRejectReason) {
			b = append(b, `,"reject_reason":`...)
			b = strconv.AppendUint(b, uint64(m.RejectReason), 10)
		}
	}
	if m.Truncated {
		b = append(b, `,"truncated":true`...)
	}
	b = append(b, '}')
	return b
}

// appendJSONCMService writes a REQ's service ID and, for the IP CM service
// (Annex A11), its port and the connection's addresses, as far as they were
// captured.
func appendJSONCMService(b []byte, m *bth.CMMAD) []byte {
	if !m.Has(bth.CMFieldServiceID) {
		return b
	}
	b = append(b, `,"service_id":`...)
	b = strconv.AppendUint(b, m.ServiceID, 10)
	if m.IsIPService() {
		b = append(b, `,"port_space":"`...)
		b = append(b, bth.PortSpaceName(m.PortSpace())...)
		b = append(b, `","port":`...)
		b = strconv.AppendUint(b, uint64(m.Port()), 10)
	}
	if m.IP.Valid {
		b = append(b, `,"ip_src":"`...)
		b = m.IP.SrcIP.AppendTo(b)
		b = append(b, `","ip_src_port":`...)
		b = strconv.AppendUint(b, uint64(m.IP.SrcPort), 10)
		b = append(b, `,"ip_dst":"`...)
		b = m.IP.DstIP.AppendTo(b)
		b = append(b, '"')
	}
	return b
}

// appendJSONString writes s as a JSON string literal.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, `\u00`...)
				b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
