// Package bth decodes the InfiniBand transport headers that RoCE carries
// (IBTA vol 1 chapter 9; RoCEv1 Annex A16, RoCEv2 Annex A17) as gopacket
// layers:
//
//   - BTH, the Base Transport Header (§9.2), whose DecodeFromBytes also
//     decodes every extended transport header its Opcode carries (§9.3):
//     RDETH, DETH, XRCETH, FETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt
//     and IETH, in wire order. Reused through a gopacket.DecodingLayerParser
//     it allocates nothing per packet; DecodeReused decodes the same into a
//     BTH reused by a decoder, clearing only what the last packet set.
//   - Opcode, with names, transports and the extended headers of all 256
//     opcodes (Table 38) in tables built once.
//   - GRH (§8.3) for RoCEv1, CNP (Annex A17 §A17.9.2), and CMMAD, the
//     Communication Manager's MADs on QP1 (§12.6, §13.4, Annex A11).
//   - ICRCv2 and ICRCv1, the invariant CRC (Annex A17 §A17.8).
//
// Importing the package registers, in its one init function, the layer
// types (1791-1804), UDP port 4791 and EtherType 0x8915 with gopacket, so
// gopacket.NewPacket decodes RoCE with each extended header a layer of its
// own.
//
// Malformed input is reported, never panicked on: a header cut short is a
// *HeaderError (ErrShortHeader); a packet cut by the snap length decodes as
// far as it goes and is marked Truncated.
package bth
