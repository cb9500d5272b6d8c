//go:build !cgo

package cli

import (
	"strings"
	"testing"
)

// TestLiveWithoutCgo: a build without cgo has the command, which says
// what build it needs (exit 2).
func TestLiveWithoutCgo(t *testing.T) {
	_, stderr, code := runCLI(t, "live", "-i", "eth0")
	want := "live capture needs a build with cgo and libpcap: CGO_ENABLED=1 and libpcap-dev"
	if code != ExitUsage || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}
