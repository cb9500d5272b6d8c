package render

import (
	"strconv"

	"github.com/rocedump/rocedump/reports/flowtable"
)

// Top flows shown by each format; the rest are counted in a note.
const (
	textTopFlows = 20
	htmlTopFlows = 50
)

// moreFlows is the note under a flow table cut to shown of total flows.
func moreFlows(shown, total int) string {
	if total <= shown {
		return ""
	}
	return strconv.Itoa(total-shown) + " more flows not shown; `rocedump flows --sort bytes` lists them all."
}

// flowLabel names a flow in chart legends: "#3 10.0.0.1 → 10.0.1.1 qp 0x000201".
func flowLabel(r flowtable.Record) string {
	return "#" + strconv.Itoa(r.ID) + " " + r.Src + " → " + r.Dst + " qp " + flowtable.Hex24(r.DestQPN)
}
