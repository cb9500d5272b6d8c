package reports

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/topology"
)

// CaptureInfo describes the input as a whole. Every report module reads it
// to know what the capture can and cannot show.
type CaptureInfo struct {
	Files     []string `json:"files"`
	Packets   uint64   `json:"packets"`
	RoCE      uint64   `json:"roce_packets"`
	Malformed uint64   `json:"malformed"`
	Truncated uint64   `json:"truncated"` // frames cut by the snap length, RoCE or not
	// RoCETruncated is the RoCE frames among Truncated.
	RoCETruncated uint64    `json:"roce_truncated"`
	ICRCBad       uint64    `json:"icrc_bad"`
	ICRCChecked   uint64    `json:"icrc_checked"` // RoCE frames whose ICRC was checked (captured whole): what ICRCBad is a share of
	Unsupported   uint64    `json:"unsupported_link_type"`
	First         time.Time `json:"first"`
	Last          time.Time `json:"last"`
	DurationS     float64   `json:"duration_s"`
	CutOff        bool      `json:"cut_off"`
	Problems      []string  `json:"problems"`
	// Drops are the packets the capture itself lost (live capture: kernel
	// and interface drop counters); nil for files, which cannot tell.
	Drops *Drops `json:"drops"`

	// noICRCChecked says the capture section was read from a report that
	// has no icrc_checked (one of a rocedump before it): ICRCChecked is
	// then unknown, not 0 (see merger.capture). noRoCETruncated says the
	// same of roce_truncated.
	noICRCChecked, noRoCETruncated bool
}

// TruncatedCount says how many frames the snap length cut: "5 truncated",
// and "5 truncated (2 RoCE)" when some of them (truncated) are not RoCE
// (roce of them are).
func TruncatedCount(truncated, roce uint64) string {
	return strconv.FormatUint(truncated, 10) + " truncated" + RoCEAmongTruncated(truncated, roce)
}

// RoCEAmongTruncated is TruncatedCount's gloss: " (2 RoCE)" when only roce
// of the truncated frames are RoCE, "" when all are.
func RoCEAmongTruncated(truncated, roce uint64) string {
	if roce == truncated {
		return ""
	}
	return " (" + strconv.FormatUint(roce, 10) + " RoCE)"
}

// UnmarshalJSON reads a capture section as encoding/json does, noting
// whether it has icrc_checked.
func (c *CaptureInfo) UnmarshalJSON(b []byte) error {
	type plain CaptureInfo // without this method
	aux := struct {
		*plain
		ICRCChecked   *uint64 `json:"icrc_checked"`
		RoCETruncated *uint64 `json:"roce_truncated"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.ICRCChecked, c.noICRCChecked = 0, aux.ICRCChecked == nil
	if aux.ICRCChecked != nil {
		c.ICRCChecked = *aux.ICRCChecked
	}
	c.RoCETruncated, c.noRoCETruncated = 0, aux.RoCETruncated == nil
	if aux.RoCETruncated != nil {
		c.RoCETruncated = *aux.RoCETruncated
	}
	return nil
}

// SkippedFramesNote starts the problem that says how many frames were
// skipped for their link type ("skipped 3 frames: unsupported link type
// ERF (197): ..."): unlike the others, it does not say a file could not
// be read to its end (see ReadProblems).
const SkippedFramesNote = "skipped "

// MergeNote starts the problems rocedump merge adds (what it could only
// combine, not recompute).
const MergeNote = "merge: "

// TrailingDataNote starts the problem that says a gzip-compressed file
// goes on after its gzip stream with data that is not another gzip
// member (zeros padding it, what a copy left behind): ignored, as gzip
// ignores it, after the capture was read to its end.
const TrailingDataNote = "trailing data ignored: "

// ClockBackNote starts the problem that says a file's timestamps went
// back, by more than a millisecond, below a frame read before ("clock
// went back in x.pcap: 50 frames are earlier than a frame before them,
// by up to 1h0m0s; ..."): every frame was read.
const ClockBackNote = "clock went back in "

// LinkDownNote starts the problem a live capture adds for each time its
// interface was down ("interface down: eth1 was down for 2.3 s, from
// ..."): nothing was captured then, and no drop counter counts it.
const LinkDownNote = "interface down: "

// ReadProblems returns the problems that say reading stopped early: every
// problem but the note on frames skipped for their link type, merge's
// notes, which the capture_health findings on unsupported frames and the
// merged report itself account for, and the note on data after a gzip
// stream, read to its end, the note on a clock that went back, and a live
// capture's notes on its interface going down (a finding of their own).
func (c *CaptureInfo) ReadProblems() []string {
	var out []string
	for _, p := range c.Problems {
		if !strings.HasPrefix(p, SkippedFramesNote) && !strings.HasPrefix(p, MergeNote) && !strings.HasPrefix(p, TrailingDataNote) &&
			!strings.HasPrefix(p, ClockBackNote) && !strings.HasPrefix(p, LinkDownNote) {
			out = append(out, p)
		}
	}
	return out
}

// Drops are a live capture's loss counters.
type Drops struct {
	Kernel    uint64 `json:"kernel"`
	Interface uint64 `json:"interface"`
}

// Config holds the expectations findings are judged against. Config{} is
// the defaults.
type Config struct {
	// DataDSCP is the DSCP RoCE data should carry (default 26, the
	// NVIDIA/Mellanox RoCE default); CNPDSCP the DSCP of CNPs (default 48).
	// A zero means the default unless ExplicitDSCP is set.
	DataDSCP uint8
	CNPDSCP  uint8
	// ExplicitDSCP says DataDSCP and CNPDSCP are the DSCPs to expect even
	// when zero (DSCP 0, best effort, is a value a fabric may use): the
	// CLI's --data-dscp and --cnp-dscp always give both.
	ExplicitDSCP bool
	// DataPCP is the 802.1Q priority (PCP) tagged RoCE data should carry
	// (default 3, the NVIDIA/Mellanox lossless RoCE priority); CNPPCP
	// that of tagged CNPs (default 6, cnp_802p_prio). Only frames whose
	// innermost frame has a VLAN tag are judged. A zero means the default
	// unless ExplicitPCP is set, as for the DSCPs.
	DataPCP     uint8
	CNPPCP      uint8
	ExplicitPCP bool
	// ECNWindow is how long after a CE-marked packet a CNP back to the
	// sender counts as the CE being acted on (default 1 ms; ConnectX
	// rate-limits CNPs per QP to one per ~4 µs to 50 µs). Zero or less
	// means the default: no window is empty (the CLI refuses such values).
	ECNWindow time.Duration
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.DataDSCP == 0 && !c.ExplicitDSCP {
		c.DataDSCP = 26
	}
	if c.CNPDSCP == 0 && !c.ExplicitDSCP {
		c.CNPDSCP = 48
	}
	if c.DataPCP == 0 && !c.ExplicitPCP {
		c.DataPCP = 3
	}
	if c.CNPPCP == 0 && !c.ExplicitPCP {
		c.CNPPCP = 6
	}
	if c.ECNWindow <= 0 {
		c.ECNWindow = time.Millisecond
	}
	return c
}

// Input is everything a report module may read.
type Input struct {
	Capture  CaptureInfo
	Flows    []*flows.Flow      // every flow, in ID order, after Table.Finish
	Collect  *Collector         // non-flow observations of the same pass
	Topology *topology.Topology // nil when none was given
	Config   Config

	scan *flowScan // Run's walk over Flows, shared by the modules
}
