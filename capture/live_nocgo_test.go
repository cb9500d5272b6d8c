//go:build !cgo

package capture

import (
	"errors"
	"testing"
)

func TestOpenLiveWithoutCgo(t *testing.T) {
	_, err := OpenLive(LiveConfig{Interface: "eth0"})
	if !errors.Is(err, ErrNoLiveCapture) {
		t.Fatalf("OpenLive without cgo: %v, want ErrNoLiveCapture", err)
	}
	if want := "live capture needs a build with cgo and libpcap: CGO_ENABLED=1 and libpcap-dev"; err.Error() != "capture: eth0: "+want {
		t.Errorf("error %q", err)
	}
}
