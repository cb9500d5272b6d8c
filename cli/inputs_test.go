package cli

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// captureDir makes a directory as people keep them: two captures (one a
// symlink to a capture elsewhere), the notes and truth files kept next to
// them, and a symlink whose capture was moved away. It returns the
// directory and its two captures.
func captureDir(t *testing.T) (dir string, files []string) {
	t.Helper()
	dir = t.TempDir()
	src, err := os.ReadFile(genCapture("congestion.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("rail0.pcap", src)
	write("MANIFEST.md", []byte("# rail 0 and rail 1 mirrors\n"))
	write("rail0.truth.json", []byte(`{"frames": 73}`))
	link := func(name, target string) {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	abs, err := filepath.Abs(genCapture("retransmissions.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	link("rail1.pcap", abs)
	link("rail2.pcap", filepath.Join(t.TempDir(), "moved.pcap"))
	return dir, []string{filepath.Join(dir, "rail0.pcap"), filepath.Join(dir, "rail1.pcap")}
}

// TestDirectorySkipsNonCaptures: a directory gives flows, report, read and
// extract its captures, symlinked ones included, and the files in it that
// are not captures are skipped with one warning line, not a failed run:
// the output is that of the captures named one by one.
func TestDirectorySkipsNonCaptures(t *testing.T) {
	dir, files := captureDir(t)
	warning := "rocedump: warning: skipped 3 files in " + dir +
		" that are not captures: MANIFEST.md, rail0.truth.json, rail2.pcap (dangling symlink)\n"
	for _, cmd := range [][]string{
		{"flows", "--format", "json", "--sort", "id"},
		{"report", "--format", "json", "--fail-on", "never"},
		{"read", "--format", "json"},
	} {
		t.Run(cmd[0], func(t *testing.T) {
			want, wantErr, code := runCLI(t, append(cmd, files...)...)
			if code != ExitOK {
				t.Fatalf("on the files: exit %d: %s", code, wantErr)
			}
			got, gotErr, code := runCLI(t, append(cmd, dir)...)
			if code != ExitOK {
				t.Fatalf("on the directory: exit %d: %s", code, gotErr)
			}
			if got != want {
				t.Errorf("on the directory the output differs from the files': %s", firstDiff(want, got))
			}
			if gotErr != warning+wantErr {
				t.Errorf("stderr:\nwant %q\ngot  %q", warning+wantErr, gotErr)
			}
		})
	}
	out := filepath.Join(t.TempDir(), "x.pcap")
	_, stderr, code := runCLI(t, "extract", "--flow", "1", "-o", out, dir)
	if code != ExitOK || strings.Count(stderr, warning) != 1 {
		t.Errorf("extract: want exit 0 and the warning once, got %d: %s", code, stderr)
	}
}

// TestDirectoryInputErrors: a directory without any capture, a file named
// on the command line that is not a capture, and standard input given
// twice are input errors (exit 2) that say so.
func TestDirectoryInputErrors(t *testing.T) {
	dir, _ := captureDir(t)
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "readme.txt"), []byte("rail 3\n"), 0o644)
	tests := []struct {
		name string
		args []string
		msg  string
	}{
		{"no capture in directory", []string{"flows", empty}, empty + ": directory holds no capture files"},
		{"named file not a capture", []string{"flows", filepath.Join(dir, "MANIFEST.md")}, "not a pcap or pcapng file"},
		{"named dangling symlink", []string{"report", filepath.Join(dir, "rail2.pcap")}, "no such file"},
		{"stdin twice, flows", []string{"flows", "-", "-"}, `standard input ("-") is given twice`},
		{"stdin twice, read", []string{"read", "-", "-"}, `standard input ("-") is given twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tt.args...)
			if code != ExitUsage || !strings.Contains(stderr, tt.msg) {
				t.Errorf("want exit 2 and %q, got %d: %s", tt.msg, code, stderr)
			}
		})
	}
}

// TestSameCaptureTwice: a capture given twice (by name, and within its
// directory) is read once, with a warning, so that its frames are not
// counted twice: the report equals the one on the directory alone.
func TestSameCaptureTwice(t *testing.T) {
	dir, files := captureDir(t)
	want, _, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", dir)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	got, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", dir, files[0])
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got != want {
		t.Errorf("a capture given twice changes the report: %s", firstDiff(want, got))
	}
	if msg := "rocedump: warning: " + files[0] + " is given twice: read once\n"; !strings.Contains(stderr, msg) {
		t.Errorf("stderr lacks %q:\n%s", msg, stderr)
	}
	// Another name for it: a symlink to rail0.pcap.
	link := filepath.Join(t.TempDir(), "again.pcap")
	if err := os.Symlink(files[0], link); err != nil {
		t.Fatal(err)
	}
	_, stderr, _ = runCLI(t, "flows", dir, link)
	if msg := "rocedump: warning: " + link + " is the same file as " + files[0] + ": read once\n"; !strings.Contains(stderr, msg) {
		t.Errorf("stderr lacks %q:\n%s", msg, stderr)
	}
}

// TestUnreadableCaptureExitCode: a capture of which nothing can be read
// (here a pcapng interface with a timestamp resolution of 10^-30 s, which
// fits no 64-bit count) is an input error (exit 2) for every command, as
// read always said; flows and report warned and exited 0 with no flow.
func TestUnreadableCaptureExitCode(t *testing.T) {
	le := binary.LittleEndian
	block := func(typ uint32, body []byte) []byte {
		b := le.AppendUint32(le.AppendUint32(nil, typ), uint32(12+len(body)))
		return le.AppendUint32(append(b, body...), uint32(12+len(body)))
	}
	shb := le.AppendUint64(le.AppendUint16(le.AppendUint16(le.AppendUint32(nil, 0x1a2b3c4d), 1), 0), ^uint64(0))
	idb := le.AppendUint32(le.AppendUint16(le.AppendUint16(nil, 1), 0), 0)
	idb = append(idb, 9, 0, 1, 0, 30, 0, 0, 0, 0, 0, 0, 0) // if_tsresol 10^-30, opt_endofopt
	epb := append(make([]byte, 12), le.AppendUint32(le.AppendUint32(nil, 60), 60)...)
	epb = append(epb, make([]byte, 60)...)
	file := append(append(block(0x0a0d0d0a, shb), block(1, idb)...), block(6, epb)...)
	bad := filepath.Join(t.TempDir(), "tsresol.pcapng")
	if err := os.WriteFile(bad, file, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "tsresol.pcapng: record 1: if_tsresol 10^-30 does not fit in 64 bits"
	out := filepath.Join(t.TempDir(), "out.pcap")
	for _, args := range [][]string{
		{"read", bad},
		{"flows", bad, genCapture("congestion.pcap")},
		{"report", bad},
		{"extract", "--flow", "1", "-o", out, bad},
	} {
		_, stderr, code := runCLI(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("rocedump %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(args, " "), code, stderr, want)
		}
	}
}

// TestGzipTrailingData: a gzip-compressed capture followed by data that
// is not another gzip member (512 zeros, as gzip -t accepts with a
// warning) gives the output of the capture itself, with a warning that
// the data was ignored: the capture is not marked cut off, and no finding
// says it could not be read to its end.
func TestGzipTrailingData(t *testing.T) {
	src := genCapture("formats_pcapng_gz.pcapng.gz")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	padded := filepath.Join(t.TempDir(), "padded.pcapng.gz")
	if err := os.WriteFile(padded, append(raw, make([]byte, 512)...), 0o644); err != nil {
		t.Fatal(err)
	}
	warning := fmt.Sprintf("rocedump: warning: trailing data ignored: %s: data after the end of the gzip stream, at byte %d (00 00 00 00), is not another gzip member\n", padded, len(raw))
	for _, cmd := range [][]string{
		{"read", "--format", "json"},
		{"flows", "--format", "json", "--sort", "id"},
	} {
		want, wantErr, code := runCLI(t, append(cmd, src)...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d: %s", cmd[0], code, wantErr)
		}
		got, gotErr, code := runCLI(t, append(cmd, padded)...)
		got = strings.ReplaceAll(got, strconv.Quote(padded), strconv.Quote(src)) // flows' first_file, last_file
		if code != ExitOK || got != want || !strings.Contains(gotErr, warning) || strings.Contains(gotErr, "cut off") {
			t.Errorf("%s: exit %d, output differs: %v, stderr %q, want the warning %q", cmd[0], code, got != want, gotErr, warning)
		}
	}
	out, stderr, code := runCLI(t, "report", "--format", "json", "--fail-on", "never", padded)
	if code != ExitOK {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	var rep struct {
		Capture struct {
			CutOff   bool     `json:"cut_off"`
			Problems []string `json:"problems"`
		} `json:"capture"`
		Findings []struct{ Title string } `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Capture.CutOff || len(rep.Capture.Problems) != 1 || !strings.HasPrefix(rep.Capture.Problems[0], "trailing data ignored: ") {
		t.Errorf("report: cut_off %v, problems %q", rep.Capture.CutOff, rep.Capture.Problems)
	}
	for _, f := range rep.Findings {
		if strings.Contains(f.Title, "could not be read") || strings.Contains(f.Title, "cut off") {
			t.Errorf("report: finding %q", f.Title)
		}
	}
}

// TestDirectoryOfRotatedFiles: a directory of many rotated captures (more
// than a merge keeps open, so that each file is opened when its time
// comes) gives the report and flows of the same capture in one file, but
// for the files and frame numbers they name.
func TestDirectoryOfRotatedFiles(t *testing.T) {
	src, err := os.ReadFile(genCapture("congestion.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	// Split it into files of 3 records (its records are in time order).
	dir := t.TempDir()
	const header, perFile = 24, 3
	le := binary.LittleEndian
	if le.Uint32(src) != 0xa1b2c3d4 && le.Uint32(src) != 0xa1b23c4d {
		t.Fatal("congestion.pcap is not a little-endian pcap")
	}
	files := 0
	for off := header; off < len(src); files++ {
		part := append([]byte(nil), src[:header]...)
		for k := 0; k < perFile && off < len(src); k++ {
			end := off + 16 + int(le.Uint32(src[off+8:]))
			part = append(part, src[off:end]...)
			off = end
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("cap%04d.pcap", files)), part, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if files <= 16 {
		t.Fatalf("only %d files", files)
	}
	for _, cmd := range [][]string{
		{"flows", "--format", "json", "--sort", "id"},
		{"report", "--format", "json", "--fail-on", "never"},
	} {
		want, _, code := runCLI(t, append(cmd, genCapture("congestion.pcap"))...)
		if code != ExitOK {
			t.Fatalf("%s: exit %d", cmd[0], code)
		}
		got, stderr, code := runCLI(t, append(cmd, dir)...)
		if code != ExitOK {
			t.Fatalf("%s on %d files: exit %d: %s", cmd[0], files, code, stderr)
		}
		if want, got = stripFiles(want), stripFiles(got); got != want {
			t.Errorf("%s on %d rotated files: %s", cmd[0], files, firstDiff(want, got))
		}
	}
}

// stripFiles returns a JSON report or flow list without what names a
// file or a frame in it (file, files, frame, first_frame, last_frame,
// first_file, last_file):
// what a capture split into files changes.
func stripFiles(out string) string {
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		return out
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"file", "files", "frame", "first_frame", "last_frame", "first_file", "last_file"} {
				delete(v, k)
			}
			for _, e := range v {
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(v)
	b, _ := json.MarshalIndent(v, "", " ")
	return string(b)
}

// splitPcap writes the records of the little-endian pcap src into files
// of perFile records each, dir/cap0000.pcap on, and returns their paths.
func splitPcap(t *testing.T, src []byte, dir string, perFile int) []string {
	t.Helper()
	const header = 24
	le := binary.LittleEndian
	if m := le.Uint32(src); m != 0xa1b2c3d4 && m != 0xa1b23c4d {
		t.Fatal("not a little-endian pcap")
	}
	var paths []string
	for off := header; off < len(src); {
		part := append([]byte(nil), src[:header]...)
		for k := 0; k < perFile && off < len(src); k++ {
			end := off + 16 + int(le.Uint32(src[off+8:]))
			part = append(part, src[off:end]...)
			off = end
		}
		p := filepath.Join(dir, fmt.Sprintf("cap%04d.pcap", len(paths)))
		if err := os.WriteFile(p, part, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestFlowFramesNameTheirFile: a flow's first_frame, last_frame and
// cm.frame are numbers within a file, so with several files its record
// names the file each is in (first_file, last_file, cm.file), in flows
// json and jsonl and in the report's flows, with one file or several and
// on any number of workers. A capture split into files of 4 frames has
// frame g of the whole in file (g-1)/4, as frame (g-1)%4+1.
func TestFlowFramesNameTheirFile(t *testing.T) {
	whole := genCapture("storage.pcap") // has RDMA CM exchanges
	src, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	const perFile = 4
	paths := splitPcap(t, src, t.TempDir(), perFile)
	type ref struct {
		file  string
		frame int
	}
	split := func(g int) ref { return ref{paths[(g-1)/perFile], (g-1)%perFile + 1} }
	type record struct {
		ID         int    `json:"id"`
		FirstFrame int    `json:"first_frame"`
		LastFrame  int    `json:"last_frame"`
		FirstFile  string `json:"first_file"`
		LastFile   string `json:"last_file"`
		CM         *struct {
			Frame int    `json:"frame"`
			File  string `json:"file"`
		} `json:"cm"`
	}
	records := func(format string, args ...string) []record {
		t.Helper()
		cmd := append([]string{"flows", "--format", format, "--sort", "id"}, args...)
		if format == "report" {
			cmd = append([]string{"report", "--format", "json", "--fail-on", "never"}, args...)
		}
		out, stderr, code := runCLI(t, cmd...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", cmd, code, stderr)
		}
		var rs []record
		switch format {
		case "jsonl":
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var r record
				if err := json.Unmarshal([]byte(l), &r); err != nil {
					t.Fatal(err)
				}
				rs = append(rs, r)
			}
		case "report":
			var rep struct{ Flows []record }
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			rs = rep.Flows
		default:
			if err := json.Unmarshal([]byte(out), &rs); err != nil {
				t.Fatal(err)
			}
		}
		return rs
	}
	cms := 0
	for _, format := range []string{"json", "jsonl", "report"} {
		for _, workers := range []string{"1", "4"} {
			want := records(format, "--workers", workers, whole)
			got := records(format, append([]string{"--workers", workers}, paths...)...)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s: %d flows in the split capture, %d in the whole", format, len(got), len(want))
			}
			for i, w := range want {
				if w.FirstFile != whole || w.LastFile != whole || w.CM != nil && w.CM.File != whole {
					t.Errorf("%s, one file: flow %d names %q, %q, cm %+v, want %q", format, w.ID, w.FirstFile, w.LastFile, w.CM, whole)
				}
				g := got[i]
				if g.ID != w.ID {
					t.Fatalf("%s: flow %d is %d in the split capture", format, w.ID, g.ID)
				}
				if f, l := split(w.FirstFrame), split(w.LastFrame); (ref{g.FirstFile, g.FirstFrame}) != f || (ref{g.LastFile, g.LastFrame}) != l {
					t.Errorf("%s --workers %s: flow %d: first %s #%d, last %s #%d; want %s #%d, %s #%d", format, workers, w.ID,
						g.FirstFile, g.FirstFrame, g.LastFile, g.LastFrame, f.file, f.frame, l.file, l.frame)
				}
				if w.CM != nil {
					cms++
					if g.CM == nil || (ref{g.CM.File, g.CM.Frame}) != split(w.CM.Frame) {
						t.Errorf("%s: flow %d: cm %+v, want %+v", format, w.ID, g.CM, split(w.CM.Frame))
					}
				}
			}
		}
	}
	if cms == 0 {
		t.Error("no flow with an RDMA CM exchange")
	}
}
