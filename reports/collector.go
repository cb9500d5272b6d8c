package reports

import (
	"net/netip"
	"time"

	"github.com/rocedump/rocedump/flows"
)

// Collector gathers, in the same pass as the flow table, what the report
// needs beyond it: non-RDMA conversations, PFC frames, RDMA CM connection
// requests, ECN-to-CNP reaction, DSCP conformance per packet class and the
// time series the HTML charts draw. Its memory grows with flows,
// conversations and the (bounded) number of time bins, never with packets.
type Collector struct {
	Table *flows.Table
	cfg   Config
	c     collectorState // implementation state, see collector_*.go
}

// Conversation is non-RoCE IP traffic between two addresses on one service
// port: TCP or UDP (Proto 6 or 17) with the server's port as ServicePort
// (the one a TCP connection's SYN was sent to; else a service the reports
// name; else a port rpcbind was seen to hand out; else the lower one), or
// another IP protocol with ServicePort 0.
type Conversation struct {
	Src, Dst    netip.Addr // Src is the client side when it can be told, else the first sender
	Proto       uint8
	ServicePort uint16
	// RPCProgram is the ONC RPC program (100005 mountd, 100021 NLM, ...)
	// that an rpcbind exchange of the capture said listens on
	// ServicePort, when that is how ServicePort was told; else 0.
	RPCProgram  uint32
	Packets     uint64
	Bytes       uint64 // IP lengths
	First, Last flows.FrameRef
	// Copies are the mirror's second copies of its packets, left out of
	// Packets and Bytes (convTable.copyKind).
	Copies uint64
	// FileCopies are its packets captured again in another input file
	// taken in parallel (flows.MaxFileOffset), left out likewise.
	FileCopies uint64
}

// PFCPriority is what was seen of one 802.1Qbb priority.
type PFCPriority struct {
	Priority     int
	Frames       uint64 // PFC frames with this priority's class-enable bit set
	XOFF         uint64 // of those, with a non-zero pause time
	XON          uint64 // with a zero pause time (resume)
	PauseQuanta  uint64 // sum of pause times, in 512-bit-time quanta
	Storms       int    // runs of XOFF frames lasting longer than the storm threshold
	LongestStorm time.Duration
	First, Last  *flows.FrameRef
}

// CMConnect is one RDMA CM connection request (REQ) seen on QP1. The
// fields a snap length cut from the REQ are zero.
type CMConnect struct {
	Src, Dst  netip.Addr
	PortSpace uint8
	Port      uint16 // IP CM service port (4420 NVMe-oF, 3260 iSER, 20049 NFS/RDMA, 5445 SMB Direct)
	ServiceID uint64
	LocalQPN  uint32
	Frame     flows.FrameRef
	// Unclassified says the snap length cut the REQ before its service
	// ID: which service it asked for is not known.
	Unclassified bool
}

// ECNReaction counts, for one direction between two hosts, CE-marked RoCE
// packets from Src to Dst and whether a CNP from Dst back to Src followed
// within Config.ECNWindow.
type ECNReaction struct {
	Src, Dst netip.Addr
	CEMarked uint64
	Acted    uint64 // CE marks followed by a CNP back within the window
	NotActed uint64 // CE marks with no CNP back within the window
	// NoReverse: the capture holds no RoCE packet from Dst to Src (a
	// mirror of one direction), so it cannot show a CNP back: no mark is
	// counted not acted on (NotActed is 0), all are undecided.
	NoReverse     bool
	FirstNotActed *flows.FrameRef
	LastNotActed  *flows.FrameRef
}

// DSCPCheck counts the packets of one flow by class against the expected
// DSCP: data (requests and responses) against Config.DataDSCP, CNPs
// against Config.CNPDSCP.
type DSCPCheck struct {
	FlowID      int
	Data, CNP   uint64
	DataWrong   uint64
	CNPWrong    uint64
	WrongValues map[uint8]uint64 // DSCP value → packets with it, of the wrong ones
	First, Last *flows.FrameRef  // first and last wrong packet
}

// Series is a time series over the capture in equal bins.
type Series struct {
	Start time.Time
	Bin   time.Duration
	Bins  []float64
}

// Timeline holds the series the HTML report charts.
type Timeline struct {
	RoCEBits    Series         // bits per bin, all RoCE
	FlowBits    map[int]Series // bits per bin, by flow ID
	CNPs        Series         // CNPs per bin
	CEMarks     Series         // CE-marked RoCE packets per bin
	Retransmits Series         // retransmitted packets per bin
	PSNGaps     Series         // PSN gaps per bin
}

// SetParallelFiles tells the collector's table which input files were
// taken in parallel (flows.Table.SetParallelFiles).
// The conversations' packets held in two such files count once too.
func (c *Collector) SetParallelFiles(p flows.ParallelFiles) {
	c.Table.SetParallelFiles(p)
	c.c.conv.par = p
}
