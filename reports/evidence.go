package reports

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rocedump/rocedump/flows"
	"github.com/rocedump/rocedump/topology"
)

// maxDetails caps the evidence lines of one finding; the rest are summed up
// in a last "and N more" line.
const maxDetails = 10

// evFrame turns a frame reference into evidence, naming its file.
func evFrame(in *Input, ref flows.FrameRef) *Frame {
	f := &Frame{Frame: ref.Frame, Time: ref.Time}
	if ref.File >= 0 && ref.File < len(in.Capture.Files) {
		f.File = in.Capture.Files[ref.File]
	}
	return f
}

// frameSpan widens [first, last] to include ref.
type frameSpan struct {
	first, last flows.FrameRef
	ok          bool
}

func (s *frameSpan) add(ref flows.FrameRef) {
	if !s.ok || frameBefore(ref, s.first) {
		s.first = ref
	}
	if !s.ok || frameBefore(s.last, ref) {
		s.last = ref
	}
	s.ok = true
}

// set writes the span into e.
func (s *frameSpan) set(in *Input, e *Evidence) {
	if s.ok {
		e.First, e.Last = evFrame(in, s.first), evFrame(in, s.last)
	}
}

// frameBefore orders frames by time, then file and number.
func frameBefore(a, b flows.FrameRef) bool {
	if !a.Time.Equal(b.Time) {
		return a.Time.Before(b.Time)
	}
	if a.File != b.File {
		return a.File < b.File
	}
	return a.Frame < b.Frame
}

// nodeOf names the node of ip, or ip itself when the topology does not.
func nodeOf(in *Input, ip netip.Addr) string { return in.Topology.NodeOf(ip) }

// identity is what the topology says about ip (unknown without one).
func identity(in *Input, ip netip.Addr) topology.Identity { return in.Topology.Lookup(ip) }

// endpoint names ip for a detail line: "10.0.0.1 (dgx-01 mlx5_0, rail 0)",
// "10.0.0.9 (unknown)" with a topology, the bare address without one.
func endpoint(in *Input, ip netip.Addr) string {
	if in.Topology == nil {
		return ip.String()
	}
	id := identity(in, ip)
	if !id.Known {
		return ip.String() + " (unknown)"
	}
	s := ip.String() + " ("
	switch {
	case id.Node != "" && id.Interface != "":
		s += id.Node + " " + id.Interface + ", "
	case id.Node != "":
		s += id.Node + ", "
	}
	s += string(id.Role)
	if id.HasRail {
		s += " rail " + strconv.Itoa(id.Rail)
	}
	return s + ")"
}

// capped keeps the first maxDetails lines and sums up the rest.
func capped(lines []string) []string {
	if len(lines) <= maxDetails {
		return lines
	}
	n := len(lines) - maxDetails
	return append(lines[:maxDetails:maxDetails], fmt.Sprintf("and %d more", n))
}

// detailLines gathers detail lines as capped keeps them: it makes a line
// (calls its function) only when it is among the first maxDetails, and
// counts the rest, so that a finding over a hundred thousand flows does not
// format a line for each.
type detailLines struct {
	lines []string
	n     int // lines added
}

func (d *detailLines) add(line func() string) {
	d.n++
	if d.n <= maxDetails {
		d.lines = append(d.lines, line())
	}
}

// capped is capped of every line added.
func (d *detailLines) capped() []string {
	if d.n <= maxDetails {
		return d.lines
	}
	return append(d.lines[:maxDetails:maxDetails], fmt.Sprintf("and %d more", d.n-maxDetails))
}

// plural writes "1 flow", "3 flows".
func plural[N int | uint64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "s") {
		return fmt.Sprint(n) + " " + noun + "es" // "addresses"
	}
	return fmt.Sprint(n) + " " + noun + "s"
}

// Plural writes "1 finding", "3 findings", as the report's own messages
// do: for the lines around a report (the CLI's summary, the renderers).
func Plural[N int | uint64](n N, noun string) string { return plural(n, noun) }

// verb picks the form of a verb that agrees with n things: one for 1,
// many otherwise ("1 address talks", "2 addresses talk").
func verb[N int | uint64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// qpn formats a QP number as rocedump prints it.
func qpn(n uint32) string { return fmt.Sprintf("0x%06x", n) }

// flowName is "10.0.0.1 > 10.0.1.1 qp 0x000201".
func flowName(f *flows.Flow) string {
	return f.Key.Src.String() + " > " + f.Key.Dst.String() + " qp " + qpn(f.Key.DestQP)
}

// percent formats a share: "12.5%", "0.03%".
func percent(part, whole float64) string {
	if whole == 0 {
		return "0%"
	}
	p := 100 * part / whole
	switch {
	case p >= 10:
		return strconv.FormatFloat(p, 'f', 0, 64) + "%"
	case p >= 1:
		return strconv.FormatFloat(p, 'f', 1, 64) + "%"
	}
	return strconv.FormatFloat(p, 'g', 2, 64) + "%"
}

// convPort is protoPort for conversation c, followed by the RPC program
// that rpcbind said listens there, if that is how its port was told:
// "udp/1048 (mountd)".
func convPort(c *Conversation) string {
	if c.RPCProgram != 0 {
		return protoPort(c.Proto, c.ServicePort) + " (" + rpcProgramName(c.RPCProgram) + ")"
	}
	return protoPort(c.Proto, c.ServicePort)
}

// programPort is convPort with the program first: "mountd, udp/1048".
func programPort(c *Conversation) string {
	if c.RPCProgram != 0 {
		return rpcProgramName(c.RPCProgram) + ", " + protoPort(c.Proto, c.ServicePort)
	}
	return protoPort(c.Proto, c.ServicePort)
}

// protoPort names a conversation's service: "tcp/22", "udp/2049", "ip proto 47".
func protoPort(proto uint8, port uint16) string {
	switch proto {
	case protoTCP:
		return "tcp/" + strconv.Itoa(int(port))
	case protoUDP:
		return "udp/" + strconv.Itoa(int(port))
	}
	return "ip proto " + strconv.Itoa(int(proto))
}
