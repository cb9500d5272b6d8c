package bench

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine describes where the benchmark ran.
type Machine struct {
	CPU       string // model name from /proc/cpuinfo
	Cores     int    // logical CPUs
	GoVersion string
	OS        string // kernel release
	Tshark    string // tshark's version line, "" without tshark
}

// ThisMachine reads /proc and asks tshark for its version.
func ThisMachine(tshark string) Machine {
	m := Machine{CPU: "unknown", Cores: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.OS += ", Linux " + strings.TrimSpace(string(b))
	}
	if tshark != "" {
		if out, err := exec.Command(tshark, "--version").Output(); err == nil {
			m.Tshark, _, _ = strings.Cut(string(out), "\n")
			m.Tshark = strings.TrimSpace(strings.TrimSuffix(m.Tshark, "."))
		}
	}
	return m
}

// LoadAvg is /proc/loadavg's first three fields ("1.02 0.87 0.80"), or "".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// userHZ is the unit of /proc/stat's times: USER_HZ, 100 a second on
// every Linux architecture Go runs on.
const userHZ = 100

// cpuTimes are the machine-wide CPU times of /proc/stat's first line.
type cpuTimes struct {
	busy  time.Duration // user, nice, system, irq and softirq (guest time is within user)
	steal time.Duration // time the hypervisor ran something else on the machine's CPUs
	ok    bool
}

// readCPUTimes reads /proc/stat; ok is false where there is none.
func readCPUTimes() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return parseCPUTimes(string(line))
}

// parseCPUTimes parses /proc/stat's "cpu  user nice system idle iowait
// irq softirq steal ..." line.
func parseCPUTimes(line string) cpuTimes {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var v [8]uint64
	for i := range v {
		n, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		v[i] = n
	}
	tick := func(n uint64) time.Duration { return time.Duration(n) * time.Second / userHZ }
	return cpuTimes{busy: tick(v[0] + v[1] + v[2] + v[5] + v[6]), steal: tick(v[7]), ok: true}
}

// Machine activity while a run ran (/proc/stat): what the rest of the
// machine took besides the run itself.
type Activity struct {
	Others time.Duration // CPU time of everything else: the machine's busy time less the run's CPU time
	Steal  time.Duration // time the hypervisor gave the machine's CPUs to others
	Known  bool
}

// activitySince is the machine's activity from before to now, for a run
// that used cpu of it.
func activitySince(before cpuTimes, cpu time.Duration) Activity {
	after := readCPUTimes()
	if !before.ok || !after.ok {
		return Activity{}
	}
	return Activity{Others: max(after.busy-before.busy-cpu, 0), Steal: max(after.steal-before.steal, 0), Known: true}
}
