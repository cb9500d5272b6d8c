//go:build !cgo

package capture

import "io"

// LiveHandle is a live capture. This build has no libpcap (it was built
// without cgo), so OpenLive always fails with ErrNoLiveCapture.
type LiveHandle struct{}

// OpenLive fails: live capture needs a build with cgo and libpcap.
func OpenLive(cfg LiveConfig) (*LiveHandle, error) {
	return nil, &LiveError{Interface: cfg.Interface, Err: ErrNoLiveCapture}
}

// Next returns io.EOF.
func (l *LiveHandle) Next(rec *Record) error { return io.EOF }

// Stats returns zero counters.
func (l *LiveHandle) Stats() (LiveStats, error) { return LiveStats{}, ErrNoLiveCapture }

// LinkType returns Ethernet.
func (l *LiveHandle) LinkType() LinkType { return LinkTypeEthernet }

// SnapLen returns 0.
func (l *LiveHandle) SnapLen() int { return 0 }

// Close does nothing.
func (l *LiveHandle) Close() error { return nil }
