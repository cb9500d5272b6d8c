package bth

// Names of MAD management classes, methods and attributes (IBTA vol 1
// §13.4), for reports that show the header of a MAD which is not a CM
// message. Each function returns "" for a value it has no name for; the
// numbers stay what identifies a MAD, the names are a gloss.
//
// They follow the specification, and tshark (4.0) where it names the same
// thing, except where said: tshark names the management class only in its
// Info column (SubnGet, SubnAdmGet, PERF, BM, DEV_MGT, SNMP, VENDOR, APP,
// RESERVED), calls TrapRepress (0x07) SubnTrapResp on subnet management
// MADs, names the subnet administration methods (GetTable, Delete, ...)
// whatever the class, names the common attributes (ClassPortInfo, ...) of
// the subnet administration and performance classes only, and names class
// 0x21 APP, where it is the Congestion Control class of IBTA vol 1 Annex
// A10.

// MAD management classes (IBTA vol 1 §13.4.4, Table 146).
const (
	MgmtClassSubnMgt   = 0x01 // subnet management, LID routed (SMP)
	MgmtClassSubnAdm   = 0x03 // subnet administration (SA)
	MgmtClassPerfMgt   = 0x04 // performance management
	MgmtClassBM        = 0x05 // baseboard management
	MgmtClassDevMgt    = 0x06 // device management
	MgmtClassSNMP      = 0x08 // SNMP tunneling
	MgmtClassCC        = 0x21 // congestion control (Annex A10)
	MgmtClassSubnMgtDR = 0x81 // subnet management, directed route (SMP)
)

// MgmtClassName returns the name of MAD management class c: "SubnMgt"
// (0x01, LID routed), "SubnMgtDR" (0x81, directed route), "SubnAdm",
// "PerfMgt", "BM", "DevMgt", "CM", "SNMP", "CongestionControl" (0x21),
// "Vendor" (0x09-0x0F and 0x30-0x4F), "Application" (the rest of
// 0x10-0x2F) or "Reserved" (every other value).
func MgmtClassName(c uint8) string {
	switch {
	case c == MgmtClassSubnMgt:
		return "SubnMgt"
	case c == MgmtClassSubnMgtDR:
		return "SubnMgtDR"
	case c == MgmtClassSubnAdm:
		return "SubnAdm"
	case c == MgmtClassPerfMgt:
		return "PerfMgt"
	case c == MgmtClassBM:
		return "BM"
	case c == MgmtClassDevMgt:
		return "DevMgt"
	case c == MgmtClassCM:
		return "CM"
	case c == MgmtClassSNMP:
		return "SNMP"
	case c == MgmtClassCC:
		return "CongestionControl"
	case c >= 0x09 && c <= 0x0f, c >= 0x30 && c <= 0x4f:
		return "Vendor"
	case c >= 0x10 && c <= 0x2f:
		return "Application"
	}
	return "Reserved"
}

// MADMethodName returns the name of method m (the R bit included) of a MAD
// of class c: the common methods (IBTA vol 1 §13.4.5, Table 147) Get,
// Set, GetResp, Send, Trap, Report, ReportResp, TrapRepress for any class,
// and the subnet administration ones (§15) GetTable,
// GetTableResp, GetTraceTable, GetMulti, GetMultiResp, Delete, DeleteResp
// for class 0x03 only (a method number above 0x07 is the class's own);
// "" for any other.
func MADMethodName(c, m uint8) string {
	switch m {
	case MethodGet:
		return "Get"
	case MethodSet:
		return "Set"
	case MethodGetResp:
		return "GetResp"
	case MethodSend:
		return "Send"
	case 0x05:
		return "Trap"
	case 0x06:
		return "Report"
	case 0x86:
		return "ReportResp"
	case 0x07:
		return "TrapRepress"
	}
	if c != MgmtClassSubnAdm {
		return ""
	}
	switch m {
	case 0x12:
		return "GetTable"
	case 0x92:
		return "GetTableResp"
	case 0x13:
		return "GetTraceTable"
	case 0x14:
		return "GetMulti"
	case 0x94:
		return "GetMultiResp"
	case 0x15:
		return "Delete"
	case 0x95:
		return "DeleteResp"
	}
	return ""
}

// MADAttributeName returns the name of attribute a of a MAD of class c:
// the common attributes ClassPortInfo (0x0001), Notice (0x0002) and
// InformInfo (0x0003) of the general services classes (§13.4.8; subnet
// management has Notice only, CM ClassPortInfo only), the subnet
// management attributes (§14),
// the subnet administration ones (§15), four performance management ones
// (PortSamplesControl, PortSamplesResult, PortCounters,
// PortCountersExtended: §16.1; tshark names only the last two), and the
// CM messages (§12.6, CMAttribute); "" for any other.
func MADAttributeName(c uint8, a uint16) string {
	switch c {
	case MgmtClassSubnMgt, MgmtClassSubnMgtDR:
		return smpAttributeName(a)
	case MgmtClassCM:
		if s := CMAttribute(a); s == CMAttrClassPortInfo || s >= CMAttrREQ && s <= CMAttrAPR {
			return s.String()
		}
		return ""
	}
	switch a {
	case 0x0001:
		return "ClassPortInfo"
	case 0x0002:
		return "Notice"
	case 0x0003:
		return "InformInfo"
	}
	switch c {
	case MgmtClassSubnAdm:
		return saAttributeName(a)
	case MgmtClassPerfMgt:
		switch a {
		case 0x0010:
			return "PortSamplesControl"
		case 0x0011:
			return "PortSamplesResult"
		case 0x0012:
			return "PortCounters"
		case 0x001d:
			return "PortCountersExtended"
		}
	}
	return ""
}

// smpAttributeName names a subnet management attribute (§14).
func smpAttributeName(a uint16) string {
	switch a {
	case 0x0002:
		return "Notice"
	case 0x0010:
		return "NodeDescription"
	case 0x0011:
		return "NodeInfo"
	case 0x0012:
		return "SwitchInfo"
	case 0x0014:
		return "GUIDInfo"
	case 0x0015:
		return "PortInfo"
	case 0x0016:
		return "P_KeyTable"
	case 0x0017:
		return "SLtoVLMappingTable"
	case 0x0018:
		return "VLArbitrationTable"
	case 0x0019:
		return "LinearForwardingTable"
	case 0x001a:
		return "RandomForwardingTable"
	case 0x001b:
		return "MulticastForwardingTable"
	case 0x001c:
		return "LinkSpeedWidthPairsTable"
	case 0x0020:
		return "SMInfo"
	case 0x0030:
		return "VendorDiag"
	case 0x0031:
		return "LedInfo"
	}
	return ""
}

// saAttributeName names a subnet administration attribute (§15) other
// than the common ones.
func saAttributeName(a uint16) string {
	switch a {
	case 0x0011:
		return "NodeRecord"
	case 0x0012:
		return "PortInfoRecord"
	case 0x0013:
		return "SLtoVLMappingTableRecord"
	case 0x0014:
		return "SwitchInfoRecord"
	case 0x0015:
		return "LinearForwardingTableRecord"
	case 0x0016:
		return "RandomForwardingTableRecord"
	case 0x0017:
		return "MulticastForwardingTableRecord"
	case 0x0018:
		return "SMInfoRecord"
	case 0x0019:
		return "LinkSpeedWidthPairsTableRecord"
	case 0x0020:
		return "LinkRecord"
	case 0x0030:
		return "GuidInfoRecord"
	case 0x0031:
		return "ServiceRecord"
	case 0x0033:
		return "P_KeyTableRecord"
	case 0x0035:
		return "PathRecord"
	case 0x0036:
		return "VLArbitrationTableRecord"
	case 0x0038:
		return "MCMemberRecord"
	case 0x0039:
		return "TraceRecord"
	case 0x003a:
		return "MultiPathRecord"
	case 0x003b:
		return "ServiceAssociationRecord"
	case 0x00f3:
		return "InformInfoRecord"
	}
	return ""
}
