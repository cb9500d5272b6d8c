package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// TestFabricFlows: a small fabric's capture holds exactly the flows and QPs
// per HCA the Fabric says, plain and ERSPAN-wrapped, and the prefixes are
// the first frames of the same stream.
func TestFabricFlows(t *testing.T) {
	f := Fabric{Rails: 2, Nodes: 4, QPsPerPeer: 2, MsgBytes: 8192, MTU: 4096, Snaplen: 96}
	for _, erspan := range []bool{false, true} {
		f.ERSPAN = erspan
		dir := t.TempDir()
		// Enough messages that the ACKs, 4 µs behind the data, are in.
		n := 4 * f.Connections() * f.FramesPerMessage()
		caps, err := Generate(f, n, filepath.Join(dir, "all.pcap"), Prefix{filepath.Join(dir, "pre.pcap"), 10})
		if err != nil {
			t.Fatal(err)
		}
		if caps[0].Packets != n || caps[1].Packets != 10 {
			t.Fatalf("ERSPAN %v: wrote %d and %d packets, want %d and 10", erspan, caps[0].Packets, caps[1].Packets, n)
		}
		table := flows.NewTable(flows.Config{})
		qps := map[string]map[uint32]bool{}
		var dec packet.Decoder
		var p packet.Packet
		r, err := capture.Open(caps[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		var rec capture.Record
		for r.Next(&rec) == nil {
			if err := dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p); err != nil || p.Kind != packet.KindRoCE {
				t.Fatalf("frame %d: not RoCE (%v, kind %v)", rec.Number, err, p.Kind)
			}
			if erspan != (p.NEncap > 0) {
				t.Fatalf("frame %d: %d encapsulation layers, want ERSPAN %v", rec.Number, p.NEncap, erspan)
			}
			if want := min(rec.OrigLen, f.snaplen()); rec.CapLen != want {
				t.Fatalf("frame %d: %d of %d bytes captured, want %d", rec.Number, rec.CapLen, rec.OrigLen, want)
			}
			table.Add(&p, flows.FrameRef{Frame: rec.Number, Time: rec.Timestamp})
			dst := p.Dst.String()
			if qps[dst] == nil {
				qps[dst] = map[uint32]bool{}
			}
			qps[dst][p.BTH.DestQP] = true
		}
		r.Close()
		table.Finish()
		if got := len(table.Flows()); got != f.Flows() {
			t.Errorf("ERSPAN %v: %d flows, want %d", erspan, got, f.Flows())
		}
		if len(qps) != f.Rails*f.Nodes {
			t.Errorf("ERSPAN %v: %d HCAs, want %d", erspan, len(qps), f.Rails*f.Nodes)
		}
		for hca, q := range qps {
			if len(q) != f.QPsPerHCA() {
				t.Errorf("ERSPAN %v: HCA %s has %d QPs, want %d", erspan, hca, len(q), f.QPsPerHCA())
			}
		}
		a, _ := os.ReadFile(caps[0].Path)
		b, _ := os.ReadFile(caps[1].Path)
		if len(b) == 0 || !strings.HasPrefix(string(a), string(b)) {
			t.Errorf("ERSPAN %v: the prefix file is not the start of the capture", erspan)
		}
	}
}

// TestDefaultFabric pins the workload BENCHMARKS.md describes.
func TestDefaultFabric(t *testing.T) {
	f := DefaultFabric()
	if f.Rails*f.Nodes != 256 || f.QPsPerHCA() != 248 || f.Flows() != 63488 || f.Snaplen != 96 {
		t.Errorf("DefaultFabric: %d GPUs, %d QPs per HCA, %d flows, snaplen %d; want 256, 248, 63488, 96",
			f.Rails*f.Nodes, f.QPsPerHCA(), f.Flows(), f.Snaplen)
	}
}

func TestSplice(t *testing.T) {
	tests := []struct {
		name, doc, want string
	}{
		{"new", "", "# rocedump benchmarks\n\n" + BeginMarker + "\nNEW\n" + EndMarker + "\n"},
		{"keeps the rest", "# T\n\nintro\n" + BeginMarker + "\nOLD\n" + EndMarker + "\n\n## Where the time goes\n",
			"# T\n\nintro\n" + BeginMarker + "\nNEW\n" + EndMarker + "\n\n## Where the time goes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Splice(tt.doc, "NEW\n"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20000000: "20,000,000", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDiskBytes: the space DiskBytes asks for holds the captures the
// generator writes, without asking for much more: every frame at the snap
// length (ACKs are shorter), ERSPAN on top, and whole frames when the
// mirror does not cut them.
func TestDiskBytes(t *testing.T) {
	dir := t.TempDir()
	small := Fabric{Rails: 2, Nodes: 4, QPsPerPeer: 1, MsgBytes: 16384, MTU: 4096, Snaplen: 96}
	whole := small
	whole.Snaplen = 0
	for i, f := range []Fabric{small, whole} {
		for _, erspan := range []bool{false, true} {
			f.ERSPAN = erspan
			const n = 5000
			cs, err := Generate(f, n, filepath.Join(dir, fmt.Sprintf("%d-%v.pcap", i, erspan)))
			if err != nil {
				t.Fatal(err)
			}
			est := captureBytes(f, n)
			if got := cs[0].Bytes; got > est || float64(est) > 1.3*float64(got) {
				t.Errorf("snap %d, ERSPAN %v: %d packets take %d bytes, estimated %d", f.Snaplen, erspan, n, got, est)
			}
		}
	}
	o := Options{Fabric: small, Packets: 100_000, TsharkPackets: 1000, FlowsFabric: small, FlowsPackets: 500}
	plain, erspan := small, small
	erspan.ERSPAN = true
	s, d, _ := o.prefixes()
	want := captureBytes(plain, o.Packets) + captureBytes(erspan, o.Packets) + captureBytes(plain, s) + captureBytes(plain, d) +
		captureBytes(plain, 1000) + captureBytes(erspan, 1000) + captureBytes(small, 500)
	if got := DiskBytes(o); got != want {
		t.Errorf("DiskBytes %d, want every capture's: %d", got, want)
	}
}
