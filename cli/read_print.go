package cli

import (
	"strconv"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/internal/timetext"
)

// packetPrinter writes one decoded packet per line (or per block with -v) in
// the chosen format, into its caller's buffer: printing allocates nothing.
type packetPrinter struct {
	json      bool
	verbose   bool
	timeStyle string
	withFile  bool

	file string
	// zero is the time --time rel counts from: the first frame read of the
	// whole input, printed or not (setZero).
	zero    time.Time
	zeroSet bool

	// The timestamps: stamp in the text style of --time ("time" or
	// "date"), jsonStamp in RFC 3339 for --format json.
	stamp, jsonStamp timetext.Stamp
}

func newPacketPrinter(format, timeStyle string, verbose, withFile bool) (*packetPrinter, error) {
	p := &packetPrinter{verbose: verbose, timeStyle: timeStyle, withFile: withFile,
		stamp: timetext.Clock(), jsonStamp: timetext.RFC3339Nano()}
	switch format {
	case "text":
	case "json":
		p.json = true
	default:
		return nil, usageErrorf("--format %q: want text or json", format)
	}
	switch timeStyle {
	case "date":
		p.stamp = timetext.DateTime()
	case "time", "rel", "epoch":
	default:
		return nil, usageErrorf("--time %q: want time, date, rel or epoch", timeStyle)
	}
	return p, nil
}

func (p *packetPrinter) startFile(name string) { p.file = name }

// setZero makes ts, the time of a frame read, the zero of --time rel if it
// is the first: tshark's frame.time_relative and tcpdump -ttttt count from
// the first frame of the input too, whether or not it is printed. A frame
// without a time (the zero Time of a pcapng Simple Packet Block) is not
// one: counted from year 1, every later frame would be 63 billion seconds
// on.
func (p *packetPrinter) setZero(ts time.Time) {
	if !p.zeroSet && !ts.IsZero() {
		p.zero, p.zeroSet = ts, true
	}
}

// appendLine appends the line of a packet (with -v, its block of lines)
// to b.
func (p *packetPrinter) appendLine(b []byte, rec *capture.Record, pkt *packet.Packet) []byte {
	if p.json {
		b = p.appendJSON(b, rec, pkt)
	} else {
		b = p.appendText(b, rec, pkt)
		if p.verbose {
			b = appendVerbose(b, rec, pkt)
		}
	}
	return append(b, '\n')
}

// appendTime writes the text timestamp in the style --time asks for.
func (p *packetPrinter) appendTime(b []byte, ts time.Time) []byte {
	switch p.timeStyle {
	case "rel":
		return appendSecondsSince(b, ts, p.zero)
	case "epoch":
		return appendSecondsSince(b, ts, unixEpoch)
	}
	return p.stamp.Append(b, ts) // "time" or "date"
}

// unixEpoch is the zero of --time epoch.
var unixEpoch = time.Unix(0, 0)

// appendSecondsSince writes ts - zero as seconds with nine decimals, from
// the whole seconds and nanoseconds of each, so that it is exact for any
// two times a capture can hold: time.Time.Sub saturates beyond 292 years
// and UnixNano wraps outside 1678-2262, and a pcapng timestamp can be
// anywhere in 64 bits of ticks, or absent (a Simple Packet Block's frame
// has the zero Time, year 1).
func appendSecondsSince(b []byte, ts, zero time.Time) []byte {
	sec := ts.Unix() - zero.Unix()
	nsec := int64(ts.Nanosecond() - zero.Nanosecond()) // -999999999 to 999999999
	switch {
	case sec > 0 && nsec < 0:
		sec, nsec = sec-1, nsec+1e9
	case sec < 0 && nsec > 0:
		sec, nsec = sec+1, nsec-1e9
	}
	if sec < 0 || nsec < 0 {
		b = append(b, '-')
		sec, nsec = -sec, -nsec
	}
	b = strconv.AppendUint(b, uint64(sec), 10)
	b = append(b, '.')
	for div := int64(100000000); div > 0; div /= 10 {
		b = append(b, byte('0'+nsec/div%10))
	}
	return b
}

func appendHex(b []byte, v uint64, digits int) []byte {
	b = append(b, '0', 'x')
	for i := digits - 1; i >= 0; i-- {
		b = append(b, "0123456789abcdef"[(v>>(uint(i)*4))&0xf])
	}
	return b
}

func appendEndpoint(b []byte, pkt *packet.Packet, src bool) []byte {
	addr, port := pkt.Dst, pkt.DstPort
	if src {
		addr, port = pkt.Src, pkt.SrcPort
	}
	b = addr.AppendTo(b)
	if pkt.RoCEVersion == 2 {
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(port), 10)
	}
	return b
}

// appendText writes the one-line summary of a packet, tcpdump style:
//
//	10:00:00.000001000 10.0.0.1.49152 > 10.0.1.1.4791: RC_RDMA_WRITE_FIRST qp 0x000200 psn 1000 reth va 0x... rkey 0x... dlen 65536, payload 4096, length 4162
func (p *packetPrinter) appendText(b []byte, rec *capture.Record, pkt *packet.Packet) []byte {
	if p.withFile {
		b = append(b, p.file...)
		b = append(b, ' ')
	}
	if !rec.Timestamp.IsZero() { // a Simple Packet Block's frame has no time: print none, as tshark
		b = p.appendTime(b, rec.Timestamp)
		b = append(b, ' ')
	}
	for i, e := range pkt.EncapLayers() {
		if i == 0 {
			b = append(b, '[')
		} else {
			b = append(b, ' ')
		}
		b = e.AppendString(b)
	}
	if pkt.NEncap > 0 {
		b = append(b, "] "...)
	}
	if pkt.IPVersion != 0 { // else a RoCEv1 frame without its GRH: no GIDs
		b = appendEndpoint(b, pkt, true)
		b = append(b, " > "...)
		b = appendEndpoint(b, pkt, false)
		b = append(b, ": "...)
	}
	if pkt.RoCEVersion == 1 {
		b = append(b, "RoCEv1 "...)
	}
	if pkt.Kind == packet.KindMalformed {
		b = append(b, "malformed RoCE: "...)
		b = append(b, pkt.Malformed.String()...)
		b = append(b, ", length "...)
		b = strconv.AppendInt(b, int64(pkt.OrigLen), 10)
		return appendTruncated(b, pkt)
	}
	if !pkt.HasBTH {
		// Cut inside the BTH (or a RoCEv1 GRH): no opcode, so no payload length.
		if pkt.IPVersion == 0 {
			b = append(b, "RoCE [|grh], length "...)
		} else {
			b = append(b, "RoCE [|bth], length "...)
		}
		b = strconv.AppendInt(b, int64(pkt.OrigLen), 10)
		return appendTruncated(b, pkt)
	}
	h := &pkt.BTH
	b = append(b, h.Opcode.String()...)
	b = append(b, " qp "...)
	b = appendHex(b, uint64(h.DestQP), 6)
	b = append(b, " psn "...)
	b = strconv.AppendUint(b, uint64(h.PSN), 10)
	if h.AckReq {
		b = append(b, " ackreq"...)
	}
	if h.FECN {
		b = append(b, " FECN"...)
	}
	if h.BECN {
		b = append(b, " BECN"...)
	}
	if pkt.ECN == 3 {
		b = append(b, " CE"...)
	}
	b = appendExtSummary(b, h)
	if pkt.HasCM {
		b = appendCMSummary(b, &pkt.CM)
	} else if pkt.HasMAD {
		b = appendMADSummary(b, &pkt.CM)
	}
	b = append(b, ", payload "...)
	b = strconv.AppendInt(b, int64(pkt.PayloadLen), 10)
	b = append(b, ", length "...)
	b = strconv.AppendInt(b, int64(pkt.OrigLen), 10)
	b = appendTruncated(b, pkt)
	if pkt.ICRC == bth.ICRCBad {
		b = append(b, " [ICRC bad]"...)
	}
	return b
}

// appendTruncated writes the mark of a frame the snap length cut.
func appendTruncated(b []byte, pkt *packet.Packet) []byte {
	if !pkt.Truncated {
		return b
	}
	b = append(b, " [truncated to "...)
	b = strconv.AppendInt(b, int64(pkt.CapLen), 10)
	return append(b, ']')
}

// appendExtSummary writes the key fields of each extended header present.
func appendExtSummary(b []byte, h *bth.BTH) []byte {
	if h.Ext&bth.HasRDETH != 0 {
		b = append(b, " rdeth ee "...)
		b = appendHex(b, uint64(h.RDETH.EECnxt), 6)
	}
	if h.Ext&bth.HasDETH != 0 {
		b = append(b, " deth qkey "...)
		b = appendHex(b, uint64(h.DETH.QKey), 8)
		b = append(b, " srcqp "...)
		b = appendHex(b, uint64(h.DETH.SrcQP), 6)
	}
	if h.Ext&bth.HasXRCETH != 0 {
		b = append(b, " xrcsrq "...)
		b = appendHex(b, uint64(h.XRCETH.XRCSRQ), 6)
	}
	if h.Ext&bth.HasFETH != 0 {
		b = append(b, " feth plt "...)
		b = strconv.AppendUint(b, uint64(h.FETH.PlacementType()), 10)
		b = append(b, " sel "...)
		b = strconv.AppendUint(b, uint64(h.FETH.SelectivityLevel()), 10)
	}
	if h.Ext&bth.HasRETH != 0 {
		b = append(b, " reth va "...)
		b = appendHex(b, h.RETH.VA, 16)
		b = append(b, " rkey "...)
		b = appendHex(b, uint64(h.RETH.RKey), 8)
		b = append(b, " dlen "...)
		b = strconv.AppendUint(b, uint64(h.RETH.DMALen), 10)
	}
	if h.Ext&bth.HasAtomicETH != 0 {
		b = append(b, " atomic va "...)
		b = appendHex(b, h.AtomicETH.VA, 16)
		b = append(b, " rkey "...)
		b = appendHex(b, uint64(h.AtomicETH.RKey), 8)
		b = append(b, " swap "...)
		b = appendHex(b, h.AtomicETH.SwapData, 16)
		b = append(b, " cmp "...)
		b = appendHex(b, h.AtomicETH.CompareData, 16)
	}
	if h.Ext&bth.HasAETH != 0 {
		a := h.AETH
		switch a.Kind() {
		case bth.AckKindACK:
			b = append(b, " ack credits "...)
			b = strconv.AppendUint(b, uint64(a.Credits()), 10)
		case bth.AckKindRNRNAK:
			b = append(b, " RNR-NAK timer "...)
			b = strconv.AppendUint(b, uint64(a.RNRTimer()), 10)
			b = append(b, " ("...)
			b = append(b, bth.RNRTimerDuration(a.RNRTimer()).String()...)
			b = append(b, ')')
		case bth.AckKindNAK:
			b = append(b, " NAK "...)
			b = append(b, a.NAKCode().String()...)
		default:
			b = append(b, " aeth reserved syndrome "...)
			b = appendHex(b, uint64(a.Syndrome), 2)
		}
		b = append(b, " msn "...)
		b = strconv.AppendUint(b, uint64(a.MSN), 10)
	}
	if h.Ext&bth.HasAtomicAckETH != 0 {
		b = append(b, " orig "...)
		b = appendHex(b, h.AtomicAckETH.OrigRemoteData, 16)
	}
	if h.Ext&bth.HasImmDt != 0 {
		b = append(b, " imm "...)
		b = appendHex(b, uint64(h.ImmDt.Data), 8)
	}
	if h.Ext&bth.HasIETH != 0 {
		b = append(b, " inv rkey "...)
		b = appendHex(b, uint64(h.IETH.RKey), 8)
	}
	return b
}

// appendMADSummary writes the header of a MAD to QP1 that is not a CM
// message (packet.Packet.HasMAD without HasCM): its management class,
// method and attribute ID, then their names ("PerfMgt Get(PortCounters)";
// "PerfMgt Get", "PerfMgt (PortCounters)" when one is unknown), its base
// version when not 1, and "[|mad]" when the snap length cut it.
func appendMADSummary(b []byte, m *bth.CMMAD) []byte {
	b = append(b, " MAD class "...)
	b = appendHex(b, uint64(m.MgmtClass), 2)
	b = append(b, " method "...)
	b = appendHex(b, uint64(m.Method), 2)
	b = append(b, " attr "...)
	b = appendHex(b, uint64(m.AttributeID), 4)
	b = append(b, ' ')
	b = append(b, bth.MgmtClassName(m.MgmtClass)...)
	method := bth.MADMethodName(m.MgmtClass, m.Method)
	if method != "" {
		b = append(b, ' ')
		b = append(b, method...)
	}
	if attr := bth.MADAttributeName(m.MgmtClass, uint16(m.AttributeID)); attr != "" {
		if method == "" {
			b = append(b, ' ')
		}
		b = append(b, '(')
		b = append(b, attr...)
		b = append(b, ')')
	}
	if m.BaseVersion != bth.MADBaseVersion {
		b = append(b, " base-version "...)
		b = strconv.AppendUint(b, uint64(m.BaseVersion), 10)
	}
	if m.Truncated {
		b = append(b, " [|mad]"...)
	}
	return b
}

// appendCMSummary writes the connection-manager fields later reports use to
// pair QPs and to spot storage services, those that were captured; "[|cm]"
// (tcpdump's mark for a cut header) ends a MAD the snap length cut.
func appendCMSummary(b []byte, m *bth.CMMAD) []byte {
	b = append(b, " CM "...)
	b = append(b, m.AttributeID.String()...)
	if m.Has(bth.CMFieldLocalCommID) {
		b = append(b, " comm "...)
		b = appendHex(b, uint64(m.LocalCommID), 8)
	}
	switch m.AttributeID {
	case bth.CMAttrREQ, bth.CMAttrREP:
		if m.Has(bth.CMFieldLocalQPN) {
			b = append(b, " qpn "...)
			b = appendHex(b, uint64(m.LocalQPN), 6)
		}
		if m.Has(bth.CMFieldStartingPSN) {
			b = append(b, " start-psn "...)
			b = strconv.AppendUint(b, uint64(m.StartingPSN), 10)
		}
	}
	if m.AttributeID == bth.CMAttrREQ && m.Has(bth.CMFieldServiceID) && m.IsIPService() {
		b = append(b, " service "...)
		b = append(b, bth.PortSpaceName(m.PortSpace())...)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(m.Port()), 10)
	}
	if m.Truncated {
		b = append(b, " [|cm]"...)
	}
	return b
}
