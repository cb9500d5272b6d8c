package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestNoNegativeZero(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    int
		want string
	}{{-0.00001, 4, "0.0000"}, {-0.0005, 4, "-0.0005"}, {-0.004, 2, "0.00"}, {0.22, 2, "0.22"}} {
		if got := fmt.Sprintf("%.*f", c.d, noNegativeZero(c.v, c.d)); got != c.want {
			t.Errorf("%v at %d decimals: %s, want %s", c.v, c.d, got, c.want)
		}
	}
}

// TestMarkdownHostChecks: the two-core paragraph says how much a pinned
// run slowed beside a copy of itself on the other CPU, before and after
// the two-core runs.
func TestMarkdownHostChecks(t *testing.T) {
	report := Run{Name: "rocedump report --format json", Packets: 1000, Cores: 1}
	one, two := report, report
	one.Wall, one.CPU = 2*time.Second, 2*time.Second
	two.Cores, two.Wall, two.CPU = 2, 1200*time.Millisecond, 2200*time.Millisecond
	alone, beside, busy := report, report, report
	alone.CPU, beside.CPU, busy.CPU = time.Second, 1020*time.Millisecond, 1500*time.Millisecond
	r := &Results{
		Fabric:     DefaultFabric(),
		Main:       Capture{Path: "/tmp/x/mirror.pcap", Packets: 1000},
		Small:      Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 100},
		MemSmall:   Run{Args: []string{"rocedump", "report", "/tmp/x/mirror-small.pcap"}, Packets: 100},
		TwoCores:   [][2]Run{{one, two}},
		HostChecks: []HostCheck{{When: "before", Alone: alone, Beside: beside}, {When: "after", Alone: alone, Beside: busy}},
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, "rocebench"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ran 1.67× as fast as on one core",
		"`rocedump report --format json` on mirror-small.pcap, pinned to CPU 0, took 1.00 s of CPU time alone and 1.02 s beside a copy of itself on CPU 1 (1.02×) before the two-core runs and 1.00 s of CPU time alone and 1.50 s beside a copy of itself on CPU 1 (1.50×) after the two-core runs.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, b.String())
		}
	}
}

// TestMarkdownTshark: tshark reads the main captures themselves, the
// first packets of each (-c), and the section says so, names them in its
// table and compares rates per packet.
func TestMarkdownTshark(t *testing.T) {
	rep := func(path string, packets int, cpu time.Duration) Run {
		return Run{Name: "rocedump report --format json", Args: []string{"rocedump", "report", "--format", "json", path}, Packets: packets, Cores: 1, Wall: cpu, CPU: cpu}
	}
	tshark := func(path string, n, total int, cpu time.Duration) Run {
		return Run{Name: "tshark -T fields", Args: append([]string{"tshark"}, TsharkArgs(path, n, total)...), Packets: n, Cores: 1, Wall: cpu, CPU: cpu}
	}
	var plain, erspan []Run
	for _, c := range Commands() {
		plain = append(plain, Run{Name: c.Name, Args: []string{"rocedump", "/tmp/x/mirror.pcap"}, Packets: 4_000_000, Cores: 1, Wall: time.Second, CPU: time.Second})
		erspan = append(erspan, Run{Name: c.Name, Args: []string{"rocedump", "/tmp/x/erspan.pcap"}, Packets: 4_000_000, Cores: 1, Wall: 2 * time.Second, CPU: 2 * time.Second})
	}
	r := &Results{
		Fabric:      DefaultFabric(),
		Main:        Capture{Path: "/tmp/x/mirror.pcap", Packets: 4_000_000},
		ERSPAN:      Capture{Path: "/tmp/x/erspan.pcap", Packets: 4_000_000},
		Small:       Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 400_000},
		TsharkPlain: Capture{Path: "/tmp/x/mirror-tshark.pcap", Packets: 200_000},
		TsharkERSP:  Capture{Path: "/tmp/x/erspan-tshark.pcap", Packets: 200_000},
		Plain:       plain,
		Erspan:      erspan,
		MemSmall:    rep("/tmp/x/mirror-small.pcap", 400_000, time.Second/5),
		Tshark:      []Run{tshark("/tmp/x/mirror.pcap", 200_000, 4_000_000, 5*time.Second), tshark("/tmp/x/erspan.pcap", 200_000, 4_000_000, 8*time.Second)},
		PrefixRuns:  []Run{rep("/tmp/x/mirror-tshark.pcap", 200_000, 500*time.Millisecond), rep("/tmp/x/erspan-tshark.pcap", 200_000, 500*time.Millisecond)},
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, "rocebench"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"tshark reads the first 200,000 packets of each capture, the same file rocedump reads, with `tshark -r FILE -c 200000 -T fields -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn > /dev/null`",
		"the whole of mirror.pcap would have taken it about 1m40s of CPU time",
		// 40 kpps; report 0.40 Mpps on the same packets, 4 Mpps on all.
		"| mirror.pcap | 200,000 | 5.00 s | 5.00 s | 40.0 | 0.40 | 10× | 100× |",
		"| erspan.pcap | 200,000 | 8.00 s | 8.00 s | 25.0 | 0.40 | 16× | 80× |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, b.String())
		}
	}
}

// TestMarkdownTsharkWhole: with tshark reading the whole captures there
// are no copies of their first packets to list or mention.
func TestMarkdownTsharkWhole(t *testing.T) {
	main := Capture{Path: "/tmp/x/mirror.pcap", Packets: 400_000}
	erspan := Capture{Path: "/tmp/x/erspan.pcap", Packets: 400_000}
	report := func(c Capture) Run {
		return Run{Name: "rocedump report --format json", Args: []string{"rocedump", "report", c.Path}, Packets: c.Packets, Cores: 1, Wall: time.Second, CPU: time.Second}
	}
	tshark := Run{Name: "tshark -T fields", Args: append([]string{"tshark"}, TsharkArgs(main.Path, main.Packets, main.Packets)...), Packets: main.Packets, Cores: 1, Wall: 10 * time.Second, CPU: 10 * time.Second}
	r := &Results{Fabric: DefaultFabric(), Main: main, ERSPAN: erspan, Small: Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 40_000},
		TsharkPlain: main, TsharkERSP: erspan, MemSmall: report(Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 40_000}),
		Tshark: []Run{tshark}, PrefixRuns: []Run{report(main)}}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, "rocebench"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"tshark reads each whole capture, the same file rocedump reads, with `tshark -r FILE -T fields ", "| mirror.pcap | 400,000 | 10.00 s |"} {
		if !strings.Contains(out, want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "| mirror.pcap | 400,000 | 0.0 MB |"); n != 1 {
		t.Errorf("mirror.pcap listed %d times among the captures, want once:\n%s", n, out)
	}
	if strings.Contains(out, "first packets alone") {
		t.Errorf("mentions the first packets:\n%s", out)
	}
}

// TestMarkdownOneCPU: on a machine with one CPU there are no two-core
// runs, and the targets table says the two-core target was not measured
// instead of leaving it out.
func TestMarkdownOneCPU(t *testing.T) {
	var plain []Run
	for _, c := range Commands() {
		plain = append(plain, Run{Name: c.Name, Args: []string{"rocedump", "/tmp/x/mirror.pcap"}, Packets: 400_000, Cores: 1, Wall: time.Second, CPU: time.Second})
	}
	r := &Results{Machine: Machine{Cores: 1}, Fabric: DefaultFabric(), Main: Capture{Path: "/tmp/x/mirror.pcap", Packets: 400_000},
		Small: Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 40_000}, Plain: plain,
		MemSmall: Run{Args: []string{"rocedump", "/tmp/x/mirror-small.pcap"}, Packets: 40_000}}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, "rocebench"); err != nil {
		t.Fatal(err)
	}
	if want := "| ≥ 1.8× on two cores | not measured: 1 logical CPU | — |"; !strings.Contains(b.String(), want) {
		t.Errorf("the Markdown lacks %q:\n%s", want, b.String())
	}
	if strings.Contains(b.String(), "as fast as on one core") {
		t.Errorf("a two-core figure without two-core runs:\n%s", b.String())
	}
}

func TestTsharkArgs(t *testing.T) {
	if got := strings.Join(TsharkArgs("m.pcap", 10, 100), " "); !strings.HasPrefix(got, "-r m.pcap -c 10 -T fields ") {
		t.Errorf("first 10 of 100: %s", got)
	}
	if got := strings.Join(TsharkArgs("m.pcap", 100, 100), " "); strings.Contains(got, "-c") || !strings.HasPrefix(got, "-r m.pcap -T fields ") {
		t.Errorf("all of 100: %s", got)
	}
}

// TestMarkdownPerCoreRate: the one-core table's rate is what its text
// says it is: packets per second of wall time on the pinned CPU
// (Run.PPSPerCore), not of CPU time.
func TestMarkdownPerCoreRate(t *testing.T) {
	var plain []Run
	for _, c := range Commands() {
		plain = append(plain, Run{Name: c.Name, Args: []string{"rocedump", "/tmp/x/mirror.pcap"}, Packets: 1_000_000, Cores: 1, Pinned: true,
			Wall: 2 * time.Second, CPU: time.Second})
	}
	r := &Results{
		Fabric:   DefaultFabric(),
		Main:     Capture{Path: "/tmp/x/mirror.pcap", Packets: 1_000_000},
		Small:    Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 100},
		MemSmall: Run{Args: []string{"rocedump", "report", "/tmp/x/mirror-small.pcap"}, Packets: 100},
		Plain:    plain,
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, r, "rocebench"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "| 2.00 s | 1.00 s | 0.50 |") {
		t.Fatalf("the one-core table does not show 1 M packets in 2 s wall as 0.50 Mpps:\n%s", out)
	}
	for _, want := range []string{"Mpps per core = packets / wall time", "The per-core rates divide by the wall time"} {
		if !strings.Contains(out, want) {
			t.Errorf("the Markdown lacks %q (its rates are per second of wall time):\n%s", want, out)
		}
	}
	if strings.Contains(out, "packets / CPU time.") || strings.Contains(out, "rates divide by the CPU time") {
		t.Errorf("the Markdown says its per-core rates are per second of CPU time:\n%s", out)
	}
}

// TestMarkdownFewerFlowsInShorterCapture: with few packets (-packets
// 200000) the shorter capture of the memory check holds only some of the
// flows (28,881 of 63,488 in such a run): the peak's growth and the extra
// allocations are then those of the flows the longer capture adds, not of
// its packets. The results must not call them "the same flows" nor judge
// the two targets on them.
func TestMarkdownFewerFlowsInShorterCapture(t *testing.T) {
	run := func(name, path string, packets, flows int, rss int64) Run {
		return Run{Name: name, Args: []string{"rocedump", "report", path}, Packets: packets, Cores: 1, Wall: time.Second, CPU: time.Second,
			MaxRSS: rss, Stderr: fmt.Sprintf("rocedump: %d flows, 0 findings", flows)}
	}
	for _, c := range []struct {
		smallFlows int
		same       bool
	}{{28_881, false}, {63_488, true}} {
		var plain []Run
		for _, cmd := range Commands() {
			plain = append(plain, run(cmd.Name, "/tmp/x/mirror.pcap", 200_000, 63_488, 116e6))
		}
		small := Capture{Path: "/tmp/x/mirror-small.pcap", Packets: 100_000}
		double := Capture{Path: "/tmp/x/mirror-double.pcap", Packets: 200_000}
		var allocs, allocsDouble []Allocs
		for _, cmd := range Commands() {
			allocs = append(allocs, Allocs{Name: cmd.Name, Packets: small.Packets, Mallocs: 1000})
			allocsDouble = append(allocsDouble, Allocs{Name: cmd.Name, Packets: double.Packets, Mallocs: 80_000})
		}
		r := &Results{Fabric: DefaultFabric(), Main: Capture{Path: "/tmp/x/mirror.pcap", Packets: 200_000}, Small: small, Double: double,
			Plain: plain, MemSmall: run("rocedump report --format json", small.Path, small.Packets, c.smallFlows, 73e6),
			Allocs: allocs, AllocsDouble: allocsDouble}
		var b strings.Builder
		if err := WriteMarkdown(&b, r, "rocebench"); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if c.same {
			for _, want := range []string{"packets of the same flows the peak grows by +58.9%", "| peak memory within 10% from 100,000 to 200,000 packets | +58.9% | **no** |",
				"(200,000 packets, the same flows)", "| zero allocations per packet in steady state | 0.7900 per extra packet at most"} {
				if !strings.Contains(out, want) {
					t.Errorf("same flows: the Markdown lacks %q:\n%s", want, out)
				}
			}
			continue
		}
		if strings.Contains(out, "same flows") {
			t.Errorf("mirror-small.pcap holds 28,881 of 63,488 flows, yet the Markdown says \"same flows\":\n%s", out)
		}
		for _, want := range []string{"mirror-small.pcap holds 28,881 of the 63,488 flows",
			"| peak memory within 10% from 100,000 to 200,000 packets | not measured: mirror-small.pcap holds 28,881 of the 63,488 flows | — |",
			"| zero allocations per packet in steady state | not measured: mirror-small.pcap holds 28,881 of the 63,488 flows | — |"} {
			if !strings.Contains(out, want) {
				t.Errorf("fewer flows: the Markdown lacks %q:\n%s", want, out)
			}
		}
	}
}
