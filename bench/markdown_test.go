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
