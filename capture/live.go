//go:build cgo

package capture

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/google/gopacket/pcap"
)

// LiveHandle is a live capture on one interface through libpcap. Next,
// Stats and Close must be called from one goroutine at a time.
type LiveHandle struct {
	name    string
	h       *pcap.Handle
	lt      LinkType
	snapLen int
	n       int // frames delivered
	// skipBefore (Unix nanoseconds, 0 once passed) is when the filter
	// took effect: frames stamped before it are dropped, up to the first
	// frame stamped at or after it. To install a filter, libpcap first
	// puts one on the socket that rejects every frame, then the real one:
	// frames that come in between are lost, uncounted, while those that
	// came before the filter were kept (filtered in user space). Without
	// the skip, a capture on a busy link began with a few frames, then a
	// hole (PSN gaps no fabric made), then the rest.
	skipBefore int64
}

// OpenLive opens a live capture. Its errors are *LiveError values: a
// missing interface wraps ErrNoSuchInterface and lists the interfaces
// there are, a process without the right to capture wraps
// ErrLivePermission, a filter libpcap rejects wraps ErrLiveFilter.
func OpenLive(cfg LiveConfig) (*LiveHandle, error) {
	if have, ok := liveInterfaces(); ok && !slices.Contains(have, cfg.Interface) {
		return nil, &LiveError{Interface: cfg.Interface, Err: ErrNoSuchInterface, Available: have}
	}
	in, err := pcap.NewInactiveHandle(cfg.Interface)
	if err != nil {
		return nil, liveOpenError(cfg.Interface, err)
	}
	defer in.CleanUp()
	snap := cfg.SnapLen
	if snap <= 0 || snap > defaultMaxCapLen {
		snap = defaultMaxCapLen
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultLiveTimeout
	}
	buf := cfg.BufferSize
	if buf <= 0 {
		buf = DefaultLiveBufferSize
	}
	for _, err := range []error{
		in.SetSnapLen(snap),
		in.SetPromisc(cfg.Promisc),
		in.SetTimeout(timeout),
		in.SetBufferSize(buf),
		in.SetImmediateMode(cfg.Immediate),
	} {
		if err != nil {
			return nil, liveOpenError(cfg.Interface, err)
		}
	}
	h, err := in.Activate()
	if err != nil {
		return nil, liveOpenError(cfg.Interface, err)
	}
	lt := linkTypeOfDLT(int(h.LinkType()))
	var skipBefore int64
	if filter := liveFilterFor(cfg.Filter, lt); filter != "" {
		if err := h.SetBPFFilter(filter); err != nil {
			h.Close()
			return nil, &LiveError{Interface: cfg.Interface, Err: ErrLiveFilter, Reason: err.Error()}
		}
		skipBefore = time.Now().UnixNano()
	}
	return &LiveHandle{
		name:       cfg.Interface,
		h:          h,
		lt:         lt,
		snapLen:    h.SnapLen(),
		skipBefore: skipBefore,
	}, nil
}

// liveOpenError classifies an error of libpcap's pcap_create or
// pcap_activate. gopacket hides libpcap's status codes behind messages,
// so the classification goes by them: "Permission Denied" is
// PCAP_ERROR_PERM_DENIED, "No Such Device" PCAP_ERROR_NO_SUCH_DEVICE.
func liveOpenError(iface string, err error) error {
	msg := err.Error()
	low := strings.ToLower(msg)
	e := &LiveError{Interface: iface, Reason: msg}
	switch {
	case strings.Contains(low, "permission") || strings.Contains(low, "not permitted"):
		e.Err = ErrLivePermission
	case strings.Contains(low, "no such device"):
		e.Err = ErrNoSuchInterface
		e.Available, _ = liveInterfaces()
	case msg == "Interface Not Up":
		e.Reason = "the interface is down (ip link set " + iface + " up)"
	}
	return e
}

// liveInterfaces lists the interfaces a live capture can open: those of
// the system and libpcap's pseudo-devices such as "any". ok is false when
// neither list could be read.
func liveInterfaces() (names []string, ok bool) {
	if ifs, err := net.Interfaces(); err == nil {
		ok = true
		for _, i := range ifs {
			names = append(names, i.Name)
		}
	}
	if devs, err := pcap.FindAllDevs(); err == nil {
		ok = true
		for _, d := range devs {
			if !slices.Contains(names, d.Name) {
				names = append(names, d.Name)
			}
		}
	}
	return names, ok
}

// linkTypeOfDLT maps the DLT_ value libpcap reports for a live interface
// to the LINKTYPE_ value files carry; they differ only for a few old
// types (libpcap's dlt_to_linktype).
func linkTypeOfDLT(dlt int) LinkType {
	switch dlt {
	case 11: // DLT_ATM_RFC1483
		return 100
	case 12, 14: // DLT_RAW (14 on OpenBSD)
		return LinkTypeRaw
	}
	return LinkType(dlt)
}

// Next reads the next frame into rec. rec.Data points into libpcap's
// buffer and is valid only until the next call. It returns ErrLiveTimeout
// when no frame came within the buffer timeout, io.EOF once the handle is
// closed, and another error when the capture failed (the interface went
// away).
func (l *LiveHandle) Next(rec *Record) error {
	for {
		data, ci, err := l.h.ZeroCopyReadPacketData()
		switch {
		case err == nil:
		case err == pcap.NextErrorTimeoutExpired:
			return ErrLiveTimeout
		case errors.Is(err, io.EOF):
			return io.EOF
		default:
			return fmt.Errorf("capture: %s: %v (%v)", l.name, err, l.h.Error())
		}
		ts := ci.Timestamp.UTC()
		ns := unixNanos(ts)
		if l.skipBefore != 0 {
			if beforeFilter(ns, l.skipBefore) {
				continue // came before the filter took effect (see skipBefore)
			}
			l.skipBefore = 0 // later frames are kept even if the clock steps back
		}
		l.n++
		rec.set(ts, ns, len(data), max(ci.Length, len(data)), l.lt, 0, l.n, data)
		return nil
	}
}

// filterLag bounds how long before the filter took effect a frame that
// beforeFilter drops may be stamped: the frames queued before it came
// within the few milliseconds OpenLive takes. A frame stamped earlier
// than that comes from a clock other than the one time.Now reads (an
// adapter's, or one stepped since): it is kept, and so is every later
// one, rather than dropping frames for as long as the clocks differ.
const filterLag = time.Second

// beforeFilter says whether a frame stamped at ns (Unix nanoseconds) came
// in before the filter took effect at filterAt (LiveHandle.skipBefore).
func beforeFilter(ns, filterAt int64) bool {
	return ns < filterAt && filterAt-ns <= int64(filterLag)
}

// Stats returns the capture's counters since it was opened.
func (l *LiveHandle) Stats() (LiveStats, error) {
	s, err := l.h.Stats()
	if err != nil {
		return LiveStats{}, fmt.Errorf("capture: %s: %w", l.name, err)
	}
	return LiveStats{
		Received:       uint64(max(s.PacketsReceived, 0)),
		KernelDrops:    uint64(max(s.PacketsDropped, 0)),
		InterfaceDrops: uint64(max(s.PacketsIfDropped, 0)),
		Down:           linkDown(l.name),
	}, nil
}

// linkDown says whether interface name is down: not administratively up,
// or up with no link (IFF_RUNNING clear: no carrier, a veth whose peer is
// down). libpcap goes on reading an interface taken down and brought up
// again without a word, so the capture asks. A name the system does not
// know (the "any" pseudo-device) is never down.
func linkDown(name string) bool {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return false
	}
	return ifi.Flags&net.FlagUp == 0 || ifi.Flags&net.FlagRunning == 0
}

// LinkType is the link type of the frames, as files record it.
func (l *LiveHandle) LinkType() LinkType { return l.lt }

// SnapLen is the snap length libpcap applies.
func (l *LiveHandle) SnapLen() int { return l.snapLen }

// Close ends the capture. Frames still in the kernel buffer are lost:
// read until ErrLiveTimeout first.
func (l *LiveHandle) Close() error {
	l.h.Close()
	return nil
}
