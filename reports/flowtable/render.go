package flowtable

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rocedump/rocedump/flows"
)

// Formats are the output formats of the flow table.
var Formats = []string{"table", "markdown", "csv", "json"}

// columns of the table and Markdown outputs.
var columns = []string{"#", "SRC", "DST", "QPN", "PARTNER", "TRANSPORT", "PACKETS", "BYTES", "DURATION", "RATE", "RETX", "GAPS", "NAKS", "CNPS", "CE"}

// Totals sums a set of flows for the totals line.
type Totals struct {
	Flows, Packets, Bytes, Retx, Gaps, NAKs, CNPs, CE uint64
	First, Last                                       time.Time
}

// Sum adds up fs.
func Sum(fs []*flows.Flow) Totals {
	var t Totals
	for _, f := range fs {
		t.Flows++
		t.Packets += f.Packets
		t.Bytes += f.WireBytes
		t.Retx += f.Retransmitted()
		t.Gaps += f.PSNGaps()
		t.NAKs += f.NAKTotal() + f.RNRNAKs
		t.CNPs += f.CNPs
		t.CE += f.ECNCE
		if t.First.IsZero() || f.First.Time.Before(t.First) {
			t.First = f.First.Time
		}
		if f.Last.Time.After(t.Last) {
			t.Last = f.Last.Time
		}
	}
	return t
}

func (t Totals) rate() float64 {
	d := t.Last.Sub(t.First)
	if d <= 0 {
		return 0
	}
	return float64(t.Bytes) * 8 / d.Seconds()
}

// row is one flow in human units.
func row(f *flows.Flow) []string {
	qpn := hex24(f.Key.DestQP)
	if f.Epoch > 0 {
		qpn += " ep" + strconv.Itoa(f.Epoch)
	}
	partner := "none"
	if q, ok := f.PartnerQPN(); ok {
		partner = hex24(q)
	} else if f.Transport.String() == "UD" || f.Transport.String() == "UC" || f.Transport.String() == "CNP" {
		partner = "-"
	}
	return []string{
		strconv.Itoa(f.ID), f.Key.Src.String(), f.Key.Dst.String(), qpn, partner, f.Transport.String(),
		strconv.FormatUint(f.Packets, 10), HumanBytes(f.WireBytes), HumanDuration(f.Duration()),
		HumanRate(f.MeanBitsPerSecond()),
		strconv.FormatUint(f.Retransmitted(), 10), strconv.FormatUint(f.PSNGaps(), 10),
		strconv.FormatUint(f.NAKTotal()+f.RNRNAKs, 10), strconv.FormatUint(f.CNPs, 10), strconv.FormatUint(f.ECNCE, 10),
	}
}

func totalsRow(t Totals) []string {
	return []string{"", "TOTAL", strconv.FormatUint(t.Flows, 10) + " flows", "", "", "",
		strconv.FormatUint(t.Packets, 10), HumanBytes(t.Bytes), HumanDuration(t.Last.Sub(t.First)), HumanRate(t.rate()),
		strconv.FormatUint(t.Retx, 10), strconv.FormatUint(t.Gaps, 10), strconv.FormatUint(t.NAKs, 10),
		strconv.FormatUint(t.CNPs, 10), strconv.FormatUint(t.CE, 10)}
}

func hex24(v uint32) string { return "0x" + leftPad(strconv.FormatUint(uint64(v), 16), 6) }

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// WriteTable writes shown as a terminal table with a totals line for all
// (the flows before --top cut them).
func WriteTable(w io.Writer, shown []*flows.Flow, all Totals) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithFooterAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight}),
	)
	t.Header(anySlice(columns)...)
	for _, f := range shown {
		if err := t.Append(row(f)); err != nil {
			return err
		}
	}
	t.Footer(anySlice(totalsRow(all))...)
	return t.Render()
}

// WriteMarkdown writes shown as a GitHub-flavoured Markdown table that
// pastes cleanly into a ticket, with the totals as its last row.
func WriteMarkdown(w io.Writer, shown []*flows.Flow, all Totals) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
	)
	t.Header(anySlice(columns)...)
	for _, f := range shown {
		if err := t.Append(row(f)); err != nil {
			return err
		}
	}
	tot := totalsRow(all)
	tot[1] = "**TOTAL**"
	if err := t.Append(tot); err != nil {
		return err
	}
	return t.Render()
}

// csvColumns are the CSV header: JSON field names, raw numbers.
var csvColumns = []string{"id", "src", "dst", "dest_qpn", "partner_qpn", "transport", "epoch", "packets", "bytes",
	"payload_bytes", "first", "last", "duration_s", "mean_bps", "peak_bps", "retransmitted_packets", "psn_gaps",
	"missing_psns", "naks", "rnr_naks", "cnps", "ecn_ce"}

// WriteCSV writes one line per flow with raw numbers, for spreadsheets.
func WriteCSV(w io.Writer, shown []*flows.Flow) error {
	c := csv.NewWriter(w)
	c.Write(csvColumns)
	for _, f := range shown {
		r := NewRecord(f)
		partner := ""
		if r.PartnerQPN != nil {
			partner = strconv.FormatUint(uint64(*r.PartnerQPN), 10)
		}
		naks := r.NAKs.PSNSeqErr + r.NAKs.InvalidRequest + r.NAKs.RemoteAccessErr + r.NAKs.RemoteOpErr + r.NAKs.InvalidRDRequest + r.NAKs.Other
		c.Write([]string{strconv.Itoa(r.ID), r.Src, r.Dst, u(uint64(r.DestQPN)), partner, r.Transport, strconv.Itoa(r.Epoch),
			u(r.Packets), u(r.Bytes), u(r.PayloadBytes), r.First, r.Last, f64(r.DurationS), f64(r.MeanBps), f64(r.PeakBps),
			u(r.RetransmittedPackets), u(r.PSNGaps), u(r.MissingPSNs), u(naks), u(r.RNRNAKs), u(r.CNPs), u(r.ECNCE)})
	}
	c.Flush()
	return c.Error()
}

// WriteJSON writes the flows as a JSON array of Records.
func WriteJSON(w io.Writer, shown []*flows.Flow) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(Records(shown))
}

func u(v uint64) string    { return strconv.FormatUint(v, 10) }
func f64(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
