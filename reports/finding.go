package reports

import (
	"fmt"
	"time"
)

// Severity ranks a finding.
type Severity int

// Severities, in increasing order of urgency.
const (
	Info Severity = iota
	Warning
	Critical
)

// String returns "info", "warning" or "critical".
func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Warning:
		return "warning"
	case Critical:
		return "critical"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// MarshalText writes the severity's name (JSON).
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// ParseSeverity reads "info", "warning" or "critical".
func ParseSeverity(s string) (Severity, error) {
	switch s {
	case "info":
		return Info, nil
	case "warning":
		return Warning, nil
	case "critical":
		return Critical, nil
	}
	return 0, fmt.Errorf("unknown severity %q (want info, warning or critical)", s)
}

// Kind names what a finding is about. The values are a contract (README,
// report JSON schema).
type Kind string

// Finding kinds.
const (
	KindRetransmission   Kind = "retransmission"
	KindMirrorLoss       Kind = "mirror_loss"
	KindCongestion       Kind = "congestion"
	KindECNNotActed      Kind = "ecn_not_acted"
	KindDSCPMismatch     Kind = "dscp_mismatch"
	KindPCPMismatch      Kind = "pcp_mismatch"
	KindPFC              Kind = "pfc"
	KindCrossRail        Kind = "cross_rail"
	KindRDMAOnManagement Kind = "rdma_on_management"
	KindStorageOnCompute Kind = "storage_on_compute"
	KindNonRDMAOnCompute Kind = "non_rdma_on_compute"
	KindFanOut           Kind = "fan_out"
	KindCaptureHealth    Kind = "capture_health"
	KindReordering       Kind = "reordering"
)

// Frame points at one frame of the input, for evidence.
type Frame struct {
	File  string    `json:"file,omitempty"`
	Frame int       `json:"frame"`
	Time  time.Time `json:"time"`
}

// Evidence backs a finding with numbers and where to look in the capture.
type Evidence struct {
	// Counts are the measured numbers, by name (e.g. "retransmitted_packets",
	// "cnps", "bytes"). JSON writes them sorted by name.
	Counts map[string]float64 `json:"counts"`
	First  *Frame             `json:"first,omitempty"` // first frame showing the problem
	Last   *Frame             `json:"last,omitempty"`  // last frame showing it
	// Details are short lines of evidence for humans (a table row each),
	// e.g. "10.0.0.1 > 10.0.1.1 qp 0x000201: 3 retransmitted, NAK psn_seq_err at 103".
	Details []string `json:"details,omitempty"`
}

// Finding is one thing the report says about the capture.
type Finding struct {
	Kind     Kind     `json:"kind"`
	Severity Severity `json:"severity"`
	Title    string   `json:"title"`  // one line
	Detail   string   `json:"detail"` // what was seen and why it matters, a few sentences
	Flows    []int    `json:"flows"`  // flow IDs (as printed by rocedump flows)
	Nodes    []string `json:"nodes"`  // topology node names, or IP addresses when unknown
	Evidence Evidence `json:"evidence"`
	Next     string   `json:"next"` // what to check next

	order int // index of the module that made it, for ranking
}
