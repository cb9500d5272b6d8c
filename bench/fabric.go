package bench

import (
	"fmt"
	"strings"

	"github.com/rocedump/rocedump/gen"
)

// Fabric describes the synthetic workload: an all-to-all pattern within
// each rail of a rail-optimised fabric. Node n's HCA on rail r has the
// compute address 10.0.r.(n+1); every HCA is the requester of QPsPerPeer
// RC connections to every other HCA of its rail, as NCCL does with
// NCCL_IB_QPS_PER_CONNECTION, so each HCA holds 2 × QPsPerPeer × (Nodes-1)
// QPs and the capture (Rails × Nodes × (Nodes-1) × QPsPerPeer
// connections) holds twice that many flows: one each way.
type Fabric struct {
	Rails      int
	Nodes      int // nodes per rail (one HCA per node and rail)
	QPsPerPeer int
	MsgBytes   int // RDMA WRITE size of every message
	MTU        int
	Snaplen    int // bytes of each RoCE frame kept, as a mirror with truncation
	// ERSPAN wraps every frame in ERSPAN type II (GRE, IPv4) as a switch's
	// remote mirror session sends it. The mirror truncates the mirrored
	// frame to Snaplen before it wraps it, so the outer headers come on top.
	ERSPAN bool
	// Messages per connection; the stream is usually stopped earlier, at a
	// packet count (see Generate).
	Messages int
	// GapUS spaces the messages of one connection so that an HCA's
	// connections share its 400G link rather than each running at 400G.
	GapUS float64
}

// DefaultFabric is the benchmark's workload: 256 GPUs on 8 rails (32 DGX
// nodes), all-to-all within each rail with 4 QPs per peer: 248 QPs per
// HCA, 31,744 connections, 63,488 flows. Messages are 16 KiB WRITEs (four
// 4 KiB packets and an ACK), cut at 96 bytes.
func DefaultFabric() Fabric {
	return Fabric{Rails: 8, Nodes: 32, QPsPerPeer: 4, MsgBytes: 16384, MTU: 4096, Snaplen: 96}
}

// Connections is the number of RC connections (QP pairs).
func (f Fabric) Connections() int { return f.Rails * f.Nodes * (f.Nodes - 1) * f.QPsPerPeer }

// Flows is the number of flows a complete capture holds: one per direction
// of every connection.
func (f Fabric) Flows() int { return 2 * f.Connections() }

// QPsPerHCA is the QPs on each HCA.
func (f Fabric) QPsPerHCA() int { return 2 * (f.Nodes - 1) * f.QPsPerPeer }

// FramesPerMessage is the frames one message puts in the capture: its
// data packets and the ACK of the last.
func (f Fabric) FramesPerMessage() int { return (f.MsgBytes+f.MTU-1)/f.MTU + 1 }

// ERSPANOverhead is the bytes ERSPAN II adds in front of a mirrored frame:
// outer Ethernet 14, IPv4 20, GRE with sequence number 8, ERSPAN II 8.
const ERSPANOverhead = 50

// Addr is the compute address of node n's HCA on rail r.
func Addr(rail, node int) string { return fmt.Sprintf("10.0.%d.%d", rail, node+1) }

// Scenario builds the gen scenario: YAML written here and parsed by
// gen.ParseScenario, which fills the defaults and checks every field.
func (f Fabric) Scenario() (*gen.Scenario, error) {
	if f.Rails < 1 || f.Rails > 255 || f.Nodes < 2 || f.Nodes > 254 || f.QPsPerPeer < 1 {
		return nil, fmt.Errorf("bench: fabric %d rails × %d nodes × %d QPs per peer is out of range", f.Rails, f.Nodes, f.QPsPerPeer)
	}
	if 0x100+2*f.Nodes*f.QPsPerPeer > 1<<24 {
		return nil, fmt.Errorf("bench: %d nodes × %d QPs per peer overflow the 24-bit QPN", f.Nodes, f.QPsPerPeer)
	}
	msgs := max(f.Messages, 1)
	gap := f.GapUS
	if gap == 0 {
		// One message of every requester QP of an HCA per round at 400 Gb/s.
		gap = float64((f.Nodes-1)*f.QPsPerPeer*f.FramesPerMessage()*(f.MTU+90)*8) / 400e3
	}
	var b strings.Builder
	b.Grow(f.Connections() * 200)
	fmt.Fprintf(&b, "name: bench-%dx%d-q%d\nseed: 1\nstart: 2026-11-01T10:00:00Z\nsnaplen: %d\n", f.Rails, f.Nodes, f.QPsPerPeer, f.snaplen())
	if f.ERSPAN {
		b.WriteString("encap:\n  - erspan2: {src: 192.0.2.10, dst: 192.0.2.20, session: 100, index: 7}\n")
	}
	b.WriteString("flows:\n")
	i := 0
	for r := 0; r < f.Rails; r++ {
		for a := 0; a < f.Nodes; a++ {
			for c := 0; c < f.Nodes; c++ {
				if a == c {
					continue
				}
				for q := 0; q < f.QPsPerPeer; q++ {
					// QPNs unique per HCA: even for the QPs it requests
					// on, odd for those it responds on.
					src := 0x100 + 2*(c*f.QPsPerPeer+q)
					dst := 0x100 + 2*(a*f.QPsPerPeer+q) + 1
					// Start every connection within the first microsecond,
					// so that a short prefix of the capture holds every flow.
					fmt.Fprintf(&b, "  - {src: %s, dst: %s, src_qpn: %d, dest_qpn: %d, start_psn: %d, mtu: %d, start_us: %.3f, ops: [{op: write, bytes: %d, count: %d, gap_us: %.3f}]}\n",
						Addr(r, a), Addr(r, c), src, dst, (i*7919)&0xffffff, f.MTU, float64(i%1000)/1000, f.MsgBytes, msgs, gap)
					i++
				}
			}
		}
	}
	return gen.ParseScenario([]byte(b.String()), "bench fabric")
}

// snaplen is the capture's snap length: Snaplen, plus the ERSPAN headers
// when the mirror wraps the truncated frame; 0 (whole frames) when
// Snaplen is.
func (f Fabric) snaplen() int {
	if f.ERSPAN && f.Snaplen > 0 {
		return f.Snaplen + ERSPANOverhead
	}
	return f.Snaplen
}
