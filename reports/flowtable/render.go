package flowtable

import (
	"bufio"
	"encoding/csv"
	"fmt"
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
	var c rowCells
	c.fill(&r)
	return c.strings()
}

// numColumns is len(Columns).
const numColumns = 15

// rowCells are the cells of Row in one buffer, cell i ending at ends[i]:
// the big tables fill one for every row instead of making a string per
// cell.
type rowCells struct {
	b    []byte
	ends [numColumns]int
}

// fill sets the cells to those of r.
func (c *rowCells) fill(r *Record) {
	b := c.b[:0]
	n := 0
	end := func() { c.ends[n] = len(b); n++ }
	b = strconv.AppendInt(b, int64(r.ID), 10)
	end()
	b = append(b, r.Src...)
	end()
	b = append(b, r.Dst...)
	end()
	b = appendHex24(b, r.DestQPN)
	if r.Epoch > 0 {
		b = strconv.AppendInt(append(b, " ep"...), int64(r.Epoch), 10)
	}
	end()
	switch {
	case r.PartnerQPN != nil:
		b = appendHex24(b, *r.PartnerQPN)
	case r.Transport == "UD" || r.Transport == "UC" || r.Transport == "CNP":
		b = append(b, '-') // no partner by design
	default:
		b = append(b, "none"...)
	}
	end()
	b = append(b, r.Transport...)
	end()
	b = strconv.AppendUint(b, r.Packets, 10)
	end()
	b = appendHumanBytes(b, r.Bytes)
	end()
	b = appendHumanDuration(b, time.Duration(r.DurationS*1e9))
	end()
	b = appendHumanRate(b, r.MeanBps)
	end()
	for _, v := range [...]uint64{r.RetransmittedPackets, r.PSNGaps, NAKTotal(*r), r.CNPs, r.ECNCE} {
		b = strconv.AppendUint(b, v, 10)
		end()
	}
	c.b = b
}

// cell is cell i.
func (c *rowCells) cell(i int) []byte {
	start := 0
	if i > 0 {
		start = c.ends[i-1]
	}
	return c.b[start:c.ends[i]]
}

// strings are the cells as strings.
func (c *rowCells) strings() []string {
	out := make([]string, numColumns)
	for i := range out {
		out[i] = string(c.cell(i))
	}
	return out
}

// TotalsRow sums all (not only the flows shown) into the totals line.
func TotalsRow(all []Record) []string {
	var t Totals
	for i := range all {
		t.Add(&all[i])
	}
	return t.Row()
}

// totalsRow formats the totals line of n flows: sums, and the first and
// last times (RFC 3339 strings) of any of them.
func totalsRow(n int, pk, by, retx, gaps, nk, cnps, ce uint64, first, last string) []string {
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
	flows := strconv.Itoa(n) + " flows"
	if n == 1 {
		flows = "1 flow"
	}
	return []string{"", "TOTAL", flows, "", "", "",
		u(pk), HumanBytes(by), HumanDuration(d), HumanRate(rate),
		u(retx), u(gaps), u(nk), u(cnps), u(ce)}
}

// Hex24 formats a QP number as rocedump prints it: 0x000201.
func Hex24(v uint32) string { return string(appendHex24(nil, v)) }

// appendHex24 appends v as Hex24 writes it: in hex, zero-padded to six
// digits.
func appendHex24(b []byte, v uint32) []byte {
	var h [8]byte
	d := strconv.AppendUint(h[:0], uint64(v), 16)
	b = append(b, "0x"...)
	for range 6 - len(d) {
		b = append(b, '0')
	}
	return append(b, d...)
}

// Write writes shown in format (one of Formats), with a totals line for
// all (the flows before --top cut them) where the format has one. Records
// are made one at a time from Sources over flows.
func Write(w io.Writer, format string, shown, all Source) error {
	switch format {
	case "table":
		return WriteTableOf(w, shown, all)
	case "markdown":
		return WriteMarkdownOf(w, shown, all)
	case "csv":
		return WriteCSVOf(w, shown)
	case "json":
		return WriteJSONOf(w, shown)
	case FormatJSONL:
		return WriteJSONLOf(w, shown)
	}
	return fmt.Errorf("flowtable: unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// WriteTable writes shown as a terminal table with a totals line for all
// (the flows before --top cut them).
func WriteTable(w io.Writer, shown, all []Record) error {
	return WriteTableOf(w, RecordsOf(shown), RecordsOf(all))
}

// WriteTableOf is WriteTable over Sources.
func WriteTableOf(w io.Writer, shown, all Source) error {
	if shown.Len() > streamRows {
		return writeTableStream(w, shown, all)
	}
	return writeTableWriter(w, shown, all)
}

// writeTableWriter is WriteTable through tablewriter.
func writeTableWriter(w io.Writer, shown, all Source) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithFooterAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight}),
	)
	t.Header(anySlice(Columns)...)
	for r := range shown.Rows() {
		if err := t.Append(Row(*r)); err != nil {
			return err
		}
	}
	t.Footer(anySlice(all.Totals())...)
	return t.Render()
}

// WriteMarkdown writes shown as a GitHub-flavoured Markdown table that
// pastes cleanly into a ticket, with the totals as its last row.
func WriteMarkdown(w io.Writer, shown, all []Record) error {
	return WriteMarkdownOf(w, RecordsOf(shown), RecordsOf(all))
}

// WriteMarkdownOf is WriteMarkdown over Sources.
func WriteMarkdownOf(w io.Writer, shown, all Source) error {
	if shown.Len() > streamRows {
		return writeMarkdownStream(w, shown, all)
	}
	return writeMarkdownWriter(w, shown, all)
}

// writeMarkdownWriter is WriteMarkdown through tablewriter.
func writeMarkdownWriter(w io.Writer, shown, all Source) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight),
	)
	t.Header(anySlice(Columns)...)
	for r := range shown.Rows() {
		if err := t.Append(Row(*r)); err != nil {
			return err
		}
	}
	tot := all.Totals()
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
	return WriteCSVOf(w, RecordsOf(shown))
}

// WriteCSVOf is WriteCSV over a Source.
func WriteCSVOf(w io.Writer, shown Source) error {
	c := csv.NewWriter(w)
	c.Write(csvColumns)
	line := make([]string, len(csvColumns))
	for r := range shown.Rows() {
		partner := ""
		if r.PartnerQPN != nil {
			partner = strconv.FormatUint(uint64(*r.PartnerQPN), 10)
		}
		naks := NAKTotal(*r) - r.RNRNAKs
		line = append(line[:0], strconv.Itoa(r.ID), r.Src, r.Dst, u(uint64(r.DestQPN)), partner, r.Transport, strconv.Itoa(r.Epoch),
			u(r.Packets), u(r.Bytes), u(r.PayloadBytes), r.First, r.Last, f64(r.DurationS), f64(r.MeanBps), f64(r.PeakBps),
			u(r.RetransmittedPackets), u(r.PSNGaps), u(r.MissingPSNs), u(naks), u(r.RNRNAKs), u(r.CNPs), u(r.ECNCE))
		if err := c.Write(line); err != nil {
			return err
		}
	}
	c.Flush()
	return c.Error()
}

// WriteJSON writes the flows as a JSON array of Records, as an indented
// json.Encoder would (HTML characters escaped).
func WriteJSON(w io.Writer, shown []Record) error {
	return WriteJSONOf(w, RecordsOf(shown))
}

// WriteJSONOf is WriteJSON over a Source: the array is written a chunk of
// records at a time, made and encoded on every P (EncodeRecords).
func WriteJSONOf(w io.Writer, shown Source) error {
	if !shown.fromFlows && shown.recs == nil {
		_, err := io.WriteString(w, "null\n") // encoding/json's nil slice
		return err
	}
	if shown.Len() == 0 {
		_, err := io.WriteString(w, "[]\n")
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	err := EncodeRecords(bw, shown, JSONEncoder{Indent: "  ", EscapeHTML: true}, func(e *JSONEncoder, dst []byte, i int, r *Record) ([]byte, error) {
		if i == 0 {
			dst = append(dst, "[\n  "...)
		} else {
			dst = append(dst, ",\n  "...)
		}
		return e.AppendRecord(dst, r, 1)
	})
	if err != nil {
		return err
	}
	bw.WriteString("\n]\n")
	return bw.Flush()
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
