// Package gen is rocedump's synthetic capture generator: it turns a scenario
// (YAML) into RoCE frames and a truth file that says exactly what it put in
// them. Tests, benchmarks and reports use it for the traffic real captures
// lack: NAKs, retransmissions, CNPs, ECN, PFC, VLANs, mirrored (ERSPAN) and
// truncated frames, storage protocols and malformed frames.
//
// It is an independent builder: Ethernet, 802.1Q/802.1ad, IPv4, IPv6, UDP,
// TCP, GRE, ERSPAN I/II/III, VXLAN, SLL and SLL2 headers are written here with
// encoding/binary. Only the InfiniBand transport headers come from
// decode/bth: (*bth.BTH).AppendHeaders and the ICRC (bth.ICRCv2, bth.ICRCv1).
//
// Entry points: ParseScenario / LoadScenario read a scenario; Generate writes
// the capture file (pcap, pcapng, gzip, cut-off) and returns its Truth;
// Stream and Run hand frames to a callback one at a time, in constant memory,
// for benchmarks of millions of packets; PcapWriter and PcapNGWriter write
// frames from any source. cmd/rocegen is the command line.
//
// # Scenario format
//
// Unknown keys are errors; errors name the file, line and path
// ("x.yaml:12: flows[1].events[0]: at_msg 9: the flow has messages 1..8").
// Numbers may be hex (0x100). Times are microseconds after start.
//
// Top level:
//
//	name: go-back-n          # used in the truth file
//	description: text        # free text
//	seed: 1                  # varies comm IDs, TCP ISNs, garbage bytes (rocegen -seed overrides)
//	start: 2026-11-01T10:00:00Z   # timestamp of time 0 (default 2026-01-01T00:00:00Z)
//	format: pcap             # pcap | pcap-ns | pcap-be | pcap-ns-be | pcapng | pcapng-be
//	gzip: false              # gzip the whole file
//	snaplen: 0               # 0 = whole frames; 64..262144 cuts every frame like a mirror
//	link: ethernet           # ethernet | raw | sll | sll2
//	encap: []                # wrappers around every frame, OUTERMOST FIRST (below)
//	link_gbps: 400           # serialisation rate that spaces back-to-back packets
//	dscp: 26                 # DSCP of RoCE traffic (flows may override)
//	ecn: ect0                # not_ect | ect0 | ect1 | ce
//	cnp_dscp: 48             # DSCP of CNPs
//	cnp_pcp: 6               # priority of the innermost vlan tag of CNPs (default: the tag's pcp)
//	interfaces: []           # pcapng only: [{name, link, snaplen, encap}], default one from link/snaplen/encap
//	flows: []                # RDMA QP pairs (below)
//	cm: []                   # RDMA CM handshakes
//	tcp: []                  # plain TCP sessions
//	pfc: []                  # PFC pause frames
//	malformed: []            # injected bad frames
//	cut_off: {bytes: 37}     # the file ends inside one extra record, 37 bytes short
//
// Encapsulations, one kind per list entry, outermost first. VLAN tags listed
// after a tunnel are on the mirrored (inner) frame, tags before it on the
// outer one:
//
//	{vlan: 100, pcp: 3}                    # 802.1Q
//	{qinq: [200, 100]}                     # 802.1ad S-tag then 802.1Q C-tag
//	{erspan1: {src, dst}}                  # GRE 0x88BE, no sequence number, no ERSPAN header
//	{erspan2: {src, dst, session, index}}  # GRE 0x88BE with sequence number, 8-byte header
//	{erspan3: {src, dst, session, hw_id, subheader: true}}  # GRE 0x22EB, 12-byte header (+8 with subheader)
//	{gre_teb: {src, dst}}                  # GRE 0x6558
//	{vxlan: {src, dst, vni}}               # UDP 4789
//
// Tunnel src/dst are the outer IPv4 or IPv6 addresses (ipv6: true picks the
// IPv6 defaults 2001:db8:ffff::1 -> ::2; IPv4 defaults 192.0.2.1 -> .2).
//
// A flow is one QP pair; src is the requester, dst the responder:
//
//	flows:
//	  - name: a                # default flowN
//	    src: 10.0.0.1          # IPv4 or IPv6 (both ends the same family)
//	    dst: 10.0.1.1
//	    transport: RC          # RC | UC | UD | XRC | RD
//	    roce: v2               # v2 (UDP 4791) or v1 (EtherType 0x8915 + GRH)
//	    src_qpn: 0x100         # requester QP
//	    dest_qpn: 0x200        # responder QP
//	    start_psn: 1000        # first PSN; PSNs wrap mod 2^24
//	    pkey: 0xffff
//	    mtu: 4096              # path MTU: 256..4096
//	    udp_sport: 49152       # default 0xC000 | src_qpn&0x3fff, both directions
//	    dscp: 26               # and ecn: ect0, default from the top level
//	    qkey: 0x11111111       # UD/RD DETH Q_Key
//	    xrc_srq: 0x55          # XRC XRCETH
//	    ee_context: 0x77       # RD RDETH
//	    interface: eth0        # pcapng interface
//	    start_us: 0            # first message
//	    rtt_us: 4              # a packet's answer (ACK, NAK, READ response, CNP) is captured rtt_us after it
//	    timeout_us: 4096       # requester's retransmission timeout
//	    ack_every: 0           # the responder also ACKs every N packets (it always ACKs a message's last)
//	    cnp_opcode: 0x81       # 0x81 (ConnectX) or 0x80
//	    mirror_dup: {delay_us: 2, ttl: 63, dscp: 10, ecn: ce}  # every frame of the flow twice (below)
//	    ops:                   # messages, in order; each count is that many messages
//	      - {op: write, bytes: 65536, count: 10, gap_us: 5, imm: true}
//	      - {op: send, bytes: 256, inv: true}   # SEND with invalidate (RC, XRC)
//	      - {op: read, bytes: 8192}
//	      - {op: fetch_add}                     # and cmp_swap
//	    events:                # at_msg counts the flow's messages from 1
//	      - {at_msg: 3, fabric_drop: {psn_offset: 2, packets: 1, seen: true}}
//	      - {at_msg: 5, timeout_drop: {psn_offset: 3, seen: true}}
//	      - {at_msg: 2, mirror_drop: {psn_offset: 0, packets: 1}}
//	      - {at_msg: 6, rnr_nak: {timer: 14}}
//	      - {at_msg: 7, nak: remote_access_err}
//	      - {at_msg: 4, ce_mark: {psn_offset: 0, packets: 3, cnp: true, cnp_opcode: 0x80}}
//	      - {at_msg: 4, fecn: {packets: 2, becn: true}}
//	      - {at_msg: 1, dscp: 0}
//
// # Traffic model
//
// WRITE and SEND are cut into MTU-sized FIRST/MIDDLE/LAST packets (ONLY when
// one fits), the last with immediate data or invalidate when asked; RETH on
// WRITE FIRST/ONLY; the last packet has AckReq. A READ request (RETH) takes
// as many PSNs as its response packets; responses FIRST/LAST/ONLY carry an
// AETH. Atomics carry an AtomicETH and are answered by ATOMIC ACKNOWLEDGE. RC,
// XRC and RD are acknowledged: the responder ACKs the last packet of every
// message and every ack_every packets; UC and UD have no ACKs. XRC requests
// carry an XRCETH, RD an RDETH and DETH, UD a DETH.
//
// Events act on the data packets of one message: the requester's packets for
// WRITE, SEND and atomics, the responder's response packets for READ.
// psn_offset is the 0-based packet within the message.
//
//   - fabric_drop: packets lost in the fabric. seen: true (default) means the
//     mirror saw them before the loss, so they are in the file; seen: false
//     leaves a PSN gap. The responder NAKs the first gap (PSN sequence error)
//     and the requester goes back N from the missing PSN. When no later packet
//     of the message arrives, nobody NAKs and the requester times out. For a
//     READ the requester re-issues the READ for the rest. UC/UD lose the
//     message.
//   - timeout_drop: the message's tail from psn_offset (default: the last
//     packet) is lost; after timeout_us the requester resends from its oldest
//     unacknowledged PSN.
//   - mirror_drop: the packets reached the responder but are not in the file;
//     the responder ACKs past them.
//   - rnr_nak: the responder answers the first packet with an RNR NAK and the
//     requester resends the message after the RNR timer (IBTA Table 45).
//   - nak: a fatal NAK (invalid_request, remote_access_err, remote_op_err,
//     invalid_rd_request, reserved_5..31) for the first packet; the QP goes
//     to error and the flow sends nothing more.
//   - ce_mark: ECN CE on the packets; with cnp the receiving NIC answers each
//     with a CNP (BTH only, BECN set, 16 reserved bytes, DSCP cnp_dscp) to
//     the sending QP; with resends, CE on the packets' resends (go-back-N,
//     timeout, RNR retry, re-issued READ) instead of their first
//     transmissions (no cnp then).
//   - fecn: the BTH FECN bit on the packets; with becn the message's ACKs or
//     READ responses carry BECN.
//   - dscp: the message's data packets use this DSCP.
//
// mirror_dup makes the mirror deliver every frame of the flow, both ways
// (CNPs too), twice, as a SPAN session whose sources overlap does: the
// copy delay_us later (default 0: right after it), with the given TTL
// (and then the source MAC 02:00:00:00:00:fe of the router that forwarded
// it), DSCP and ECN, by default the frame's own. The flow's IPv4 packets
// then carry an IPv4 Identification of their own, counting from 1 in
// each direction (as Linux soft-RoCE sets a new one on every packet),
// which the copy repeats; other flows send 0.
//
// Frames: IPv4 with DF, TTL 64, ID 0 (but under mirror_dup); UDP checksum 0 as RoCE NICs send it (also over
// IPv6); Ethernet addresses 02:00:a.b.c.d derived from the IP address; ICRC
// stored little-endian. Timestamps come from start plus the model's times;
// output depends on the scenario and seed only.
//
// # Other traffic
//
//	cm:        # RDMA CM on QP1: UD SEND_ONLY, DETH Q_Key 0x80010000, MAD class 0x07 (CM)
//	  - {name, client, server, port: 4420, client_port, client_qpn, server_qpn,
//	     client_psn, server_psn, at_us, disconnect: true, disconnect_us: 1000, interface}
//	# REQ (IP CM service ID 0x0000000001060000|port, IP private data with the
//	# addresses), REP, RTU 20 us apart; DREQ and DREP disconnect_us later.
//	tcp:       # SYN, SYN-ACK, ACK, data both ways (ACK every 2nd segment), FIN, FIN, ACK
//	  - {name, client, server, port: 4420, client_port, bytes, resp_bytes, mss: 1448, at_us, interface}
//	pfc:       # 802.1Qbb pause: MAC control 0x8808, opcode 0x0101, to 01:80:c2:00:00:01
//	  - {src_mac, priorities: [3], quanta: 65535 (0: an XON), count: 1, at_us, interval_us, interface}
//	malformed: # UDP to 4791 unless said otherwise
//	  - {kind, count: 1, at_us, interval_us, src, dst, bytes: 40, interface}
//
// Malformed kinds: garbage_after_4791 (random bytes as UDP payload, first byte
// 0xff), short_bth (8-byte UDP payload), bad_icrc (an RC SEND_ONLY with the
// ICRC inverted), reserved_opcode (BTH opcode 0x1e with a valid ICRC),
// bad_udp_len (UDP length 64 more than the datagram holds, ICRC computed over
// the bytes as sent).
//
// # Truth
//
// See Truth, FlowTruth, CMTruth, TCPTruth and PFCTruth for every field.
// A mirror_dup copy is counted in the frame totals and in its direction's
// mirror_duplicates only, but a CNP's copy that comes before the CNPs
// from its sender to that address have carried two different IPv4 IDs,
// which an analyser cannot tell from a CNP, counts as a CNP, and a copy's CE on an ECN-capable packet whose
// first copy lacks it makes the packet count in ce_marked (once). Flow counts are per direction, keyed by (src, dst, dest_qpn) as an analyser sees
// them: the requester direction (data, READ requests, CNPs about READ
// responses) and the responder direction (ACKs, NAKs, READ responses, atomic
// ACKs, CNPs about the requester's data).
package gen
