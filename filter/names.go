package filter

// Name tables. libpcap asks the system (getprotobyname, getservbyname,
// /etc/ethers, DNS); this package answers from these fixed tables so that
// a filter means the same on every machine. They follow Debian's
// /etc/protocols and /etc/services, and libpcap's own Ethernet type and
// LLC SAP names.

// ipProtocols are the IP protocol names and aliases of /etc/protocols,
// for "proto \name" and "ip proto name".
var ipProtocols = map[string]uint32{
	"ip": 0, "IP": 0, "hopopt": 0, "HOPOPT": 0, "icmp": 1, "ICMP": 1,
	"igmp": 2, "IGMP": 2, "ggp": 3, "GGP": 3, "ipencap": 4, "IP-ENCAP": 4,
	"st": 5, "ST": 5, "tcp": 6, "TCP": 6, "egp": 8, "EGP": 8, "igp": 9,
	"IGP": 9, "pup": 12, "PUP": 12, "udp": 17, "UDP": 17, "hmp": 20, "HMP": 20,
	"xns-idp": 22, "XNS-IDP": 22, "rdp": 27, "RDP": 27, "iso-tp4": 29,
	"ISO-TP4": 29, "dccp": 33, "DCCP": 33, "xtp": 36, "XTP": 36, "ddp": 37,
	"DDP": 37, "idpr-cmtp": 38, "IDPR-CMTP": 38, "ipv6": 41, "IPv6": 41,
	"ipv6-route": 43, "IPv6-Route": 43, "ipv6-frag": 44, "IPv6-Frag": 44,
	"idrp": 45, "IDRP": 45, "rsvp": 46, "RSVP": 46, "gre": 47, "GRE": 47,
	"esp": 50, "IPSEC-ESP": 50, "ah": 51, "IPSEC-AH": 51, "skip": 57,
	"SKIP": 57, "ipv6-icmp": 58, "IPv6-ICMP": 58, "ipv6-nonxt": 59,
	"IPv6-NoNxt": 59, "ipv6-opts": 60, "IPv6-Opts": 60, "rspf": 73, "RSPF": 73,
	"vmtp": 81, "VMTP": 81, "eigrp": 88, "EIGRP": 88, "ospf": 89,
	"OSPFIGP": 89, "ax.25": 93, "AX.25": 93, "ipip": 94, "IPIP": 94,
	"etherip": 97, "ETHERIP": 97, "encap": 98, "ENCAP": 98, "pim": 103,
	"PIM": 103, "ipcomp": 108, "IPCOMP": 108, "vrrp": 112, "VRRP": 112,
	"l2tp": 115, "L2TP": 115, "isis": 124, "ISIS": 124, "sctp": 132,
	"SCTP": 132, "fc": 133, "FC": 133, "mobility-header": 135,
	"Mobility-Header": 135, "udplite": 136, "UDPLite": 136, "mpls-in-ip": 137,
	"MPLS-in-IP": 137, "manet": 138, "hip": 139, "HIP": 139, "shim6": 140,
	"Shim6": 140, "wesp": 141, "WESP": 141, "rohc": 142, "ROHC": 142,
	"ethernet": 143, "Ethernet": 143,
}

// etherProtos are libpcap's Ethernet type names (pcap_nametoeproto) and
// LLC SAP names (pcap_nametollc), for "ether proto \name".
var etherProtos = map[string]uint32{
	"aarp": etherTypeAARP, "arp": etherTypeARP, "atalk": etherTypeATalk,
	"decnet": etherTypeDECnet, "ip": etherTypeIP, "ip6": etherTypeIPv6,
	"lat": etherTypeLAT, "loopback": 0x9000, "mopdl": etherTypeMOPDL,
	"moprc": etherTypeMOPRC, "rarp": etherTypeRARP, "sca": etherTypeSCA,
	"iso": llcSAPISONS, "stp": llcSAP8021D, "ipx": llcSAPIPX,
	"netbeui": llcSAPNetBEUI,
}

// service is a port name of /etc/services.
type service struct {
	port     uint32
	tcp, udp bool
}

// services are common service names, for "port name".
var services = map[string]service{
	"ftp-data": {20, true, false}, "ftp": {21, true, false},
	"ssh": {22, true, false}, "telnet": {23, true, false},
	"smtp": {25, true, false}, "domain": {53, true, true},
	"bootps": {67, false, true}, "bootpc": {68, false, true},
	"tftp": {69, false, true}, "http": {80, true, false},
	"www": {80, true, false}, "kerberos": {88, true, true},
	"pop3": {110, true, false}, "sunrpc": {111, true, true},
	"ntp": {123, false, true}, "netbios-ns": {137, false, true},
	"netbios-dgm": {138, false, true}, "netbios-ssn": {139, true, false},
	"imap2": {143, true, false}, "imap": {143, true, false},
	"snmp": {161, true, true}, "snmp-trap": {162, true, true},
	"bgp": {179, true, false}, "ldap": {389, true, true},
	"https": {443, true, true}, "microsoft-ds": {445, true, false},
	"isakmp": {500, false, true}, "syslog": {514, false, true},
	"shell": {514, true, false}, "submission": {587, true, false},
	"ldaps": {636, true, true}, "rsync": {873, true, false},
	"imaps": {993, true, false}, "pop3s": {995, true, false},
	"openvpn": {1194, true, true}, "radius": {1812, true, true},
	"radius-acct": {1813, true, true}, "nfs": {2049, true, true},
	"iscsi-target": {3260, true, false}, "mysql": {3306, true, false},
	"ipsec-nat-t": {4500, false, true}, "sip": {5060, true, true},
	"postgresql": {5432, true, false}, "x11": {6000, true, false},
	"http-alt": {8080, true, false},
}
