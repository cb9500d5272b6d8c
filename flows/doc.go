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
// partner. Only RoCE packets whose BTH was captured belong to flows. Of a
// UD flow fed by several source QPs of one host (DETH), the PSN sequence,
// gaps and epochs are its own source QP's: that of its first datagram, or
// the one an RDMA CM exchange named before its first (Flow.otherSender);
// the others' datagrams are in Flow.OtherSenders, not in Requests.
//
// A QPN reused for a new connection starts a new epoch of the key: a new
// Flow with the same Key and Epoch+1. A packet starts a new epoch when an
// RDMA CM REQ/REP exchange naming the key was captured after the current
// epoch began, or when the flow has been idle for Config.EpochIdle and the
// packet's PSN is more than Config.EpochJump from the highest PSN of its
// PSN space (requests, READ responses, or other responses) in the current
// epoch; a READ response must also be that far from the other responses,
// which answer the same requests: the ACKs of the RDMA WRITEs between two
// READs move that PSN space on. A burst of go-back-N resends never goes idle and stays within the
// window, so it is never a new epoch. After Config.EpochIdle a request at
// or before the first request PSN of the epoch, when the epoch carried
// more PSNs and the responder acknowledged every one, starts a new epoch
// too (restarts): a requester resends only what no ACK covered, so
// this is a new connection that starts at the PSN the last one did (NCCL
// starts every QP at PSN 0), not a timeout; and so does a response
// behind its flow's, after the same idle time, at a PSN of the requests
// of such a new epoch of a flow it answered, begun since.
// A timeout resend whose every ACK the fabric lost after the mirror saw
// it is taken for a new connection then.
//
// # The counters
//
// Packets counts every packet of the flow, CNPs and frames with a bad
// ICRC included, but a mirror's second copies of them (MirrorDuplicates,
// see "Mirror copies"), which no other counter holds either; WireBytes
// sums their IP total lengths (40 + GRH PayLen for RoCEv1), right on
// truncated frames and on the first fragment of a fragmented datagram
// (packet.Packet.DatagramLen); PayloadBytes sums their RDMA
// payload (after the transport headers, without pad and ICRC; a CNP has
// none). Transport is that of the first packet that is not a CNP (CNP for
// a flow of CNPs only). FirstPSN and LastPSN are the PSNs of the first and
// last packet that is not a CNP, of whatever kind, but a datagram of a UD
// flow's other source QPs (OtherSenders).
//
// Messages counts request messages, each once: the first copy of each
// packet that ends one (SEND and RDMA WRITE LAST or ONLY, RDMA READ
// request, atomic). A copy classified Retransmitted below, or a re-issued
// READ, is not counted again; a message whose last packet the capture lacks
// is not counted. A READ counts once, on the flow of its request, never on
// the flow of its responses.
//
// Requests (SEND, RDMA WRITE, RDMA READ request, atomics) and RDMA READ
// responses are sequenced, each in its own PSN space (Requests,
// ReadResponses): the READ responses a flow carries answer the partner's
// requests. A packet's PSN is checked against the PSNs the flow expects
// next: the PSN after the highest seen, or after an RDMA READ request at
// PSN p for n bytes, p + ceil(n/MTU) (its response packets take the PSNs
// from p on), where MTU is the path MTU the flow has shown (a FIRST or
// MIDDLE packet carries exactly one) or, until it has, any of 256 to 4096
// bytes (a READ whose RETH was not captured may take any number). A READ
// response FIRST or ONLY may begin at any PSN at or after the expected one,
// since the requests between the partner's READs travel the other way,
// unless the highest response so far left its READ open (a FIRST or
// MIDDLE): a responder answers READs in order and each READ whole, so that
// READ's rest is a gap, from the expected PSN to its last response PSN
// when its request told it, else the expected PSN alone (skipOpenRead). A
// MIDDLE or LAST past the expected PSN continues a READ whose first
// responses the capture lacks: its gap begins where that READ did, as far
// as the capture tells, the latest of the expected PSN, the partner's last
// READ request when its response PSNs hold the packet's, and the PSN after
// those the flow's ACKs and NAKs acknowledged (the responder answers in
// PSN order); the PSNs before are other requests' (WRITEs, SENDs), never a
// READ response's, but for those of the READ before whose response PSNs,
// known from its request, reach past the expected PSN (its tail was lost
// too), which the gap skipped as well.
// Each sequenced packet is exactly one of:
//
//   - the first of its space;
//   - in order: at an expected PSN;
//   - a gap: ahead of the expected PSNs. PSNGaps counts these jumps and
//     MissingPSNs the PSNs they surely skipped, less those that arrived
//     later;
//   - out of order: behind the highest PSN, filling a PSN that a gap had
//     skipped (OutOfOrder); an RDMA READ request fills its responses'
//     PSNs too, as far as the path MTU tells their number. A packet lost before the mirror and resent
//     (go-back-N) shows as a gap, then out of order; one the mirror missed
//     and nobody resent stays in MissingPSNs; so does one only captured
//     out of PSN order (adaptive routing, a mirror path), which
//     Retransmissions and loss tells from a resend (Reordered);
//   - retransmitted: behind the highest PSN, at a PSN this flow already
//     carried (Retransmitted): go-back-N after a NAK, a resend after a
//     timeout or an RNR NAK, a packet lost after the mirror saw it. A READ
//     request that re-issues the rest of the previous READ (same R_Key and
//     end address, a later start, a PSN within the first READ's response
//     PSNs) is retransmitted too, though its PSN is ahead; so is a READ
//     request at a PSN the READ responses answering its flow skipped (a
//     response lost before the mirror, of whichever READ still
//     outstanding: the requester asks again from there). When
//     the snap length cut the RETH, a READ at a PSN after the previous
//     READ's and at or before the highest READ response captured is one,
//     and so is a READ at the PSN after that response when it was a FIRST
//     or MIDDLE (the READ's LAST was lost: a new READ would come later).
//
// A flow remembers its last 8 open gaps: a PSN of an older gap that
// arrives later counts as retransmitted and stays in MissingPSNs.
//
// ACKs, NAKs, atomic ACKs and CNPs are not sequenced (ACKs are coalesced,
// CNPs carry no meaningful PSN). They are counted on the flow that carries
// them, that is for the QP that receives them: NAKs by code (NAKOther for
// reserved codes), RNRNAKs (with the RNR timer values), CNPs (opcodes 0x80
// and 0x81). ECNCE counts packets whose IP ECN field is CE (CNPs too:
// CNPsCE counts those, so that ECNCE - CNPsCE are the other packets a
// switch marked) and ECN packets per codepoint; FECN and BECN count packets with those BTH bits (a CNP
// sets BECN); ICRCBad counts whole frames whose ICRC did not verify (they
// count as any other packet: the receiver dropped them, so their resend is
// a retransmission); Truncated counts frames cut by the snap length.
//
// # Partners
//
// Finish pairs flows. An RDMA CM REQ/REP exchange in the capture names both
// QPNs, so its two flows are partners (PairCM). Otherwise (PairPSN) the
// responses decide: a response from B to A names a PSN that one of A's flows
// to B had sent, before the response was captured, of its own transport (RC,
// XRC or RD, which every opcode names: an XRC ACK never answers an RC QP's
// requests, whatever PSNs the two share; nor is a NAK pending on a QP of
// another transport than the NAK's). Each flow that carries
// responses keeps the flows from A to B that fit every one of its responses
// (up to 16; it looks again later when more fit, and answers to requests the
// capture does not hold are skipped until one fits). A response that no
// flow's requests fit as captured, but lies at most pairAhead PSNs past
// the highest request of exactly one flow from A to B, fits that flow: the
// mirror missed the requests it answers, most often the tail of a message
// (a coalesced ACK acknowledges every PSN up to its own). Other connections
// between the two hosts do not prevent this, but the response fits no flow
// when it lies that close past the requests of several (QPs at the same
// PSNs, as NCCL starts them), or when another flow's responses already
// answer the one it does: the mirror may have missed every request of the
// QP it answers. Once a flow's responses fit a single flow, a later one
// past that flow's requests keeps it. A READ response fits
// only the flows that have sent an RDMA READ request, when some of those it
// fits have (QPs at the same PSNs, one READing, the others SENDing or
// WRITEing), and of those the ones whose requests took its PSN, when some
// did (a response may otherwise name the PSN after a flow's requests: two
// QPs READing at the same PSN, a response past the shorter READ's end is
// the longer one's). Two flows in opposite directions are compatible when the
// responses each carries fit the other's requests; a flow whose responses
// leave exactly one compatible unpaired flow claims it, and a flow claimed
// by exactly one other is linked to it, repeatedly. A flow claimed by
// several (the others answer QPs whose requests the mirror missed) is linked
// to the only one of them whose responses reach its highest request PSN, if
// one does: a responder answers a requester's last message too. The only
// connection between two hosts (one flow each way of its transport) is
// paired as well when its highest response fits its requests or lies up to
// pairAhead PSNs past them, whatever the responses fitted while packets
// arrived: they may have come before the requests they answer (the mirror
// missed the first ones), and too few after them to look again. Anything
// less certain leaves the flows unpaired: PSN ranges alone do not tell
// apart QPs that all start at PSN 0 (NCCL), the timing of the responses
// does.
//
// # Retransmissions and loss
//
// Retx (RetxStats) explains the resends of a flow's requests and the PSN
// gaps they show; reports read it and do not re-derive it. While packets
// arrive, a response (ACK, NAK, READ or atomic response) is applied to the
// flow whose requests it answers: the one an RDMA CM exchange named or,
// without one, the only flow its responses so far fit (see Partners). Finish
// decides, with the final partners, what that link could not.
//
// A request packet sequenced retransmitted or out of order is a resend (a
// re-issued READ is not: ReissuedReads), but for a request out of order
// that was only reordered (below). A resend continues the current
// episode when its PSN is past the last PSN resent, else it starts one; an
// episode ends at the first request past the highest PSN sent before it. A
// PSN sequence error NAK or an RNR NAK at PSN p is pending on the flow whose
// requests it answers (with no single flow linked yet, on each flow from
// the same host pair whose sent PSNs cover p, at most 16) until a resend
// answers it (a resend at p, or one at a PSN after p that does not continue
// an episode), a later NAK replaces it, or a response applied to the flow
// acknowledges p; an RNR NAK also when the request at p is captured in
// order or past a gap (its retry: the mirror missed the packet the NAK
// refused, and the capture shows no resend). A NAK pending on several flows (QPs that all start at
// the same PSN, as NCCL's do, fit it alike) is answered only by a resend
// at p, and ends on all of them at the first response of the flow that
// carried it past p (its requester resent what it asked for): another
// QP's timeout or mirror copy is then no go-back-N or RNR retry.
// The resend that starts an episode makes it:
//
//   - go-back-N (GBNEpisodes) when it answers a pending PSN sequence error
//     NAK. GBNRecovery is the time from the NAK to that resend, GBNCatchUp
//     from the NAK to the request that ends the episode;
//   - an RNR retry (RNRRetries) when it answers a pending RNR NAK. RNRWait
//     is the time from the RNR NAK (which asked for at least its timer's
//     value, IBTA vol 1 Table 45);
//   - the recovery of a re-issued READ (Flow.ReissueResent) when it is
//     the flow's first request after a re-issued READ, past the
//     re-issue's PSN, came less than oneWayAfter (a millisecond) after
//     it, and answers no NAK at its very PSN: a requester that re-issues
//     a READ sends again, go-back-N, every request that followed the READ
//     (IBTA vol 1 ch. 9), right after the re-issue. No ACK timer expired.
//     Its event's Wait is the time since the re-issue;
//   - a timeout (Timeouts) otherwise. TimeoutWait is the time since the
//     previous request packet of the flow: the requester's ACK timeout. A
//     resend whose NAK the capture missed counts here too, with a wait far
//     below any ACK timeout; so do resends a millisecond or more after a
//     re-issued READ (the requester waited: its ACK timer expired).
//
// GBNResent, RNRResent, TimeoutResent and ReissueResent count the resends
// in each kind of episode; with ReissuedReads they add up to
// Requests.Retransmitted plus Requests.OutOfOrder minus Reordered. A
// message tail lost before the mirror and resent after a timeout is in
// order in the capture: no resend, no episode.
//
// Reordering. A fabric that sprays a QP's packets over several paths
// (adaptive routing, as NVIDIA Spectrum-X does: the NIC puts them back in
// order), or a mirror path, may deliver a QP's requests out of PSN order:
// 0, 1, 3, 2 with nothing lost. A requester resends go-back-N (IBTA vol 1
// §9.7.5: from a NAK's PSN, or after its ACK timeout from the first
// unacknowledged PSN, and every packet after it), so the resend of a PSN p
// a gap skipped, behind the highest PSN h the flow carried, is followed by
// the resends of the PSNs after p it carried (retransmitted), unless the
// mirror missed them. A request out of order is held undecided when it
// answers no pending NAK (no PSN sequence error or RNR NAK pending at its
// PSN, nor, not shared, an RNR NAK at an earlier one), continues no episode (it is
// not past the last PSN of an episode in progress), and came less than
// oneWayAfter (a millisecond) after the request before it (a fabric
// reorders by microseconds; a millisecond with no request is a requester
// waiting for its ACK timeout); so are the requests out of order that
// follow it, up to 4. The next request of the flow that is not out of
// order (mirror copies are not sequenced) decides them: when it is
// retransmitted, or a re-issued READ, they are resends (but when it is
// the resend at the PSN of a pending PSN sequence error NAK, behind
// every fill held: a go-back-N resends the NAK's PSN first, so fills
// after the NAK at later PSNs, before it, were originals reordered),
// decided exactly
// as when they came (fabric loss, the episode, its wait: their events take
// their place in capture order); otherwise (in order, or a gap) they were
// reordered: Reordered counts them (a method: the count lives in the
// retransmission state), their PSNs leave the undecided ones as arrived,
// neither fabric nor mirror loss, and no episode starts. A fifth request
// out of order decides those held as resends, and itself as it comes. A
// PSN sequence error NAK, RNR NAK or fatal NAK applied to the flow, or
// pending on it, while requests are held, and Finish, decide them as
// resends first: only a new request proves a reordering, or, at Finish,
// the partner's acknowledgement of the flow's highest request PSN after
// the last of them (a go-back-N responder acknowledges it only once the
// resends of the PSNs after a resent one came, which would have been
// captured: the flow's last requests arrived out of order). An ACK (or a
// READ or atomic response) does not decide them: it acknowledges a resend
// and a reordered packet alike (and one past h with no resend of h since,
// only a reordering), and it decides the other PSNs of their gaps, not
// theirs. What the rule cannot tell: a resend whose go-back-N followers
// the mirror all missed, followed by a new request, counts as reordered;
// and a reordered request followed by the mirror's copy of the request
// after it, taken for its go-back-N resend, counts as resent.
//
// Each request PSN that a gap skipped is decided once, at the first of:
//
//   - fabric loss (FabricLostPSNs): a copy of it is captured later (out of
//     order, and a resend: not reordered), or a PSN sequence error NAK
//     names it or an earlier PSN of its gap. It did not reach the
//     responder and was sent again;
//   - mirror loss (MirrorLostPSNs): the responder acknowledges it (an ACK,
//     READ or atomic response at its PSN or later, or a NAK or RNR NAK at a
//     later PSN; a response whose AETH the snap length cut, which may be a
//     NAK, counts as one) before any copy is captured or a NAK names it, or
//     an RNR NAK or a fatal NAK names it or an earlier PSN of its gap: a
//     responder sends an RNR NAK for the request it received and could not
//     accept, and a fatal NAK (invalid request, remote access error,
//     remote operational error, invalid RD request; not a reserved code)
//     for the request it received and refused, after which the QP is in
//     the error state, so the PSN it names arrived, and the rest of its
//     gap goes with it, as with a PSN sequence error NAK. It was
//     delivered; the capture missed it. The RNR retry that fills the gap
//     is no fabric loss then; when the gap opened after the RNR NAK, that
//     retry (a resend at the pending RNR NAK's PSN) decides it so, and
//     Finish when it opened after the fatal NAK.
//
// A PSN the mirror missed after the one an RNR NAK named, not in its gap,
// is resent by the RNR retry whether it had reached the responder or not
// (a responder drops what follows a request it refused): the capture
// cannot tell, and the resend decides it fabric loss, as for the PSNs a
// go-back-N resends.
//
// FabricGaps and MirrorGaps count the gaps with at least one PSN decided
// each way (a gap can count in both). At Finish, PSNs still undecided at or
// below the highest PSN the partner acknowledged are mirror loss, as is
// the gap of the PSN the partner's last fatal NAK named from that PSN on,
// and so are the PSNs after the last request the flow carried up to the
// highest of the two: the responder acknowledged or received requests the
// capture does not hold (one more mirror gap). A flow keeps its last 8 undecided gaps; PSNs of older ones
// stay undecided (and in MissingPSNs). Gaps in UC and UD flows and in READ
// responses are not decided: nothing acknowledges them.
//
// RetxEvents returns a flow's first 32 events: the NAKs and RNR NAKs it
// carries, and the episodes, re-issued READs and mirror and fabric losses of
// its requests. RetxSpan gives the first and last frame of each kind.
//
// # Mirror copies
//
// A mirror session whose sources overlap (both directions of two ports on
// the packets' path, or the ingress and the egress of one switch) delivers
// a packet twice: the second copy the switch's latency plus its queueing
// later (microseconds, hundreds of them under congestion), so that on a
// busy QP other packets of the flow come between the two. The copy may
// differ in TTL, MAC addresses, DSCP or ECN (it was routed, re-marked,
// marked CE), never in its transport headers. A packet taken for such a
// copy counts in MirrorDuplicates and nowhere else: not in Packets, bytes,
// rates, opcode, DSCP or ECN counts (but for its CE, below); it is not
// sequenced (no retransmission, gap, episode or loss) and is no response,
// NAK or pairing evidence; and Table.AddFlowDelta says so, for the
// reports. MirrorDuplicates is a method: the count lives with the flow's
// rare state (flowCold), which a flow's first copy makes.
//
// A packet is CE-marked, once, if any captured copy of it carries CE: a
// mirror of a switch's ingress and egress captures the packet before the
// queue that marks it, and after. A copy with CE whose packet no CE
// marked yet moves it, in ECN, from its first copy's codepoint to CE (the
// codepoint is not kept: ECT(0) while the flow has such packets, else
// ECT(1); a flow with neither left gains nothing: a switch marks only
// ECN-capable packets, RFC 3168 §5) and counts it in ECNCE, and
// Table.CopyMarkedCE says so, for the reports, which count the mark at
// the copy's frame, the one that shows it. A copy does not say which
// transmission of its PSN it repeats, but a mirror delivers a flow's
// copies in the order of their originals: the k-th copy captured at a PSN
// repeats the k-th transmission there. So each flow that carried CE or a
// copy keeps (from its first CE or copy on: a ring begun at the first CE
// would miss the copies before it, and a later copy at their PSN would
// name an earlier transmission than its own, such as a resend's copy,
// both copies CE, the unmarked first transmission's: two marks where the
// switch made one), for its requests by PSN and for its responses by
// position, for each of
// the 64 PSNs (positions) up to the highest a CE marked or a copy came at
// since, a byte (ceRing): which of the PSN's first four transmissions a CE
// marked (a first copy with CE marks the transmission the flow carried
// last there: one, and one more for each of the last runs of resends that
// hold the PSN, a re-issued READ being a run of its own), and how many
// copies (with CE or not) came there. A copy with CE marks its packet when
// the transmission its place among the PSN's copies names is one the flow
// carried and is not marked yet. The rule cannot tell:
//
//   - a copy with CE 64 PSNs (32 PSNs of responses) or more behind the
//     highest the ring knows in its flow: the ring no longer knows its
//     PSN, and the copy marks its packet, whose first copy may have
//     carried CE already (a packet marked before the mirror and after,
//     both copies CE, then counts twice, as does a resend so marked
//     64 PSNs or more behind a later packet with CE or copy: a mirror
//     that lags more than 64 packets of a flow behind it);
//   - more transmissions of a PSN than the runs of resends the flow keeps
//     (four), or than the ring tells apart (four: the later share the
//     fourth's mark), or a second ACK at one position: a copy with CE of
//     the one beyond adds nothing;
//   - a packet taken for a copy that is none, or a copy taken for a
//     resend (see "What the rule cannot tell" below): the copies' order
//     then names the wrong transmission;
//   - which codepoint a flow of both ECT(0) and ECT(1) packets sent the
//     packet with.
//
// Packets without CE that are no copies never touch the rings, which the
// table keeps by flow index (136 bytes a flow, up to the last flow that
// carried CE or a copy).
//
// A request or READ response is a copy when nothing explains it as a
// resend and its PSN space carried its PSN within the window (below):
//
//   - its PSN is at or behind the highest of its space (or is its last: a
//     re-issued READ's copy), and not in an open gap (a PSN a gap skipped
//     arrives for the first time);
//   - it is not the first request after a re-issued READ, past the
//     re-issue's PSN and less than oneWayAfter after it (the resend of
//     the requests that followed the READ, which comes right after the
//     re-issue, a round trip after their first copies: inside the window;
//     see Flow.ReissueResent). Unless the mirror is known to copy the
//     connection and the copy of the request at its PSN may be the one
//     due: a mirror delivers a flow's copies in the order of their
//     originals, and the flow's copies so far are at least as many as
//     its packets up to the READ and at most as many as its packets up to
//     the one at its PSN (one packet a PSN after the READ's responses), or
//     the READ's response PSNs are not known (its RETH cut, no path MTU
//     shown);
//   - no PSN sequence error NAK is pending at its PSN, nor an RNR NAK whose
//     timer has run (the requester waits at least that long, IBTA vol 1
//     Table 45); nor at an earlier PSN, unless the mirror is known to copy
//     the connection (it or its responses' flow has mirror duplicates): the
//     requester resends every PSN from the NAK's, and the mirror may have
//     missed the first resends; for a READ response FIRST or ONLY (how a
//     responder answers a READ), no re-issued READ from its PSN awaits its
//     answer, nor, for a later READ response, from an earlier PSN (the
//     mirror missed the FIRST that answered it; unless it is known to
//     copy);
//     for a READ request, the READ responses answering its flow did not
//     skip its PSN (then it re-issues a READ from there; but the READ
//     again at the PSN of the last re-issue, before any response since,
//     is that re-issue's copy: the gap stays open until the answer
//     comes; and so is a READ of the flow's last two, or the READ whose
//     first responses the last gap of those READ responses skipped (more
//     READs may come before its copy), at its own PSN
//     when its copy is due, the mirror known to copy the connection: the
//     flow's copies so far, and those of the flow whose responses
//     answered it, are as many as the packets each carried before the
//     READ, and it comes at least half the mirror's lag after the READ,
//     where the copy of a last request showed the lag. A mirror delivers a connection's copies in the order of
//     their originals, so the READ's is next; the mirror missed the
//     READ's first response, and the copy, lagging more than a round
//     trip, came after the later ones. A re-issue comes a round trip
//     after the READ, before the copy of the last packet before it,
//     unless the mirror lags less, and then the READ's copy came
//     first), nor, when it
//     repeats one of the flow's last two READs, not the flow's first
//     packet (nor that packet sent again, an RNR retry: the copy may be
//     the first one's), on a flow with no mirror duplicates yet, did they
//     go past its PSN: a mirror delivers a flow's copies in the order of
//     their originals, so the READ's copy would have come after the copy
//     of the packet before it, and a requester asks for a READ again after
//     the responses that showed one missing (the fabric lost the first
//     after the mirror saw it); the READ counts as resent (a timeout)
//     and its answer as resends;
//   - it does not continue a run of resends (its PSN is not the one after
//     the space's last), nor, on a connection the mirror is not known to
//     copy, a go-back-N episode the fabric reordered: a request up to 8
//     PSNs before the episode's lowest resend, at or after its NAK's PSN,
//     less than oneWayAfter after the request before it (the resend of the
//     NAK's PSN overtaken by the next), and after such a one the PSN after
//     the episode's last resend;
//   - its space first carried the PSN within the window, or one of the
//     last four runs of resends did (a timeout's or RNR retry's resends,
//     new packets, then a go-back-N, all within a mirror's lag: the
//     copies of the first run come after the later ones), or it is the
//     space's last PSN, captured within the window. For this the
//     requests, the responses (READ responses with ACKs and NAKs: their
//     PSNs go forward together) and a run of resends keep, for the slot
//     of capture time of their last packet and for the slot before, how
//     far they had got when the slot began: a compare per packet, a few
//     stores per slot.
//
// Opcode and IP length are not compared: a resend has its original's too,
// so they cannot tell a copy from a resend; the rules above do. A capture
// of one direction only shows no NAK and no re-issued READ, so there a
// go-back-N's resends look like a lagging mirror's copies: once a flow has
// gone a millisecond (oneWayAfter) with no packet the other way between
// its hosts, only its last packet repeated counts as a copy, and the rest
// as resent (in a flow's first millisecond the other way may not have
// answered yet, and a go-back-N there is taken for copies; so in the
// millisecond after a timeout's first resend that came a millisecond or
// more after the request before it: the requester waited that long for
// an answer, so nothing came back, as when the flow's first packets are
// lost, whichever way the mirror looks).
//
// An ACK, NAK, RNR NAK or atomic ACK is a copy when it goes no further than
// the responses before it (in PSN order, a NAK or RNR NAK before an ACK
// at its PSN) and either is the flow's last ACK or atomic ACK again within
// the window (the same opcode, position, AETH syndrome and MSN; the
// opcode of an ACK or atomic ACK says its IP length), or is behind the
// responses after it, which passed its position within the window: a
// responder's responses only go forward, and one behind them acknowledges
// a duplicate request again, which the requester sends after an ACK
// timeout. A PSN sequence error NAK repeated after the
// requester resent what it asked for is the responder NAKing again (the
// resend was lost too), unless the mirror is known to copy the
// connection (its flow or its requester has mirror duplicates: a mirror
// lagging more than a round trip delivers the copy after the resend). So
// is an RNR NAK repeated after its retry, unless the mirror is known to
// copy the connection and the capture has not shown the first RNR NAK's
// copy yet: a mirror lagging more than the RNR timer delivers it after
// the retry, and it is due, within the window of the NAK. Either NAK
// behind a response captured since (the ACK of the resend) is a copy: a
// responder does not NAK what it has acknowledged.
//
// The window: a copy is captured in the same 2^18 ns slot of capture time
// as the packet it repeats, or in the next one: always when less than
// MirrorWindow (262 µs) after it, never when 524 µs or more. That holds a
// switch's latency and queueing under congestion, and stays below the ACK
// timeouts in use: a resend that no NAK or re-issued READ asked for comes
// after the requester's local ACK timeout, 4.096 µs × 2^n (IBTA vol 1
// §9.7.6.1.3, n ≥ 1), which NCCL_IB_TIMEOUT puts at seconds in practice;
// only n ≤ 6 could be taken for a copy.
//
// A CNP carries no PSN (RoCEv2 Annex A17.9.3; ConnectX sends 0) or
// payload that tells its copy from the next CNP, which a NIC sends
// microseconds later (ConnectX rate-limits them per QP to one every few
// microseconds), well inside the window. What a copy repeats and the next
// CNP does not is the IPv4 Identification, where the sender sets a new one
// on every packet (Linux soft-RoCE does; whether ConnectX hardware does
// was not found in public documentation or captures): a switch forwards
// it unchanged. A CNP is a copy (cnp.go) when one of its flow's last 8
// CNPs, within MirrorWindow before or after it and not yet matched to a
// copy, carried the same non-zero IPv4 ID, IP length, UDP source port and
// PSN, and the CNPs from its source to its destination address have
// carried two different non-zero IDs: RFC 6864 lets a sender of datagrams
// with DF set, as RoCE is sent, put one constant ID in all of them, and
// then every CNP would look like a copy of the one before. The rule
// cannot tell, and counts as a CNP, the copy of a CNP:
//
//   - over IPv6 (no ID; a UDP checksum, where the NIC sets one, covers
//     nothing that differs between a QP's CNPs, nor does the flow label),
//     or RoCEv1;
//   - from a sender whose ID is 0 or one constant value;
//   - captured before the sender's CNPs to that address showed a second
//     ID (the first CNP's copy, usually);
//   - more than 8 CNPs of its flow after its CNP.
//
// Two CNPs with the same ID within the window are taken for a copy: an ID
// counter comes round after 65,536 packets, a random ID repeats once in
// 65,536. Only CNPs look at the IDs: other packets pay nothing. A CNP's
// copy counts in MirrorDuplicates, as the other copies do, and its CE, when
// the CNP's first copy carried ECT(0) or ECT(1), makes the CNP CE-marked as
// a data packet's copy does (the switch marked it after the mirror's first
// copy): it moves, in ECN, from that codepoint to CE and counts in ECNCE and
// CNPsCE, and Table.CopyMarkedCE says so (the reports count it at the
// copy's frame, as a CNP's CE, no data packet's mark). Each CNP is matched
// to one copy, so no ring is needed; a copy counted as a CNP (above)
// counts its CE as that CNP's own.
//
// What the rule cannot tell: the copy of a packet that a NAK names, when
// the mirror delivers it after the NAK and before the resend the NAK asks
// for (a mirror lagging more than a round trip), is taken for that resend
// and the resend for a copy: the counts hold, the recovery time starts at
// the copy. On a connection the mirror copies, lagging more than an RNR
// timer and a round trip, a second RNR NAK (the responder refusing the
// retry too) comes before the first one's copy: it is taken for that copy
// and the copy for the second RNR NAK, so the counts hold, but the second
// retry, which waits for the timer from the second NAK, may then come too
// soon after the copy to answer it, and count as the first retry's copy.
// The copy of a packet resent in an earlier run of resends than the last
// four, when the packet's first copy is older than the window, counts as
// a packet of its own. On a connection the mirror is known to copy,
// lagging more than a READ's round trip, the resends that follow a
// re-issued READ come while the copies of their originals are due: they
// are taken for those copies (no resend, no episode), and the copies,
// within the window, for copies too.
//
// A READ whose first response the fabric lost after the mirror saw it,
// asked for again whole (its own PSN, address and length) after the
// later responses, is taken for the READ's copy, and its answer for the
// copies of the first answer, when the READ is its flow's first packet (or
// that packet's RNR retry) or the mirror copies the flow: the copy of a READ lagging as long after it
// as the re-issue does comes at that same place, and its responses' copies
// exactly when the re-issue's answer would. The counts then say one READ
// and its answer copied, not resent. The other way round, the copy of a
// READ that is its flow's first packet, whose first response the mirror
// missed, captured after the later responses, is taken for a re-issue
// and the copies of those responses for resends: no copy before it tells
// that the mirror copies the flow. And a READ re-issued from its first
// PSN on a connection the mirror copies, when the mirror lags just enough
// to deliver the copy of the last packet before the READ (either way)
// before the re-issue and the READ's own after it (a lag between the
// round trip and the round trip plus the time from that packet to the
// READ: after a pause, any lag up to the pause), is taken for the READ's
// copy, and when its answer comes before that copy, the copy for
// another; unless the copy of a last request showed the mirror's lag
// to be more than twice the time from the READ to the re-issue.
//
// # Copies across files
//
// Captures taken in parallel of one traffic (one per host, or two mirror
// ports) and read together hold a packet once in each file that saw it:
// where it left and where it arrived, each at its own clock's time. Host
// clocks differ by hundreds of microseconds to milliseconds, more than a
// mirror's copy lags (MirrorWindow), so the rules above would take the
// second capture of a packet for a resend, and the flow an ACK timeout.
// A Table told which of its files overlap in time (SetParallelFiles;
// capture.Merger.Parallel: the file that began later began before the
// other ended; the rotated files of one capture follow each other and do
// not overlap) follows, once a flow has a packet from a second file
// parallel to the first, each file's own view of the flow (at most
// maxFileSeqs files): the highest PSN of its requests, of its READ
// responses and the highest response position, and how many of its
// packets were resends or filled a gap. A packet of the flow from a file
// other than its last packet's (or any of its sequenced packets and
// responses behind the highest, once the flow follows its files) is:
//
//   - a copy across files when it is new to its file's sequence (ahead of
//     the highest its file carried) and a parallel file carried its PSN
//     less than MaxFileOffset (100 ms) before: whatever the offset between
//     the clocks, up to that bound, and whichever file's clock is ahead;
//     and it does not begin a new connection on the key (startsEpoch), as
//     the flow's first PSN again after it went idle would;
//   - in order when it is new to its file's sequence yet fills a gap of
//     the flow: the file that showed the gap lacked it (its capture
//     dropped it) and the other file's capture of it came later. The gap
//     and its fill are taken back (PSNGaps, MissingPSNs, OutOfOrder, the
//     last PSNs, its PSNs' mirror or fabric loss, decided already or
//     not); a READ request takes back its responses' PSNs too, as many as
//     its length may make them;
//   - a parallel file's resend (or gap filled) captured again when its
//     file carried its PSN before and that file showed more resends (gaps
//     filled) than this one has: a resend captured in both files counts
//     once, and one captured in one file only counts;
//   - a parallel file's mirror copy captured again when its file carried
//     its PSN before and that file showed a mirror's copy of that PSN
//     which this one has not (each file keeps the PSNs of its last 64
//     copies per space; past them, or when both showed one, a copy of a
//     resend too, when that file showed more of the mirror's copies than
//     this one has);
//   - otherwise it is as the rules for one file take it (a mirror's copy,
//     a resend, in order), a mirror's copy judged on the clock of the
//     flow's first file (the least offset its copies across files showed),
//     but the copy of a packet that filled a gap across files (above),
//     which the flow holds at its own file's time, on that file's clock.
//
// A CNP carries no sequence, but each file holds the CNPs it captured in
// order: a CNP from a file that counted fewer of the flow's CNPs than a
// parallel file is that file's CNP captured again (cnpAcross).
//
// Copies across files count in FileCopies, not MirrorDuplicates, and are
// in no other counter; Table.CopyAcrossFiles says so for the reports.
// FileOffsets says, for each two files, how long after a file's newest
// packet (known to the nanosecond: its own capture, or the flow's last
// request) its copy in the other came: the path from one capture point to
// the other plus the clocks' offset, which copies both ways cancel out. The
// per-packet path pays one compare (the packet's file against the flow's
// last packet's) for a packet in order. The rule cannot tell: which
// transmission of a PSN a copy repeats (it counts resends per file, not
// per PSN); a resend whose PSN its file never carried before (its file
// missed the original) from a copy; a response (no sequence, no gap)
// that the file ahead in capture order lacks, once the flow's responses
// went past it, from that file's packet captured again, unless the
// counts tell it: each file keeps its last 8 runs of responses (their
// positions and number), and a response new to its file is none of
// another file's when its file carried more within that file's run
// than that file did (the last of them counts, where a file dropped
// two, one each, or the other began later, none does); nor a CE
// mark only the second file's capture shows (the packet's first capture
// counts, as captured). Measured with the randomized truth test over
// parallel splits (ROCEDUMP_RAND_PARALLEL=1), still wrong: a resend
// whose original its file missed, when the file that showed the gap
// missed the resend, is taken for a packet in order; files whose clocks
// differ by more than the capture lasts do not overlap in time and are
// taken for rotated files (every packet counts twice), and so are files
// each of whose packets are at one same time (capture.Merger.Parallel:
// one ends, at that time, before the next begins; their copies count as
// the mirror's). A flow that went idle on the clock of its last packet's
// file, at its first PSN again (startsEpoch), is no connection begun
// again when the packet's own file carried the flow's packets less than
// EpochIdle before, or a parallel file showed more resends or mirror
// copies than its own (fileCopyDue).
//
// # Responses before their requests
//
// A responder answers only what it received, so a response captured before
// the request it acknowledges says the capture does not keep the wire's
// order: the two directions come from files whose clocks disagree (a tap
// or two mirror ports, one file per direction) or from mirror paths of
// different latency. Flow.EarlyResponses counts them, on the flow whose
// requests they answer (early.go); the rules above then read the wrong
// order, and only the following corrects it (skew.go). When the capture's
// parallel files hold one direction each (every packet from a flow's
// destination to its source so far came from a file parallel to, and
// other than, the flow's one file), a request repeated in the flow's file
// is judged as in a capture of one direction (only its last packet again
// within the window is a copy): a go-back-N's resends captured before
// their NAK are resends, a timeout first. A PSN sequence error NAK at the
// PSN of that timeout's first resend, captured after it in the other file
// less than MaxFileOffset later, on a connection the mirror is not known
// to copy, makes the timeout its go-back-N (whether the resends repeated
// PSNs or filled its gap), with a recovery time of 0 (the clocks do not
// tell it); an RNR NAK so captured after its retry makes the timeout its
// RNR retry (RNRWait 0); the timeout before the last episode (two bursts
// before their NAKs) is made so too. Still wrong:
//
//   - resends captured before any packet the other way between the hosts
//     (the responses' clock ahead by more than the time to the first
//     loss) are taken for copies, and their NAK is left unanswered;
//   - in a file of one direction, a mirror's copy before the connection
//     showed one (but the last packet again) is taken for a resend;
//   - a go-back-N's catch-up time, when a new request ended it before
//     its NAK was captured, is not known; a NAK after three bursts or more
//     leaves the older ones timeouts;
//   - an ACK captured before a resend (the responses' clock behind) makes
//     the resend a timeout and its PSN mirror loss.
//
// # Memory
//
// A flow holds a fixed-size state (960 bytes, 15 cache lines, laid out so
// that a packet touches the first four or five: see Flow) plus state made
// at its first need and bounded per flow: opcode, DSCP and UDP source port
// values beyond the first few, RNR timer counts, the last two RDMA READs
// and the one whose first responses a gap skipped (flowCold; ports capped at 64; also the mirror duplicates, the last four
// runs of resends and a pending re-issued READ), the open gaps of a PSN space
// (at most 8),
// its pairing candidates (at most 16, at its first response) and the
// responses that came before the flow they answer was known with
// requests (at most 512, 24 bytes each, and 2^19 in the whole table, 12
// MiB: a mirror of responses only kept 512 on every response flow; early.go). Its first
// NAK, resend, re-issued READ or request gap adds a fixed-size
// retransmission state (at most 8 undecided gaps and 4 requests held out
// of order) and at most 32 events.
// The table allocates flows 128 at a time (4,096 at a time, offered to
// transparent huge pages, once it holds 4,096: see Table.newChunk) and
// finds the current flow of an IPv4 key through an open-addressing index
// of 16-byte slots (a map for other keys). Memory and allocations grow
// with the number of flows, never with the number of packets: once a flow
// has shown the kinds of packet it carries, its packets allocate nothing.
// The benchmark's flows (RDMA WRITE and ACK flows, BENCHMARKS.md) take
// about 1,100 bytes of heap each (TestBenchFeedHeapPerFlow).
//
// # Shards
//
// To use every core (BENCHMARKS.md, "Proposals" 6), the packets of one
// input can be spread over n Tables, each fed by its own goroutine in
// input order, and the finished tables merged into one (MergeShards).
//
// A shard owns every packet between two hosts, both ways: ShardOf hashes
// the unordered pair of the packet's addresses (a Split does too, with a
// share of its own for shard 0). Everything a Table decides
// is decided within one such pair, so a shard decides it exactly as one
// Table fed every packet would:
//
//   - a flow's key, its epochs, counters and PSN state are its own;
//   - its partner is a flow in the other direction between the same two
//     addresses (CM pairing links the two flows of one REQ/REP exchange;
//     PSN pairing only considers flows between the response's addresses),
//     and so are the flows a response or a NAK is applied to and the loss
//     Finish decides from the partner's acknowledgements;
//   - RDMA CM: a REQ and the REP that answers it travel between the same
//     two addresses (the REP is matched by the REQ's addresses, swapped),
//     and the CM info they give goes to the flows keyed by those same
//     addresses. The GIDs and path records inside the REQ are not used: a
//     connection whose CM MADs travel between other addresses than its data
//     (a host with several GIDs, the CM on one and the data on another)
//     gets no CM info, sharded or not;
//   - CNPs are sent by the packets' receiver to their sender, between the
//     same two addresses, on the flow of the sender's QP.
//
// What differs is only the order of the flows and their IDs, which
// MergeShards restores from FrameRef.Seq.
package flows
