package flows

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocedump/rocedump/decode/packet"
)

// ShardOf returns which of n shards owns p: a hash of the unordered pair
// of its source and destination addresses, so that both directions of a
// connection, its CNPs and its RDMA CM exchange land in the same shard. It
// returns 0 when n <= 1. Packets that are no flow's business (not RoCE, no
// BTH) may go to any shard: Add ignores them. See the package doc,
// "Shards", for why a shard decides what one Table would.
func ShardOf(p *packet.Packet, n int) int {
	if n <= 1 {
		return 0
	}
	return shardOfAddrs(p.Src, p.Dst, n)
}

func shardOfAddrs(a, b netip.Addr, n int) int {
	return shardOfWords(addrWord(a), addrWord(b), n)
}

func shardOfWords(x, y uint64, n int) int {
	return int(pairHash(x, y) * uint64(n) >> 32)
}

// pairHash is the 32-bit hash of the unordered pair of address words x
// and y that every split of host pairs uses.
func pairHash(x, y uint64) uint64 {
	if x > y {
		x, y = y, x
	}
	return mix64(x*0x9e3779b97f4a7c15^y) >> 32
}

// Split divides the host pairs among n shards by the hash ShardOf uses,
// with a share of its own for shard 0: a pass whose worker 0 also reads
// the input for the others (cli's relay) gives that worker fewer flows,
// so that every worker has as much to do. Any Split keeps the packets
// between two addresses together, which is all MergeShards needs.
type Split struct {
	n int
	// owner is the shard of each of splitBuckets equal ranges of the
	// hash; nil for one shard, or for more shards than buckets (then the
	// split is ShardOf's).
	owner *[splitBuckets]uint16
}

// A Split's shares are counted in splitBuckets equal ranges of the hash:
// 1/1024 of the host pairs.
const (
	splitBits    = 10
	splitBuckets = 1 << splitBits
)

// NewSplit returns a Split of host pairs among n shards (at least one)
// that gives shard 0 the fraction first of them (0 to 1, rounded to
// 1/1024) and the other shards equal parts of the rest. NewSplit(n, 1/n)
// splits as evenly as ShardOf does, though not in the same way; with more
// than 1,024 shards the split is ShardOf's, whatever first.
func NewSplit(n int, first float64) Split {
	n = max(n, 1)
	s := Split{n: n}
	if n == 1 || n > splitBuckets {
		return s
	}
	first = min(max(first, 0), 1)
	zero := int(first*splitBuckets + 0.5)
	s.owner = new([splitBuckets]uint16)
	for b := range s.owner {
		if b >= zero {
			s.owner[b] = uint16(1 + (b-zero)*(n-1)/(splitBuckets-zero))
		}
	}
	return s
}

// Shards returns the number of shards.
func (s Split) Shards() int { return s.n }

// Share returns the part of the host pairs (0 to 1) that shard i owns.
func (s Split) Share(i int) float64 {
	if s.n <= 1 {
		return 1
	}
	if s.owner == nil {
		return 1 / float64(s.n)
	}
	own := 0
	for _, o := range s.owner {
		if int(o) == i {
			own++
		}
	}
	return float64(own) / splitBuckets
}

// Of returns the shard that owns p (see ShardOf).
func (s Split) Of(p *packet.Packet) int {
	if s.n <= 1 {
		return 0
	}
	return s.ofWords(addrWord(p.Src), addrWord(p.Dst))
}

// OfIPv4 is Of for a packet between IPv4 addresses src and dst (as
// big-endian integers) that a worker has only peeked at
// (packet.PeekRoCEv2IPv4): the shard Of gives the decoded packet.
func (s Split) OfIPv4(src, dst uint32) int {
	return s.ofWords(uint64(src), uint64(dst))
}

// ofWords is the shard of the pair of address words x and y: 0 for one
// shard (or the zero Split).
func (s Split) ofWords(x, y uint64) int {
	h := pairHash(x, y)
	if s.owner == nil {
		return int(h * uint64(s.n) >> 32)
	}
	return int(s.owner[h>>(32-splitBits)])
}

// addrWord folds an address into 64 bits: an IPv4 address is its 32 bits,
// an IPv6 address (or GID) its two halves, mixed.
func addrWord(a netip.Addr) uint64 {
	if a.Is4() {
		v := a.As4()
		return uint64(binary.BigEndian.Uint32(v[:]))
	}
	v := a.As16()
	return mix64(binary.BigEndian.Uint64(v[:8])) ^ binary.BigEndian.Uint64(v[8:])
}

// mix64 is the SplitMix64 finalizer: every input bit moves every output
// bit.
func mix64(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// MergeShards returns one finished Table holding the flows of shards:
// tables that were each fed, in input order, the packets ShardOf gave
// them (any split that keeps the packets between two addresses together
// will do), with FrameRef.Seq numbering every frame of the whole input in
// order, and each already Finished. The merged table's Flows are all the
// shards' flows ordered by First.Seq, with IDs renumbered from 1 in that
// order: what one Table fed every packet would hold (see the package doc,
// "Shards"). The flows themselves are not copied: the shards' Flow
// values are the merged table's, and the shards must not be used
// afterwards. Current works on the merged table; Add must not be called
// on it.
func MergeShards(shards []*Table) *Table {
	m := &Table{finished: true, merged: true, gen: nextGen()}
	if len(shards) > 0 {
		m.cfg = shards[0].cfg
	} else {
		m.cfg = Config{}.withDefaults()
	}
	total := 0
	for _, s := range shards {
		s.Finish()
		total += len(s.flows)
	}
	m.flows = make([]*Flow, 0, total)
	// Each shard's flows are in Seq order already (IDs follow first
	// appearance): merge the runs, the earliest head first.
	next := make([]int, len(shards))
	for len(m.flows) < total {
		best := -1
		for i, s := range shards {
			if next[i] == len(s.flows) {
				continue
			}
			if best < 0 || s.flows[next[i]].First.Seq < shards[best].flows[next[best]].First.Seq {
				best = i
			}
		}
		f := shards[best].flows[next[best]]
		next[best]++
		f.ID = len(m.flows) + 1
		m.flows = append(m.flows, f)
	}
	// The current epoch of a key is the latest flow of the key.
	for i, f := range m.flows {
		k := f.Key
		m.index.put(packKey(k.Src, k.Dst, k.DestQP), &k, int32(i))
	}
	return m
}
