package gen

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/rocedump/rocedump/decode/bth"
)

// CM MAD constants (IBTA vol 1 §13.4 and §12.6).
const (
	madLen       = 256
	madClassCM   = 0x07
	cmQKey       = 0x80010000 // well-known GSI Q_Key
	cmMethodSend = 0x03
)

// build turns a pending packet into its frame, wrapped for its interface.
func (g *generator) build(p *pkt) (*Frame, error) {
	fb := g.fb
	fb.reset()
	var (
		ifName    string
		src, dst  netip.Addr
		etherType uint16
		err       error
		pfc       bool
		outgoing  = !p.rev
	)
	switch p.kind {
	case kindFlow:
		f := g.flows[p.owner].f
		ifName = f.Interface
		src, dst = f.Src, f.Dst
		if p.rev {
			src, dst = dst, src
		}
		seed := p.b.PSN*131 + uint32(p.owner)
		g.ipID = p.ipID
		etherType, err = g.roce(fb, src, dst, f.UDPSport, &p.b, int(p.plen), p.cnp, seed, p.dscp, p.ecn, p.ttl, f.RoCE == "v1", "")
	case kindCM:
		e := &g.s.CM[p.owner]
		ifName = e.Interface
		src, dst = e.Client, e.Server
		if p.rev {
			src, dst = dst, src
		}
		etherType, err = g.cmFrame(fb, p, e, src, dst)
	case kindTCP:
		e := &g.s.TCP[p.owner]
		ifName = e.Interface
		src, dst = e.Client, e.Server
		sport, dport := e.ClientPort, e.Port
		if p.rev {
			src, dst, sport, dport = dst, src, dport, sport
		}
		fill(fb.append(int(p.plen)), p.sq)
		putTCP(fb, src, dst, sport, dport, p.sq, p.ack, p.flags, e.MSS)
		putIP(fb, src, dst, protoTCP, 0, 64)
		etherType = ipEtherType(src)
	case kindPFC:
		e := &g.s.PFC[p.owner]
		ifName = e.Interface
		pfc = true
		b := fb.append(46)
		binary.BigEndian.PutUint16(b[0:], 0x0101) // PFC opcode (802.1Qbb)
		var vec uint16
		for _, pr := range e.Priorities {
			vec |= 1 << pr
			binary.BigEndian.PutUint16(b[4+2*pr:], uint16(*e.Quanta))
		}
		binary.BigEndian.PutUint16(b[2:], vec)
		etherType = etherMACCtl
		mac, _ := parseMAC(e.Src)
		g.wireLen = 46
		return g.wrap(fb, p, ifName, etherType, mac, [6]byte{0x01, 0x80, 0xc2, 0, 0, 1}, pfc, outgoing)
	case kindMalformed:
		e := &g.s.Malformed[p.owner]
		ifName = e.Interface
		src, dst = e.Src, e.Dst
		etherType, err = g.malformed(fb, p, e)
	}
	if err != nil {
		return nil, err
	}
	sm, dm := hostMACs(src, dst)
	if p.ttl != 0 && p.ttl != defaultTTL {
		sm = routerMAC // a copy taken after a switch routed the packet
	}
	return g.wrap(fb, p, ifName, etherType, sm, dm, pfc, outgoing)
}

// defaultTTL is the IP TTL (GRH hop limit) of every generated packet but a
// mirror copy that says otherwise.
const defaultTTL = 64

// routerMAC is the source MAC address of a routed mirror copy.
var routerMAC = [6]byte{0x02, 0, 0, 0, 0, 0xfe}

// fill writes a recognisable payload pattern: byte i is byte(seed+i).
func fill(b []byte, seed uint32) {
	if len(b) <= len(payloadPattern)-255 {
		copy(b, payloadPattern[seed&0xff:])
		return
	}
	for i := range b {
		b[i] = byte(seed + uint32(i))
	}
}

// payloadPattern[i] is byte(i); fill copies from it.
var payloadPattern = func() []byte {
	b := make([]byte, 9216+255)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

// roce builds a RoCEv2 IP datagram (Annex A17) or a RoCEv1 GRH packet
// (Annex A16) carrying b and plen payload bytes, with its ICRC, and returns
// the EtherType to carry it. ttl is the IP TTL or GRH hop limit (0 for
// defaultTTL); the ICRC does not cover it. corrupt names a malformed kind
// to apply.
func (g *generator) roce(fb *frameBuf, src, dst netip.Addr, sport int, b *bth.BTH, plen int, zero bool, seed uint32, dscp, ecn, ttl uint8, v1 bool, corrupt string) (uint16, error) {
	if ttl == 0 {
		ttl = defaultTTL
	}
	pad := (4 - plen%4) % 4
	b.PadCount = uint8(pad)
	g.scratch = b.AppendHeaders(g.scratch[:0])
	copy(fb.append(len(g.scratch)), g.scratch)
	if pl := fb.append(plen); !zero {
		fill(pl, seed)
	}
	fb.append(pad + bth.ICRCLen)
	var (
		crc uint32
		err error
		et  uint16
	)
	if v1 {
		putGRH(fb, src, dst, tos(dscp, ecn), 0, ttl)
		g.wireLen = fb.len()
		crc, err = bth.ICRCv1(fb.bytes())
		et = etherRoCEv1
	} else {
		putUDP(fb, sport, portRoCEv2)
		putIPID(fb, src, dst, protoUDP, tos(dscp, ecn), ttl, g.ipID)
		g.wireLen = fb.len()
		crc, err = bth.ICRCv2(fb.bytes())
		et = ipEtherType(src)
	}
	if err != nil {
		return 0, fmt.Errorf("gen: ICRC of %s: %w", OpcodeName(uint8(b.Opcode)), err)
	}
	if corrupt == "bad_icrc" {
		crc = ^crc
	}
	binary.LittleEndian.PutUint32(fb.b[fb.end-4:], crc)
	return et, nil
}

// cmFrame builds an RDMA CM MAD on QP1: a UD SEND_ONLY with a DETH
// (IBTA vol 1 §13.5 GSI, §12.6 CM messages, Annex A11 IP addressing).
func (g *generator) cmFrame(fb *frameBuf, p *pkt, e *CM, src, dst netip.Addr) (uint16, error) {
	attr := uint16(p.n)
	idx := uint64(p.owner)
	seed := g.s.Seed
	clientComm := uint32(mix(seed, 0xc0<<32|idx))
	serverComm := uint32(mix(seed, 0xc1<<32|idx))
	tid := mix(seed, 0xc2<<32|idx)
	qp1PSN := uint32(mix(seed, 0xc3<<32|idx)) & psnMask
	var psn uint32
	switch attr {
	case cmREQ, cmREP:
	case cmRTU, cmDREP:
		psn = 1
	case cmDREQ:
		psn = 2
	}
	if attr == cmDREQ || attr == cmDREP {
		tid++
	}
	b := bth.BTH{Opcode: bth.OpcodeUDSendOnly, PKey: 0xffff, DestQP: 1, PSN: psnAdd(qp1PSN, int(psn))}
	b.DETH = bth.DETH{QKey: cmQKey, SrcQP: 1}
	b.PadCount = 0
	g.scratch = b.AppendHeaders(g.scratch[:0])
	copy(fb.append(len(g.scratch)), g.scratch)
	mad := fb.append(madLen)
	mad[0], mad[1], mad[2], mad[3] = 1, madClassCM, 2, cmMethodSend
	binary.BigEndian.PutUint64(mad[8:], tid)
	binary.BigEndian.PutUint16(mad[16:], attr)
	d := mad[24:]
	guid := func(a netip.Addr) uint64 {
		m := macFor(a)
		return uint64(m[0])<<56 | uint64(m[1])<<48 | uint64(m[2])<<40 | 0xfffe<<24 | uint64(m[3])<<16 | uint64(m[4])<<8 | uint64(m[5])
	}
	switch attr {
	case cmREQ:
		binary.BigEndian.PutUint32(d[0:], clientComm)
		binary.BigEndian.PutUint64(d[8:], cmServiceID(e.Port))
		binary.BigEndian.PutUint64(d[16:], guid(e.Client))
		binary.BigEndian.PutUint32(d[32:], e.ClientQPN<<8|16)      // local QPN, responder resources
		binary.BigEndian.PutUint32(d[36:], 16)                     // initiator depth
		binary.BigEndian.PutUint32(d[40:], 20<<3)                  // remote CM response timeout, RC, no E2E flow control
		binary.BigEndian.PutUint32(d[44:], e.ClientPSN<<8|20<<3|7) // starting PSN, local CM response timeout, retry count
		binary.BigEndian.PutUint16(d[48:], 0xffff)
		d[50] = 5<<4 | 7 // path MTU 4096, RNR retry 7
		d[51] = 15 << 4  // max CM retries
		binary.BigEndian.PutUint16(d[52:], 0xffff)
		binary.BigEndian.PutUint16(d[54:], 0xffff)
		sg, dg := gid(e.Client), gid(e.Server)
		copy(d[56:], sg[:])
		copy(d[72:], dg[:])
		d[93] = 64
		d[95] = 18 << 3
		cmaHeader(d[140:], e.Client, e.Server, e.ClientPort)
	case cmREP:
		binary.BigEndian.PutUint32(d[0:], serverComm)
		binary.BigEndian.PutUint32(d[4:], clientComm)
		binary.BigEndian.PutUint32(d[12:], e.ServerQPN<<8)
		binary.BigEndian.PutUint32(d[20:], e.ServerPSN<<8)
		d[24], d[25] = 16, 16
		d[26] = 15 << 3
		d[27] = 7 << 5
		binary.BigEndian.PutUint64(d[28:], guid(e.Server))
	case cmRTU, cmDREP:
		local, remote := clientComm, serverComm
		if attr == cmDREP {
			local, remote = serverComm, clientComm
		}
		binary.BigEndian.PutUint32(d[0:], local)
		binary.BigEndian.PutUint32(d[4:], remote)
	case cmDREQ:
		binary.BigEndian.PutUint32(d[0:], clientComm)
		binary.BigEndian.PutUint32(d[4:], serverComm)
		binary.BigEndian.PutUint32(d[8:], e.ServerQPN<<8)
	}
	fb.append(bth.ICRCLen)
	putUDP(fb, 0xc000|int(idx&0x3fff), portRoCEv2)
	ecn, _ := ecnValue(g.s.ECN)
	putIP(fb, src, dst, protoUDP, tos(uint8(*g.s.DSCP), ecn), 64)
	g.wireLen = fb.len()
	crc, err := bth.ICRCv2(fb.bytes())
	if err != nil {
		return 0, fmt.Errorf("gen: ICRC of CM MAD: %w", err)
	}
	binary.LittleEndian.PutUint32(fb.b[fb.end-4:], crc)
	return ipEtherType(src), nil
}

// cmaHeader writes the IP CM private data header of a REQ (Annex A11 §A11.3).
func cmaHeader(d []byte, src, dst netip.Addr, sport int) {
	d[0] = 0x00 // CM version 0.0
	if src.Is4() {
		d[1] = 4 << 4
		s, t := src.As4(), dst.As4()
		copy(d[16:], s[:])
		copy(d[32:], t[:])
	} else {
		d[1] = 6 << 4
		s, t := src.As16(), dst.As16()
		copy(d[4:], s[:])
		copy(d[20:], t[:])
	}
	binary.BigEndian.PutUint16(d[2:], uint16(sport))
}

// malformed builds one injected bad frame.
func (g *generator) malformed(fb *frameBuf, p *pkt, e *Malformed) (uint16, error) {
	k := uint64(p.owner)<<32 | uint64(p.n)
	sport := 0xc000 | int(p.n&0x3fff)
	dscp := uint8(*g.s.DSCP)
	ecn, _ := ecnValue(g.s.ECN)
	switch e.Kind {
	case "garbage_after_4791":
		b := fb.append(e.Bytes)
		for i := 0; i < len(b); i += 8 {
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], mix(g.s.Seed, k<<8|uint64(i/8)))
			copy(b[i:], w[:])
		}
		// keep it from looking like a BTH by accident: reserved opcode 0xff,
		// transport version 15
		if len(b) > 1 {
			b[0], b[1] = 0xff, b[1]|0x0f
		}
	case "short_bth":
		b := fb.append(8)
		b[0] = bth.OpWriteOnly
		binary.BigEndian.PutUint16(b[2:], 0xffff)
		binary.BigEndian.PutUint32(b[4:], 0xbad)
	case "reserved_opcode":
		b := fb.append(bth.BTHLen + e.Bytes + bth.ICRCLen)
		b[0] = 0x1e // RC, reserved operation code
		binary.BigEndian.PutUint16(b[2:], 0xffff)
		binary.BigEndian.PutUint32(b[4:], 0xbad)
		binary.BigEndian.PutUint32(b[8:], uint32(p.n))
		fill(b[bth.BTHLen:bth.BTHLen+e.Bytes], uint32(p.n))
		putUDP(fb, sport, portRoCEv2)
		putIP(fb, e.Src, e.Dst, protoUDP, tos(dscp, ecn), 64)
		g.wireLen = fb.len()
		if crc, err := bth.ICRCv2(fb.bytes()); err == nil {
			binary.LittleEndian.PutUint32(fb.b[fb.end-4:], crc)
		}
		return ipEtherType(e.Src), nil
	case "bad_icrc", "bad_udp_len":
		b := bth.BTH{Opcode: bth.OpcodeRCSendOnly, PKey: 0xffff, DestQP: 0xbad, AckReq: true, PSN: uint32(p.n)}
		g.ipID = 0
		et, err := g.roce(fb, e.Src, e.Dst, sport, &b, e.Bytes, false, uint32(p.n), dscp, ecn, 0, false, e.Kind)
		if err != nil {
			return 0, err
		}
		if e.Kind == "bad_udp_len" {
			ipl := 20
			if e.Src.Is6() {
				ipl = 40
			}
			u := fb.bytes()[ipl:]
			binary.BigEndian.PutUint16(u[4:], binary.BigEndian.Uint16(u[4:])+64)
			if crc, err := bth.ICRCv2(fb.bytes()); err == nil {
				binary.LittleEndian.PutUint32(fb.b[fb.end-4:], crc)
			}
		}
		return et, nil
	}
	putUDP(fb, sport, portRoCEv2)
	putIP(fb, e.Src, e.Dst, protoUDP, tos(dscp, ecn), 64)
	g.wireLen = fb.len()
	return ipEtherType(e.Src), nil
}

// wrap puts the link header and the interface's encapsulations around the
// packet, applies the snap length and fills g.frame. Encapsulations are
// listed outermost first, so they are applied from the end of the list.
func (g *generator) wrap(fb *frameBuf, p *pkt, ifName string, etherType uint16, srcMAC, dstMAC [6]byte, pfc, outgoing bool) (*Frame, error) {
	ifi := g.ifaceIndex(ifName)
	is := g.ifaces[ifi]
	es := is.it.Encap
	var tags []vlanTag
	inner := true
	for i := len(es) - 1; i >= 0; i-- {
		e := &es[i]
		switch {
		case e.VLAN != nil:
			if !(pfc && inner) {
				pcp := uint16(e.PCP)
				if inner && len(tags) == 0 && p.cnp && g.s.CNPPCP != nil {
					pcp = uint16(*g.s.CNPPCP) // the CNP's innermost tag
				}
				tags = append([]vlanTag{{etherVLAN, pcp<<13 | uint16(*e.VLAN)}}, tags...)
			}
			continue
		case e.QinQ != nil:
			if !(pfc && inner) {
				tags = append([]vlanTag{{etherQinQ, uint16(e.QinQ[0])}, {etherVLAN, uint16(e.QinQ[1])}}, tags...)
			}
			continue
		}
		var vlan uint16
		var cos uint8
		if len(tags) > 0 {
			vlan = tags[len(tags)-1].tci & 0xfff
			cos = uint8(tags[len(tags)-1].tci >> 13)
		}
		putEthernet(fb, dstMAC, srcMAC, tags, etherType)
		tagged := len(tags) > 0
		tags = nil
		inner = false
		var tn *Tunnel
		switch {
		case e.ERSPAN1 != nil:
			tn = e.ERSPAN1
			putGRE(fb, etherERSPAN, nil)
		case e.ERSPAN2 != nil:
			tn = e.ERSPAN2
			putERSPAN2(fb, vlan, cos, tagged, uint32(tn.Session), uint32(tn.Index))
			is.seq[i]++
			putGRE(fb, etherERSPAN, &is.seq[i])
		case e.ERSPAN3 != nil:
			tn = e.ERSPAN3
			ts := uint64(p.t) / 100
			putERSPAN3(fb, vlan, cos, tagged, uint32(tn.Session), uint32(ts), uint8(tn.HWID), tn.Subheader, uint16(tn.Session), uint32(ts>>32))
			is.seq[i]++
			putGRE(fb, etherERSPN3, &is.seq[i])
		case e.GRETEB != nil:
			tn = e.GRETEB
			putGRE(fb, etherTEB, nil)
		case e.VXLAN != nil:
			tn = e.VXLAN
			putVXLAN(fb, uint32(tn.VNI))
			putUDP(fb, 0xd000|int(p.owner&0xfff), portVXLAN)
			if tn.Src.Is6() {
				u := fb.bytes()
				binary.BigEndian.PutUint16(u[6:], csumFold(csumAdd(pseudoSum(tn.Src, tn.Dst, protoUDP, len(u)), u)))
			}
		}
		proto := uint8(protoGRE)
		if e.VXLAN != nil {
			proto = protoUDP
		}
		putIP(fb, tn.Src, tn.Dst, proto, 0, 64)
		etherType = ipEtherType(tn.Src)
		srcMAC, dstMAC = macFor(tn.Src), macFor(tn.Dst)
	}
	switch is.it.Link {
	case "ethernet":
		putEthernet(fb, dstMAC, srcMAC, tags, etherType)
	case "sll":
		putSLL(fb, srcMAC, etherType, outgoing)
	case "sll2":
		putSLL2(fb, srcMAC, etherType, uint32(ifi+1), outgoing)
	case "raw":
	}
	data := fb.bytes()
	orig := len(data)
	if is.snaplen > 0 && len(data) > is.snaplen {
		data = data[:is.snaplen]
	}
	g.frame = Frame{Time: g.start.Add(time.Duration(p.t)), Data: data, OrigLen: orig, Interface: ifi}
	return &g.frame, nil
}
