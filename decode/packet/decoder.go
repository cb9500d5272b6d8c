package packet

import "github.com/rocedump/rocedump/capture"

// Bounds on the walk, so that crafted frames cannot make it loop or recurse
// without end.
const (
	MaxTunnels  = 8 // tunnels (GRE, VXLAN, IP-in-IP) entered per frame
	maxVLANTags = 8 // VLAN tags per Ethernet frame
	maxIPv6Ext  = 8 // IPv6 extension headers per datagram
)

// Decoder decodes frames into Packets. Its zero value is ready to use. It
// holds per-walk scratch state, so one Decoder must not be used by two
// goroutines at once; use one per goroutine.
type Decoder struct {
	w walker
	// payload is the walk's last TransportPayload.
	payload []byte
}

// TransportPayload is the payload, as far as captured, of the TCP segment
// or UDP datagram (not RoCE, not a tunnel) of the last frame Decode
// walked, for a frame Decode left KindOther; nil for other frames and for
// fragments. It points into that frame's data, and holds until the next
// Decode. A KindRoCE frame may leave it as the frame before had it: the
// fast path, which decodes RoCE only, does not touch it.
func (d *Decoder) TransportPayload() []byte { return d.payload }

// Decode fills p from one captured frame of link type lt: data is the
// captured bytes and origLen the frame's length on the wire. Decode never
// panics and allocates nothing.
//
// Every field of p is overwritten, provided p holds the zero Packet or what
// an earlier Decode left in it (or a copy of that), whichever Decoder and
// frame that was: p then equals the Packet the frame decodes to from zero.
// To spare clearing large parts that most frames leave zero, Decode clears
// CM only when HasMAD is set or CM.Contents is not nil, PFC only when HasPFC
// is set, the Encap entries only up to the old NEncap, and the BTH's
// extended headers only where BTH.Ext has their bit; a Packet changed by
// hand there must be reset to the zero Packet before it is reused.
//
// It returns a non-nil error only for a link type it cannot decode: a
// *LinkTypeError wrapping ErrUnknownLinkType. Everything else (not RoCE,
// malformed, truncated) is recorded in p.
//
// Ethernet frames of the layouts a mirror of a RoCE fabric captures (see
// fast.go) are decoded at fixed offsets; the others are walked header by
// header. Both give the same Packet.
func (d *Decoder) Decode(lt capture.LinkType, data []byte, origLen int, p *Packet) error {
	if lt == capture.LinkTypeEthernet {
		// decodeFast, with one call fewer for the commonest layout.
		switch {
		case isPlainIPv4(data):
			if decodePlainIPv4(data, origLen, p) {
				return nil
			}
		case isERSPAN2PlainIPv4(data):
			if decodeERSPAN2PlainIPv4(data, origLen, p) {
				return nil
			}
		default:
			if decodeFastLayers(data, origLen, p) {
				return nil
			}
		}
	}
	return d.decodeGeneral(lt, data, origLen, p)
}

// DecodeRecord is Decode of a capture record's frame: link type
// rec.LinkType, bytes rec.Data, length on the wire rec.OrigLen. With the
// record by pointer it keeps three values live across the fast path's call,
// where Decode keeps seven for the walk should the fast path decline: ~10
// instructions a frame fewer (BENCHMARKS.md, session 22). Its fast paths
// are Decode's, in the same order.
func (d *Decoder) DecodeRecord(rec *capture.Record, p *Packet) error {
	if rec.LinkType == capture.LinkTypeEthernet {
		data := rec.Data
		switch {
		case isPlainIPv4(data):
			if decodePlainIPv4(data, rec.OrigLen, p) {
				return nil
			}
		case isERSPAN2PlainIPv4(data):
			if decodeERSPAN2PlainIPv4(data, rec.OrigLen, p) {
				return nil
			}
		default:
			if decodeFastLayers(data, rec.OrigLen, p) {
				return nil
			}
		}
	}
	return d.decodeGeneral(rec.LinkType, rec.Data, rec.OrigLen, p)
}

// decodeGeneral is Decode by the walk alone, for every frame.
func (d *Decoder) decodeGeneral(lt capture.LinkType, data []byte, origLen int, p *Packet) error {
	*p = Packet{CapLen: len(data), OrigLen: origLen}
	if !Supported(lt) {
		return &LinkTypeError{LinkType: lt}
	}
	p.Truncated = origLen > len(data)
	d.w = walker{p: p, cut: p.Truncated, ethPos: -1, tunnelMark: -1}
	d.w.link(lt, data)
	d.w.finish()
	d.payload = d.w.payload
	d.w = walker{}
	return nil
}

// walker is the state of one walk down a frame.
type walker struct {
	p *Packet

	// cut says the bytes being decoded end before the end their enclosing
	// header (or the wire) says they have: a short header there is
	// truncation, not malformation.
	cut bool

	tunnels int // tunnels entered so far

	// ethPos is the Encap index where the current frame's Ethernet header
	// goes if the frame turns out to carry a tunnel, or -1 if the current
	// frame has no Ethernet header.
	ethPos int

	// ethSrc is the source address of the current frame's Ethernet
	// header, nil when it has none (a MAC Control frame names its sender
	// by it: PFCFrame.Src).
	ethSrc []byte

	// tunnelMark is the number of Encap layers before the tunnel being
	// entered, or -1. The tunnel's layers are kept only once the walk
	// reaches its inner frame; if it stops before, they are dropped.
	tunnelMark int

	// ip is the current IP datagram from its first header byte, trimmed to
	// its total length; ipWhole says all of it was captured.
	ip      []byte
	ipWhole bool

	// payload is the TCP or UDP payload of the frame, if it carries
	// neither RoCE nor a tunnel (Decoder.TransportPayload).
	payload []byte
}

// malformed records an invalid header and stops the walk there. A frame
// already known to be RoCE becomes KindMalformed.
func (w *walker) malformed(r Reason) {
	w.p.Malformed = r
	if w.p.Kind == KindRoCE {
		w.p.Kind = KindMalformed
	}
}

// short records a header cut short: truncation if the bytes were cut, else
// the malformation r.
func (w *walker) short(r Reason) {
	if w.cut {
		w.p.Truncated = true
		return
	}
	w.malformed(r)
}

// trim limits b to the n bytes a length field declares, and records whether
// fewer were captured.
func (w *walker) trim(b []byte, n int) []byte {
	if n <= len(b) {
		w.cut = false
		return b[:n]
	}
	w.cut = true
	w.p.Truncated = true
	return b
}

// enterTunnel records that the current frame carries a tunnel: its IP
// header, of kind ipKind, goes into Encap, followed by the tunnel's own
// layers, all pending until innerFrame. It reports false, recording
// ReasonTooDeep, past MaxTunnels.
func (w *walker) enterTunnel(ipKind EncapKind) bool {
	if w.tunnels >= MaxTunnels {
		w.malformed(ReasonTooDeep)
		return false
	}
	w.tunnels++
	w.tunnelMark = w.p.NEncap
	w.p.pushEncap(ipKind, 0)
	return true
}

// ipEncapKind is the Encap kind of the current IP header.
func (w *walker) ipEncapKind() EncapKind {
	if w.p.IPVersion == 6 {
		return EncapIPv6
	}
	return EncapIPv4
}

// innerFrame starts the walk of a tunnel's inner frame: the tunnel's Encap
// layers are kept, with the carrying frame's Ethernet header (if it had one)
// before its VLAN tags, and the fields that describe a frame are cleared.
// ethernet sets ethPos again if the inner frame has an Ethernet header.
func (w *walker) innerFrame() {
	if w.ethPos >= 0 {
		w.p.insertEncap(w.ethPos, EncapEthernet, 0)
	}
	w.ethPos, w.tunnelMark = -1, -1
	w.p.clearFrame()
	w.ip, w.ipWhole = nil, false
}

// finish drops the layers of a tunnel whose inner frame was not reached, so
// that Encap always lists only what lies outside the frame the other fields
// describe.
func (w *walker) finish() {
	p := w.p
	if w.tunnelMark < 0 {
		return
	}
	for i := w.tunnelMark; i < p.NEncap; i++ {
		p.Encap[i] = EncapLayer{}
	}
	p.NEncap = w.tunnelMark
}
