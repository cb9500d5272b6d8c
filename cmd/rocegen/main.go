// Command rocegen writes a synthetic RoCE capture and its truth file from a
// scenario (see package gen for the format):
//
//	rocegen -scenario testdata/scenarios/x.yaml -o x.pcap [-truth x.truth.json] [-seed N]
//
// Without -o the capture is NAME.pcap (or .pcapng, .gz) in the current
// directory, NAME being the scenario file's base name. Without -truth the
// truth goes beside the capture as NAME.truth.json; -truth "" skips it.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocedump/rocedump/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

func run(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("rocegen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "", "scenario YAML file (required)")
	out := fs.String("o", "", "capture file to write (default NAME.pcap/.pcapng[.gz] from the scenario file name)")
	truth := fs.String("truth", "-", `truth JSON file (default beside the capture; "" for none)`)
	seed := fs.Uint64("seed", 0, "override the scenario's seed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *scenario == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: rocegen -scenario FILE.yaml [-o OUT] [-truth OUT.truth.json] [-seed N]")
		return 2
	}
	s, err := gen.LoadScenario(*scenario)
	if err != nil {
		fmt.Fprintln(stderr, "rocegen:", err)
		return 1
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			s.Seed = *seed
		}
	})
	base := strings.TrimSuffix(filepath.Base(*scenario), filepath.Ext(*scenario))
	if *out == "" {
		*out = base + gen.FileExt(s)
	}
	if *truth == "-" {
		*truth = truthPath(*out)
	}
	if err := write(s, *out, *truth); err != nil {
		fmt.Fprintln(stderr, "rocegen:", err)
		return 1
	}
	return 0
}

// truthPath is the truth file beside a capture: x.pcap.gz -> x.truth.json.
func truthPath(capture string) string {
	p := strings.TrimSuffix(capture, ".gz")
	p = strings.TrimSuffix(p, filepath.Ext(p))
	return p + ".truth.json"
}

func write(s *gen.Scenario, out, truthPath string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	t, err := gen.Generate(bw, s)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out)
		return err
	}
	if truthPath == "" {
		return nil
	}
	tf, err := os.Create(truthPath)
	if err != nil {
		return err
	}
	err = t.WriteJSON(tf)
	if cerr := tf.Close(); err == nil {
		err = cerr
	}
	return err
}
