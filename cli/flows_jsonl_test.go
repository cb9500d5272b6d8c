package cli

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFlowsJSONL: --format jsonl writes one flow per line, each line the
// same object as the matching element of --format json, in the same order.
func TestFlowsJSONL(t *testing.T) {
	for _, name := range []string{"gen/retransmissions.pcap", "gen/storage.pcap", "real/linlinw5_nccl_ring2_node0.pcap"} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(repoRoot, "testdata", "pcaps", name)
			arr, stderr, code := runCLI(t, "flows", "--format", "json", "--sort", "id", file)
			if code != ExitOK {
				t.Fatalf("json: exit %d: %s", code, stderr)
			}
			lines, stderr, code := runCLI(t, "flows", "--format", "jsonl", "--sort", "id", file)
			if code != ExitOK {
				t.Fatalf("jsonl: exit %d: %s", code, stderr)
			}
			var want []map[string]any
			if err := json.Unmarshal([]byte(arr), &want); err != nil {
				t.Fatal(err)
			}
			var got []map[string]any
			sc := bufio.NewScanner(strings.NewReader(lines))
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var rec map[string]any
				if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
					t.Fatalf("line %d is not one JSON object: %v: %q", len(got)+1, err, sc.Text())
				}
				got = append(got, rec)
			}
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("got %d lines, want %d (one per flow)", len(got), len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("line %d differs from element %d of --format json:\n got %v\nwant %v", i+1, i, got[i], want[i])
				}
			}
		})
	}
}

// TestFlowsFormatUnknown names jsonl among the formats.
func TestFlowsFormatUnknown(t *testing.T) {
	_, stderr, code := runCLI(t, "flows", "--format", "parquet", filepath.Join(repoRoot, "testdata", "pcaps", "gen", "storage.pcap"))
	if code != ExitUsage || !strings.Contains(stderr, "jsonl") {
		t.Errorf("exit %d, stderr %q: want exit %d and the list of formats with jsonl", code, stderr, ExitUsage)
	}
}
