package render

import (
	"strconv"
	"time"

	"github.com/rocedump/rocedump/reports"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// fixtures are the test reports, by golden-file name.
func fixtures() []struct {
	name string
	r    *reports.Report
} {
	return []struct {
		name string
		r    *reports.Report
	}{
		{"incident", incidentReport()},
		{"quiet", quietReport()},
		{"empty", emptyReport()},
	}
}

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 100_000_000, time.UTC)

func frame(file string, n int, after time.Duration) *reports.Frame {
	return &reports.Frame{File: file, Frame: n, Time: t0.Add(after)}
}

func u32(v uint32) *uint32 { return &v }
func intp(v int) *int      { return &v }
func u16(v uint16) *uint16 { return &v }

// incidentFlows are 64 flows of an 8-rail AllReduce with a few problem
// flows; bytes tie on purpose so ordering by ID shows.
func incidentFlows() []flowtable.Record {
	var rs []flowtable.Record
	for i := 1; i <= 64; i++ {
		rail, node := (i-1)%8, (i-1)/8+1
		bytes := uint64(4_000_000_000 - (i%17)*180_000_000)
		if i == 5 {
			bytes = uint64(4_000_000_000 - 2*180_000_000) // ties with flow 2
		}
		r := flowtable.Record{
			ID: i, Src: "10.0." + strconv.Itoa(rail) + "." + strconv.Itoa(node),
			Dst:     "10.0." + strconv.Itoa(rail) + "." + strconv.Itoa(node%8+1),
			DestQPN: uint32(0x200 + i), Transport: "RC", PairedBy: "psn", PKey: 0xffff,
			Packets: bytes / 4158, Bytes: bytes, PayloadBytes: bytes / 4158 * 4096,
			First: stamp(t0.Add(time.Duration(i) * time.Millisecond)), Last: stamp(t0.Add(2300 * time.Millisecond)),
			FirstFrame: i, LastFrame: 18_000_000 + i, DurationS: 2.3 - float64(i)/1000,
			Messages: bytes / 1_048_576, FirstPSN: u32(1000), LastPSN: u32(1000 + uint32(bytes/4158)), HighestPSN: u32(1000 + uint32(bytes/4158)),
		}
		r.MeanBps = float64(int64(float64(bytes) * 8 / r.DurationS))
		r.PeakBps = r.MeanBps * 1.4
		if i%2 == 1 {
			r.PartnerQPN, r.SrcQPN, r.PartnerID = u32(uint32(0x100+i)), u32(uint32(0x100+i)), intp(i+1)
			r.Opcodes = map[string]uint64{"RDMA_WRITE_FIRST": r.Packets / 4, "RDMA_WRITE_MIDDLE": r.Packets / 2}
			r.DSCP = map[string]uint64{"26": r.Packets}
			r.ECN = map[string]uint64{"ect0": r.Packets}
			r.RNRTimers = map[string]uint64{}
			r.UDPSrcPorts = []uint16{49152 + uint16(i)}
		}
		rs = append(rs, r)
	}
	// Problem flows.
	rs[2].RetransmittedPackets, rs[2].PSNGaps, rs[2].NAKs.PSNSeqErr, rs[2].MissingPSNs = 301, 4, 6, 90
	rs[10].RetransmittedPackets, rs[10].RNRNAKs, rs[10].RNRTimers = 111, 3, map[string]uint64{"1.28ms": 3}
	rs[20].CNPs, rs[20].ECNCE, rs[20].Epoch = 1480, 2210, 1
	rs[21].CNPs, rs[21].ECNCE, rs[21].VLAN = 0, 5120, u16(100)
	rs[30].Transport, rs[30].PairedBy = "UD", "none"
	startPSN := uint32(7)
	rs[31].CM = &flowtable.CMRecord{ServiceID: "0x106000000001144", PortSpace: "TCP", Port: 4420, StartPSN: &startPSN, Frame: 12}
	rs[40].PSNGaps, rs[40].MissingPSNs = 57, 57
	return rs
}

// incidentTimeline has 235 bins of 10 ms: a busy AllReduce with a
// congestion episode and retransmission bursts.
func incidentTimeline(rs []flowtable.Record) *reports.Timeline {
	const n = 235
	bin := 10 * time.Millisecond
	series := func(f func(i int) float64) reports.Series {
		s := reports.Series{Start: t0, Bin: bin, Bins: make([]float64, n)}
		for i := range s.Bins {
			s.Bins[i] = f(i)
		}
		return s
	}
	// A real capture of 64 flows gives each a series; these are the five
	// with the most bytes (17, 34 and 51 tie, then 1 and 18) and a few more.
	tl := &reports.Timeline{FlowBits: map[int]reports.Series{}}
	for k, id := range []int{17, 34, 51, 1, 18, 21, 22, 41} {
		phase := k * 13
		tl.FlowBits[id] = series(func(i int) float64 {
			tri := (i + phase) % 40
			if tri > 20 {
				tri = 40 - tri
			}
			gbps := 180 + 9*tri - 4*k
			if i > 90 && i < 130 && k < 4 { // congestion episode
				gbps = gbps/3 + 10*k
			}
			return float64(gbps) * 1e9 * bin.Seconds()
		})
	}
	tl.RoCEBits = series(func(i int) float64 {
		var sum float64
		for _, s := range tl.FlowBits {
			sum += s.Bins[i]
		}
		return sum * 6
	})
	tl.CEMarks = series(func(i int) float64 {
		if i < 80 || i > 135 {
			return float64(i % 3)
		}
		return float64(40 + (i*37)%90)
	})
	tl.CNPs = series(func(i int) float64 {
		if i < 86 || i > 128 {
			return 0
		}
		return float64(20 + (i*23)%50)
	})
	tl.Retransmits = series(func(i int) float64 {
		switch {
		case i == 97 || i == 98:
			return 140
		case i == 180:
			return 111
		case i%29 == 7:
			return 3
		}
		return 0
	})
	tl.PSNGaps = series(func(i int) float64 {
		if i == 96 || i == 181 || i == 200 {
			return float64(1 + i%4)
		}
		return 0
	})
	return tl
}

func incidentReport() *reports.Report {
	const pcap, pcap2 = "rail3-leaf1.pcapng", `ops "night" & <day>.pcap`
	rs := incidentFlows()
	var total uint64
	for _, r := range rs {
		total += r.Bytes
	}
	findings := []reports.Finding{
		{
			Kind: reports.KindFanOut, Severity: reports.Info,
			Title:  "Fan-out is normal: at most 9 active QPs per HCA",
			Detail: "A large AllReduce opens one QP per peer and channel; hundreds per HCA would still be normal. The busiest HCA is 10.0.3.1.",
			Flows:  []int{}, Nodes: []string{"dgx-01"},
			Evidence: reports.Evidence{Counts: map[string]float64{"max_qps_per_hca": 9, "max_qps_per_node": 64, "hcas": 64}},
			Next:     "Nothing to do.",
		},
		{
			Kind: reports.KindRetransmission, Severity: reports.Critical,
			Title: "Go-back-N retransmissions on 2 flows: 412 packets resent, recovery up to 4.20 ms",
			Detail: "The responder NAKed with PSN sequence error 6 times and the requester resent from the NAKed PSN each time. " +
				"Every episode stalls the QP for the recovery time, and in a ring AllReduce the slowest QP sets the pace for all ranks. " +
				"One flow also saw 3 RNR NAKs (receiver not ready, timer 1.28 ms), which means the receiver ran out of posted receive buffers.",
			Flows: []int{3, 11}, Nodes: []string{"dgx-01", "dgx-02", "dgx-03"},
			Evidence: reports.Evidence{
				Counts: map[string]float64{"retransmitted_packets": 412, "go_back_n_episodes": 9, "recovery_ms_max": 4.2, "rnr_naks": 3, "retransmitted_bytes": 1_713_096},
				First:  frame(pcap, 982_311, 968*time.Millisecond), Last: frame(pcap, 14_201_877, 1801*time.Millisecond),
				Details: []string{
					"#3 10.0.2.1 > 10.0.2.2 qp 0x000203: 301 retransmitted, 6 NAK psn_seq_err, longest recovery 4.20 ms",
					"#11 10.0.2.2 > 10.0.2.3 qp 0x00020b: 111 retransmitted after 3 RNR NAKs (timer 1.28 ms)",
				},
			},
			Next: "Check the switch port counters on the path of 10.0.2.1 > 10.0.2.2 for discards and the HCA with `ethtool -S mlx5_2 | grep -E 'out_of_buffer|rx_discards'`.",
		},
		{
			Kind: reports.KindMirrorLoss, Severity: reports.Warning,
			Title:  "The mirror missed 57 PSNs that the responder ACKed past",
			Detail: "These packets reached the responder (it acknowledged beyond them) but not the capture: the mirror session dropped them. Loss counts from this capture undercount nothing in the fabric but overcount gaps.",
			Flows:  []int{41}, Nodes: []string{"10.0.0.6", "10.0.0.7"},
			Evidence: reports.Evidence{
				Counts: map[string]float64{"missing_psns": 57},
				First:  frame(pcap2, 20, 200*time.Millisecond), Last: frame(pcap2, 1_901, 2010*time.Millisecond),
			},
			Next: "Lower the mirrored rate (truncate to 128 bytes) or mirror fewer ports per session.",
		},
		{
			Kind: reports.KindECNNotActed, Severity: reports.Critical,
			Title:  "ECN not acted on: 5120 CE marks toward 10.0.6.3 with no CNP back",
			Detail: "The switches marked congestion but the receiver never sent a CNP, so DCQCN never slowed the sender: congestion control is off or misconfigured on the receiving HCA.",
			Flows:  []int{22}, Nodes: []string{"dgx-03"},
			Evidence: reports.Evidence{
				Counts: map[string]float64{"ce_marked": 5120, "cnps": 0, "window_ms": 1},
				First:  frame(pcap, 7_000_101, 701*time.Millisecond), Last: frame(pcap, 9_990_000, 1290*time.Millisecond),
			},
			Next: "On dgx-03 check `mlnx_qos -i <if>` and /sys/class/net/<if>/ecn/roce_np/enable/3 (must be 1).",
		},
		{
			Kind: reports.KindDSCPMismatch, Severity: reports.Warning,
			Title:  "RoCE data on DSCP 0 | expected 26 (1 flow)",
			Detail: "Traffic on the wrong DSCP lands in the wrong switch queue: it is not lossless and not ECN-marked like the rest.",
			Flows:  []int{22}, Nodes: []string{"dgx-03"},
			Evidence: reports.Evidence{
				Counts:  map[string]float64{"data_packets": 961_432, "wrong_dscp_packets": 961_432},
				First:   frame(pcap, 1_022, 3*time.Millisecond),
				Details: []string{"dscp 0: 961432 packets", "expected data DSCP 26 | CNP DSCP 48"},
			},
			Next: "Set the traffic class on the HCA: `cma_roce_tos -d mlx5_6 -t 106`.",
		},
		{
			Kind: reports.KindPFC, Severity: reports.Critical,
			Title:  "PFC pause storm on priority 3: paused 812 ms of 2.35 s",
			Detail: "Priority 3 (RoCE) was paused in runs longer than the storm threshold. A pause storm spreads backwards hop by hop and can stall the whole fabric.",
			Flows:  nil, Nodes: []string{"leaf1-eth1/3"},
			Evidence: reports.Evidence{
				Counts:  map[string]float64{"pfc_frames": 40_960, "xoff": 40_100, "xon": 860, "storms": 3, "longest_storm_ms": 312.5, "pause_quanta": 2_621_440_000},
				First:   frame(pcap, 4_100_000, 900*time.Millisecond),
				Last:    frame(pcap, 12_100_000, 1712*time.Millisecond),
				Details: []string{"priority 3: 40100 XOFF, 860 XON, longest storm 312 ms", "priority 0: 0 frames"},
			},
			Next: "Find the port that originates the pauses (highest rx_prio3_pause on the leaf) and check for a slow receiver or a PFC watchdog event.",
		},
		{
			Kind: reports.KindCongestion, Severity: reports.Warning,
			Title:  "Congestion on rail 2: 1480 CNPs to 1 QP, up to 700 per 10 ms",
			Detail: "DCQCN is working (CNPs follow the CE marks) but the sender spent 430 ms at a reduced rate.",
			Flows:  []int{21}, Nodes: []string{"dgx-03", "dgx-04"},
			Evidence: reports.Evidence{
				Counts: map[string]float64{"cnps": 1480, "ce_marks": 2210, "peak_cnps_per_s": 70_000, "fecn": 0, "becn": 0},
				First:  frame(pcap, 3_300_000, 860*time.Millisecond), Last: frame(pcap, 10_100_000, 1280*time.Millisecond),
			},
			Next: "Look for an incast: several senders to 10.0.2.4 at once.",
		},
		{
			Kind: reports.KindCrossRail, Severity: reports.Warning,
			Title:  "Cross-rail traffic: 6.20 GB between rail 0 and rail 3 on 4 QPs",
			Detail: "Compute traffic between different rails crosses the spine instead of staying on one leaf; NCCL does this when PXN is off or the topology file is wrong.",
			Flows:  []int{1, 2, 9, 10}, Nodes: []string{"dgx-01", "dgx-02"},
			Evidence: reports.Evidence{
				Counts:  map[string]float64{"bytes": 6_200_000_000, "qps": 4},
				Details: []string{"dgx-01 rail 0 > dgx-02 rail 3: 3.10 GB, 2 QPs", "dgx-02 rail 3 > dgx-01 rail 0: 3.10 GB, 2 QPs"},
			},
			Next: "Check NCCL_CROSS_NIC and that NCCL_TOPO_FILE matches the cabling.",
		},
		{
			Kind: reports.KindStorageOnCompute, Severity: reports.Info,
			Title:  "NVMe-oF connection (RDMA CM port 4420) on a compute link",
			Detail: "Storage on compute rails takes QPs and switch buffer from the AllReduce and can start PFC storms.",
			Flows:  []int{32}, Nodes: []string{"dgx-04", "10.100.255.9"},
			Evidence: reports.Evidence{
				Counts: map[string]float64{"connections": 1},
				First:  frame(pcap, 12, 0),
			},
			Next: "Move the NVMe-oF target to the storage network (mlx5_8).",
		},
		{
			Kind: reports.KindNonRDMAOnCompute, Severity: reports.Info,
			Title:  `SSH on a compute link <script>alert(1)</script> & "more"`,
			Detail: "TCP port 22 between 10.0.0.1 and 10.0.0.2 *on rail 0*: [bootstrap](x) and_other_ control traffic belongs on the management network.\n# not a heading\n- not a list",
			Flows:  []int{}, Nodes: []string{"dgx-01", "dgx-02"},
			Evidence: reports.Evidence{
				Counts:  map[string]float64{"packets": 88, "bytes": 14_020},
				Details: []string{"tcp/22 10.0.0.1 > 10.0.0.2: 88 packets", "tcp/29500 (NCCL bootstrap) none | seen"},
			},
			Next: "Set NCCL_SOCKET_IFNAME=eno1.",
		},
		{
			Kind: reports.KindCaptureHealth, Severity: reports.Info,
			Title:  "1204 truncated frames and 1532 kernel drops",
			Detail: "Truncated frames still count for flows but their payload cannot be checked; kernel drops mean some loss findings may be the capture's own.",
			Evidence: reports.Evidence{
				Counts: map[string]float64{"truncated": 1204, "kernel_drops": 1532, "icrc_bad": 2, "duration_s": 2.35},
			},
			Next: "Capture with a larger buffer (-B) or a snap length that keeps the BTH.",
		},
	}
	return &reports.Report{
		SchemaVersion: reports.SchemaVersion,
		Tool:          "rocedump 0.4.0-test",
		Capture: reports.CaptureInfo{
			Files:   []string{pcap, pcap2},
			Packets: 18_452_113, RoCE: 18_440_001, Malformed: 3, Truncated: 1204, RoCETruncated: 1204, ICRCBad: 2, ICRCChecked: 18_438_797,
			First: t0, Last: t0.Add(2350 * time.Millisecond), DurationS: 2.35,
			Problems: []string{"2 frames with a bad ICRC (frames 88123, 90001 of " + pcap + ")"},
			Drops:    &reports.Drops{Kernel: 1532},
		},
		Summary: reports.Summary{
			Flows: 64, QPs: 64, Hosts: 64, Bytes: total, Critical: 3, Warning: 4, Info: 4, Topology: true,
			Verdict: "3 critical findings and 4 warnings across 64 QP flows. Start with: Go-back-N retransmissions on 2 flows: 412 packets resent, recovery up to 4.20 ms",
		},
		Flows:    rs,
		Findings: findings,
		Timeline: incidentTimeline(rs),
	}
}

// quietReport has no findings, times in a non-UTC zone, single-bin
// series, an empty CNP series and one huge value.
func quietReport() *reports.Report {
	cet := time.FixedZone("CET", 3600)
	start := time.Date(2025, 3, 14, 10, 0, 0, 0, cet)
	one := func(v float64) reports.Series {
		return reports.Series{Start: start, Bin: time.Second, Bins: []float64{v}}
	}
	rec := func(id int, src, dst string, bytes uint64) flowtable.Record {
		return flowtable.Record{ID: id, Src: src, Dst: dst, DestQPN: uint32(id), Transport: "RC", Bytes: bytes, Packets: 1 + bytes/4000,
			First: stamp(start), Last: stamp(start.Add(800 * time.Millisecond)), DurationS: 0.8, MeanBps: float64(bytes) * 10,
			FirstPSN: u32(0), LastPSN: u32(0), HighestPSN: u32(0)}
	}
	return &reports.Report{
		SchemaVersion: reports.SchemaVersion,
		Tool:          "rocedump 0.4.0-test",
		Capture: reports.CaptureInfo{
			Files: []string{"quiet.pcap"}, Packets: 3, RoCE: 3, ICRCChecked: 3,
			First: start, Last: start.Add(800 * time.Millisecond), DurationS: 0.8,
		},
		Summary: reports.Summary{Flows: 3, QPs: 3, Hosts: 2, Bytes: 1 << 62, Verdict: "No problems found in 3 QP flows between 2 hosts."},
		Flows: []flowtable.Record{
			rec(1, "10.0.0.1", "10.0.0.2", 1<<61),
			rec(2, "10.0.0.2", "10.0.0.1", 1<<61),
			rec(3, "fe80::1", "fe80::2", 900),
		},
		Findings: []reports.Finding{},
		Timeline: &reports.Timeline{
			RoCEBits:    one(1.5e21),
			FlowBits:    map[int]reports.Series{1: one(1e21), 2: one(5e20), 3: one(7200)},
			CNPs:        reports.Series{},
			CEMarks:     one(0),
			Retransmits: one(0),
			PSNGaps:     reports.Series{Start: start, Bin: time.Second},
		},
	}
}

// emptyReport is what a capture without RoCE gives: nothing but nils and
// a timeline without series (a report made from packets always has one).
func emptyReport() *reports.Report {
	return &reports.Report{
		SchemaVersion: reports.SchemaVersion,
		Tool:          "rocedump 0.4.0-test",
		Timeline:      &reports.Timeline{},
		Summary:       reports.Summary{Verdict: "No RoCE traffic in the capture: nothing to judge. Check that the mirror sees the compute links (UDP 4791)."},
	}
}
