package cli

import (
	"cmp"
	"slices"
	"time"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/reports"
)

// liveView is what the live screen shows at one refresh: computed here,
// drawn by liveScreen.
type liveView struct {
	Interface string
	Elapsed   time.Duration
	// Decimals of a second its clocks show: 0 at --interval 1s or more,
	// else enough that two refreshes do not show the same time
	// (clockDecimals).
	Decimals int
	Stopping bool // a stop was asked for; the capture is draining

	Packets, RoCE uint64
	// Malformed, Truncated (RoCETruncated of them RoCE) and ICRCBad
	// frames so far, as read's and flows' summaries count them.
	Malformed, Truncated, RoCETruncated, ICRCBad uint64
	PPS, BPS                                     float64 // over the last interval
	Flows                                        int

	CNPs, CE, Retx, NAKs, Gaps uint64  // totals so far
	CNPRate, CERate, RetxRate  float64 // per second over the last interval

	Drops capture.LiveStats

	Top []liveFlowRow // busiest flows over the last interval

	Findings                  []reports.Finding // ranked, so far
	Critical, Warning, InfoNo int
	FindingsAt                time.Duration // elapsed time when they were computed; 0: not yet

	Writing string // current -w file
	Files   int    // -w files opened so far
}

// liveFlowRow is one line of the top-flows table.
type liveFlowRow struct {
	ID                      int
	Src, Dst                string
	QPN                     uint32
	BPS                     float64 // over the last interval
	Packets, Retx, CNPs, CE uint64
}

// liveViewState is what the view remembers between refreshes, to turn
// totals into rates.
type liveViewState struct {
	at               time.Time
	packets, bytes   uint64
	cnps, ce, retx   uint64
	flowBytes        []uint64 // wire bytes per flow ID - 1 at the last refresh
	findings         []reports.Finding
	crit, warn, info int
	findingsAt       time.Duration
	findingsCost     time.Duration // how long the last findings run took
	ticksToFindings  int           // refreshes to skip before the next run
}

// liveFindingsShare is the part of each interval the findings so far may
// take: when a run costs more, it runs every few intervals instead.
const liveFindingsShare = 5

// snapshot computes the view at now from the session's state. It runs on
// the analysis goroutine, between batches.
func (s *liveSession) snapshot(now time.Time) *liveView {
	vs := &s.view
	if vs.at.IsZero() {
		vs.at = s.start
	}
	dt := now.Sub(vs.at).Seconds()
	if dt <= 0 {
		dt = 1
	}
	v := &liveView{
		Interface: s.opts.Interface,
		Elapsed:   now.Sub(s.start),
		Decimals:  clockDecimals(s.opts.Interval),
		Stopping:  s.reader.stopAt.Load() != 0,
		Packets:   s.st.Packets,
		RoCE:      s.st.RoCE,

		Malformed: s.st.Malformed, Truncated: s.st.Truncated, RoCETruncated: s.st.RoCETruncated, ICRCBad: s.st.ICRCBad,
		Drops: s.stats,
		Flows: s.table.Len(),
	}
	v.PPS = float64(v.Packets-vs.packets) / dt
	v.BPS = float64(s.bytes-vs.bytes) * 8 / dt

	fl := s.table.Flows()
	rows := make([]liveFlowRow, 0, 16)
	for _, f := range fl {
		v.CNPs += f.CNPs
		v.CE += f.ECNCE
		v.Retx += f.Retransmitted()
		v.NAKs += f.NAKTotal() + f.RNRNAKs
		v.Gaps += f.PSNGaps()
		var prev uint64
		if f.ID-1 < len(vs.flowBytes) {
			prev = vs.flowBytes[f.ID-1]
		}
		if d := f.WireBytes - prev; d > 0 {
			rows = append(rows, liveFlowRow{
				ID: f.ID, Src: f.Key.Src.String(), Dst: f.Key.Dst.String(), QPN: f.Key.DestQP,
				BPS: float64(d) * 8 / dt, Packets: f.Packets, Retx: f.Retransmitted(), CNPs: f.CNPs, CE: f.ECNCE,
			})
		}
	}
	slices.SortFunc(rows, func(a, b liveFlowRow) int {
		if c := cmp.Compare(b.BPS, a.BPS); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if len(rows) > s.opts.Top {
		rows = rows[:s.opts.Top]
	}
	v.Top = rows
	v.CNPRate = float64(v.CNPs-vs.cnps) / dt
	v.CERate = float64(v.CE-vs.ce) / dt
	v.RetxRate = float64(v.Retx-vs.retx) / dt

	s.findingsSoFar(v)

	if s.writer != nil {
		files := s.writer.Files()
		v.Writing, v.Files = files[len(files)-1], len(files)
	}

	vs.at, vs.packets, vs.bytes = now, v.Packets, s.bytes
	vs.cnps, vs.ce, vs.retx = v.CNPs, v.CE, v.Retx
	vs.flowBytes = vs.flowBytes[:0]
	for _, f := range fl {
		vs.flowBytes = append(vs.flowBytes, f.WireBytes)
	}
	return v
}

// findingsSoFar runs the report modules over the flows as they stand (not
// yet paired: pairing needs the whole capture) every refresh, or every few
// refreshes when a run takes more than a fifth of the interval, so that the
// analysis keeps up with the capture.
func (s *liveSession) findingsSoFar(v *liveView) {
	vs := &s.view
	if vs.ticksToFindings > 0 {
		vs.ticksToFindings--
	} else {
		t0 := time.Now()
		rep := reports.Run(s.input(), "")
		vs.findingsCost = time.Since(t0)
		vs.findings = rep.Findings
		vs.crit, vs.warn, vs.info = rep.Summary.Critical, rep.Summary.Warning, rep.Summary.Info
		vs.findingsAt = v.Elapsed
		if budget := s.opts.Interval / liveFindingsShare; budget > 0 {
			vs.ticksToFindings = int(vs.findingsCost / budget)
		}
	}
	v.Findings, v.Critical, v.Warning, v.InfoNo, v.FindingsAt = vs.findings, vs.crit, vs.warn, vs.info, vs.findingsAt
}
