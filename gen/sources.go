package gen

import (
	"fmt"
	"sort"
	"strconv"
)

// mix is a stateless SplitMix64 hash of the seed and a key: per-entry values
// (comm IDs, ISNs, garbage bytes) that do not depend on generation order.
func mix(seed, key uint64) uint64 {
	z := seed + key*0x9e3779b97f4a7c15 + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// byTime lists entry indexes in time order, ties in scenario order.
func byTime(n int, at func(i int) float64) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return at(idx[a]) < at(idx[b]) })
	return idx
}

// listGen walks entries in time order, one batch per entry.
type listGen struct {
	order []int
	pos   int
	at    func(i int) float64
	batch func(s *source, i int, t int64)
}

func (l *listGen) firstStart() int64 {
	if len(l.order) == 0 {
		return 0
	}
	return usToNS(l.at(l.order[0]))
}

func (l *listGen) nextBatch(s *source) {
	if l.pos >= len(l.order) {
		s.done = true
		return
	}
	i := l.order[l.pos]
	l.batch(s, i, s.nextStart)
	l.pos++
	if l.pos >= len(l.order) {
		s.done = true
		return
	}
	s.nextStart = usToNS(l.at(l.order[l.pos]))
}

// CM attribute IDs (IBTA vol 1 §16.7.2, Table 226... CM attributes §12.6).
const (
	cmREQ  = 0x0010
	cmREP  = 0x0013
	cmRTU  = 0x0014
	cmDREQ = 0x0015
	cmDREP = 0x0016
)

func cmAttrName(a uint16) string {
	switch a {
	case cmREQ:
		return "REQ"
	case cmREP:
		return "REP"
	case cmRTU:
		return "RTU"
	case cmDREQ:
		return "DREQ"
	case cmDREP:
		return "DREP"
	}
	return "ATTR_" + strconv.Itoa(int(a))
}

// cmServiceID is the IP CM service ID for port space TCP (Annex A11 §A11.2.1).
func cmServiceID(port int) uint64 { return 0x0000000001060000 | uint64(port&0xffff) }

type cmGen struct {
	g *generator
	listGen
}

const cmStep = 20_000 // ns between the messages of a handshake

func (c *cmGen) init() {
	s := c.g.s
	for i := range s.CM {
		e := &s.CM[i]
		c.g.truth.CM = append(c.g.truth.CM, &CMTruth{
			Name: e.Name, Client: e.Client.String(), Server: e.Server.String(),
			ServicePort: e.Port, ServiceID: fmt.Sprintf("%#016x", cmServiceID(e.Port)),
			ClientQPN: e.ClientQPN, ServerQPN: e.ServerQPN, Messages: map[string]int{},
		})
	}
	c.at = func(i int) float64 { return s.CM[i].AtUS }
	c.order = byTime(len(s.CM), c.at)
	c.batch = func(src *source, i int, t int64) {
		e := &s.CM[i]
		push := func(t int64, attr uint16, rev bool) {
			src.push(pkt{t: t, kind: kindCM, owner: int32(i), n: int32(attr), rev: rev})
		}
		push(t, cmREQ, false)
		push(t+cmStep, cmREP, true)
		push(t+2*cmStep, cmRTU, false)
		if *e.Disconnect {
			d := t + usToNS(e.DisconnectUS)
			push(d, cmDREQ, false)
			push(d+cmStep, cmDREP, true)
		}
	}
}

type tcpGen struct {
	g *generator
	listGen
}

const tcpRTT = 50_000 // ns

func (tg *tcpGen) init() {
	s := tg.g.s
	for i := range s.TCP {
		e := &s.TCP[i]
		tg.g.truth.TCP = append(tg.g.truth.TCP, &TCPTruth{
			Name: e.Name, Client: e.Client.String(), Server: e.Server.String(),
			ClientPort: e.ClientPort, ServerPort: e.Port,
		})
	}
	tg.at = func(i int) float64 { return s.TCP[i].AtUS }
	tg.order = byTime(len(s.TCP), tg.at)
	tg.batch = func(src *source, i int, t int64) {
		e := &s.TCP[i]
		isnC := uint32(mix(s.Seed, 0x7c9<<32|uint64(i)))
		isnS := uint32(mix(s.Seed, 0x7c5<<32|uint64(i)))
		seg := func(t int64, rev bool, flags uint8, seq, ack uint32, n int) {
			src.push(pkt{t: t, kind: kindTCP, owner: int32(i), rev: rev, flags: flags, sq: seq, ack: ack, plen: int32(n)})
		}
		seg(t, false, tcpSYN, isnC, 0, 0)
		seg(t+tcpRTT, true, tcpSYN|tcpACK, isnS, isnC+1, 0)
		t += 2 * tcpRTT
		seg(t, false, tcpACK, isnC+1, isnS+1, 0)
		cs, ss := isnC+1, isnS+1
		// data one way, ACKed every second segment and at the end
		data := func(rev bool, total int, snd, rcv *uint32) {
			k := 0
			for off := 0; off < total; off += e.MSS {
				n := min(e.MSS, total-off)
				t += 2_000
				seg(t, rev, tcpACK|tcpPSH, *snd, *rcv, n)
				*snd += uint32(n)
				k++
				if k%2 == 0 || off+n >= total {
					seg(t+tcpRTT/2, !rev, tcpACK, *rcv, *snd, 0)
				}
			}
			t += tcpRTT
		}
		data(false, e.Bytes, &cs, &ss)
		data(true, e.RespBytes, &ss, &cs)
		seg(t, false, tcpFIN|tcpACK, cs, ss, 0)
		seg(t+tcpRTT, true, tcpFIN|tcpACK, ss, cs+1, 0)
		seg(t+2*tcpRTT, false, tcpACK, cs+1, ss+1, 0)
	}
}

type pfcGen struct {
	g *generator
	listGen
}

func (pg *pfcGen) init() {
	s := pg.g.s
	pg.at = func(i int) float64 { return s.PFC[i].AtUS }
	pg.order = byTime(len(s.PFC), pg.at)
	pg.batch = func(src *source, i int, t int64) {
		e := &s.PFC[i]
		for k := 0; k < e.Count; k++ {
			src.push(pkt{t: t + int64(k)*usToNS(e.IntervalUS), kind: kindPFC, owner: int32(i), n: int32(k)})
		}
	}
}

type malGen struct {
	g *generator
	listGen
}

func (mg *malGen) init() {
	s := mg.g.s
	mg.at = func(i int) float64 { return s.Malformed[i].AtUS }
	mg.order = byTime(len(s.Malformed), mg.at)
	mg.batch = func(src *source, i int, t int64) {
		e := &s.Malformed[i]
		for k := 0; k < e.Count; k++ {
			src.push(pkt{t: t + int64(k)*usToNS(e.IntervalUS), kind: kindMalformed, owner: int32(i), n: int32(k)})
		}
	}
}
