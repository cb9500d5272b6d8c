package flows

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// flowIndex finds the current epoch of a key (BENCHMARKS.md, "Proposals"
// 1: a flow lookup that does not hash a 52-byte Key through a Go map). Keys
// of two IPv4 addresses, the common case, are packed into a 64-bit word
// (source, destination) and the QPN and looked up in an open-addressing
// table of 16-byte slots with linear probing: one cache line for almost
// every lookup. Other keys (IPv6, RoCEv1 GIDs) go to a map.
//
// Slots hold an int32 index into the table's flow slab (Table.flowAt; in a
// table MergeShards made, into its flow list), not a pointer, so that four
// fit in a cache line.
type flowIndex struct {
	slots []indexSlot // len is a power of two; nil until the first IPv4 key
	used  int         // slots in use
	shift uint8       // 64 - log2(len(slots))
	other map[Key]int32
}

// indexSlot is one IPv4 key and its flow. A slot is free when qp is 0:
// qp holds the 24-bit QPN with slotUsed set.
type indexSlot struct {
	hosts uint64 // source address << 32 | destination address
	qp    uint32 // slotUsed | QPN
	flow  int32  // index of the key's current flow in the slab
}

const (
	slotUsed     = 1 << 31
	minIndexSize = 64
)

// packedKey is a key in the index's packed form; ok is false for a key
// that is not two IPv4 addresses and a 24-bit QPN (as the BTH carries),
// which the index keeps in its map.
type packedKey struct {
	hosts uint64
	qp    uint32 // slotUsed | QPN
	ok    bool
}

func packKey(src, dst netip.Addr, qp uint32) packedKey {
	if !src.Is4() || !dst.Is4() || qp > psnMask { // QPNs are 24 bits, as PSNs are
		return packedKey{}
	}
	// Big-endian, the addresses as on the wire: the look-ahead packs the
	// addresses it peeks (packIPv4, twice a frame) without a byte swap,
	// and a lookup here (rare with hints) pays for it instead.
	s, d := src.As4(), dst.As4()
	return packedKey{
		hosts: uint64(binary.BigEndian.Uint32(s[:]))<<32 | uint64(binary.BigEndian.Uint32(d[:])),
		qp:    slotUsed | qp,
		ok:    true,
	}
}

// slot returns the first slot to probe for k: the top bits of a
// multiplicative (Fibonacci) hash, which every bit of the key reaches.
func (x *flowIndex) slot(k packedKey) int {
	h := k.hosts*0x9e3779b97f4a7c15 ^ uint64(k.qp)*0xc2b2ae3d27d4eb4f
	// The mask changes no shift (shift is below 64: the slots are at
	// least minIndexSize), but without it the compiler makes a shift of
	// 64 or more give 0, three instructions more a slot.
	return int(h >> (x.shift & 63))
}

// get returns the flow index of k (key, when k is not packed), or -1.
func (x *flowIndex) get(k packedKey, key *Key) int32 {
	if !k.ok {
		if i, ok := x.other[*key]; ok {
			return i
		}
		return -1
	}
	if x.slots == nil {
		return -1
	}
	return x.find(k)
}

// find is get's probe of a packed key k, once the slots exist. It inlines,
// so that the look-ahead's lookup (Table.PrefetchFlow, for nearly every
// frame of a mirror) makes no call.
func (x *flowIndex) find(k packedKey) int32 {
	mask := len(x.slots) - 1
	for i := x.slot(k); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.qp == k.qp && s.hosts == k.hosts {
			return s.flow
		}
		if s.qp == 0 {
			return -1
		}
	}
}

// put makes flow the index of k (key, when k is not packed).
func (x *flowIndex) put(k packedKey, key *Key, flow int32) {
	if !k.ok {
		if x.other == nil {
			x.other = map[Key]int32{}
		}
		x.other[*key] = flow
		return
	}
	if 2*(x.used+1) > len(x.slots) {
		x.grow()
	}
	mask := len(x.slots) - 1
	for i := x.slot(k); ; i = (i + 1) & mask {
		s := &x.slots[i]
		if s.qp == 0 {
			*s = indexSlot{hosts: k.hosts, qp: k.qp, flow: flow}
			x.used++
			return
		}
		if s.qp == k.qp && s.hosts == k.hosts {
			s.flow = flow
			return
		}
	}
}

// grow doubles the slots (keeping the load at most one half) and reinserts.
func (x *flowIndex) grow() {
	old := x.slots
	x.slots = make([]indexSlot, max(2*len(old), minIndexSize))
	x.shift = uint8(64 - bits.Len(uint(len(x.slots)-1)))
	mask := len(x.slots) - 1
	for _, s := range old {
		if s.qp == 0 {
			continue
		}
		for i := x.slot(packedKey{hosts: s.hosts, qp: s.qp, ok: true}); ; i = (i + 1) & mask {
			if x.slots[i].qp == 0 {
				x.slots[i] = s
				break
			}
		}
	}
}
