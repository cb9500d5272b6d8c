package capture

import "strconv"

// LinkType is a pcap LINKTYPE_ value: the link-layer header type of the
// frames of an interface (pcap file header, pcapng Interface Description
// Block). See https://www.tcpdump.org/linktypes.html.
type LinkType uint32

// Link types seen in data-centre and RDMA captures, and a few common others.
// The names follow LINKTYPE_ in the tcpdump registry; the values are the
// on-file LINKTYPE_ values (which differ from some platforms' DLT_ values).
const (
	LinkTypeNull           LinkType = 0   // BSD loopback: 4-byte host-order address family
	LinkTypeEthernet       LinkType = 1   // Ethernet (DLT_EN10MB)
	LinkTypeTokenRing      LinkType = 6   // IEEE 802.5
	LinkTypePPP            LinkType = 9   // PPP
	LinkTypeFDDI           LinkType = 10  // FDDI
	LinkTypePPPHDLC        LinkType = 50  // PPP in HDLC-like framing (DLT_PPP_SERIAL)
	LinkTypeRaw            LinkType = 101 // raw IPv4 or IPv6, no link header
	LinkTypeCHDLC          LinkType = 104 // Cisco HDLC
	LinkTypeIEEE80211      LinkType = 105 // IEEE 802.11 without radio header
	LinkTypeLoop           LinkType = 108 // OpenBSD loopback: 4-byte network-order address family
	LinkTypeLinuxSLL       LinkType = 113 // Linux cooked capture v1
	LinkTypePFLog          LinkType = 117 // OpenBSD pflog
	LinkTypeIEEE80211Radio LinkType = 127 // IEEE 802.11 with radiotap header
	LinkTypeUSBLinux       LinkType = 189 // Linux USB
	LinkTypePPI            LinkType = 192 // Per-Packet Information
	LinkTypeERF            LinkType = 197 // Endace Extensible Record Format
	LinkTypeUSBLinuxMMap   LinkType = 220 // Linux USB, memory-mapped header
	LinkTypeCANSocketCAN   LinkType = 227 // Linux SocketCAN
	LinkTypeIPv4           LinkType = 228 // raw IPv4
	LinkTypeIPv6           LinkType = 229 // raw IPv6
	LinkTypeNFLog          LinkType = 239 // Linux netfilter NFLOG
	LinkTypeIPoIB          LinkType = 242 // IP over InfiniBand
	LinkTypeInfiniBand     LinkType = 247 // InfiniBand frames (LRH first)
	LinkTypeUSBPcap        LinkType = 249 // Windows USBPcap
	LinkTypeNetlink        LinkType = 253 // Linux netlink
	LinkTypeLinuxSLL2      LinkType = 276 // Linux cooked capture v2
)

// Name returns tcpdump's name for the link type (pcap_datalink_val_to_name,
// keyed by the on-file LINKTYPE_ value): "EN10MB", "LINUX_SLL2"; "" if it
// is not one this package knows.
func (l LinkType) Name() string {
	switch l {
	case 0:
		return "NULL"
	case 1:
		return "EN10MB"
	case 3:
		return "AX25"
	case 6:
		return "IEEE802"
	case 7:
		return "ARCNET"
	case 8:
		return "SLIP"
	case 9:
		return "PPP"
	case 10:
		return "FDDI"
	case 50:
		return "PPP_SERIAL"
	case 51:
		return "PPP_ETHER"
	case 100:
		return "ATM_RFC1483"
	case 101:
		return "RAW"
	case 104:
		return "C_HDLC"
	case 105:
		return "IEEE802_11"
	case 107:
		return "FRELAY"
	case 108:
		return "LOOP"
	case 109:
		return "ENC"
	case 113:
		return "LINUX_SLL"
	case 114:
		return "LTALK"
	case 117:
		return "PFLOG"
	case 119:
		return "PRISM_HEADER"
	case 122:
		return "IP_OVER_FC"
	case 123:
		return "SUNATM"
	case 127:
		return "IEEE802_11_RADIO"
	case 129:
		return "ARCNET_LINUX"
	case 138:
		return "APPLE_IP_OVER_IEEE1394"
	case 140:
		return "MTP2"
	case 141:
		return "MTP3"
	case 143:
		return "DOCSIS"
	case 144:
		return "LINUX_IRDA"
	case 163:
		return "IEEE802_11_RADIO_AVS"
	case 166:
		return "PPP_PPPD"
	case 177:
		return "LINUX_LAPD"
	case 187:
		return "BLUETOOTH_HCI_H4"
	case 189:
		return "USB_LINUX"
	case 192:
		return "PPI"
	case 195:
		return "IEEE802_15_4"
	case 197:
		return "ERF"
	case 201:
		return "BLUETOOTH_HCI_H4_WITH_PHDR"
	case 219:
		return "MPLS"
	case 220:
		return "USB_LINUX_MMAPPED"
	case 226:
		return "IPNET"
	case 227:
		return "CAN_SOCKETCAN"
	case 228:
		return "IPV4"
	case 229:
		return "IPV6"
	case 230:
		return "IEEE802_15_4_NOFCS"
	case 231:
		return "DBUS"
	case 239:
		return "NFLOG"
	case 240:
		return "NETANALYZER"
	case 241:
		return "NETANALYZER_TRANSPARENT"
	case 242:
		return "IPOIB"
	case 243:
		return "MPEG_2_TS"
	case 247:
		return "INFINIBAND"
	case 248:
		return "SCTP"
	case 249:
		return "USBPCAP"
	case 251:
		return "BLUETOOTH_LE_LL"
	case 252:
		return "WIRESHARK_UPPER_PDU"
	case 253:
		return "NETLINK"
	case 254:
		return "BLUETOOTH_LINUX_MONITOR"
	case 256:
		return "BLUETOOTH_LE_LL_WITH_PHDR"
	case 258:
		return "PKTAP"
	case 266:
		return "USB_DARWIN"
	case 271:
		return "VSOCK"
	case 272:
		return "NORDIC_BLE"
	case 274:
		return "ETHERNET_MPACKET"
	case 276:
		return "LINUX_SLL2"
	case 279:
		return "EBHSCR"
	case 280:
		return "VPP_DISPATCH"
	case 281:
		return "DSA_TAG_BRCM"
	case 282:
		return "DSA_TAG_BRCM_PREPEND"
	case 284:
		return "DSA_TAG_DSA"
	case 285:
		return "DSA_TAG_EDSA"
	}
	return ""
}

// String returns the tcpdump name and the value, e.g. "EN10MB (1)",
// "LINUX_SLL2 (276)"; an unknown type reads "LINKTYPE_12345".
func (l LinkType) String() string {
	if name := l.Name(); name != "" {
		return name + " (" + strconv.FormatUint(uint64(l), 10) + ")"
	}
	return "LINKTYPE_" + strconv.FormatUint(uint64(l), 10)
}
