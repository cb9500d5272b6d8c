package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/topology"
)

const retxGenDir = "../testdata/pcaps/gen"

// retxGen is the path of generated capture NAME.pcap[ng][.gz].
func retxGen(t testing.TB, name string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(retxGenDir, name+".pcap*"))
	if len(m) != 1 {
		t.Fatalf("%s: want one generated capture, found %v", name, m)
	}
	return m[0]
}

// retxInput reads one capture into a finished flow table and returns the
// Input the retransmission module reads (no Collector, no topology).
func retxInput(t testing.TB, path string) *Input {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tab := flows.NewTable(flows.Config{})
	in := &Input{Config: Config{}.WithDefaults()}
	in.Capture.Files = []string{filepath.Base(path)}
	var (
		rec capture.Record
		p   packet.Packet
		dec packet.Decoder
	)
	for {
		err := r.Next(&rec)
		if err == io.EOF || errors.Is(err, capture.ErrCutOff) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		in.Capture.Packets++
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil {
			continue
		}
		tab.Add(&p, flows.FrameRef{Frame: rec.Number, Time: rec.Timestamp})
	}
	tab.Finish()
	in.Flows = tab.Flows()
	return in
}

// retxWant is what one finding must say: exact counts, flows and frames.
type retxWant struct {
	kind        Kind
	sev         Severity
	title       string // a prefix of the title
	flows       []int
	first, last int
	counts      map[string]float64
	details     int
}

func checkRetx(t *testing.T, got []Finding, want []retxWant) {
	t.Helper()
	if len(got) != len(want) {
		var titles []string
		for _, f := range got {
			titles = append(titles, string(f.Kind)+" "+f.Severity.String()+": "+f.Title)
		}
		t.Fatalf("%d findings, want %d:\n  %s", len(got), len(want), strings.Join(titles, "\n  "))
	}
	for i, w := range want {
		f := got[i]
		id := fmt.Sprintf("finding %d (%s)", i, f.Title)
		if f.Kind != w.kind || f.Severity != w.sev || !strings.HasPrefix(f.Title, w.title) {
			t.Errorf("%s: %s %s, want %s %s %q...", id, f.Kind, f.Severity, w.kind, w.sev, w.title)
		}
		if !reflect.DeepEqual(f.Flows, w.flows) {
			t.Errorf("%s: flows %v, want %v", id, f.Flows, w.flows)
		}
		if !reflect.DeepEqual(f.Evidence.Counts, w.counts) {
			t.Errorf("%s: counts\n  %v\nwant\n  %v", id, f.Evidence.Counts, w.counts)
		}
		if f.Evidence.First == nil || f.Evidence.Last == nil || f.Evidence.First.Frame != w.first || f.Evidence.Last.Frame != w.last {
			t.Errorf("%s: frames %v..%v, want %d..%d", id, f.Evidence.First, f.Evidence.Last, w.first, w.last)
		} else if f.Evidence.First.File == "" {
			t.Errorf("%s: evidence frame without its file", id)
		}
		if len(f.Evidence.Details) != w.details {
			t.Errorf("%s: %d detail lines, want %d: %q", id, len(f.Evidence.Details), w.details, f.Evidence.Details)
		}
		if f.Detail == "" || f.Next == "" || strings.Contains(f.Title, "\n") {
			t.Errorf("%s: empty detail or next, or a title of several lines", id)
		}
		if len(f.Nodes) == 0 {
			t.Errorf("%s: no nodes", id)
		}
	}
}

// retransmissionsWant is what testdata/scenarios/retransmissions.yaml must
// give: one finding per problem it plays, counts from its truth (see
// retransmissions.truth.json and the comments of the scenario).
var retransmissionsWant = []retxWant{
	{KindRetransmission, Critical, "Fatal NAK remote_access_err", []int{11, 12}, 58, 58,
		map[string]float64{"fatal_naks": 1, "naks_remote_access_err": 1, "qps": 1}, 1},
	{KindRetransmission, Critical, "Fatal NAK invalid_request", []int{9, 10}, 49, 49,
		map[string]float64{"fatal_naks": 1, "naks_invalid_request": 1, "qps": 1}, 1},
	{KindRetransmission, Critical, "Fatal NAK remote_op_err", []int{13, 14}, 60, 60,
		map[string]float64{"fatal_naks": 1, "naks_remote_op_err": 1, "qps": 1}, 1},
	{KindRetransmission, Critical, "Fatal NAK invalid_rd_request", []int{15, 16}, 65, 65,
		map[string]float64{"fatal_naks": 1, "naks_invalid_rd_request": 1, "qps": 1}, 1},
	// gbn-seen resends 105-107 after NAK 105 (frames 10-13); gbn-gap
	// lost 205-206 before the mirror, resends 205-207 after NAK 205
	// (frames 28-30: the last resend ends the span).
	{KindRetransmission, Warning, "Go-back-N: 6 packets resent in 2 episodes", []int{1, 2, 3, 4}, 10, 30,
		map[string]float64{"gbn_episodes": 2, "retransmitted_packets": 6, "psn_seq_err_naks": 2, "fabric_lost_psns": 2, "fabric_gaps": 1,
			"qps": 2, "recovery_ms_max": 0, "recovery_ms_mean": 0, "catch_up_ms_max": 0.001}, 2},
	// timeout: 302-303 resent 4096 µs after 303 (timeout_us 4096), frames
	// 92-93.
	{KindRetransmission, Warning, "ACK timeouts: 2 packets resent after 1 timeout", []int{5, 6}, 92, 93,
		map[string]float64{"timeouts": 1, "retransmitted_packets": 2, "qps": 1, "timeout_ms_min": 4.096, "timeout_ms_max": 4.096,
			"local_ack_timeout": 10, "fabric_lost_psns": 0}, 1},
	// rnr: RNR NAK timer 14 (1.28 ms) at frame 45, resend at frame 88.
	{KindRetransmission, Warning, "1 RNR NAK on 1 QP", []int{7, 8}, 45, 88,
		map[string]float64{"rnr_naks": 1, "rnr_retries": 1, "retransmitted_packets": 1, "qps": 1,
			"rnr_timer_ms_min": 1.28, "rnr_timer_ms_max": 1.28, "rnr_wait_ms_max": 1.28}, 1},
	// read-loss: READ re-issued from PSN 1001, responses 1001-1003 again.
	{KindRetransmission, Warning, "1 RDMA READ re-issued", []int{19, 20}, 79, 79,
		map[string]float64{"reissued_reads": 1, "resent_read_responses": 3, "resent_requests": 0, "retransmitted_packets": 4, "qps": 1, "fabric_lost_psns": 0}, 1},
	// mirror-gap: 901-902 missing, ACK 903.
	{KindMirrorLoss, Warning, "The mirror missed 2 packets that were delivered", []int{17, 18}, 67, 67,
		map[string]float64{"mirror_lost_psns": 2, "mirror_gaps": 1, "qps": 1, "fabric_lost_psns": 2}, 1},
}

func TestRetransmissionsGenerated(t *testing.T) {
	checkRetx(t, Retransmissions(retxInput(t, retxGen(t, "retransmissions"))), retransmissionsWant)
}

// TestRetransmissionsMirrored checks that the retransmissions scenario as a
// switch mirror sends it (ERSPAN II, 802.1Q, cut at 128 bytes) gives the
// same findings, word for word, as the plain capture.
func TestRetransmissionsMirrored(t *testing.T) {
	mirrored := Retransmissions(retxInput(t, retxGen(t, "retx_mirrored")))
	checkRetx(t, mirrored, retransmissionsWant)
	sameFindings(t, mirrored, Retransmissions(retxInput(t, retxGen(t, "retransmissions"))))
}

// sameFindings compares two lists of findings but for the file names.
func sameFindings(t *testing.T, a, b []Finding) {
	t.Helper()
	strip := func(fs []Finding) string {
		out := make([]Finding, len(fs))
		for i, f := range fs {
			f.Evidence.First = &Frame{Frame: f.Evidence.First.Frame, Time: f.Evidence.First.Time}
			f.Evidence.Last = &Frame{Frame: f.Evidence.Last.Frame, Time: f.Evidence.Last.Time}
			out[i] = f
		}
		j, err := json.MarshalIndent(out, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	if sa, sb := strip(a), strip(b); sa != sb {
		t.Errorf("findings differ:\n%s\nwant\n%s", sa, sb)
	}
}

// TestRetransmissionsMirrorVariants checks the mirrored and truncated
// generated captures (a go-back-N each) against the same scenario generated
// plain, without encapsulation or snap length, and their exact counts.
func TestRetransmissionsMirrorVariants(t *testing.T) {
	tests := []struct {
		name string
		want []retxWant
	}{
		{"mirror_erspan2_vlan_trunc", []retxWant{{KindRetransmission, Warning, "Go-back-N: 3 packets resent in 1 episode", []int{1, 3}, 13, 16,
			map[string]float64{"gbn_episodes": 1, "retransmitted_packets": 3, "psn_seq_err_naks": 1, "fabric_lost_psns": 0, "fabric_gaps": 0,
				"qps": 1, "recovery_ms_max": 0, "recovery_ms_mean": 0, "catch_up_ms_max": 0.001}, 1}}},
		{"snaplen64", []retxWant{{KindRetransmission, Warning, "Go-back-N: 2 packets resent in 1 episode", []int{1, 2}, 10, 12,
			map[string]float64{"gbn_episodes": 1, "retransmitted_packets": 2, "psn_seq_err_naks": 1, "fabric_lost_psns": 0, "fabric_gaps": 0,
				"qps": 1, "recovery_ms_max": 0, "recovery_ms_mean": 0, "catch_up_ms_max": 0.001}, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Retransmissions(retxInput(t, retxGen(t, tc.name)))
			checkRetx(t, got, tc.want)
			sc, err := gen.LoadScenario(filepath.Join("../testdata/scenarios", tc.name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			sc.Snaplen, sc.Encap = 0, nil
			plain := writeScenario(t, sc)
			sameFindings(t, got, Retransmissions(retxInput(t, plain)))
		})
	}
}

// TestRetransmissionsMixed covers retx_mixed.yaml: two go-back-N episodes
// on one QP, two RNR NAKs with different timers, a mirror drop at a QP's
// tail, two mirror gaps on one QP, and a UC mirror drop nothing decides.
func TestRetransmissionsMixed(t *testing.T) {
	checkRetx(t, Retransmissions(retxInput(t, retxGen(t, "retx_mixed"))), []retxWant{
		{KindRetransmission, Warning, "Go-back-N: 6 packets resent in 2 episodes after packet loss on 1 QP", []int{1, 2}, 10, 21,
			map[string]float64{"gbn_episodes": 2, "retransmitted_packets": 6, "psn_seq_err_naks": 2, "fabric_lost_psns": 1, "fabric_gaps": 1,
				"qps": 1, "recovery_ms_max": 0, "recovery_ms_mean": 0, "catch_up_ms_max": 0.001}, 1},
		{KindRetransmission, Warning, "2 RNR NAKs on 1 QP", []int{3, 4}, 31, 65,
			map[string]float64{"rnr_naks": 2, "rnr_retries": 2, "retransmitted_packets": 2, "qps": 1,
				"rnr_timer_ms_min": 0.01, "rnr_timer_ms_max": 0.64, "rnr_wait_ms_max": 0.64}, 1},
		{KindMirrorLoss, Warning, "The mirror missed 5 packets that were delivered (3 gaps on 2 QPs)", []int{5, 6, 7, 8}, 46, 50,
			map[string]float64{"mirror_lost_psns": 5, "mirror_gaps": 3, "qps": 2, "fabric_lost_psns": 1}, 2},
	})
}

// TestRetransmissionsMirrorWidespread: one mirror drop on each of eight
// QPs makes the capture untrustworthy for loss analysis.
func TestRetransmissionsMirrorWidespread(t *testing.T) {
	got := Retransmissions(retxInput(t, retxGen(t, "retx_mirror_widespread")))
	checkRetx(t, got, []retxWant{
		{KindMirrorLoss, Critical, "This capture cannot be trusted for loss analysis: the mirror missed 8 packets that were delivered (8 gaps on 8 QPs)",
			[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, 2, 95,
			map[string]float64{"mirror_lost_psns": 8, "mirror_gaps": 8, "qps": 8, "fabric_lost_psns": 0}, 8},
	})
	if !strings.Contains(got[0].Detail, "this capture cannot be trusted for loss analysis") {
		t.Errorf("detail does not say the capture cannot be trusted: %s", got[0].Detail)
	}
}

// TestRetransmissionsNone checks that captures with no loss give no
// retransmission or mirror_loss finding: the real captures (one reuses a
// QPN for a second connection) and the clean generated ones.
func TestRetransmissionsNone(t *testing.T) {
	paths, _ := filepath.Glob("../testdata/pcaps/real/linlinw5_*.pcap")
	if len(paths) == 0 {
		t.Fatal("no real captures")
	}
	for _, name := range []string{"clean_allreduce", "transports", "formats_pcap_ns_be", "formats_pcapng_2if", "formats_pcapng_gz",
		"formats_sll_be", "congestion", "erspan1_qinq", "gre_teb", "mirror_erspan3_ipv6", "storage", "malformed"} {
		paths = append(paths, retxGen(t, name))
	}
	for _, p := range paths {
		in := retxInput(t, p)
		if len(in.Flows) == 0 && strings.Contains(p, "linlinw5") {
			t.Errorf("%s: no flows", p)
		}
		for _, f := range Retransmissions(in) {
			t.Errorf("%s: %s %s: %s", filepath.Base(p), f.Kind, f.Severity, f.Title)
		}
	}
}

// retxFlow is a request flow and its partner with the given counters, for
// the severity rules.
func retxFlows(n int, packets uint64, r flows.RetxStats) []*flows.Flow {
	var out []*flows.Flow
	for i := range n {
		a, b := netip.AddrFrom4([4]byte{10, 0, byte(i), 1}), netip.AddrFrom4([4]byte{10, 0, byte(i), 2})
		req := &flows.Flow{ID: 2*i + 1, Key: flows.Key{Src: a, Dst: b, DestQP: 0x200}, Packets: packets, Retx: r}
		ack := &flows.Flow{ID: 2*i + 2, Key: flows.Key{Src: b, Dst: a, DestQP: 0x100}, Partner: req}
		req.Partner = ack
		out = append(out, req, ack)
	}
	return out
}

// TestRetransmissionsSeverity checks the severity rules at their edges.
func TestRetransmissionsSeverity(t *testing.T) {
	tests := []struct {
		name    string
		flows   []*flows.Flow
		kind    Kind
		want    Severity
		untrust bool
	}{
		{"go-back-N, 1% and 100 packets", retxFlows(1, 10000, flows.RetxStats{GBNEpisodes: 10, GBNResent: 100}), KindRetransmission, Critical, false},
		{"go-back-N, 1% but 99 packets", retxFlows(1, 9900, flows.RetxStats{GBNEpisodes: 10, GBNResent: 99}), KindRetransmission, Warning, false},
		{"go-back-N, 100 packets under 1%", retxFlows(1, 10001, flows.RetxStats{GBNEpisodes: 10, GBNResent: 100}), KindRetransmission, Warning, false},
		{"timeouts, 1% and 100 packets", retxFlows(1, 10000, flows.RetxStats{Timeouts: 10, TimeoutResent: 100}), KindRetransmission, Critical, false},
		{"mirror loss, 0.1% and 10 PSNs", retxFlows(1, 10000, flows.RetxStats{MirrorLostPSNs: 10, MirrorGaps: 1}), KindMirrorLoss, Critical, true},
		{"mirror loss, 9 PSNs", retxFlows(1, 100, flows.RetxStats{MirrorLostPSNs: 9, MirrorGaps: 1}), KindMirrorLoss, Warning, false},
		{"mirror loss, 10 PSNs under 0.1%", retxFlows(1, 10001, flows.RetxStats{MirrorLostPSNs: 10, MirrorGaps: 1}), KindMirrorLoss, Warning, false},
		{"mirror loss on 7 flows", retxFlows(7, 1_000_000, flows.RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1}), KindMirrorLoss, Warning, false},
		{"mirror loss on 8 flows", retxFlows(8, 1_000_000, flows.RetxStats{MirrorLostPSNs: 1, MirrorGaps: 1}), KindMirrorLoss, Critical, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Retransmissions(&Input{Flows: tc.flows})
			if len(got) != 1 || got[0].Kind != tc.kind || got[0].Severity != tc.want {
				var s []string
				for _, f := range got {
					s = append(s, fmt.Sprintf("%s %s: %s", f.Kind, f.Severity, f.Title))
				}
				t.Fatalf("got %q, want one %s %s", s, tc.kind, tc.want)
			}
			if untrusted := strings.HasPrefix(got[0].Title, "This capture cannot be trusted for loss analysis"); untrusted != tc.untrust {
				t.Errorf("title %q: untrusted %v, want %v", got[0].Title, untrusted, tc.untrust)
			}
			if got[0].Evidence.First != nil {
				t.Errorf("evidence frames %v with no events", got[0].Evidence.First)
			}
		})
	}
}

// TestRetransmissionsDetailsCap checks the detail lines: worst flows first,
// ten of them, then "and N more".
func TestRetransmissionsDetailsCap(t *testing.T) {
	var fl []*flows.Flow
	for i := range 12 {
		fl = append(fl, retxFlows(1, 1000, flows.RetxStats{Timeouts: 1, TimeoutResent: uint64(i + 1)})...)
	}
	for i, f := range fl {
		f.ID = i + 1
	}
	got := Retransmissions(&Input{Flows: fl})
	if len(got) != 1 {
		t.Fatalf("%d findings, want 1", len(got))
	}
	d := got[0].Evidence.Details
	if len(d) != 11 || d[10] != "and 2 more" || !strings.Contains(d[0], "(flow 23): 1 timeout, 12 resent") {
		t.Errorf("details = %q", d)
	}
}

// TestRetransmissionsTopology checks that nodes are named by the topology.
func TestRetransmissionsTopology(t *testing.T) {
	topo, err := topology.Parse([]byte(`nodes:
  - name: dgx-01
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.1, role: compute, rail: 0}
  - name: dgx-02
    interfaces:
      - {name: mlx5_0, ip: 10.0.0.2, role: compute, rail: 0}
`), "pod.yaml")
	if err != nil {
		t.Fatal(err)
	}
	in := retxInput(t, retxGen(t, "retransmissions"))
	in.Topology = topo
	for _, f := range Retransmissions(in) {
		if !strings.HasPrefix(f.Title, "Go-back-N") {
			continue
		}
		if want := []string{"10.0.1.1", "10.0.1.2", "dgx-01", "dgx-02"}; !reflect.DeepEqual(f.Nodes, want) {
			t.Errorf("nodes %v, want %v", f.Nodes, want)
		}
		return
	}
	t.Error("no go-back-N finding")
}

// TestRetransmissionsNAKWithoutResend: PSN sequence error NAKs whose
// resends the capture lacks (a mirror of the responder's direction only,
// or a capture that ends after the NAK) make a go-back-N finding that says
// so, not one of "0 packets resent in 0 episodes on 0 QPs".
func TestRetransmissionsNAKWithoutResend(t *testing.T) {
	fs := retxFlows(1, 100, flows.RetxStats{})
	fs[1].NAKs[bth.NAKPSNSequenceError] = 2
	got := Retransmissions(&Input{Flows: fs})
	if len(got) != 1 {
		t.Fatalf("%d findings, want 1", len(got))
	}
	f := got[0]
	if want := "Go-back-N: 2 PSN sequence error NAKs, no resend captured"; f.Title != want {
		t.Errorf("title %q, want %q", f.Title, want)
	}
	if strings.Contains(f.Detail, "0 go-back-N episodes") || !strings.Contains(f.Detail, "no resend") {
		t.Errorf("detail %q: says nothing of the missing resends", f.Detail)
	}
	if len(f.Evidence.Details) != 1 || !strings.Contains(f.Evidence.Details[0], "no resend captured") {
		t.Errorf("details %q, want the NAK's flow", f.Evidence.Details)
	}
	if title, ok := titleFromCounts(&f); !ok || title != f.Title {
		t.Errorf("title from counts %q, %v; want %q", title, ok, f.Title)
	}
}

// TestMirrorLossTitle: the title agrees in number with the packets it
// counts.
func TestMirrorLossTitle(t *testing.T) {
	for _, tt := range []struct {
		psns, gaps, qps uint64
		widespread      bool
		want            string
	}{
		{1, 1, 1, false, "The mirror missed 1 packet that was delivered (1 gap on 1 QP)"},
		{5, 3, 2, false, "The mirror missed 5 packets that were delivered (3 gaps on 2 QPs)"},
		{1, 1, 1, true, "This capture cannot be trusted for loss analysis: the mirror missed 1 packet that was delivered (1 gap on 1 QP)"},
	} {
		if got := mirrorLossTitle(tt.psns, tt.gaps, tt.qps, tt.widespread); got != tt.want {
			t.Errorf("mirrorLossTitle(%d, %d, %d, %v) = %q, want %q", tt.psns, tt.gaps, tt.qps, tt.widespread, got, tt.want)
		}
	}
}

// TestRetransmissionsUnpairedNAKAnswered: two QPs between the same hosts
// start at PSN 0 (as NCCL's do), so their flows stay unpaired; the fabric
// loses a packet of one before the mirror, the responder NAKs, and the
// requester goes back N. The NAK's flow has no partner, but the resend
// at its PSN answered it: the finding must not say "no resend captured"
// next to the episode that answered it.
func TestRetransmissionsUnpairedNAKAnswered(t *testing.T) {
	const sc = `name: nccl-two-qps
seed: 6
start: 2026-11-01T10:00:00Z
flows:
  - {name: lossy, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x101, dest_qpn: 0x201, start_psn: 0, mtu: 1024,
     ops: [{op: write, bytes: 4096, count: 3}], events: [{at_msg: 2, fabric_drop: {psn_offset: 1, seen: false}}]}
  - {name: clean, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x102, dest_qpn: 0x202, start_psn: 0, mtu: 1024,
     ops: [{op: write, bytes: 4096, count: 3}]}
`
	in := retxInput(t, scenarioCapture(t, sc))
	var nakFlow *flows.Flow
	for _, f := range in.Flows {
		if f.NAKs[bth.NAKPSNSequenceError] > 0 {
			nakFlow = f
		}
	}
	if nakFlow == nil || nakFlow.Partner != nil {
		t.Fatalf("want an unpaired flow carrying the NAK, got %v", nakFlow)
	}
	got := Retransmissions(in)
	if len(got) != 1 {
		t.Fatalf("%d findings, want 1", len(got))
	}
	f := got[0]
	if c := f.Evidence.Counts; c["gbn_episodes"] != 1 || c["psn_seq_err_naks"] != 1 || c["retransmitted_packets"] != 3 {
		t.Errorf("counts %v, want 1 episode, 1 NAK, 3 resent", c)
	}
	for _, d := range f.Evidence.Details {
		if strings.Contains(d, "no resend captured") {
			t.Errorf("detail %q: the go-back-N in the same finding answered that NAK", d)
		}
	}
	if !slices.Contains(f.Flows, nakFlow.ID) {
		t.Errorf("flows %v do not name the NAK's flow %d", f.Flows, nakFlow.ID)
	}
}
