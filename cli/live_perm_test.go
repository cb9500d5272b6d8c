//go:build linux && cgo

package cli

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// liveHelperEnv makes the test binary, run as a child, act as rocedump
// with the arguments after "--".
const liveHelperEnv = "ROCEDUMP_LIVE_TEST_HELPER"

// TestLiveHelper is not a test: it is rocedump, for TestLiveNoPermission.
func TestLiveHelper(t *testing.T) {
	if os.Getenv(liveHelperEnv) != "1" {
		t.Skip("helper process for TestLiveNoPermission")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(Execute(args, strings.NewReader(""), os.Stdout, os.Stderr))
}

// TestLiveNoPermission runs rocedump live as an unprivileged user (nobody)
// on a real interface: the error says it needs root or CAP_NET_RAW and how
// to grant it, and the exit code is 2.
func TestLiveNoPermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run rocedump as an unprivileged user")
	}
	// The test binary sits in a directory only root may enter (so does
	// t.TempDir): copy it to one anybody may.
	dir, err := os.MkdirTemp("", "rocedump-live-perm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rocedump.test")
	copyFile(t, os.Args[0], bin)
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "-test.run=^TestLiveHelper$", "--", "live", "-i", "lo", "--duration", "1s")
	cmd.Env = append(os.Environ(), liveHelperEnv+"=1")
	cmd.Dir = dir
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	want := "rocedump live needs root or CAP_NET_RAW: sudo setcap cap_net_raw,cap_net_admin=eip $(which rocedump)"
	if code != ExitUsage || !strings.Contains(stderr.String(), want) {
		t.Errorf("as nobody: exit %d, stderr %q; want exit 2 and %q", code, stderr.String(), want)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
