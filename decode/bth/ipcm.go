package bth

import (
	"encoding/binary"
	"net/netip"
)

// IP CM service IDs (IBTA vol 1 Annex A11 §A11.2.1): 0x0000000001 in the top
// 40 bits, the port space in bits 23-16 and the port in bits 15-0.
const (
	ipServicePrefix = 0x0000000001

	PortSpaceIPoIB = 0x02
	PortSpaceTCP   = 0x06
	PortSpaceUDP   = 0x11
	PortSpaceIB    = 0x3f
)

// IsIPService reports whether ServiceID is an RDMA IP CM service ID (top 40
// bits 0x0000000001), the kind librdmacm uses.
func (m *CMMAD) IsIPService() bool { return m.ServiceID>>24 == ipServicePrefix }

// PortSpace returns the port space of an IP CM service ID (bits 23-16): see
// PortSpaceName.
func (m *CMMAD) PortSpace() uint8 { return uint8(m.ServiceID >> 16) }

// Port returns the port of an IP CM service ID (the low 16 bits): the port
// the rdma_cm listener is bound to.
func (m *CMMAD) Port() uint16 { return uint16(m.ServiceID) }

// PortSpaceName names an IP CM port space: "IPoIB" (0x02), "TCP" (0x06),
// "UDP" (0x11), "IB" (0x3f), or "0xNN".
func PortSpaceName(ps uint8) string {
	switch ps {
	case PortSpaceIPoIB:
		return "IPoIB"
	case PortSpaceTCP:
		return "TCP"
	case PortSpaceUDP:
		return "UDP"
	case PortSpaceIB:
		return "IB"
	}
	return hexByte(ps)
}

// ipCMDataLen is the part of the IP CM private data that IPCMData decodes.
const ipCMDataLen = 36

// IPCMData is the head of a REQ's private data under the IP CM service
// (IBTA vol 1 Annex A11 §A11.6.1, Table 362): versions, the source port and
// both IP addresses of the connection being set up.
type IPCMData struct {
	Valid        bool  // the REQ is for an IP service and IPVersion is 4 or 6
	MajorVersion uint8 // MajV, byte 0 bits 7-4
	MinorVersion uint8 // MinV, byte 0 bits 3-0
	IPVersion    uint8 // IPV, byte 1 bits 7-4: 4 or 6
	SrcPort      uint16
	SrcIP        netip.Addr // IPv4 from the last 4 of the 16 bytes
	DstIP        netip.Addr
}

// decodeIPCMData decodes the first 36 bytes of IP CM private data; b holds
// exactly those.
func decodeIPCMData(b []byte) IPCMData {
	d := IPCMData{
		MajorVersion: b[0] >> 4,
		MinorVersion: b[0] & 0x0f,
		IPVersion:    b[1] >> 4,
		SrcPort:      binary.BigEndian.Uint16(b[2:4]),
	}
	switch d.IPVersion {
	case 4:
		d.SrcIP = netip.AddrFrom4([4]byte(b[16:20]))
		d.DstIP = netip.AddrFrom4([4]byte(b[32:36]))
		d.Valid = true
	case 6:
		d.SrcIP = netip.AddrFrom16([16]byte(b[4:20]))
		d.DstIP = netip.AddrFrom16([16]byte(b[20:36]))
		d.Valid = true
	}
	return d
}
