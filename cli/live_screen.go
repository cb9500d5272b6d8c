package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"

	"github.com/rocedump/rocedump/reports"
)

// ANSI sequences of the in-place screen.
const (
	ansiHome      = "\033[H"
	ansiClear     = "\033[H\033[2J"
	ansiClearLine = "\033[K"
	ansiClearDown = "\033[J"
)

// liveScreenWidth is the width lines are cut to on a terminal.
const liveScreenWidth = 100

// liveScreen draws the live view: redrawn in place on a terminal, one
// plain line per refresh anywhere else (a pipe, a file, CI logs).
type liveScreen struct {
	w     io.Writer
	term  bool
	drawn bool
	buf   bytes.Buffer
}

// newLiveScreen draws on stdout when it is a terminal, else on stderr
// (so that a report on a redirected stdout stays clean), in place when
// that stream is a terminal.
func newLiveScreen(ios IOStreams) *liveScreen {
	if isTerminal(ios.Out) {
		return &liveScreen{w: ios.Out, term: true}
	}
	return &liveScreen{w: ios.ErrOut, term: isTerminal(ios.ErrOut)}
}

// isTerminal says whether w is a terminal. Being a character device is
// not enough: /dev/null is one, and "rocedump live ... > /dev/null" drew
// the live view there, out of sight, instead of on stderr.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// draw shows v.
func (sc *liveScreen) draw(v *liveView) {
	b := &sc.buf
	b.Reset()
	if !sc.term {
		b.WriteString(livePlainLine(v))
		b.WriteByte('\n')
		sc.w.Write(b.Bytes())
		return
	}
	if !sc.drawn {
		b.WriteString(ansiClear)
	} else {
		b.WriteString(ansiHome)
	}
	for _, line := range liveScreenLines(v) {
		b.WriteString(liveCut(line, liveScreenWidth))
		b.WriteString(ansiClearLine + "\n")
	}
	b.WriteString(ansiClearDown)
	sc.w.Write(b.Bytes())
	sc.drawn = true
}

// done ends the live view before the report: on a terminal that the
// report goes to as well, the screen is cleared.
func (sc *liveScreen) done(reportHere bool) {
	if sc.term && sc.drawn && reportHere {
		io.WriteString(sc.w, ansiClear)
	}
}

// liveCut cuts s to at most n characters, marking the cut with "…".
func liveCut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// livePlainLine is the one-line view for logs.
func livePlainLine(v *liveView) string {
	s := fmt.Sprintf("rocedump live %s %s: %d packets (%s, %s), %d RoCE, %s, %d flows, CNP %s, CE %s, retx %s, drops %d kernel %d interface, findings %d critical %d warning %d info",
		v.Interface, liveClock(v.Elapsed, v.Decimals), v.Packets, livePPS(v.PPS), liveBitRate(v.BPS), v.RoCE, liveBadFrames(v), v.Flows,
		livePerSec(v.CNPRate), livePerSec(v.CERate), livePerSec(v.RetxRate),
		v.Drops.KernelDrops, v.Drops.InterfaceDrops, v.Critical, v.Warning, v.InfoNo)
	if v.Drops.Down {
		s += fmt.Sprintf(" (%s is down: nothing is captured)", v.Interface)
	}
	if v.Stopping {
		s += " (stopping)"
	}
	return s
}

// liveBadFrames is the frames that were malformed, cut by the snap length
// (with the RoCE ones among them) or of bad ICRC, as read's and flows'
// summaries say them: "0 malformed, 433 truncated (429 RoCE), 0 ICRC bad".
func liveBadFrames(v *liveView) string {
	return fmt.Sprintf("%d malformed, %s, %d ICRC bad", v.Malformed, reports.TruncatedCount(v.Truncated, v.RoCETruncated), v.ICRCBad)
}

// liveScreenLines is the full-screen view.
func liveScreenLines(v *liveView) []string {
	state := "Ctrl-C stops the capture and prints the report"
	if v.Stopping {
		state = "stopping: reading what the kernel still holds"
	}
	lines := []string{
		fmt.Sprintf("rocedump live on %s   %s   %s", v.Interface, liveClock(v.Elapsed, v.Decimals), state),
		"",
		fmt.Sprintf("packets  %d (%s, %s)   RoCE %d   QP flows %d", v.Packets, livePPS(v.PPS), liveBitRate(v.BPS), v.RoCE, v.Flows),
		"frames   " + liveBadFrames(v),
		fmt.Sprintf("CNPs     %d (%s)   CE marks %d (%s)   retransmitted %d (%s)   NAKs %d   PSN gaps %d",
			v.CNPs, livePerSec(v.CNPRate), v.CE, livePerSec(v.CERate), v.Retx, livePerSec(v.RetxRate), v.NAKs, v.Gaps),
		fmt.Sprintf("drops    %d in the kernel, %d at the interface%s", v.Drops.KernelDrops, v.Drops.InterfaceDrops, liveDropShare(v)),
	}
	if v.Drops.Down {
		lines = append(lines, fmt.Sprintf("DOWN     %s is down (not up, or no link): nothing is captured", v.Interface))
	}
	if v.Writing != "" {
		lines = append(lines, fmt.Sprintf("writing  %s (file %d)", v.Writing, v.Files))
	}
	lines = append(lines, "", "TOP FLOWS (last interval)")
	if len(v.Top) == 0 {
		lines = append(lines, "  no RoCE traffic in the last interval")
	} else {
		lines = append(lines, fmt.Sprintf("  %5s  %-33s  %-8s  %10s  %9s  %6s  %6s  %6s", "#", "SRC > DST", "QPN", "RATE", "PACKETS", "RETX", "CNPS", "CE"))
		for _, r := range v.Top {
			lines = append(lines, fmt.Sprintf("  %5d  %-33s  0x%06x  %10s  %9d  %6d  %6d  %6d",
				r.ID, r.Src+" > "+r.Dst, r.QPN, liveBitRate(r.BPS), r.Packets, r.Retx, r.CNPs, r.CE))
		}
	}
	lines = append(lines, "")
	switch {
	case v.FindingsAt == 0 && len(v.Findings) == 0:
		lines = append(lines, "FINDINGS SO FAR: none yet")
	default:
		lines = append(lines, fmt.Sprintf("FINDINGS SO FAR (%s): %d critical, %d warning, %d info (preliminary: flows pair at the end)",
			liveClock(v.FindingsAt, v.Decimals), v.Critical, v.Warning, v.InfoNo))
		const maxShown = 8
		for i, f := range v.Findings {
			if i == maxShown {
				lines = append(lines, fmt.Sprintf("  ... and %d more", len(v.Findings)-maxShown))
				break
			}
			lines = append(lines, fmt.Sprintf("  %-8s  %-20s  %s", f.Severity, f.Kind, f.Title))
		}
	}
	return lines
}

// liveDropShare is the dropped share of the packets, when any were dropped.
func liveDropShare(v *liveView) string {
	d := v.Drops.KernelDrops + v.Drops.InterfaceDrops
	if d == 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f%% of the packets: loss findings are unreliable)", 100*float64(d)/float64(d+v.Packets))
}

// liveClock formats an elapsed time as hh:mm:ss, with decimals (at most
// 3) of a second after it.
func liveClock(d time.Duration, decimals int) string {
	unit := time.Second
	for range decimals {
		unit /= 10
	}
	n := int64(d.Round(unit) / unit)
	scale := int64(time.Second / unit)
	s := n / scale
	c := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if decimals > 0 {
		c += fmt.Sprintf(".%0*d", decimals, n%scale)
	}
	return c
}

// clockDecimals is how many decimals of a second the live view's clocks
// need at a refresh interval: none from a second up, one from 100ms, two
// from 10ms, else three.
func clockDecimals(interval time.Duration) int {
	n := 0
	for u := time.Second; interval < u && n < 3; u /= 10 {
		n++
	}
	return n
}

// liveBitRate formats bits per second in decimal units.
func liveBitRate(bps float64) string {
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'f', 2, 64) + " Gb/s"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'f', 1, 64) + " Mb/s"
	case bps >= 1e3:
		return strconv.FormatFloat(bps/1e3, 'f', 1, 64) + " kb/s"
	}
	return strconv.FormatFloat(bps, 'f', 0, 64) + " b/s"
}

// livePPS formats packets per second.
func livePPS(r float64) string {
	switch {
	case r >= 1e6:
		return strconv.FormatFloat(r/1e6, 'f', 2, 64) + " Mpps"
	case r >= 1e3:
		return strconv.FormatFloat(r/1e3, 'f', 1, 64) + " kpps"
	}
	return strconv.FormatFloat(r, 'f', 0, 64) + " pps"
}

// livePerSec formats an event rate.
func livePerSec(r float64) string {
	if r > 0 && r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64) + "/s"
	}
	return strconv.FormatFloat(r, 'f', 0, 64) + "/s"
}
