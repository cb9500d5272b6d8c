// Package packet walks one captured frame from its link layer down to the
// RoCE transport and fills a reusable Packet value.
//
// The walk is hand-rolled: every header is bounds-checked before it is
// sliced, nothing is allocated per frame, and no input makes it panic. It
// reads Ethernet (IEEE 802.3) with up to 8 802.1Q, 802.1ad or 0x9100 tags
// per frame, raw IP, Linux cooked (SLL, SLL2) and BSD loopback
// link layers; IPv4 (RFC 791) and IPv6 (RFC 8200) with extension headers;
// UDP, TCP and MAC Control (IEEE 802.1Qbb PFC and 802.3 Annex 31B PAUSE);
// RoCEv2 (IBTA vol 1 Annex A17: UDP destination port 4791) and RoCEv1
// (Annex A16: EtherType 0x8915, GRH then BTH). It strips switch-mirror and
// overlay encapsulation: GRE (RFC 2784, RFC 2890) over IPv4 or IPv6 carrying
// Ethernet (0x6558), IP, ERSPAN type I and II (0x88BE) or type III (0x22EB)
// (draft-foschiano-erspan-03), VXLAN (RFC 7348, UDP 4789), VXLAN-GPE
// (draft-ietf-nvo3-vxlan-gpe, UDP 4790) and IP-in-IP (protocols 4 and 41).
// At most MaxTunnels tunnels are entered.
//
// # What goes into Encap
//
// Encap lists, outermost first, the headers the walk stepped over to reach
// the innermost frame, which is the packet the other fields describe:
//
//   - a link-layer pseudo-header: "sll", "sll2" or "null" (NULL and LOOP);
//     Ethernet and raw IP link types add nothing;
//   - for every tunnel, the carrying frame's Ethernet header ("eth", only if
//     it had one), its VLAN tags, its IP header ("ipv4", "ipv6"), then the
//     tunnel's own headers: "udp" and "vxlan:VNI"; "gre" or "gre:KEY" (key
//     shown when nonzero) followed by "erspan1", "erspan2:SESSION" or
//     "erspan3:SESSION"; nothing more for IP-in-IP;
//   - the innermost frame's own VLAN tags ("vlan:ID" for 0x8100,
//     "qinq:ID" for 0x88a8 and 0x9100), in order of appearance.
//
// The innermost frame's own Ethernet and IP headers are never listed. So a
// plain Ethernet/IPv4/UDP RoCE frame has no Encap, a VLAN-tagged one has
// [vlan:100], and an ERSPAN II mirror of it seen on VLAN 10 has
// [eth vlan:10 ipv4 gre erspan2:5 vlan:100].
//
// A tunnel's layers are listed only once the walk reaches its inner frame.
// If it stops before (a tunnel header that is cut, bad, or cannot be
// decoded, such as an ERSPAN III frame type that is reserved), the
// carrying frame is the innermost frame: Encap leaves it and its tunnel out,
// and the IP and port fields describe it. Entering an inner frame clears
// every field that describes the packet (EtherType, VLAN, IP, ports), so an
// ARP frame inside ERSPAN has no IP addresses. At most MaxEncap layers are
// kept; deeper ones are not listed.
package packet
