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
)

// Formats are the output formats of the flow table.
var Formats = []string{"table", "markdown", "csv", "json", FormatJSONL}

// Columns are the columns of the table and Markdown outputs.
var Columns = []string{"#", "SRC", "DST", "QPN", "PARTNER", "TRANSPORT", "PACKETS", "BYTES", "DURATION", "RATE", "RETX", "GAPS", "NAKS", "CNPS", "CE"}

// NAKTotal counts every NAK of a flow, RNR NAKs included (the NAKS column).
func NAKTotal(r Record) uint64 {
	n := r.NAKs
	return n.PSNSeqErr + n.InvalidRequest + n.RemoteAccessErr + n.RemoteOpErr + n.InvalidRDRequest + n.Other + r.RNRNAKs
}

// Row is one flow in human units, the cells of Columns.
func Row(r Record) []string {
	qpn := Hex24(r.DestQPN)
	if r.Epoch > 0 {
		qpn += " ep" + strconv.Itoa(r.Epoch)
	}
	partner := "none"
	switch {
	case r.PartnerQPN != nil:
		partner = Hex24(*r.PartnerQPN)
	case r.Transport == "UD" || r.Transport == "UC" || r.Transport == "CNP":
		partner = "-" // no partner by design
	}
	return []string{
		strconv.Itoa(r.ID), r.Src, r.Dst, qpn, partner, r.Transport,
		u(r.Packets), HumanBytes(r.Bytes), HumanDuration(time.Duration(r.DurationS * 1e9)), HumanRate(r.MeanBps),
		u(r.RetransmittedPackets), u(r.PSNGaps), u(NAKTotal(r)), u(r.CNPs), u(r.ECNCE),
	}
}

// TotalsRow sums all (not only the flows shown) into the totals line.
func TotalsRow(all []Record) []string {
	var pk, by, retx, gaps, nk, cnps, ce uint64
	var first, last string
	for _, r := range all {
		pk, by, retx, gaps = pk+r.Packets, by+r.Bytes, retx+r.RetransmittedPackets, gaps+r.PSNGaps
		nk, cnps, ce = nk+NAKTotal(r), cnps+r.CNPs, ce+r.ECNCE
		if first == "" || r.First < first { // fixed-width RFC 3339: strings sort as times
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
	return []string{"", "TOTAL", strconv.Itoa(len(all)) + " flows", "", "", "",
		u(pk), HumanBytes(by), HumanDuration(d), HumanRate(rate),
		u(retx), u(gaps), u(nk), u(cnps), u(ce)}
}

// Hex24 formats a QP number as rocedump prints it: 0x000201.
func Hex24(v uint32) string { return "0x" + leftPad(strconv.FormatUint(uint64(v), 16), 6) }

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

// WriteTable writes shown as a terminal table with a totals line for all
// (the flows before --top cut them).
func WriteTable(w io.Writer, shown, all []Record) error {
	if len(shown) > streamRows {
		return writeTableStream(w, shown, all)
	}
	return writeTableWriter(w, shown, all)
}

// writeTableWriter is WriteTable through tablewriter.
func writeTableWriter(w io.Writer, shown, all []Record) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithFooterAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight}),
	)
	t.Header(anySlice(Columns)...)
	for _, r := range shown {
		if err := t.Append(Row(r)); err != nil {
			return err
		}
	}
	t.Footer(anySlice(TotalsRow(all))...)
	return t.Render()
}

// WriteMarkdown writes shown as a GitHub-flavoured Markdown table that
// pastes cleanly into a ticket, with the totals as its last row.
func WriteMarkdown(w io.Writer, shown, all []Record) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
	)
	t.Header(anySlice(Columns)...)
	for _, r := range shown {
		if err := t.Append(Row(r)); err != nil {
			return err
		}
	}
	tot := TotalsRow(all)
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
func WriteCSV(w io.Writer, shown []Record) error {
	c := csv.NewWriter(w)
	c.Write(csvColumns)
	for _, r := range shown {
		partner := ""
		if r.PartnerQPN != nil {
			partner = strconv.FormatUint(uint64(*r.PartnerQPN), 10)
		}
		naks := NAKTotal(r) - r.RNRNAKs
		c.Write([]string{strconv.Itoa(r.ID), r.Src, r.Dst, u(uint64(r.DestQPN)), partner, r.Transport, strconv.Itoa(r.Epoch),
			u(r.Packets), u(r.Bytes), u(r.PayloadBytes), r.First, r.Last, f64(r.DurationS), f64(r.MeanBps), f64(r.PeakBps),
			u(r.RetransmittedPackets), u(r.PSNGaps), u(r.MissingPSNs), u(naks), u(r.RNRNAKs), u(r.CNPs), u(r.ECNCE)})
	}
	c.Flush()
	return c.Error()
}

// WriteJSON writes the flows as a JSON array of Records.
func WriteJSON(w io.Writer, shown []Record) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(shown)
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
