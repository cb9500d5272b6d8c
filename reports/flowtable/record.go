package flowtable

import (
	"encoding/json"
	"math"
	"net/netip"
	"slices"
	"time"
	"unsafe"

	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/internal/timetext"
)

// Record is one flow as JSON. Field names are a contract (README, "JSON
// fields of rocedump flows"): add fields, never rename them.
type Record struct {
	ID         int     `json:"id"`
	Src        string  `json:"src"`
	Dst        string  `json:"dst"`
	DestQPN    uint32  `json:"dest_qpn"`
	SrcQPN     *uint32 `json:"src_qpn"`
	PartnerQPN *uint32 `json:"partner_qpn"`
	PartnerID  *int    `json:"partner_id"`
	PairedBy   string  `json:"paired_by"`
	Transport  string  `json:"transport"`
	Epoch      int     `json:"epoch"`
	PKey       uint16  `json:"pkey"`
	VLAN       *uint16 `json:"vlan"`

	Packets      uint64 `json:"packets"`
	Bytes        uint64 `json:"bytes"`
	PayloadBytes uint64 `json:"payload_bytes"`
	First        string `json:"first"`
	Last         string `json:"last"`
	FirstFrame   int    `json:"first_frame"`
	LastFrame    int    `json:"last_frame"`
	// FirstFile and LastFile are the capture files FirstFrame and
	// LastFrame are in (frame numbers start at 1 in each file), as named
	// in the report's capture.files: the path given, or a file of a
	// directory given. Always written, one file or several.
	FirstFile string  `json:"first_file"`
	LastFile  string  `json:"last_file"`
	DurationS float64 `json:"duration_s"`
	MeanBps   float64 `json:"mean_bps"`
	PeakBps   float64 `json:"peak_bps"`
	Messages  uint64  `json:"messages"`

	// FirstPSN, LastPSN and HighestPSN are those of the flow's
	// sequenced packets: its requests or, when it has none, the READ
	// responses it carries; nil (JSON null) when it has neither, a flow
	// of ACKs or CNPs only, whose ACKs carry the PSNs of the partner's
	// requests, or a UD flow of other source QPs' datagrams only
	// (flows.Flow.OtherSenders), whose PSNs are those QPs' own (a record
	// read from an earlier rocedump's report, which gave 0 there, has
	// them at 0).
	FirstPSN             *uint32 `json:"first_psn"`
	LastPSN              *uint32 `json:"last_psn"`
	HighestPSN           *uint32 `json:"highest_psn"`
	RetransmittedPackets uint64  `json:"retransmitted_packets"`
	PSNGaps              uint64  `json:"psn_gaps"`
	MissingPSNs          uint64  `json:"missing_psns"`
	OutOfOrder           uint64  `json:"out_of_order"`
	// Reordered are the requests out of order that were no resend
	// (flows.Flow.Reordered): counted in OutOfOrder too.
	Reordered uint64 `json:"reordered"`

	NAKs      NAKCounts         `json:"naks"`
	RNRNAKs   uint64            `json:"rnr_naks"`
	RNRTimers map[string]uint64 `json:"rnr_timers"`
	CNPs      uint64            `json:"cnps"`
	ECNCE     uint64            `json:"ecn_ce"`
	// CNPsCE are the CNPs with CE, counted in ECNCE too (0 in a record
	// of an earlier rocedump's report: see CNPsCEKnown).
	CNPsCE    uint64 `json:"cnps_ce"`
	FECN      uint64 `json:"fecn"`
	BECN      uint64 `json:"becn"`
	ICRCBad   uint64 `json:"icrc_bad"`
	Truncated uint64 `json:"truncated"`
	// MirrorDuplicates are the packets the mirror delivered a second
	// time, counted in no other field.
	MirrorDuplicates uint64 `json:"mirror_duplicates"`

	Opcodes     map[string]uint64 `json:"opcodes"`
	DSCP        map[string]uint64 `json:"dscp"`
	ECN         map[string]uint64 `json:"ecn"`
	UDPSrcPorts []uint16          `json:"udp_src_ports"`
	MorePorts   bool              `json:"udp_src_ports_truncated"`

	CM *CMRecord `json:"cm"`

	// noCNPsCE says the record was read from JSON without cnps_ce (a
	// report of a rocedump before it): CNPsCE is then not known.
	noCNPsCE bool
}

// NAKCounts are NAKs by code (IBTA vol 1 Table 43).
type NAKCounts struct {
	PSNSeqErr        uint64 `json:"psn_seq_err"`
	InvalidRequest   uint64 `json:"invalid_request"`
	RemoteAccessErr  uint64 `json:"remote_access_err"`
	RemoteOpErr      uint64 `json:"remote_op_err"`
	InvalidRDRequest uint64 `json:"invalid_rd_request"`
	Other            uint64 `json:"other"`
}

// CMRecord is the RDMA CM exchange that set up a flow's connection. The
// service ID and the starting PSN are left out when the snap length cut
// them from the REQ or REP (flows.CMInfo).
type CMRecord struct {
	ServiceID string  `json:"service_id,omitempty"`
	PortSpace string  `json:"port_space,omitempty"`
	Port      uint16  `json:"port,omitempty"`
	StartPSN  *uint32 `json:"start_psn,omitempty"`
	Frame     int     `json:"frame"`
	File      string  `json:"file"` // the capture file Frame is in (Record.FirstFile)
}

// NewRecord converts one flow.
func NewRecord(f *flows.Flow) Record {
	b := Builder{exact: true}
	return *b.Record(f)
}

// optionals hold the numbers a Record points to (source and partner QPN,
// partner ID, VLAN), so that a Builder can keep them in place instead of
// allocating them for every record.
type optionals struct {
	srcQPN, partnerQPN         uint32
	firstPSN, lastPSN, highPSN uint32
	partnerID                  int
	vlan                       uint16
}

// fillRecord sets every field of b's Record from f. The members of the
// Record's four counter maps are first listed in key order in b.counts,
// which the JSONEncoder writes instead of sorting the maps' keys (see
// JSONEncoder.built). With maps, the maps are filled from those lists:
// they must be empty (not nil), filled, not replaced, so that a Builder
// can reuse them. Without, the maps are left nil, for a Record only
// encoded with the Builder's lists (recordLists).
func (b *Builder) fillRecord(f *flows.Flow, maps bool) {
	r := &b.r
	rnr, ops, dscp, ecn := r.RNRTimers, r.Opcodes, r.DSCP, r.ECN
	b.fillRow(f)
	c := &b.counts
	c.rnr.reset()
	c.ops.reset()
	c.dscp.reset()
	c.ecn.reset()
	for _, t := range f.RNRTimers() {
		c.rnr.add(bth.RNRTimerDuration(t.Value).String(), t.Count)
	}
	b.opList = f.AppendOpcodes(b.opList[:0])
	for _, o := range b.opList {
		c.ops.add(o.Opcode.String(), o.Count)
	}
	b.valList = f.AppendDSCP(b.valList[:0])
	for _, d := range b.valList {
		c.dscp.add(itoa(int(d.Value)), d.Count)
	}
	// ecnByName lists the codepoints in the order of their names: the
	// list is sorted as it is made.
	for _, cp := range ecnByName {
		if n := f.ECN[cp]; n > 0 {
			c.ecn.keys = append(c.ecn.keys, ecnNames[cp])
			c.ecn.vals = append(c.ecn.vals, n)
		}
	}
	if maps {
		r.RNRTimers, r.Opcodes, r.DSCP, r.ECN = rnr, ops, dscp, ecn
		c.rnr.fill(r.RNRTimers)
		c.ops.fill(r.Opcodes)
		c.dscp.fill(r.DSCP)
		c.ecn.fill(r.ECN)
	}
	b.ports, r.MorePorts = f.AppendSrcPorts(b.ports[:0])
	r.UDPSrcPorts = b.ports
	if r.UDPSrcPorts == nil {
		r.UDPSrcPorts = []uint16{}
	}
	if f.CM != nil {
		c := &CMRecord{Frame: f.CM.Frame.Frame, File: b.fileName(f.CM.Frame.File)}
		if f.CM.HasServiceID {
			c.ServiceID = hex64(f.CM.ServiceID)
		}
		if f.CM.HasStartPSN {
			psn := f.CM.StartPSN
			c.StartPSN = &psn
		}
		if f.CM.IPService {
			c.PortSpace, c.Port = bth.PortSpaceName(f.CM.PortSpace), f.CM.Port
		}
		r.CM = c
	}
}

// countList is the members of one of a Record's counter maps, sorted by
// key, each key once.
type countList struct {
	keys []string
	vals []uint64
}

// recordCounts are the four counter maps of a Builder's Record as lists.
type recordCounts struct {
	rnr, ops, dscp, ecn countList
	valid               bool // they are those of the Builder's Record (made by Record, not Row)
}

func (l *countList) reset() { l.keys, l.vals = l.keys[:0], l.vals[:0] }

// add counts n under k, as m[k] += n does.
func (l *countList) add(k string, n uint64) {
	i := len(l.keys)
	if i == 0 || l.keys[i-1] < k { // after every key: most lists have one
		l.keys, l.vals = append(l.keys, k), append(l.vals, n)
		return
	}
	for i > 0 && l.keys[i-1] > k {
		i--
	}
	if i > 0 && l.keys[i-1] == k {
		l.vals[i-1] += n
		return
	}
	l.keys = slices.Insert(l.keys, i, k)
	l.vals = slices.Insert(l.vals, i, n)
}

// fill sets the members of l in m.
func (l *countList) fill(m map[string]uint64) {
	for i, k := range l.keys {
		m[k] = l.vals[i]
	}
}

// fillRow sets the fields of b's Record that Row, TotalsRow and the CSV
// read, and every other field but the maps, the UDP source ports and CM,
// which it leaves nil: everything a flow's record holds that costs no
// allocation beyond its four strings (addresses, named through b.names,
// and times, cut from b.text; both made for the record alone when b is
// exact).
func (b *Builder) fillRow(f *flows.Flow) {
	r, o := &b.r, &b.opt
	b.counts.valid = false
	fillCounters(r, f)
	if f.HasSrcQP {
		o.srcQPN = f.SrcQP
		r.SrcQPN = &o.srcQPN
	}
	if q, ok := f.PartnerQPN(); ok {
		o.partnerQPN, o.partnerID = q, f.Partner.ID
		r.PartnerQPN, r.PartnerID = &o.partnerQPN, &o.partnerID
	}
	if f.HasVLAN {
		o.vlan = f.VLAN
		r.VLAN = &o.vlan
	}
	if s := sequencedPSNs(f); s != nil {
		o.firstPSN, o.lastPSN, o.highPSN = s.FirstPSN, s.LastPSN, s.HighPSN
		r.FirstPSN, r.LastPSN, r.HighestPSN = &o.firstPSN, &o.lastPSN, &o.highPSN
	}
	r.PairedBy, r.Transport = f.PairedBy.String(), f.Transport.String()
	r.FirstFile, r.LastFile = b.fileName(f.First.File), b.fileName(f.Last.File)
	b.plainAddrs = f.Key.Src.Zone() == "" && f.Key.Dst.Zone() == ""
	if b.exact {
		r.Src, r.Dst = f.Key.Src.String(), f.Key.Dst.String()
		var buf [40]byte
		r.First = string(timetext.AppendRFC3339Nano(buf[:0], f.First.Time))
		r.Last = string(timetext.AppendRFC3339Nano(buf[:0], f.Last.Time))
		return
	}
	r.Src, r.Dst = b.names.name(f.Key.Src), b.names.name(f.Key.Dst)
	r.First, r.Last = b.timeText(&b.firstTimes, f.First.Time), b.timeText(&b.lastTimes, f.Last.Time)
}

// fileName is the name of input file i (flows.FrameRef.File) among the
// Builder's files; "" when it has none by that index.
func (b *Builder) fileName(i int) string {
	if i >= 0 && i < len(b.files) {
		return b.files[i]
	}
	return ""
}

// timeTextBlock is the size of the blocks a Builder cuts the text of
// times from: some fifty records' times.
const timeTextBlock = 2048

// timeText is t in RFC 3339 (timetext.AppendRFC3339Nano, written through
// c, an RFC3339Nano Stamp: the first and the last times each keep their own), cut from b.text
// rather than allocated on its own: a string shares its block with the
// times before and after it, and the bytes of a block are never written
// over once a string holds them (a full block is left for a new one), so
// that the strings stay valid whatever becomes of the Builder.
func (b *Builder) timeText(c *timetext.Stamp, t time.Time) string {
	if cap(b.text)-len(b.text) < 40 {
		b.text = make([]byte, 0, timeTextBlock)
	}
	start := len(b.text)
	b.text = c.Append(b.text, t)
	return unsafe.String(&b.text[start], len(b.text)-start)
}

// addrNames caches the strings of addresses: the flows of a fabric share a
// few hundred or thousand hosts, so a Builder names each once instead of
// allocating its string for every flow.
type addrNames struct {
	m map[netip.Addr]string
}

// maxAddrNames bounds the cache; past it, it starts again.
const maxAddrNames = 1 << 16

func (c *addrNames) name(a netip.Addr) string {
	if s, ok := c.m[a]; ok {
		return s
	}
	if c.m == nil || len(c.m) >= maxAddrNames {
		c.m = make(map[netip.Addr]string)
	}
	s := a.String()
	c.m[a] = s
	return s
}

// fillCounters sets every field of r that is a number and clears the
// rest (strings, pointers, maps, slices): it allocates nothing.
func fillCounters(r *Record, f *flows.Flow) {
	*r = Record{
		ID:           f.ID,
		DestQPN:      f.Key.DestQP,
		Epoch:        f.Epoch,
		PKey:         f.PKey,
		Packets:      f.Packets,
		Bytes:        f.WireBytes,
		PayloadBytes: f.PayloadBytes,
		FirstFrame:   f.First.Frame,
		LastFrame:    f.Last.Frame,
		DurationS:    f.Duration().Seconds(),
		MeanBps:      round(f.MeanBitsPerSecond()),
		PeakBps:      round(f.PeakBitsPerSecond()),
		Messages:     f.Messages,

		RetransmittedPackets: f.Retransmitted(),
		PSNGaps:              f.PSNGaps(),
		MissingPSNs:          f.Requests.MissingPSNs + f.ReadResponses.MissingPSNs,
		OutOfOrder:           f.Requests.OutOfOrder + f.ReadResponses.OutOfOrder,
		Reordered:            f.Reordered(),

		NAKs: NAKCounts{
			PSNSeqErr:        f.NAKs[bth.NAKPSNSequenceError],
			InvalidRequest:   f.NAKs[bth.NAKInvalidRequest],
			RemoteAccessErr:  f.NAKs[bth.NAKRemoteAccessError],
			RemoteOpErr:      f.NAKs[bth.NAKRemoteOperationalError],
			InvalidRDRequest: f.NAKs[bth.NAKInvalidRDRequest],
			Other:            f.NAKOther,
		},
		RNRNAKs:   f.RNRNAKs,
		CNPs:      f.CNPs,
		ECNCE:     f.ECNCE,
		CNPsCE:    f.CNPsCE(),
		FECN:      f.FECN,
		BECN:      f.BECN,
		ICRCBad:   f.ICRCBad,
		Truncated: f.Truncated,

		MirrorDuplicates: f.MirrorDuplicates(),
	}
}

// sequencedPSNs is the PSN space of f that a record's FirstPSN, LastPSN
// and HighestPSN are from: its requests or, when it has none, its READ
// responses; nil when it has neither (another UD source QP's datagrams
// are in neither: flows.Flow.OtherSenders).
func sequencedPSNs(f *flows.Flow) *flows.PSNStats {
	switch {
	case f.Requests.Packets > 0:
		return &f.Requests
	case f.ReadResponses.Packets > 0:
		return &f.ReadResponses
	}
	return nil
}

// ecnNames name the ECN codepoints (RFC 3168) by their value.
var ecnNames = [4]string{"not-ect", "ect1", "ect0", "ce"}

// ecnByName are the ECN codepoints in the order of their names (ecnNames).
var ecnByName = [4]int{3, 2, 1, 0}

// round is v to a whole number, half up, as float64(int64(v + 0.5)) for
// the v an int64 holds, and v itself past it (a rate of 1e19 b/s from
// broken timestamps: the int64 conversion made it -9223372036854775808).
func round(v float64) float64 { return math.Floor(v + 0.5) }

// Records converts flows, in the order given. It holds every record at
// once: FlowsOf streams them instead.
func Records(fs []*flows.Flow) []Record {
	out := make([]Record, len(fs))
	for i, f := range fs {
		out[i] = NewRecord(f)
	}
	return out
}

// CNPsCEKnown says whether CNPsCE is known: false for a record read from
// the JSON of an earlier rocedump's report, which has no cnps_ce.
func (r *Record) CNPsCEKnown() bool { return !r.noCNPsCE }

// UnmarshalJSON reads a flow record as encoding/json does, noting whether
// it has cnps_ce (CNPsCEKnown).
func (r *Record) UnmarshalJSON(b []byte) error {
	type plain Record // without this method
	aux := struct {
		*plain
		CNPsCE *uint64 `json:"cnps_ce"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	r.CNPsCE, r.noCNPsCE = 0, aux.CNPsCE == nil
	if aux.CNPsCE != nil {
		r.CNPsCE = *aux.CNPsCE
	}
	return nil
}
