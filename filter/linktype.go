package filter

import "strconv"

// pcap LINKTYPE_ values this package knows (the capture package's
// capture.LinkType values).
const (
	linkTypeNull     = 0
	linkTypeEthernet = 1
	linkTypeRaw      = 101
	linkTypeLoop     = 108
	linkTypeLinuxSLL = 113
	linkTypeIPv4     = 228
	linkTypeIPv6     = 229
	linkTypeSLL2     = 276
)

// linkKind says how the link-layer header announces the network protocol.
type linkKind uint8

const (
	linkUnknown  linkKind = iota
	linkEthernet          // Ethernet type / 802.3 length at 12
	linkSLL               // LINUX_SLL protocol field, 802.2 frames told apart
	linkSLL2              // LINUX_SLL2 protocol field, compared as is
	linkRaw               // no header: IP version nibble
	linkIPv4Only          // no header, always IPv4
	linkIPv6Only          // no header, always IPv6
	linkNull              // 4-byte AF_ value, byte order of the capturing host
	linkLoop              // 4-byte AF_ value, network byte order
)

// linkLayer describes the link-layer header of a link type: where its
// protocol field and its payload are (libpcap's off_linktype and
// off_linkpl before any "vlan").
type linkLayer struct {
	linkType    uint32
	kind        linkKind
	name        string
	offLinkType uint32 // meaningful for linkEthernet and linkSLL
	offNet      uint32
}

func linkLayerFor(lt uint32) linkLayer {
	l := linkLayer{linkType: lt}
	switch lt {
	case linkTypeEthernet:
		l.kind, l.name, l.offLinkType, l.offNet = linkEthernet, "Ethernet", 12, 14
	case linkTypeLinuxSLL:
		l.kind, l.name, l.offLinkType, l.offNet = linkSLL, "LINUX_SLL", 14, 16
	case linkTypeSLL2:
		l.kind, l.name, l.offLinkType, l.offNet = linkSLL2, "LINUX_SLL2", 0, 20
	case linkTypeRaw:
		l.kind, l.name = linkRaw, "RAW"
	case linkTypeIPv4:
		l.kind, l.name = linkIPv4Only, "IPV4"
	case linkTypeIPv6:
		l.kind, l.name = linkIPv6Only, "IPV6"
	case linkTypeNull:
		l.kind, l.name, l.offNet = linkNull, "NULL", 4
	case linkTypeLoop:
		l.kind, l.name, l.offNet = linkLoop, "LOOP", 4
	default:
		l.name = "link type " + strconv.FormatUint(uint64(lt), 10)
	}
	return l
}

// Ethernet types and 802.2 SAPs that gen_linktype treats specially.
const (
	etherTypeIP      = 0x0800
	etherTypeARP     = 0x0806
	etherTypeRARP    = 0x8035
	etherTypeIPv6    = 0x86dd
	etherTypeATalk   = 0x809b
	etherTypeAARP    = 0x80f3
	etherTypeIPX     = 0x8137
	etherType8021Q   = 0x8100
	etherType8021AD  = 0x88a8
	etherTypeQinQ    = 0x9100
	etherTypeDECnet  = 0x6003
	etherTypeLAT     = 0x6004
	etherTypeSCA     = 0x6007
	etherTypeMOPDL   = 0x6001
	etherTypeMOPRC   = 0x6002
	etherMTU         = 1500
	llcSAPIP         = 0x06
	llcSAPISONS      = 0xfe
	llcSAPNetBEUI    = 0xf0
	llcSAPIPX        = 0xe0
	llcSAP8021D      = 0x42
	sllP8023         = 1 // LINUX_SLL_P_802_3
	sllP8022         = 4 // LINUX_SLL_P_802_2
	sllOutgoing      = 4 // LINUX_SLL_OUTGOING packet type
	afINET           = 2
	afINET6BSD       = 24
	afINET6FreeBSD   = 28
	afINET6Darwin    = 30
	ipProtoFragment  = 44
	ipProtoICMPv6Num = 58
)
