package gen

import (
	"encoding/json"
	"io"
	"net/netip"
	"strconv"
)

// Truth is what the generator knows it wrote, counted while building the
// frames (never by decoding them). It is written as JSON beside a capture.
// Every count is of frames present in the file: frames the scenario lost
// before the mirror (fabric drops with seen: false, mirror drops) are counted
// only in the drop counters that name them.
type Truth struct {
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Format   string `json:"format"`
	Gzip     bool   `json:"gzip"`
	Start    string `json:"start"` // RFC 3339 time of the scenario start

	Frames          int `json:"frames"`           // whole records in the file (not the cut-off one)
	RoCEFrames      int `json:"roce_frames"`      // well-formed RoCEv1/v2 frames from flows and cm (CNPs and MADs included)
	NonRoCEFrames   int `json:"non_roce_frames"`  // TCP and PFC frames
	MalformedFrames int `json:"malformed_frames"` // frames from the malformed list (bad_icrc included)
	TruncatedFrames int `json:"truncated_frames"` // frames cut by the snap length (captured < wire length)
	ICRCBadFrames   int `json:"icrc_bad_frames"`  // frames whose ICRC is wrong on purpose (bad_icrc)

	CutOff      bool `json:"cut_off"`       // the file ends inside an extra, partial record
	CutOffBytes int  `json:"cut_off_bytes"` // bytes missing from that record

	Malformed map[string]int `json:"malformed"` // malformed frames by kind

	Flows []*FlowTruth `json:"flows"`
	CM    []*CMTruth   `json:"cm"`
	TCP   []*TCPTruth  `json:"tcp"`
	PFC   PFCTruth     `json:"pfc"`
}

// FlowTruth counts one direction of one flow: role requester is src -> dst
// to the responder's QP (dest_qpn), role responder is the way back to the
// requester's QP. A direction is keyed by (src, dst, dest_qpn), as a capture
// analyser sees it.
type FlowTruth struct {
	Flow      string `json:"flow"` // the scenario flow's name
	Role      string `json:"role"` // requester or responder
	Transport string `json:"transport"`
	RoCE      string `json:"roce"` // v1 or v2
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	DestQPN   uint32 `json:"dest_qpn"`
	SrcQPN    uint32 `json:"src_qpn"` // the sending QP (not on the wire for RC)
	UDPSport  int    `json:"udp_sport"`

	Packets      int64            `json:"packets"`       // frames in this direction, CNPs included
	WireBytes    int64            `json:"wire_bytes"`    // sum of IP total length (GRH + payload length for RoCEv1)
	PayloadBytes int64            `json:"payload_bytes"` // RDMA payload: data after the transport headers, no pad, no ICRC
	Opcodes      map[string]int64 `json:"opcodes"`       // frames by opcode name (see OpcodeName)

	MessagesCompleted int     `json:"messages_completed"` // requester: messages that completed (ACKed; UC/UD: all packets delivered)
	FirstPSN          *uint32 `json:"first_psn"`          // PSN of the first frame in the file (CNPs excluded)
	LastPSN           *uint32 `json:"last_psn"`           // PSN of the last frame in the file (CNPs excluded)

	Retransmitted int            `json:"retransmitted_packets"` // resends of a PSN whose earlier copy is in the file; re-issued READ requests
	FabricDrops   int            `json:"fabric_drops"`          // packets of this direction lost in the fabric (in the file or not: see seen)
	MirrorDrops   int            `json:"mirror_drops"`          // packets that crossed the fabric but are missing from the file
	Timeouts      int            `json:"timeouts"`              // requester retransmission timeouts
	NAKs          map[string]int `json:"naks"`                  // NAK frames in this direction by code name
	RNRNAKs       int            `json:"rnr_naks"`              // RNR NAK frames in this direction
	CNPs          int            `json:"cnps"`                  // CNP frames in this direction (addressed to dest_qpn)
	CEMarked      int            `json:"ce_marked"`             // packets with ECN CE, once, on any of the mirror's copies of them
	FECN          int            `json:"fecn"`                  // frames with the BTH FECN bit
	BECN          int            `json:"becn"`                  // frames with the BTH BECN bit (CNPs included)
	DSCP          map[string]int `json:"dscp"`                  // frames by DSCP

	// MirrorDuplicates counts the mirror's second copies (mirror_dup) of
	// this direction's packets, which no other count of it includes: a
	// copy repeats a packet an analyser counts once, but for a CE its
	// first copy lacks (the copy taken after the switch marked it),
	// which makes the packet count in CEMarked. A CNP carries no PSN or
	// payload that differs: its copy is among them only when the CNPs
	// from its sender to that address have carried two different IPv4
	// IDs before it (cnpCopyKnown), else it counts as a CNP of its own,
	// with the copy's DSCP and ECN.
	MirrorDuplicates int `json:"mirror_duplicates,omitempty"`

	firstPSN, lastPSN uint32
	havePSN           bool
}

// CMTruth is one RDMA CM exchange.
type CMTruth struct {
	Name        string         `json:"name"`
	Client      string         `json:"client"`
	Server      string         `json:"server"`
	ServicePort int            `json:"service_port"`
	ServiceID   string         `json:"service_id"` // IB service ID, 0x00000000010600PP for port space TCP
	ClientQPN   uint32         `json:"client_qpn"`
	ServerQPN   uint32         `json:"server_qpn"`
	Messages    map[string]int `json:"messages"` // MAD frames by attribute: REQ, REP, RTU, DREQ, DREP
}

// TCPTruth is one TCP session.
type TCPTruth struct {
	Name        string `json:"name"`
	Client      string `json:"client"`
	Server      string `json:"server"`
	ClientPort  int    `json:"client_port"`
	ServerPort  int    `json:"server_port"`
	Packets     int    `json:"packets"`
	ClientBytes int    `json:"client_bytes"` // TCP payload client -> server
	ServerBytes int    `json:"server_bytes"` // TCP payload server -> client
}

// PFCTruth counts priority flow control pause frames.
type PFCTruth struct {
	Frames     int            `json:"frames"`
	Priorities map[string]int `json:"priorities"` // frames pausing each priority
}

func newTruth(s *Scenario) *Truth {
	t := &Truth{
		Scenario:  s.Name,
		Seed:      s.Seed,
		Format:    s.Format,
		Gzip:      s.Gzip,
		Start:     s.Start.UTC().Format("2006-01-02T15:04:05.999999999Z07:00"),
		Malformed: map[string]int{},
		Flows:     []*FlowTruth{},
		CM:        []*CMTruth{},
		TCP:       []*TCPTruth{},
		PFC:       PFCTruth{Priorities: map[string]int{}},
	}
	return t
}

func newFlowTruth(f *Flow, role string) *FlowTruth {
	ft := &FlowTruth{
		Flow: f.Name, Role: role, Transport: f.Transport, RoCE: f.RoCE,
		UDPSport: f.UDPSport,
		Opcodes:  map[string]int64{}, NAKs: map[string]int{}, DSCP: map[string]int{},
	}
	if role == "requester" {
		ft.Src, ft.Dst, ft.DestQPN, ft.SrcQPN = f.Src.String(), f.Dst.String(), f.DestQPN, f.SrcQPN
	} else {
		ft.Src, ft.Dst, ft.DestQPN, ft.SrcQPN = f.Dst.String(), f.Src.String(), f.SrcQPN, f.DestQPN
	}
	return ft
}

// WriteJSON writes the truth as indented JSON; map keys come out sorted.
func (t *Truth) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// Flow returns the truth of one direction of a flow, or nil.
func (t *Truth) Flow(name, role string) *FlowTruth {
	for _, f := range t.Flows {
		if f.Flow == name && f.Role == role {
			return f
		}
	}
	return nil
}

// cnpIDs is what the CNPs from one address to another showed of their
// IPv4 IDs.
type cnpIDs struct {
	first  uint16
	varies bool
}

// cnpCopyKnown notes the IPv4 ID of p, a CNP of flow fg (first copy or
// copy, in capture order), and says whether its sender's CNPs to that
// address have carried two different non-zero IDs: then the copy of a
// CNP can be told from the next CNP (an analyser learns it no sooner),
// else it counts as a CNP. p.ipID 0 (a flow without mirror_dup, IPv6
// where there is no ID) tells nothing.
func (g *generator) cnpCopyKnown(fg *flowGen, p *pkt) bool {
	if p.ipID == 0 || fg.f.Src.Is6() || fg.f.RoCE == "v1" {
		return false
	}
	k := [2]netip.Addr{fg.f.Src, fg.f.Dst}
	if p.rev {
		k = [2]netip.Addr{fg.f.Dst, fg.f.Src}
	}
	if g.cnpIDs == nil {
		g.cnpIDs = map[[2]netip.Addr]*cnpIDs{}
	}
	c := g.cnpIDs[k]
	if c == nil {
		c = &cnpIDs{first: p.ipID}
		g.cnpIDs[k] = c
	} else if p.ipID != c.first {
		c.varies = true
	}
	return c.varies
}

// account adds an emitted frame to the truth.
func (g *generator) account(p *pkt, fr *Frame) {
	t := g.truth
	t.Frames++
	if len(fr.Data) < fr.OrigLen {
		t.TruncatedFrames++
	}
	switch p.kind {
	case kindFlow:
		t.RoCEFrames++
		fg := g.flows[p.owner]
		ft := fg.req
		if p.rev {
			ft = fg.resp
		}
		known := p.cnp && g.cnpCopyKnown(fg, p) // every CNP, in capture order
		if p.dup && (!p.cnp || known) {
			ft.MirrorDuplicates++
			if p.dupCE {
				ft.CEMarked++ // the packet is CE-marked, once, whichever copy shows it
			}
			return
		}
		ft.Packets++
		ft.WireBytes += int64(g.wireLen)
		if !p.cnp {
			ft.PayloadBytes += int64(p.plen)
			if !ft.havePSN {
				ft.firstPSN, ft.havePSN = p.b.PSN, true
			}
			ft.lastPSN = p.b.PSN
		} else {
			ft.CNPs++
		}
		ft.Opcodes[OpcodeName(uint8(p.b.Opcode))]++
		if p.retx {
			ft.Retransmitted++
		}
		if p.ecn == 3 {
			ft.CEMarked++
		}
		if p.b.FECN {
			ft.FECN++
		}
		if p.b.BECN {
			ft.BECN++
		}
		ft.DSCP[strconv.Itoa(int(p.dscp))]++
		if hasAETH(uint8(p.b.Opcode)) {
			syn := p.b.AETH.Syndrome
			switch syn >> 5 & 3 {
			case 1:
				ft.RNRNAKs++
			case 3:
				ft.NAKs[nakName(syn&0x1f)]++
			}
		}
	case kindCM:
		t.RoCEFrames++
		t.CM[p.owner].Messages[cmAttrName(uint16(p.n))]++
	case kindTCP:
		t.NonRoCEFrames++
		tt := t.TCP[p.owner]
		tt.Packets++
		if p.rev {
			tt.ServerBytes += int(p.plen)
		} else {
			tt.ClientBytes += int(p.plen)
		}
	case kindPFC:
		t.NonRoCEFrames++
		t.PFC.Frames++
		for _, pr := range g.s.PFC[p.owner].Priorities {
			t.PFC.Priorities[strconv.Itoa(pr)]++
		}
	case kindMalformed:
		t.MalformedFrames++
		k := g.s.Malformed[p.owner].Kind
		t.Malformed[k]++
		if k == "bad_icrc" {
			t.ICRCBadFrames++
		}
	}
}

// finish orders the flow truths: per flow, requester then responder, and the
// responder only when it sent something or the transport answers.
func (g *generator) finish() {
	for _, fg := range g.flows {
		for _, ft := range []*FlowTruth{fg.req, fg.resp} {
			if ft.havePSN {
				first, last := ft.firstPSN, ft.lastPSN
				ft.FirstPSN, ft.LastPSN = &first, &last
			}
		}
		g.truth.Flows = append(g.truth.Flows, fg.req)
		if fg.resp.Packets > 0 || fg.reliable {
			g.truth.Flows = append(g.truth.Flows, fg.resp)
		}
	}
}
