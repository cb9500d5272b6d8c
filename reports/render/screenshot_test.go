package render

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// needChromium returns the browser, or skips the test outside CI and
// fails it in CI (CI set), where scripts/setup installs the Debian
// packages chromium and fonts-dejavu-core. The test installs nothing.
func needChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing; scripts/setup must install the Debian packages chromium and fonts-dejavu-core", chromiumPath)
		}
		t.Skipf("%s not installed (apt-get install --no-install-recommends chromium fonts-dejavu-core); skipping the HTML screenshot check", chromiumPath)
	}
	return chromiumPath
}

// headlessChromium is the command that opens the page file path in the
// browser bin, in a window width × height pixels at scale 1, with a
// profile and home in dir and nothing fetched from the network, doing
// what the arguments args ask (--screenshot=FILE, --dump-dom). It runs
// under ctx.
func headlessChromium(ctx context.Context, bin, dir, path string, width, height int, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir=" + filepath.Join(dir, "profile"),
		fmt.Sprintf("--window-size=%d,%d", width, height)}, args...), "file://"+path)...)
	cmd.Env = append(os.Environ(), "HOME="+dir)
	return cmd
}

// TestHTMLScreenshot opens the incident report in headless Chromium, takes
// a screenshot, and checks that every chart's plot is on screen with its
// series drawn in it. Set ROCEDUMP_SCREENSHOT=FILE.png to keep the image.
func TestHTMLScreenshot(t *testing.T) {
	bin := needChromium(t)
	dir := t.TempDir()
	page, shot := filepath.Join(dir, "report.html"), filepath.Join(dir, "shot.png")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, incidentReport()); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := headlessChromium(ctx, bin, dir, page, 1400, 2400, "--screenshot="+shot)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, out)
	}
	img := decodePNG(t, shot)
	if keep := os.Getenv("ROCEDUMP_SCREENSHOT"); keep != "" {
		if b, err := os.ReadFile(shot); err == nil {
			os.WriteFile(keep, b, 0o644)
		}
	}
	if b := img.Bounds(); b.Dx() != 1400 || b.Dy() != 2400 {
		t.Fatalf("screenshot is %dx%d, want 1400x2400", b.Dx(), b.Dy())
	}

	tests := []struct {
		chart  string
		bg     string
		series []string // colours that must appear inside the plot
		min    int      // pixels of each
	}{
		{"throughput", bgThroughput, []string{flowColor(0), flowColor(1), flowColor(2), flowColor(3), flowColor(4)}, 150},
		{"congestion", bgCongestion, []string{colorCE, colorCNP}, 300},
		{"retransmissions", bgEvents, []string{colorRetx, colorPSNGap}, 80},
	}
	for _, tc := range tests {
		t.Run(tc.chart, func(t *testing.T) {
			plot := plotBox(img, rgb(t, tc.bg))
			if plot.Dx() < 800 || plot.Dy() < 80 {
				t.Fatalf("plot background %s spans %v; want a plot at least 800x80 px on screen", tc.bg, plot)
			}
			for _, c := range tc.series {
				got := pixels(img, plot, rgb(t, c), 40)
				t.Logf("%s: %d pixels in the plot %v", c, got, plot)
				if got < tc.min {
					t.Errorf("series colour %s: %d pixels inside the plot %v, want at least %d", c, got, plot, tc.min)
				}
			}
		})
	}
}

func decodePNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return img
}

// plotBox is the bounding box of the rows where at least 400 pixels have
// exactly the colour c: a plot's background, which no text or line shares
// over such a width.
func plotBox(img image.Image, c [3]int) image.Rectangle {
	var box image.Rectangle
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := image.Rect(b.Min.X, y, b.Max.X, y+1)
		if pixels(img, row, c, 0) < 400 {
			continue
		}
		x0, x1 := b.Max.X, b.Min.X
		for x := b.Min.X; x < b.Max.X; x++ {
			if near(img, x, y, c, 0) {
				x0, x1 = min(x0, x), max(x1, x+1)
			}
		}
		if r := image.Rect(x0, y, x1, y+1); box.Empty() {
			box = r
		} else {
			box = box.Union(r)
		}
	}
	return box
}

// pixels is how many pixels of area are within tol of c (the sum of the
// channel differences, on a 0-255 scale).
func pixels(img image.Image, area image.Rectangle, c [3]int, tol int) int {
	n := 0
	for y := area.Min.Y; y < area.Max.Y; y++ {
		for x := area.Min.X; x < area.Max.X; x++ {
			if near(img, x, y, c, tol) {
				n++
			}
		}
	}
	return n
}

func near(img image.Image, x, y int, c [3]int, tol int) bool {
	r, g, b, _ := img.At(x, y).RGBA()
	return abs(int(r>>8)-c[0])+abs(int(g>>8)-c[1])+abs(int(b>>8)-c[2]) <= tol
}

// rgb parses "#rrggbb".
func rgb(t *testing.T, hex string) [3]int {
	t.Helper()
	v, err := strconv.ParseUint(hex[1:], 16, 32)
	if len(hex) != 7 || err != nil {
		t.Fatalf("bad colour %q", hex)
	}
	return [3]int{int(v >> 16), int(v >> 8 & 0xff), int(v & 0xff)}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
