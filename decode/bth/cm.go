package bth

import "strconv"

// CMAttribute is the attribute ID of a Communication Manager MAD: which CM
// message it is (IBTA vol 1 §12.6, Table 98).
type CMAttribute uint16

// CM attribute IDs. Each says which CMMAD fields its message fills (offsets
// into the message after the 24-byte MAD header, checked against Wireshark).
const (
	CMAttrClassPortInfo CMAttribute = 0x0001 // MAD header only
	// REQ (§12.6.5): LocalCommID 0, ServiceID 8, LocalCAGUID 16, LocalQKey 28,
	// LocalQPN 32 (24 bits) and ResponderResources 35, InitiatorDepth 39,
	// TransportServiceType (byte 43 bits 2-1), StartingPSN 44 (24 bits),
	// PKey 48, private data 140 (92 bytes; IP CM data, Annex A11).
	CMAttrREQ CMAttribute = 0x0010
	// MRA (§12.6.6): LocalCommID 0, RemoteCommID 4.
	CMAttrMRA CMAttribute = 0x0011
	// REJ (§12.6.7): LocalCommID 0, RemoteCommID 4, MsgRejected (byte 8 bits
	// 7-6), RejectReason 10.
	CMAttrREJ CMAttribute = 0x0012
	// REP (§12.6.8): LocalCommID 0, RemoteCommID 4, LocalQKey 8, LocalQPN 12,
	// StartingPSN 20, ResponderResources 24, InitiatorDepth 25,
	// LocalCAGUID 28.
	CMAttrREP CMAttribute = 0x0013
	// RTU (§12.6.9): LocalCommID 0, RemoteCommID 4.
	CMAttrRTU CMAttribute = 0x0014
	// DREQ (§12.6.10): LocalCommID 0, RemoteCommID 4, RemoteQPN 8 (24 bits).
	CMAttrDREQ CMAttribute = 0x0015
	// DREP (§12.6.11): LocalCommID 0, RemoteCommID 4.
	CMAttrDREP CMAttribute = 0x0016
	// SIDR_REQ (§12.11.1): RequestID 0 (in LocalCommID), PKey 4, ServiceID 8.
	CMAttrSIDRREQ CMAttribute = 0x0017
	// SIDR_REP (§12.11.2): RequestID 0 (in LocalCommID), QPN 8 (in
	// LocalQPN), ServiceID 12, QKey 20 (in LocalQKey).
	CMAttrSIDRREP CMAttribute = 0x0018
	// LAP (§12.8.1): LocalCommID 0, RemoteCommID 4.
	CMAttrLAP CMAttribute = 0x0019
	// APR (§12.8.2): LocalCommID 0, RemoteCommID 4.
	CMAttrAPR CMAttribute = 0x001A
)

// String returns the message's short name: "ClassPortInfo", "REQ", "MRA",
// "REJ", "REP", "RTU", "DREQ", "DREP", "SIDR_REQ", "SIDR_REP", "LAP", "APR",
// or "CMAttribute(0xNNNN)".
func (a CMAttribute) String() string {
	switch a {
	case CMAttrClassPortInfo:
		return "ClassPortInfo"
	case CMAttrREQ:
		return "REQ"
	case CMAttrMRA:
		return "MRA"
	case CMAttrREJ:
		return "REJ"
	case CMAttrREP:
		return "REP"
	case CMAttrRTU:
		return "RTU"
	case CMAttrDREQ:
		return "DREQ"
	case CMAttrDREP:
		return "DREP"
	case CMAttrSIDRREQ:
		return "SIDR_REQ"
	case CMAttrSIDRREP:
		return "SIDR_REP"
	case CMAttrLAP:
		return "LAP"
	case CMAttrAPR:
		return "APR"
	}
	s := strconv.FormatUint(uint64(a), 16)
	for len(s) < 4 {
		s = "0" + s
	}
	return "CMAttribute(0x" + s + ")"
}

// reqPrivateDataOffset is where a REQ's 92 bytes of private data start.
const reqPrivateDataOffset = 140

// decodeCM fills the CM message fields from r, which reads the MAD data
// (after the common header).
func (m *CMMAD) decodeCM(r *fieldReader) {
	switch m.AttributeID {
	case CMAttrREQ:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.ServiceID = r.u64(CMFieldServiceID, 8)
		m.LocalCAGUID = r.u64(CMFieldLocalCAGUID, 16)
		m.LocalQKey = r.u32(CMFieldLocalQKey, 28)
		m.LocalQPN = r.u24(CMFieldLocalQPN, 32)
		m.ResponderResources = r.u8(CMFieldResponderResources, 35)
		m.InitiatorDepth = r.u8(CMFieldInitiatorDepth, 39)
		m.TransportServiceType = r.u8(CMFieldTransportServiceType, 43) >> 1 & 0x3
		m.StartingPSN = r.u24(CMFieldStartingPSN, 44)
		m.PKey = r.u16(CMFieldPKey, 48)
		if m.IsIPService() && r.fits(reqPrivateDataOffset, ipCMDataLen) {
			m.IP = decodeIPCMData(r.b[reqPrivateDataOffset : reqPrivateDataOffset+ipCMDataLen])
		}
	case CMAttrREP:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.RemoteCommID = r.u32(CMFieldRemoteCommID, 4)
		m.LocalQKey = r.u32(CMFieldLocalQKey, 8)
		m.LocalQPN = r.u24(CMFieldLocalQPN, 12)
		m.StartingPSN = r.u24(CMFieldStartingPSN, 20)
		m.ResponderResources = r.u8(CMFieldResponderResources, 24)
		m.InitiatorDepth = r.u8(CMFieldInitiatorDepth, 25)
		m.LocalCAGUID = r.u64(CMFieldLocalCAGUID, 28)
	case CMAttrREJ:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.RemoteCommID = r.u32(CMFieldRemoteCommID, 4)
		m.MsgRejected = r.u8(CMFieldMsgRejected, 8) >> 6
		m.RejectReason = r.u16(CMFieldRejectReason, 10)
	case CMAttrDREQ:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.RemoteCommID = r.u32(CMFieldRemoteCommID, 4)
		m.RemoteQPN = r.u24(CMFieldRemoteQPN, 8)
	case CMAttrMRA, CMAttrRTU, CMAttrDREP, CMAttrLAP, CMAttrAPR:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.RemoteCommID = r.u32(CMFieldRemoteCommID, 4)
	case CMAttrSIDRREQ:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.PKey = r.u16(CMFieldPKey, 4)
		m.ServiceID = r.u64(CMFieldServiceID, 8)
	case CMAttrSIDRREP:
		m.LocalCommID = r.u32(CMFieldLocalCommID, 0)
		m.LocalQPN = r.u24(CMFieldLocalQPN, 8)
		m.ServiceID = r.u64(CMFieldServiceID, 12)
		m.LocalQKey = r.u32(CMFieldLocalQKey, 20)
	}
}
