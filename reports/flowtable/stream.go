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
func writeTableStream(w io.Writer, shown, all []Record) error {
	widths := make([]int, len(Columns))
	measure := func(cells []string) {
		for i, c := range cells {
			widths[i] = max(widths[i], twwidth.Width(c))
		}
	}
	tot := TotalsRow(all)
	measure(Columns)
	measure(tot)
	for _, r := range shown {
		measure(Row(r))
	}

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
	row := func(cells []string, center bool) {
		for i, c := range cells {
			gap := widths[i] - twwidth.Width(c)
			left := gap
			if center {
				left = gap / 2
			}
			bw.WriteString("│ ")
			bw.WriteString(strings.Repeat(" ", left))
			bw.WriteString(c)
			bw.WriteString(strings.Repeat(" ", gap-left))
			bw.WriteByte(' ')
		}
		bw.WriteString("│\n")
	}
	rule("┌", "┬", "┐")
	row(Columns, true)
	rule("├", "┼", "┤")
	for _, r := range shown {
		row(Row(r), false)
	}
	rule("├", "┼", "┤")
	row(tot, false)
	rule("└", "┴", "┘")
	return bw.Flush()
}
