// Package flows groups decoded RoCE packets into Queue-Pair flows and keeps
// the PSN, NAK and congestion state of each. It does no I/O and prints
// nothing: the CLI feeds it packets, reports read its flows.
//
// # What a flow is
//
// A flow is the packets sent from one IP address to another for one
// destination QP number: Key{Src, Dst, DestQP}. An RC connection between
// QP a on host A and QP b on host B is two flows, A→B for b (A's requests,
// and A's responses to B's requests) and B→A for a; each is the other's
// partner. A QPN reused for a new connection starts a new epoch of the key:
// a new Flow with the same Key and Epoch+1.
//
// # The counters
//
// Requests (SEND, RDMA WRITE, RDMA READ request, atomics) and RDMA READ
// responses are sequenced: their PSNs are checked against the next PSN the
// flow expects (the PSN after the highest seen; after a READ request, any
// PSN that the READ's response length allows for a path MTU of 256 to 4096
// bytes). Each sequenced packet is exactly one of:
//
//   - in order: at the expected PSN;
//   - a gap: ahead of the expected PSN. PSNGaps counts these jumps and
//     MissingPSNs the PSNs they skipped, less those that arrived later;
//   - out of order: behind the highest PSN, filling a PSN that a gap had
//     skipped (OutOfOrder); the mirror saw it late, or it was resent after
//     the mirror had missed the first copy;
//   - retransmitted: behind the highest PSN, at a PSN this flow already
//     carried (Retransmitted): go-back-N after a NAK, or a timeout resend.
//
// ACKs, NAKs and CNPs are not sequenced (ACKs are coalesced, CNPs carry no
// meaningful PSN). They are counted on the flow that carries them, that is
// for the QP that receives them: NAKs by code, RNRNAKs (with the RNR timer
// values), CNPs. ECNCE counts packets of the flow whose IP ECN field is CE;
// FECN and BECN count packets with those BTH bits.
//
// Requests and responses travelling on one flow have separate PSN spaces,
// so READ responses are sequenced on their own.
//
// # Memory
//
// A flow holds a fixed-size state plus a few small sets bounded by the
// number of distinct opcodes, DSCP values and UDP source ports (capped), so
// memory grows with the number of flows, never with the number of packets.
package flows
