package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "s.yaml")
	err := os.WriteFile(scen, []byte(`
name: s
seed: 3
flows:
  - {name: a, src: 10.0.0.1, dst: 10.0.0.2, src_qpn: 1, dest_qpn: 2, ops: [{op: write, bytes: 100}]}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o.pcap")
	var stderr bytes.Buffer
	if code := run([]string{"-scenario", scen, "-o", out, "-seed", "9"}, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if fi, err := os.Stat(out); err != nil || fi.Size() < 24 {
		t.Fatalf("capture: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "o.truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth struct {
		Seed   uint64 `json:"seed"`
		Frames int    `json:"frames"`
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	if truth.Seed != 9 || truth.Frames != 2 {
		t.Errorf("truth seed %d frames %d, want 9 and 2", truth.Seed, truth.Frames)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("flows:\n  - {name: a, mtu: 7}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run(nil, &stderr); code != 2 {
		t.Errorf("no args: exit %d, want 2", code)
	}
	stderr.Reset()
	if code := run([]string{"-scenario", bad, "-o", filepath.Join(dir, "x.pcap")}, &stderr); code != 1 || !strings.Contains(stderr.String(), "bad.yaml:2:") {
		t.Errorf("bad scenario: exit %d, stderr %q", code, stderr.String())
	}
}

func TestTruthPath(t *testing.T) {
	for in, want := range map[string]string{"a/x.pcap": "a/x.truth.json", "x.pcapng.gz": "x.truth.json"} {
		if got := truthPath(in); got != want {
			t.Errorf("truthPath(%q) = %q, want %q", in, got, want)
		}
	}
}
