package render

import (
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/reports/flowtable"
)

// Top flows shown by each format; the rest are counted in a note.
const (
	textTopFlows = 20
	htmlTopFlows = 50
)

// flowColumns are the columns of the flow tables (as in rocedump flows).
func flowColumns() []string {
	return []string{"#", "SRC", "DST", "QPN", "PARTNER", "TRANSPORT", "PACKETS", "BYTES", "DURATION", "RATE", "RETX", "GAPS", "NAKS", "CNPS", "CE"}
}

// flowRow is one flow in human units, the cells of flowColumns.
func flowRow(r flowtable.Record) []string {
	qpn := hex24(r.DestQPN)
	if r.Epoch > 0 {
		qpn += " ep" + strconv.Itoa(r.Epoch)
	}
	partner := "none"
	switch {
	case r.PartnerQPN != nil:
		partner = hex24(*r.PartnerQPN)
	case r.Transport == "UD" || r.Transport == "UC" || r.Transport == "CNP":
		partner = "-"
	}
	return []string{
		strconv.Itoa(r.ID), r.Src, r.Dst, qpn, partner, r.Transport,
		u64(r.Packets), flowtable.HumanBytes(r.Bytes), flowtable.HumanDuration(seconds(r.DurationS)),
		flowtable.HumanRate(r.MeanBps), u64(r.RetransmittedPackets), u64(r.PSNGaps),
		u64(naks(r)), u64(r.CNPs), u64(r.ECNCE),
	}
}

// naks counts every NAK of a flow, RNR NAKs included.
func naks(r flowtable.Record) uint64 {
	n := r.NAKs
	return n.PSNSeqErr + n.InvalidRequest + n.RemoteAccessErr + n.RemoteOpErr + n.InvalidRDRequest + n.Other + r.RNRNAKs
}

// flowTotals is the totals row over all flows (not only those shown).
func flowTotals(rs []flowtable.Record) []string {
	var pk, by, retx, gaps, nk, cnps, ce uint64
	var first, last string
	for _, r := range rs {
		pk, by, retx, gaps = pk+r.Packets, by+r.Bytes, retx+r.RetransmittedPackets, gaps+r.PSNGaps
		nk, cnps, ce = nk+naks(r), cnps+r.CNPs, ce+r.ECNCE
		if first == "" || r.First < first {
			first = r.First
		}
		if r.Last > last {
			last = r.Last
		}
	}
	var d time.Duration
	t0, err0 := time.Parse(time.RFC3339Nano, first)
	t1, err1 := time.Parse(time.RFC3339Nano, last)
	if err0 == nil && err1 == nil {
		d = t1.Sub(t0)
	}
	rate := 0.0
	if d > 0 {
		rate = float64(by) * 8 / d.Seconds()
	}
	return []string{"", "TOTAL", strconv.Itoa(len(rs)) + " flows", "", "", "",
		u64(pk), flowtable.HumanBytes(by), flowtable.HumanDuration(d), flowtable.HumanRate(rate),
		u64(retx), u64(gaps), u64(nk), u64(cnps), u64(ce)}
}

// moreFlows is the note under a flow table cut to shown of total flows.
func moreFlows(shown, total int) string {
	if total <= shown {
		return ""
	}
	return strconv.Itoa(total-shown) + " more flows not shown; `rocedump flows --sort bytes` lists them all."
}

// flowLabel names a flow in chart legends: "#3 10.0.0.1 → 10.0.1.1 qp 0x000201".
func flowLabel(r flowtable.Record) string {
	return "#" + strconv.Itoa(r.ID) + " " + r.Src + " → " + r.Dst + " qp " + hex24(r.DestQPN)
}

func seconds(s float64) time.Duration { return time.Duration(s * 1e9) }

func hex24(v uint32) string {
	s := strconv.FormatUint(uint64(v), 16)
	if len(s) < 6 {
		s = strings.Repeat("0", 6-len(s)) + s
	}
	return "0x" + s
}
