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
	pc := paddedCells{bw: bw, widths: widths, bar: "│"}
	rule("┌", "┬", "┐")
	pc.row(Columns, true)
	rule("├", "┼", "┤")
	pc.rows(shown)
	rule("├", "┼", "┤")
	pc.row(tot, false)
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
	pc := paddedCells{bw: bw, widths: widths, bar: "|"}
	pc.row(Columns, true)
	for _, n := range widths {
		bw.WriteByte('|')
		bw.WriteString(strings.Repeat("-", n+1))
		bw.WriteByte(':')
	}
	bw.WriteString("|\n")
	pc.rows(shown)
	pc.row(tot, false)
	return bw.Flush()
}

// paddedCells writes the rows of a table drawn by hand (the box table and
// the Markdown table differ only in their bar): each cell padded to its
// column's measured width, one space each side.
type paddedCells struct {
	bw     *bufio.Writer
	widths []int
	bar    string // "│" or "|": before every cell and after the last
}

// cell writes cell i, right-aligned, or centred for a header.
func (pc paddedCells) cell(i int, c []byte, center bool) {
	gap := pc.widths[i] - cellWidth(c)
	left := gap
	if center {
		left = gap / 2
	}
	pc.bw.WriteString(pc.bar)
	pc.bw.WriteByte(' ')
	writeSpaces(pc.bw, left)
	pc.bw.Write(c)
	writeSpaces(pc.bw, gap-left)
	pc.bw.WriteByte(' ')
}

// row writes a row of strings (the header, the totals).
func (pc paddedCells) row(cells []string, center bool) {
	for i, c := range cells {
		pc.cell(i, []byte(c), center)
	}
	pc.end()
}

// rows writes a row for every flow of shown, made as it is written.
func (pc paddedCells) rows(shown Source) {
	var rc rowCells
	for r := range shown.Rows() {
		rc.fill(r)
		for i := range numColumns {
			pc.cell(i, rc.cell(i), false)
		}
		pc.end()
	}
}

func (pc paddedCells) end() {
	pc.bw.WriteString(pc.bar)
	pc.bw.WriteByte('\n')
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
