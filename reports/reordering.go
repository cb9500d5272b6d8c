package reports

import (
	"fmt"
	"strconv"
	"time"
)

// Reordering reports packets the capture holds out of PSN order with
// nothing lost or resent: request packets the flows package decided
// reordered (Flow.Reordered) and RDMA READ responses filling a gap of
// their PSNs on a connection that re-issued no READ (a lost response is
// recovered only by a re-issued READ: IBTA vol 1 §9.7.5). One info
// finding, none when there are none. Everything is read from the flows'
// state after the pass (Flow.ReorderDepth): no per-packet cost.
func Reordering(in *Input) []Finding {
	defer in.scanning()()
	g := retxGroup{in: in}
	var nflows, reqs, resps uint64
	var behind uint32
	var late time.Duration
	for _, f := range in.flowScan().reord {
		n := f.Reordered()
		var r uint64
		if p := f.Partner; p != nil && p.Retx.ReissuedReads == 0 {
			r = f.ReadResponses.OutOfOrder
		}
		if n == 0 && r == 0 {
			continue
		}
		nflows++
		reqs += n
		resps += r
		b, l := f.ReorderDepth()
		behind, late = max(behind, b), max(late, l)
		g.conn(f)
		g.row(n+r, f, func() string {
			s := ""
			if n > 0 {
				s = retxPlural(n, "request", "requests") + " out of PSN order"
				if b > 0 {
					s += fmt.Sprintf(", up to %s behind", retxPlural(uint64(b), "PSN", "PSNs"))
				}
				if l > 0 {
					s += ", up to " + retxDur(l) + " late"
				}
			}
			if r > 0 {
				if s != "" {
					s += "; "
				}
				s += retxPlural(r, "READ response", "READ responses") + " out of PSN order"
			}
			return s
		})
	}
	if nflows == 0 {
		return nil
	}
	counts := map[string]float64{
		"flows": float64(nflows), "reordered_packets": float64(reqs), "read_responses_out_of_order": float64(resps),
		"max_psns_behind": float64(behind), "max_late_us": float64(late.Nanoseconds()) / 1e3,
	}
	fd := Finding{
		Kind:     KindReordering,
		Severity: Info,
		Title:    reorderingTitle(reqs+resps, nflows, uint64(behind), counts["max_late_us"]),
		Detail: fmt.Sprintf("%s arrived out of PSN order with nothing lost or resent: each filled a gap that a later packet of its flow "+
			"had opened, and the flow went on with new packets, not the go-back-N resends a loss would have caused. "+
			"%s. With adaptive routing or packet spraying (NVIDIA Spectrum-X) this is by design: the switches spread one QP's packets over "+
			"several paths, and NICs that support it put them back in order without a NAK or a resend. Without adaptive routing, packets of one "+
			"QP should keep their order: this points at multipath (ECMP rehashing, a link or path change mid-flow) or at a mirror that merges "+
			"several paths or ports into one capture.",
			reorderingWhat(reqs, resps, nflows), reorderingHowFar(uint64(behind), counts["max_late_us"])),
		Evidence: Evidence{Counts: counts},
		Next: "If the fabric runs adaptive routing, nothing to do, as long as the NICs support it (ConnectX-7 or later, or BlueField-3, " +
			"with adaptive routing enabled on the QPs). Otherwise check for ECMP changes on the path (link flaps, " +
			"hash changes), and whether the mirror session takes several ports or both directions of a link into one destination " +
			"(their copies interleave out of order); a go-back-N or an ACK timeout finding on the same flows would mean the NIC did not tolerate it.",
	}
	g.fill(&fd)
	return []Finding{fd}
}

// reorderingTitle is the reordering finding's title, from its counts
// (the module makes it here, and so does merge: titleFromCounts).
func reorderingTitle(packets, nflows, behind uint64, lateUs float64) string {
	t := fmt.Sprintf("Reordering: %s of %s out of PSN order", retxPlural(packets, "packet", "packets"), retxPlural(nflows, "flow", "flows"))
	var far []string
	if behind > 0 {
		far = append(far, "up to "+retxPlural(behind, "PSN", "PSNs")+" behind")
	}
	if lateUs > 0 {
		far = append(far, "up to "+retxDur(usDuration(lateUs))+" late")
	}
	switch len(far) {
	case 1:
		t += " (" + far[0] + ")"
	case 2:
		t += " (" + far[0] + ", " + far[1] + ")"
	}
	return t
}

func reorderingWhat(reqs, resps, nflows uint64) string {
	s := ""
	if reqs > 0 {
		s = retxPlural(reqs, "request packet", "request packets")
	}
	if resps > 0 {
		if s != "" {
			s += " and "
		}
		s += retxPlural(resps, "RDMA READ response", "RDMA READ responses")
	}
	return s + " of " + retxPlural(nflows, "flow", "flows")
}

func reorderingHowFar(behind uint64, lateUs float64) string {
	if behind == 0 && lateUs == 0 {
		return "How far out of order the capture does not tell for READ responses"
	}
	s := "Requests came"
	if behind > 0 {
		s += " up to " + retxPlural(behind, "PSN", "PSNs") + " behind the highest PSN of their flow"
	}
	if lateUs > 0 {
		if behind > 0 {
			s += " and"
		}
		s += " up to " + retxDur(usDuration(lateUs)) + " after the first packet that overtook them"
	}
	return s
}

// usDuration is a count in µs as a duration.
func usDuration(us float64) time.Duration {
	d, _ := time.ParseDuration(strconv.FormatFloat(us, 'f', 3, 64) + "us")
	return d
}
