//go:build linux && cgo

package cli

import (
	"encoding/binary"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// The tests in this file capture for real, with libpcap, on a veth pair
// in a network namespace of their own: frames of generated captures are
// sent into one end with an AF_PACKET socket and `rocedump live` captures
// on the other. They need root (CI runs as root) and the ip command, and
// skip, saying why, where network namespaces cannot be made.

// Ends of the test veth pair, inside the test's namespace.
const (
	netnsReplayIf  = "rdrep"
	netnsCaptureIf = "rdcap"
)

// setnsTrap is the setns(2) system call number; package syscall names it
// everywhere but on amd64 and 386.
var setnsTrap = map[string]uintptr{
	"386": 346, "amd64": 308, "arm": 375, "arm64": 268, "loong64": 268, "riscv64": 268,
	"mips": 4344, "mipsle": 4344, "mips64": 5303, "mips64le": 5303, "ppc64": 350, "ppc64le": 350, "s390x": 339,
}

// netnsCount numbers the namespaces of one test process.
var netnsCount atomic.Int32

// setupNetns makes a network namespace holding an up veth pair with IPv6
// off (so the kernel sends nothing of its own on it), and removes it when
// the test ends. It skips the test where namespaces cannot be made.
func setupNetns(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture test skipped: creating a network namespace and a veth pair needs root (CI runs as root)")
	}
	ip, err := exec.LookPath("ip")
	if err != nil {
		t.Skip("live capture test skipped: no ip command (install iproute2)")
	}
	if setnsTrap[runtime.GOARCH] == 0 {
		t.Skipf("live capture test skipped: setns system call number unknown on %s", runtime.GOARCH)
	}
	name := fmt.Sprintf("rocedump-test-%d-%d", os.Getpid(), netnsCount.Add(1))
	if out, err := exec.Command(ip, "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("live capture test skipped: ip netns add failed (no network namespaces here): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(ip, "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	// IPv6 off before the links exist: no router solicitations, no MLD.
	noIPv6 := func(ifs ...string) error {
		for _, i := range ifs {
			p := "/proc/sys/net/ipv6/conf/" + i + "/disable_ipv6"
			if err := os.WriteFile(p, []byte("1"), 0); err != nil && !os.IsNotExist(err) {
				return err
			}
		}
		return nil
	}
	if err := inNetns(name, func() error { return noIPv6("all", "default") }); err != nil {
		t.Fatalf("disabling IPv6 in %s: %v", name, err)
	}
	for _, args := range [][]string{
		{"link", "add", netnsReplayIf, "mtu", "9000", "type", "veth", "peer", "name", netnsCaptureIf, "mtu", "9000"},
		{"link", "set", netnsReplayIf, "up"},
		{"link", "set", netnsCaptureIf, "up"},
	} {
		if out, err := exec.Command(ip, append([]string{"-n", name}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("ip -n %s %s: %v: %s", name, strings.Join(args, " "), err, out)
		}
	}
	if err := inNetns(name, func() error { return noIPv6(netnsReplayIf, netnsCaptureIf) }); err != nil {
		t.Fatalf("disabling IPv6 on the veth pair: %v", err)
	}
	return name
}

// inNetns runs fn on an OS thread that has entered network namespace ns,
// and waits for it. Sockets fn opens (a libpcap handle, an AF_PACKET
// socket) stay in ns when used from other threads afterwards. The thread
// goes back to its namespace after fn; if it cannot, it is not reused.
func inNetns(ns string, fn func() error) error { return <-goInNetns(ns, fn) }

// goInNetns is inNetns without the wait: the result comes on the channel.
func goInNetns(ns string, fn func() error) <-chan error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer orig.Close()
		target, err := os.Open(filepath.Join("/run/netns", ns))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer target.Close()
		if err := setns(target); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("setns %s: %w", ns, err)
			return
		}
		err = fn()
		if setns(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return errc
}

func setns(f *os.File) error {
	_, _, errno := syscall.RawSyscall(setnsTrap[runtime.GOARCH], f.Fd(), syscall.CLONE_NEWNET, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// replayer sends frames out of one interface with an AF_PACKET socket.
type replayer struct{ fd int }

func newReplayer(t *testing.T, ns, iface string) *replayer {
	t.Helper()
	r := &replayer{fd: -1}
	err := inNetns(ns, func() error {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		// Protocol 0: the socket sends and never receives.
		fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		if err := syscall.Bind(fd, &syscall.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
			syscall.Close(fd)
			return err
		}
		r.fd = fd
		return nil
	})
	if err != nil {
		t.Fatalf("AF_PACKET socket on %s: %v", iface, err)
	}
	t.Cleanup(func() { syscall.Close(r.fd) })
	return r
}

// send writes the frames in order, pausing now and then so that the
// receiving side's backlog never overflows.
func (r *replayer) send(frames []liveFrame) error {
	for i, f := range frames {
		if _, err := syscall.Write(r.fd, f.data); err != nil {
			return fmt.Errorf("frame %d (%d bytes): %w", i+1, len(f.data), err)
		}
		if i%32 == 31 {
			time.Sleep(200 * time.Microsecond)
		}
	}
	return nil
}

// vethRxDropped reads the capture end's receive drop counter, for
// messages when counts do not add up.
func vethRxDropped(ns string) string {
	out, _ := exec.Command("ip", "-n", ns, "-s", "link", "show", netnsCaptureIf).CombinedOutput()
	return string(out)
}

// TestLiveNetnsReplay replays generated captures over a veth pair and
// checks that the live capture wrote exactly the frames sent (those the
// default filter keeps, cut to the snap length), that its report equals
// `rocedump report` on the files it wrote, and, where every frame was
// captured whole, that flows and findings equal those of the original
// capture (up to timing, which the replay changes).
func TestLiveNetnsReplay(t *testing.T) {
	ns := setupNetns(t)
	rep := newReplayer(t, ns, netnsReplayIf)
	tests := []struct {
		name    string
		capture string
		snap    int
		sizeMB  float64
	}{
		{"clean allreduce, whole frames", "clean_allreduce.pcap", 0, 0},
		{"retransmissions, snap length 128", "retransmissions.pcap", 128, 0},
		{"congestion, rotated", "congestion.pcap", 0, 0.02},
		{"vlan-tagged GRE and VXLAN mirror", "gre_teb.pcapng", 0, 0},
		{"ssh and bootstrap through the default filter", "report_ssh_bootstrap.pcap", 0, 0},
		{"storage ports", "report_storage.pcap", 256, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sent, _ := loadLiveFrames(t, genCapture(tt.capture), "")
			kept, _ := loadLiveFrames(t, genCapture(tt.capture), capture.DefaultLiveFilter())
			dir := t.TempDir()
			o, _, errOut := liveTestOptions(dir)
			o.Interface, o.Promisc, o.SnapLen = netnsCaptureIf, true, tt.snap
			o.Count, o.Duration, o.FileSizeMB = len(kept), 10*time.Second, tt.sizeMB
			ready := make(chan struct{})
			o.started = func() { close(ready) }
			done := goInNetns(ns, func() error { return liveRun(o) })
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("live: %v\n%s", err, errOut)
			}
			if err := rep.send(sent); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("live: %v\n%s", err, errOut)
			}
			files := liveWrittenFiles(t, errOut.String(), o.Write)
			got := readFrames(t, files...)
			if len(got) != len(kept) {
				t.Fatalf("captured %d frames, want the %d of %d sent that the filter keeps (the -c limit was not reached: lost frames?)\n%s\n%s",
					len(got), len(kept), len(sent), errOut, vethRxDropped(ns))
			}
			sameFrames(t, kept, got, tt.snap)
			if tt.sizeMB > 0 && len(files) < 2 {
				t.Errorf("-C %v wrote %d file(s), want several", tt.sizeMB, len(files))
			}
			live, err := os.ReadFile(o.Report.Output)
			if err != nil {
				t.Fatal(err)
			}
			liveRep := reportJSON(t, live)
			sameReport(t, tt.name, offlineReport(t, files...), liveRep)
			if tt.snap == 0 && len(kept) == len(sent) {
				sameUpToTiming(t, offlineReport(t, genCapture(tt.capture)), liveRep)
			}
		})
	}
}

// TestLiveNetnsInterrupt sends SIGINT to the process while packets flow:
// the capture stops promptly, and its report and -w file are complete and
// agree.
func TestLiveNetnsInterrupt(t *testing.T) {
	ns := setupNetns(t)
	rep := newReplayer(t, ns, netnsReplayIf)
	frames, _ := loadLiveFrames(t, genCapture("congestion.pcap"), "")
	dir := t.TempDir()
	o, _, errOut := liveTestOptions(dir)
	ready := make(chan struct{})
	var opts *LiveOptions
	cmd := NewCmdLive(o.IO, func(lo *LiveOptions) error {
		opts = lo
		lo.started = func() { close(ready) }
		return liveRun(lo)
	})
	cmd.SetArgs([]string{"-i", netnsCaptureIf, "-w", o.Write, "--format", "json", "-o", o.Report.Output,
		"--fail-on", "never", "--interval", "50ms", "--duration", "20s"})
	done := goInNetns(ns, cmd.Execute)
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	stop := make(chan struct{})
	replayed := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				replayed <- nil
				return
			default:
			}
			if err := rep.send(frames); err != nil {
				replayed <- err
				return
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	sent := time.Now()
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the capture did not stop within 10 s of SIGINT")
	}
	took := time.Since(sent)
	close(stop)
	if rerr := <-replayed; rerr != nil {
		t.Error(rerr)
	}
	if err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	if took > 3*time.Second {
		t.Errorf("the capture took %v to stop after SIGINT", took)
	}
	if opts.Filter != capture.DefaultLiveFilter() || opts.SnapLen != capture.DefaultLiveSnapLen {
		t.Errorf("the run did not use the default filter and snap length")
	}
	checkCancelled(t, o, len(frames))
}

// TestLiveNetnsNoSuchInterface: a missing interface lists the ones there
// are (here, in the test's namespace: lo and the veth pair).
func TestLiveNetnsNoSuchInterface(t *testing.T) {
	ns := setupNetns(t)
	o, _, _ := liveTestOptions(t.TempDir())
	o.Interface = "nosuch0"
	err := inNetns(ns, func() error { return liveRun(o) })
	if exitCode(err) != ExitUsage {
		t.Fatalf("exit %d (%v), want 2", exitCode(err), err)
	}
	for _, want := range []string{`no interface "nosuch0"`, netnsCaptureIf, netnsReplayIf} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// sameUpToTiming compares a live report with the offline report of the
// capture that was replayed: the replay keeps the frames but not their
// times, so only what does not depend on time is compared: packet counts,
// every flow counter, and which findings there are (frame numbers too
// are left out: -C numbers frames within each file).
func sameUpToTiming(t *testing.T, want, got map[string]any) {
	t.Helper()
	sameReport(t, "replayed capture (timing aside)", timeless(want), timeless(got))
}

// timeless keeps the parts of a JSON report that do not depend on when
// the frames came.
func timeless(rep map[string]any) map[string]any {
	out := map[string]any{}
	c := rep["capture"].(map[string]any)
	out["capture"] = map[string]any{
		"packets": c["packets"], "roce_packets": c["roce_packets"], "malformed": c["malformed"],
		"truncated": c["truncated"], "icrc_bad": c["icrc_bad"],
	}
	var flows []any
	for _, f := range rep["flows"].([]any) {
		m := map[string]any{}
		for k, v := range f.(map[string]any) {
			switch k {
			case "first", "last", "duration_s", "mean_bps", "peak_bps", // times
				"first_frame", "last_frame", // numbers within a rotated file
				"first_file", "last_file": // and its name
			case "cm":
				if cm, ok := v.(map[string]any); ok {
					c := maps.Clone(cm)
					delete(c, "file")
					m[k] = c
				} else {
					m[k] = v
				}
			default:
				m[k] = v
			}
		}
		flows = append(flows, m)
	}
	out["flows"] = flows
	var findings []any
	for _, f := range rep["findings"].([]any) {
		m := f.(map[string]any)
		switch m["kind"] {
		case "congestion", "pfc", "ecn_not_acted":
			// Their severity (a CNP rate, the share of the capture paused)
			// and ecn_not_acted's flows (a CNP within the ECN window) go
			// with the replay's pace, which a loaded host stretches.
			findings = append(findings, map[string]any{"kind": m["kind"]})
		default:
			findings = append(findings, map[string]any{"kind": m["kind"], "severity": m["severity"], "flows": m["flows"]})
		}
	}
	out["findings"] = findings
	return out
}

// TestLiveNetnsNoHoleAtStart sends numbered frames before and while the
// capture opens: those it takes are consecutive from the first on. To set
// a filter, libpcap puts one on the socket that rejects every frame, then
// the real one: frames kept from before (filtered in user space), then a
// hole of frames lost in between, uncounted, made a PSN gap no fabric
// made at the start of every capture of a busy link.
func TestLiveNetnsNoHoleAtStart(t *testing.T) {
	ns := setupNetns(t)
	rep := newReplayer(t, ns, netnsReplayIf)
	// Ethernet, IPv4, UDP to 4791 (the default filter keeps it), then the
	// frame's number.
	frame := func(seq uint32) liveFrame {
		b := make([]byte, 14+20+8+16)
		copy(b, []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00})
		ip := b[14:]
		ip[0], ip[8], ip[9] = 0x45, 64, 17
		binary.BigEndian.PutUint16(ip[2:], uint16(len(b)-14))
		copy(ip[12:], []byte{10, 0, 0, 1, 10, 0, 0, 2})
		udp := ip[20:]
		binary.BigEndian.PutUint16(udp, 49152)
		binary.BigEndian.PutUint16(udp[2:], 4791)
		binary.BigEndian.PutUint16(udp[4:], uint16(len(udp)))
		binary.BigEndian.PutUint32(udp[8+12:], seq)
		return liveFrame{data: b, orig: len(b)}
	}
	const want = 3000
	stop := make(chan struct{})
	sent := make(chan error, 1)
	go func() {
		batch := make([]liveFrame, 32)
		for seq := uint32(0); ; {
			select {
			case <-stop:
				sent <- nil
				return
			default:
			}
			for i := range batch {
				batch[i] = frame(seq)
				seq++
			}
			if err := rep.send(batch); err != nil {
				sent <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-sent; err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(50 * time.Millisecond) // frames flow before the capture opens
	o, _, errOut := liveTestOptions(t.TempDir())
	o.Interface, o.Promisc, o.SnapLen, o.Count = netnsCaptureIf, true, 0, want
	if err := inNetns(ns, func() error { return liveRun(o) }); err != nil {
		t.Fatalf("live: %v\n%s", err, errOut)
	}
	got := readFrames(t, o.Write)
	if len(got) != want {
		t.Fatalf("captured %d frames, want %d\n%s", len(got), want, errOut)
	}
	first := binary.BigEndian.Uint32(got[0].Data[14+20+8+12:])
	for i, r := range got {
		if seq := binary.BigEndian.Uint32(r.Data[14+20+8+12:]); seq != first+uint32(i) {
			t.Fatalf("frame %d is number %d, want %d: %d frames lost after the first %d\n%s",
				i+1, seq, first+uint32(i), seq-first-uint32(i), i, errOut)
		}
	}
}

// TestLiveNetnsLinkDown: the capture's counters say when its interface has
// no link (here: the other end of the veth pair taken down) and when it
// is back, which libpcap alone does not.
func TestLiveNetnsLinkDown(t *testing.T) {
	ns := setupNetns(t)
	var h *capture.LiveHandle
	if err := inNetns(ns, func() (err error) {
		h, err = capture.OpenLive(capture.LiveConfig{Interface: netnsCaptureIf, SnapLen: 128})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	down := func() bool {
		t.Helper()
		var s capture.LiveStats
		if err := inNetns(ns, func() (err error) { s, err = h.Stats(); return err }); err != nil {
			t.Fatal(err)
		}
		return s.Down
	}
	setPeer := func(state string) {
		t.Helper()
		if out, err := exec.Command("ip", "-n", ns, "link", "set", netnsReplayIf, state).CombinedOutput(); err != nil {
			t.Fatalf("ip link set %s %s: %v: %s", netnsReplayIf, state, err, out)
		}
	}
	// The kernel applies a carrier change a moment later (linkwatch
	// batches them, up to a second).
	becomes := func(want bool) bool {
		t.Helper()
		for range 50 {
			if down() == want {
				return true
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false
	}
	if down() {
		t.Fatal("Down with the link up")
	}
	setPeer("down")
	if !becomes(true) {
		t.Error("not Down 5 s after the peer of the veth pair went down (no carrier)")
	}
	setPeer("up")
	if !becomes(false) {
		t.Error("still Down 5 s after the peer came up again")
	}
}
