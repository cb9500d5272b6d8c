package reports

import (
	"net/netip"

	"github.com/rocedump/rocedump/flows"
)

// flowScan is what one walk over the flows finds for the modules: totals,
// a compact line per flow for the counts over all flows (hosts, QPs), and
// the few flows each module has to look at. Walking a hundred thousand
// flows costs a cache miss or more per flow (a flows.Flow is over a
// kilobyte), so the modules share this walk instead of each making its own
// (a dozen of them, most finding nothing on a healthy capture).
//
// The flow lists keep the order of Input.Flows. A module that reads them
// instead of every flow must find that the flows left out would have added
// nothing: each list says what its flows have.
type flowScan struct {
	packets, bytes       uint64 // over all flows
	cnps, ce, fecn, becn uint64
	// ce counts the CE-marked packets that are not CNPs (ECNCE -
	// CNPsCE), as ce_marked is: over the packets the congestion finding
	// counts them among; cnpsCE the CNPs with CE.
	cnpsCE uint64

	// hosts numbers every address of a flow, in order of first
	// appearance; brief has one line per flow, in order.
	hosts map[netip.Addr]int32
	addrs []netip.Addr // by number
	brief []flowBrief

	// retx: flows with a NAK (of any code), an RNR NAK, a go-back-N
	// episode, a timeout, an RNR retry, a re-issued READ, or mirror or
	// fabric loss: everything Retransmissions reads besides the packets.
	retx []*flows.Flow
	// cong: flows with CNPs, CE marks or FECN.
	cong []*flows.Flow
	// icrc: flows with ICRC errors; cm: flows with an RDMA CM exchange;
	// copied: flows with mirror duplicates.
	icrc, cm, copied []*flows.Flow
	copies           uint64 // mirror duplicates over all flows
	// fileCopied: flows with packets captured in two parallel files;
	// fileCopies: those second captures over all flows.
	fileCopied []*flows.Flow
	fileCopies uint64
	// reord: flows with requests reordered (Flow.Reordered) or READ
	// responses captured out of PSN order (Reordering).
	reord []*flows.Flow

	flows []*flows.Flow
	byID  map[int]*flows.Flow // made when IDs are not 1, 2, ... in order
}

// flowBrief is what the counts over all flows read of one flow.
type flowBrief struct {
	src, dst int32 // host numbers
	destQP   uint32
	srcQP    uint32 // 0 when unknown
	bytes    uint64
}

// flowScan returns the walk over in.Flows: the one Run or the module
// running made (see scanning), else a new one.
func (in *Input) flowScan() *flowScan {
	if in.scan != nil {
		return in.scan
	}
	return newFlowScan(in.Flows)
}

// scanning makes the walk over in.Flows for a module run on its own (Run
// makes one for all), until the function it returns is called:
//
//	defer in.scanning()()
func (in *Input) scanning() func() {
	if in.scan != nil {
		return func() {}
	}
	in.scan = newFlowScan(in.Flows)
	return func() { in.scan = nil }
}

func newFlowScan(fs []*flows.Flow) *flowScan {
	s := &flowScan{hosts: map[netip.Addr]int32{}, brief: make([]flowBrief, len(fs)), flows: fs}
	host := func(a netip.Addr) int32 {
		n, ok := s.hosts[a]
		if !ok {
			n = int32(len(s.addrs))
			s.hosts[a] = n
			s.addrs = append(s.addrs, a)
		}
		return n
	}
	var last [2]netip.Addr
	var lastN [2]int32
	for i, f := range fs {
		s.packets += f.Packets
		s.bytes += f.WireBytes
		s.cnps += f.CNPs
		s.ce += f.ECNCE - min(f.CNPsCE(), f.ECNCE)
		s.cnpsCE += f.CNPsCE()
		s.fecn += f.FECN
		s.becn += f.BECN
		// Consecutive flows often share an address: skip the map then.
		b := &s.brief[i]
		if i > 0 && f.Key.Src == last[0] {
			b.src = lastN[0]
		} else {
			b.src = host(f.Key.Src)
		}
		if i > 0 && f.Key.Dst == last[1] {
			b.dst = lastN[1]
		} else {
			b.dst = host(f.Key.Dst)
		}
		last, lastN = [2]netip.Addr{f.Key.Src, f.Key.Dst}, [2]int32{b.src, b.dst}
		b.destQP, b.bytes = f.Key.DestQP, f.WireBytes
		if f.HasSrcQP {
			b.srcQP = f.SrcQP
		}
		r := &f.Retx
		if f.NAKs != [len(f.NAKs)]uint64{} || f.NAKOther > 0 || f.RNRNAKs > 0 || r.GBNEpisodes > 0 || r.Timeouts > 0 || r.RNRRetries > 0 || r.ReissuedReads > 0 ||
			r.MirrorLostPSNs > 0 || r.FabricLostPSNs > 0 {
			s.retx = append(s.retx, f)
		}
		if f.CNPs > 0 || f.ECNCE > 0 || f.FECN > 0 {
			s.cong = append(s.cong, f)
		}
		if f.ICRCBad > 0 {
			s.icrc = append(s.icrc, f)
		}
		if f.CM != nil {
			s.cm = append(s.cm, f)
		}
		if f.Reordered() > 0 || f.ReadResponses.OutOfOrder > 0 {
			s.reord = append(s.reord, f)
		}
		if f.MirrorDuplicates() > 0 {
			s.copied = append(s.copied, f)
			s.copies += f.MirrorDuplicates()
		}
		if f.FileCopies() > 0 {
			s.fileCopied = append(s.fileCopied, f)
			s.fileCopies += f.FileCopies()
		}
		if f.ID != i+1 && s.byID == nil {
			s.byID = map[int]*flows.Flow{}
		}
	}
	if s.byID != nil {
		for _, f := range fs {
			s.byID[f.ID] = f
		}
	}
	return s
}

// flow returns the flow with ID id, or nil (the last of that ID when
// several share it, as a map filled in order would).
func (s *flowScan) flow(id int) *flows.Flow {
	if s.byID != nil {
		return s.byID[id]
	}
	if id >= 1 && id <= len(s.flows) {
		return s.flows[id-1]
	}
	return nil
}
