package flowtable

import (
	"bufio"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// streamRows is the number of shown flows above which WriteTable draws the
// table itself, one row at a time, instead of handing every row to
// tablewriter (which holds them all, several strings per cell, until it
// renders). The output is the same bytes.
const streamRows = 10_000

// writeTableStream writes what WriteTable's tablewriter writes: a boxed
// table, header centred, cells right-aligned, one space of padding, the
// totals as a footer. It makes each row twice (once to measure the
// columns, once to write it) rather than keep them.
func writeTableStream(w io.Writer, shown, all Source) error {
	tot := all.Totals()
	widths := measureColumns(shown, tot)
	bw := bufio.NewWriterSize(w, 64<<10)
	rule := func(left, mid, right string) {
		bw.WriteString(left)
		for i, n := range widths {
			if i > 0 {
				bw.WriteString(mid)
			}
			bw.WriteString(strings.Repeat("─", n+2))
		}
		bw.WriteString(right)
		bw.WriteByte('\n')
	}
	cell := func(i int, c []byte, center bool) {
		gap := widths[i] - cellWidth(c)
		left := gap
		if center {
			left = gap / 2
		}
		bw.WriteString("│ ")
		writeSpaces(bw, left)
		bw.Write(c)
		writeSpaces(bw, gap-left)
		bw.WriteByte(' ')
	}
	row := func(cells []string, center bool) {
		for i, c := range cells {
			cell(i, []byte(c), center)
		}
		bw.WriteString("│\n")
	}
	rule("┌", "┬", "┐")
	row(Columns, true)
	rule("├", "┼", "┤")
	var rc rowCells
	for r := range shown.Rows() {
		rc.fill(r)
		for i := range numColumns {
			cell(i, rc.cell(i), false)
		}
		bw.WriteString("│\n")
	}
	rule("├", "┼", "┤")
	row(tot, false)
	rule("└", "┴", "┘")
	return bw.Flush()
}

// measureColumns is the display width of each column over the header,
// the rows of shown and the totals line.
func measureColumns(shown Source, tot []string) []int {
	widths := make([]int, len(Columns))
	measure := func(cells []string) {
		for i, c := range cells {
			widths[i] = max(widths[i], twwidth.Width(c))
		}
	}
	measure(Columns)
	measure(tot)
	var rc rowCells
	for r := range shown.Rows() {
		rc.fill(r)
		for i := range numColumns {
			widths[i] = max(widths[i], cellWidth(rc.cell(i)))
		}
	}
	return widths
}

// cellWidth is twwidth.Width(string(c)), without making the string or
// going through twwidth's cache for printable ASCII, one column a byte.
func cellWidth(c []byte) int {
	for _, b := range c {
		if b < 0x20 || b >= 0x7f {
			return twwidth.Width(string(c))
		}
	}
	return len(c)
}

// writeMarkdownStream writes what WriteMarkdown's tablewriter writes: a
// Markdown table, header centred, cells right-aligned (a "--:" rule under
// the header), each cell padded to its column's width with one space
// either side, the totals as the last row with **TOTAL**. Like
// writeTableStream it makes each row twice rather than keep them.
func writeMarkdownStream(w io.Writer, shown, all Source) error {
	tot := all.Totals()
	tot[1] = "**TOTAL**"
	widths := measureColumns(shown, tot)
	for i := range widths {
		widths[i] = max(widths[i], 1) // a cell is at least 3 wide, padding included
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	cell := func(i int, c []byte, center bool) {
		gap := widths[i] - cellWidth(c)
		left := gap
		if center {
			left = gap / 2
		}
		bw.WriteString("| ")
		writeSpaces(bw, left)
		bw.Write(c)
		writeSpaces(bw, gap-left)
		bw.WriteByte(' ')
	}
	row := func(cells []string, center bool) {
		for i, c := range cells {
			cell(i, []byte(c), center)
		}
		bw.WriteString("|\n")
	}
	row(Columns, true)
	for _, n := range widths {
		bw.WriteByte('|')
		bw.WriteString(strings.Repeat("-", n+1))
		bw.WriteByte(':')
	}
	bw.WriteString("|\n")
	var rc rowCells
	for r := range shown.Rows() {
		rc.fill(r)
		for i := range numColumns {
			cell(i, rc.cell(i), false)
		}
		bw.WriteString("|\n")
	}
	row(tot, false)
	return bw.Flush()
}

const spaces = "                                                                "

// writeSpaces writes n spaces.
func writeSpaces(bw *bufio.Writer, n int) {
	for n > len(spaces) {
		bw.WriteString(spaces)
		n -= len(spaces)
	}
	if n > 0 {
		bw.WriteString(spaces[:n])
	}
}
