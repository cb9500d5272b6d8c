package bench

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strings"
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
