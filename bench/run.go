package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// Options say what to run.
type Options struct {
	Fabric  Fabric
	Packets int // frames of the main captures
	// SmallPackets is the shorter prefix of the same traffic for the memory
	// check (peak memory must follow flows, not packets) and the allocation
	// count; 0: Packets/10, but at least 400,000 (every flow of the default
	// fabric) when Packets allows.
	SmallPackets int
	// TsharkPackets is how many packets of each main capture tshark
	// reads (tshark -c; it is ~100× slower than rocedump); 0 or at least
	// Packets: the whole capture.
	TsharkPackets int
	// FlowsFabric and FlowsPackets make the many-flows capture of the
	// memory check (Fabric.Flows() flows); FlowsPackets 0 skips it.
	FlowsFabric  Fabric
	FlowsPackets int

	Dir      string // where the captures go (required)
	Rocedump string // the rocedump binary (required)
	Tshark   string // tshark, or "" to skip it
	Runner   *Runner
	// InProcess runs a rocedump command line in this process, for the
	// allocation count (cli.Execute); nil skips it.
	InProcess func(args []string, out, errOut io.Writer) int
	// Log gets progress lines.
	Log io.Writer
	// WaitLoad, when > 0, waits (at most WaitMax) before measuring until
	// the one-minute load average is below it.
	WaitLoad float64
	WaitMax  time.Duration
}

// twoCorePairs is how many one-core and two-core runs of report the
// speed-up on two cores is the median of. With 3, a busy spell of the
// host over two of the pairs set the median (session 6: 1.40x, in a run
// whose two disturbed two-core runs took 1.2-1.3x the CPU time of the
// third); with 5 it takes three of them.
const twoCorePairs = 5

// HostCheck is one command run on one core alone and then beside a copy
// of itself on the other core.
type HostCheck struct {
	When          string // "before", "after"
	Alone, Beside Run
}

// Slowdown is Beside's CPU time over Alone's.
func (h HostCheck) Slowdown() float64 {
	if h.Alone.CPU <= 0 {
		return 0
	}
	return h.Beside.CPU.Seconds() / h.Alone.CPU.Seconds()
}

// Results is everything measured, for Markdown.
type Results struct {
	Machine     Machine
	Started     time.Time
	Fabric      Fabric
	Main        Capture // plain mirror capture
	ERSPAN      Capture
	Small       Capture // prefix of Main for the memory check
	Double      Capture // prefix twice as long as Small, for marginal allocations
	TsharkPlain Capture // copies of the packets tshark reads of Main and ERSPAN, for rocedump
	TsharkERSP  Capture
	Flows       *Capture // the many-flows capture, when made
	FlowsFabric Fabric

	LoadBefore, LoadAfter string
	GenTime               time.Duration

	Plain  []Run // read, flows, report on Main, one core
	Erspan []Run // the same on ERSPAN
	// TwoCores are report on Main on one core and on two, run in turn
	// (twoCorePairs pairs), so that the machine's drift hits both alike.
	TwoCores [][2]Run
	// HostChecks are report on Small pinned to CPU 0, alone and beside a
	// copy on CPU 1 (Runner.MeasureBeside), before and after TwoCores:
	// how much the two CPUs slowed each other then.
	HostChecks []HostCheck
	Tshark     []Run // tshark on Main and ERSPAN (their first TsharkPlain.Packets)
	PrefixRuns []Run // rocedump report on TsharkPlain and TsharkERSP: the packets tshark read
	MemSmall   Run   // report on Small
	MemFlows   *Run  // report on Flows
	// Allocs are in-process allocation counts of each command on Small and
	// on Double: the difference is the steady-state cost per packet, free
	// of start-up and of the output (the flows are the same).
	Allocs, AllocsDouble []Allocs
}

// Command is a measured rocedump command line.
type Command struct {
	Name string
	Args []string // after the program, before the capture
}

// Commands are the measured rocedump command lines, report last.
func Commands() []Command {
	return []Command{
		{"rocedump read --format json", []string{"read", "--format", "json"}},
		{"rocedump flows", []string{"flows"}},
		{"rocedump report --format json", []string{"report", "--format", "json", "--fail-on", "never"}},
	}
}

// prefixes returns the packets of the shorter captures Measure makes of
// the main one: the memory check's (small), twice that for the marginal
// allocations (double), and what tshark reads (tsh; o.Packets when it
// reads the whole capture, which then has no copy).
func (o Options) prefixes() (small, double, tsh int) {
	small = o.SmallPackets
	if small == 0 {
		small = o.Packets / 10
		if small < 400_000 {
			small = min(400_000, o.Packets/2)
		}
	}
	double = min(2*small, o.Packets)
	tsh = o.TsharkPackets
	if tsh <= 0 || tsh > o.Packets {
		tsh = o.Packets
	}
	return small, double, tsh
}

// DiskBytes is what the captures Measure generates with o take at most:
// the space its directory needs. Every frame is counted at the snap
// length (ACKs are shorter), with its 16-byte pcap record header.
func DiskBytes(o Options) int64 {
	small, double, tsh := o.prefixes()
	plain, erspan := o.Fabric, o.Fabric
	erspan.ERSPAN = true
	n := captureBytes(plain, o.Packets) + captureBytes(plain, small) + captureBytes(plain, double) + captureBytes(erspan, o.Packets)
	if tsh < o.Packets {
		n += captureBytes(plain, tsh) + captureBytes(erspan, tsh)
	}
	if o.FlowsPackets > 0 {
		n += captureBytes(o.FlowsFabric, o.FlowsPackets)
	}
	return n
}

// captureBytes is at most the size of a capture of the fabric's first
// packets frames (see DiskBytes).
func captureBytes(f Fabric, packets int) int64 {
	frame := f.snaplen()
	if f.Snaplen <= 0 { // frames whole: a full packet with its headers
		frame = f.MTU + maxHeadersLen
		if f.ERSPAN {
			frame += ERSPANOverhead
		}
	}
	return pcapFileHeaderLen + int64(packets)*int64(pcapRecordHeaderLen+frame)
}

// The pcap file and record headers (the generator's microsecond pcap),
// and the most header bytes a frame of the fabric carries around its
// payload: Ethernet 14, IPv4 20, UDP 8, BTH 12, RETH 16, ICRC 4.
const (
	pcapFileHeaderLen   = 24
	pcapRecordHeaderLen = 16
	maxHeadersLen       = 74
)

// Measure generates the captures and runs everything.
func Measure(o Options) (*Results, error) {
	if o.Dir == "" || o.Rocedump == "" || o.Packets < 1 {
		return nil, errors.New("bench: Dir, Rocedump and Packets are required")
	}
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "rocebench: "+format+"\n", args...)
		}
	}
	if o.Runner == nil {
		o.Runner = NewRunner()
	}
	res := &Results{Machine: ThisMachine(o.Tshark), Started: time.Now().UTC(), Fabric: o.Fabric, FlowsFabric: o.FlowsFabric}
	small, double, tsh := o.prefixes()

	logf("generating %d packets of %d flows (plain and ERSPAN, %d-byte snaps) in %s", o.Packets, o.Fabric.Flows(), o.Fabric.Snaplen, o.Dir)
	t0 := time.Now()
	var wg sync.WaitGroup
	var plainCaps, erspCaps []Capture
	var errPlain, errERSP error
	wg.Add(2)
	// The copies of the packets tshark reads, for rocedump: none when it
	// reads the whole captures.
	var plainTsh, erspTsh []Prefix
	if tsh < o.Packets {
		plainTsh = []Prefix{{filepath.Join(o.Dir, "mirror-tshark.pcap"), tsh}}
		erspTsh = []Prefix{{filepath.Join(o.Dir, "erspan-tshark.pcap"), tsh}}
	}
	go func() {
		defer wg.Done()
		plainCaps, errPlain = Generate(o.Fabric, o.Packets, filepath.Join(o.Dir, "mirror.pcap"),
			append([]Prefix{{filepath.Join(o.Dir, "mirror-small.pcap"), small}, {filepath.Join(o.Dir, "mirror-double.pcap"), double}}, plainTsh...)...)
	}()
	go func() {
		defer wg.Done()
		f := o.Fabric
		f.ERSPAN = true
		erspCaps, errERSP = Generate(f, o.Packets, filepath.Join(o.Dir, "erspan.pcap"), erspTsh...)
	}()
	wg.Wait()
	if err := errors.Join(errPlain, errERSP); err != nil {
		return nil, err
	}
	res.Main, res.Small, res.Double, res.TsharkPlain = plainCaps[0], plainCaps[1], plainCaps[2], plainCaps[0]
	res.ERSPAN, res.TsharkERSP = erspCaps[0], erspCaps[0]
	if tsh < o.Packets {
		res.TsharkPlain, res.TsharkERSP = plainCaps[3], erspCaps[1]
	}
	if o.FlowsPackets > 0 {
		logf("generating %d packets of %d flows for the memory check", o.FlowsPackets, o.FlowsFabric.Flows())
		c, err := Generate(o.FlowsFabric, o.FlowsPackets, filepath.Join(o.Dir, "many-flows.pcap"))
		if err != nil {
			return nil, err
		}
		res.Flows = &c[0]
	}
	res.GenTime = time.Since(t0)
	logf("generated in %v", res.GenTime.Round(time.Second))

	waitLoad(o, logf)
	res.LoadBefore = LoadAvg()
	run := func(name string, c Capture, cores int, args ...string) (Run, error) {
		argv := append(append([]string{o.Rocedump}, args...), c.Path)
		r := o.Runner.Measure(name, c.Packets, cores, argv...)
		logf("%-32s %-22s %8.2f s wall %8.2f s CPU %7.2f Mpps/core %6.0f MB", name, filepath.Base(c.Path), r.Wall.Seconds(), r.CPU.Seconds(), r.PPSPerCore()/1e6, float64(r.MaxRSS)/1e6)
		return r, r.Err
	}
	for _, set := range []struct {
		c   Capture
		out *[]Run
	}{{res.Main, &res.Plain}, {res.ERSPAN, &res.Erspan}} {
		for _, cmd := range Commands() {
			r, err := run(cmd.Name, set.c, 1, cmd.Args...)
			if err != nil {
				return nil, err
			}
			*set.out = append(*set.out, r)
		}
	}
	cmds := Commands()
	rep := cmds[len(cmds)-1]
	hostCheck := func(when string) error {
		argv := append(append([]string{o.Rocedump}, rep.Args...), res.Small.Path)
		alone, err := run(rep.Name, res.Small, 1, rep.Args...)
		if err != nil {
			return err
		}
		beside := o.Runner.MeasureBeside(rep.Name, res.Small.Packets, argv...)
		if beside.Err != nil {
			logf("host check: %v", beside.Err)
			return nil
		}
		h := HostCheck{When: when, Alone: alone, Beside: beside}
		logf("host check %s: %.2f s CPU alone, %.2f s beside a copy on CPU 1 (%.2fx)", when, alone.CPU.Seconds(), beside.CPU.Seconds(), h.Slowdown())
		res.HostChecks = append(res.HostChecks, h)
		return nil
	}
	if runtime.NumCPU() < 2 {
		// Nothing to compare: the results say so.
		logf("one CPU available: no two-core runs")
	} else {
		if err := hostCheck("before"); err != nil {
			return nil, err
		}
		for range twoCorePairs {
			r1, err := run(rep.Name, res.Main, 1, rep.Args...)
			if err != nil {
				return nil, err
			}
			r2, err := run(rep.Name, res.Main, 2, rep.Args...)
			if err != nil {
				return nil, err
			}
			res.TwoCores = append(res.TwoCores, [2]Run{r1, r2})
		}
		if err := hostCheck("after"); err != nil {
			return nil, err
		}
	}
	var err error
	if res.MemSmall, err = run(rep.Name, res.Small, 1, rep.Args...); err != nil {
		return nil, err
	}
	if res.Flows != nil {
		r, err := run(rep.Name, *res.Flows, 1, rep.Args...)
		if err != nil {
			return nil, err
		}
		res.MemFlows = &r
	}
	for i, c := range []Capture{res.TsharkPlain, res.TsharkERSP} {
		r, err := run(rep.Name, c, 1, rep.Args...)
		if err != nil {
			return nil, err
		}
		res.PrefixRuns = append(res.PrefixRuns, r)
		if o.Tshark == "" {
			continue
		}
		whole := []Capture{res.Main, res.ERSPAN}[i]
		t := o.Runner.Measure("tshark -T fields", c.Packets, 1, append([]string{o.Tshark}, TsharkArgs(whole.Path, c.Packets, whole.Packets)...)...)
		logf("%-32s %-22s %8.2f s wall %8.2f s CPU %7.3f Mpps/core %6.0f MB", t.Name, filepath.Base(whole.Path), t.Wall.Seconds(), t.CPU.Seconds(), t.PPSPerCore()/1e6, float64(t.MaxRSS)/1e6)
		if t.Err != nil {
			return nil, t.Err
		}
		res.Tshark = append(res.Tshark, t)
	}
	res.LoadAfter = LoadAvg()

	if o.InProcess != nil {
		for _, set := range []struct {
			c   Capture
			out *[]Allocs
		}{{res.Small, &res.Allocs}, {res.Double, &res.AllocsDouble}} {
			for _, cmd := range Commands() {
				args := append(append([]string{}, cmd.Args...), set.c.Path)
				a, err := MeasureAllocs(cmd.Name, set.c.Packets, func(out, errOut io.Writer) error {
					if code := o.InProcess(args, out, errOut); code != 0 {
						return fmt.Errorf("in-process %v: exit code %d", args, code)
					}
					return nil
				})
				if err != nil {
					return nil, err
				}
				logf("%-32s %-22s %.3f allocations, %.1f bytes per packet", cmd.Name, filepath.Base(set.c.Path), a.PerPacket(), a.BytesPerPacket())
				*set.out = append(*set.out, a)
			}
		}
	}
	return res, nil
}

// TsharkArgs is the tshark command line (after the program) of the
// comparison the issue asks for, on the first n packets of the capture at
// path, of total packets: tshark reads the same file as rocedump, and
// stops after n packets (-c) when n is less than the whole.
func TsharkArgs(path string, n, total int) []string {
	args := []string{"-r", path}
	if n < total {
		args = append(args, "-c", strconv.Itoa(n))
	}
	return append(args, "-T", "fields", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.destqp", "-e", "infiniband.bth.psn")
}

// waitLoad waits for a quiet machine when asked to.
func waitLoad(o Options, logf func(string, ...any)) {
	if o.WaitLoad <= 0 {
		return
	}
	deadline := time.Now().Add(o.WaitMax)
	for {
		var l1 float64
		fmt.Sscan(LoadAvg(), &l1)
		if l1 < o.WaitLoad || time.Now().After(deadline) {
			logf("load average %s", LoadAvg())
			return
		}
		logf("load average %.2f, waiting for it to fall below %.2f", l1, o.WaitLoad)
		time.Sleep(15 * time.Second)
	}
}

// BuildRocedump builds ./cmd/rocedump of the module in dir into out.
func BuildRocedump(dir, out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/rocedump")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	return cmd.Run()
}
