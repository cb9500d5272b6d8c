package reports

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/gen"
	"github.com/rocedump/rocedump/reports/flowtable"
)

// nakLossScenario loses two packets of a WRITE before the mirror: the
// responder NAKs (PSN sequence error) at the first, and the requester
// goes back N. Cut after the NAK (endAfterNAK), the capture names the
// lost PSNs but holds no resend.
const nakLossScenario = `name: nak-loss
seed: 3
start: 2026-11-01T10:00:00Z
flows:
  - {name: gbn-gap, src: 10.0.1.1, dst: 10.0.1.2, src_qpn: 0x102, dest_qpn: 0x202, start_psn: 200, mtu: 1024,
     ops: [{op: write, bytes: 4096, count: 3}], events: [{at_msg: 2, fabric_drop: {psn_offset: 1, packets: 2, seen: false}}]}
`

// mirrorGapScenario is mirror loss only: two packets the mirror missed,
// ACKed past.
const mirrorGapScenario = `name: mirror-gap
seed: 4
start: 2026-11-01T10:00:00Z
flows:
  - {name: mirror-gap, src: 10.0.5.1, dst: 10.0.5.2, src_qpn: 0x109, dest_qpn: 0x209, start_psn: 900, mtu: 1024,
     ops: [{op: write, bytes: 4096, count: 2}], events: [{at_msg: 1, mirror_drop: {psn_offset: 1, packets: 2}}]}
`

// rnrMirrorScenario: RNR NAKs for packets the mirror missed, the first of
// a WRITE of three and the first two of a SEND of four. The responder
// received them (the RNR NAK names the first): mirror loss, though the RNR
// retry fills their gaps; were they fabric loss, no go-back-N or timeout
// finding would count them.
const rnrMirrorScenario = `name: rnr-mirror
seed: 5
start: 2026-11-01T10:00:00Z
flows:
  - {name: rnr-write, src: 10.0.6.1, dst: 10.0.6.2, src_qpn: 0x10a, dest_qpn: 0x20a, start_psn: 100, mtu: 1024,
     ops: [{op: write, bytes: 3000, count: 3}],
     events: [{at_msg: 2, rnr_nak: {timer: 2}}, {at_msg: 2, mirror_drop: {psn_offset: 0, packets: 1}}]}
  - {name: rnr-send, src: 10.0.7.1, dst: 10.0.7.2, src_qpn: 0x10b, dest_qpn: 0x20b, start_psn: 16777214, mtu: 256,
     ops: [{op: send, bytes: 1000, count: 3}],
     events: [{at_msg: 2, rnr_nak: {timer: 5}}, {at_msg: 2, mirror_drop: {psn_offset: 0, packets: 2}}]}
`

func scenarioCapture(t *testing.T, src string) string {
	t.Helper()
	sc, err := gen.ParseScenario([]byte(src), "scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return writeScenario(t, sc)
}

// endAfterNAK writes the frames of capture src up to its first PSN
// sequence error NAK, as a capture that ended there, and returns its path.
func endAfterNAK(t *testing.T, src string) string {
	t.Helper()
	r, err := capture.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		buf bytes.Buffer
		w   *gen.PcapWriter
		rec capture.Record
		dec packet.Decoder
		p   packet.Packet
	)
	for {
		err := r.Next(&rec)
		if err == io.EOF || errors.Is(err, capture.ErrCutOff) {
			t.Fatal("no PSN sequence error NAK in the capture")
		}
		if err != nil {
			t.Fatal(err)
		}
		if w == nil {
			if w, err = gen.NewPcapWriter(&buf, uint32(rec.LinkType), 0, true, false); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteFrame(rec.Timestamp, rec.Data, rec.OrigLen); err != nil {
			t.Fatal(err)
		}
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) == nil && p.HasBTH && p.BTH.Ext&bth.HasAETH != 0 &&
			p.BTH.AETH.Kind() == bth.AckKindNAK && p.BTH.AETH.NAKCode() == bth.NAKPSNSequenceError {
			break
		}
	}
	path := filepath.Join(t.TempDir(), "nak-end.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fabricTotal is the fabric loss of every flow of in.
func fabricTotal(in *Input) float64 {
	var n uint64
	for _, f := range in.Flows {
		n += f.Retx.FabricLostPSNs
	}
	return float64(n)
}

// retxVariant returns the finding of fs of kind k whose counts include
// key, or nil.
func retxVariant(fs []Finding, k Kind, key string) *Finding {
	for i := range fs {
		if fs[i].Kind == k && hasCount(&fs[i], key) {
			return &fs[i]
		}
	}
	return nil
}

// TestFabricLossNAKWithoutResend: PSNs a PSN sequence error NAK names
// lost, whose resend the capture does not hold, are fabric loss: the
// go-back-N finding (the one that says "no resend captured") counts them
// in fabric_lost_psns and says so, so that the go-back-N and timeout
// findings hold the capture's whole fabric loss, as mirror_loss's
// fabric_lost_psns does, and as merge adds them up.
func TestFabricLossNAKWithoutResend(t *testing.T) {
	in := retxInput(t, endAfterNAK(t, scenarioCapture(t, nakLossScenario)))
	if fabricTotal(in) != 2 {
		t.Fatalf("flows: %v PSNs lost in the fabric, want the 2 the NAK names", fabricTotal(in))
	}
	fs := Retransmissions(in)
	gbn := retxVariant(fs, KindRetransmission, "gbn_episodes")
	if gbn == nil || len(fs) != 1 {
		t.Fatalf("findings %s: want only the go-back-N one", summary(fs))
	}
	c := gbn.Evidence.Counts
	if c["fabric_lost_psns"] != 2 || c["fabric_gaps"] != 1 || c["psn_seq_err_naks"] != 1 || c["gbn_episodes"] != 0 || c["qps"] != 0 {
		t.Errorf("go-back-N counts %v: want the NAK, no episode, and the 2 PSNs lost in 1 gap", c)
	}
	if gbn.Title != "Go-back-N: 1 PSN sequence error NAK, no resend captured" {
		t.Errorf("title %q", gbn.Title)
	}
	if !strings.Contains(gbn.Detail, "2 PSNs (1 gap) never reached the capture point") {
		t.Errorf("detail %q: says nothing of the fabric loss", gbn.Detail)
	}
	if !slicesContainsFunc(gbn.Evidence.Details, "lost before the mirror") || len(gbn.Flows) != 2 {
		t.Errorf("flows %v, details %q: want the connection and its lost PSNs", gbn.Flows, gbn.Evidence.Details)
	}

	// Merged with a report that has mirror loss (and no fabric loss of
	// its own), the merged mirror_loss counts this report's fabric loss.
	mirrored := retxInput(t, scenarioCapture(t, mirrorGapScenario))
	if fabricTotal(mirrored) != 0 {
		t.Fatalf("mirror-gap scenario: %v PSNs lost in the fabric, want none", fabricTotal(mirrored))
	}
	var srcs []MergeSource
	for i, x := range []*Input{in, mirrored} {
		r := Run(x, "test")
		r.Flows = flowtable.Records(x.Flows)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, MergeSource{Name: string(rune('a'+i)) + ".json", Report: &rep})
	}
	m, err := Merge(srcs, MergeOptions{Tool: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ml := retxVariant(m.Findings, KindMirrorLoss, "fabric_lost_psns")
	if ml == nil || ml.Evidence.Counts["fabric_lost_psns"] != 2 {
		t.Errorf("merged mirror_loss %+v: want fabric_lost_psns 2, the NAKed PSNs of a.json", ml)
	}
}

// TestFabricLossSplit: on every generated capture, the fabric loss of the
// go-back-N and ACK-timeout findings adds up to that of every flow (the
// mirror_loss finding's fabric_lost_psns, when there is one).
func TestFabricLossSplit(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join(retxGenDir, "*.pcap*"))
	paths = append(paths, endAfterNAK(t, scenarioCapture(t, nakLossScenario)), scenarioCapture(t, rnrMirrorScenario))
	for _, path := range paths {
		in := retxInput(t, path)
		fs := Retransmissions(in)
		var split float64
		for _, key := range []string{"gbn_episodes", "timeouts"} {
			if f := retxVariant(fs, KindRetransmission, key); f != nil {
				split += f.Evidence.Counts["fabric_lost_psns"]
			}
		}
		if total := fabricTotal(in); split != total {
			t.Errorf("%s: go-back-N and timeout findings count %v PSNs lost in the fabric, the flows %v", filepath.Base(path), split, total)
		}
		if ml := retxVariant(fs, KindMirrorLoss, "fabric_lost_psns"); ml != nil && ml.Evidence.Counts["fabric_lost_psns"] != split {
			t.Errorf("%s: mirror_loss fabric_lost_psns %v, go-back-N and timeouts %v", filepath.Base(path), ml.Evidence.Counts["fabric_lost_psns"], split)
		}
	}
}

// TestFabricLossRNRMirror: the PSNs of rnrMirrorScenario, which RNR NAKs
// name or share a gap with, are mirror loss, none fabric loss.
func TestFabricLossRNRMirror(t *testing.T) {
	in := retxInput(t, scenarioCapture(t, rnrMirrorScenario))
	if n := fabricTotal(in); n != 0 {
		t.Errorf("flows: %v PSNs lost in the fabric, want 0", n)
	}
	ml := retxVariant(Retransmissions(in), KindMirrorLoss, "mirror_lost_psns")
	if ml == nil || ml.Evidence.Counts["mirror_lost_psns"] != 3 || ml.Evidence.Counts["mirror_gaps"] != 2 {
		t.Errorf("mirror_loss %+v: want mirror_lost_psns 3 in mirror_gaps 2", ml)
	}
}

func slicesContainsFunc(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}
