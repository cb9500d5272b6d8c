package bench

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"testing"
)

func TestRunChild(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	var out bytes.Buffer
	if code := RunChild([]string{sh, "-c", "echo to-stdout; echo summary >&2; exit 3"}, &out); code != 0 {
		t.Fatalf("RunChild exit %d", code)
	}
	var res childResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if res.ExitCode != 3 || res.Stderr != "summary" || res.Err != "" || res.WallNS <= 0 || res.MaxRSS <= 0 {
		t.Errorf("got %+v: want exit code 3, stderr \"summary\", a wall time and a peak RSS", res)
	}
}

// TestMeasureExitCodes: report's exit code 1 (findings) is a result;
// any other failure is an error.
func TestMeasureExitCodes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	rn := &Runner{}
	tests := []struct {
		name, script string
		wantErr      bool
	}{
		{"rocedump report --format json", "exit 1", false},
		{"rocedump flows", "exit 1", true},
		{"rocedump report --format json", "exit 2", true},
		{"rocedump flows", "exit 0", false},
	}
	for _, tt := range tests {
		r := rn.Measure(tt.name, 10, 1, sh, "-c", tt.script)
		if (r.Err != nil) != tt.wantErr {
			t.Errorf("%s with %q: error %v, want error %v", tt.name, tt.script, r.Err, tt.wantErr)
		}
		if r.Packets != 10 || r.Cores != 1 || r.Args[0] != sh {
			t.Errorf("%s: run %+v does not describe the command", tt.name, r)
		}
	}
}
