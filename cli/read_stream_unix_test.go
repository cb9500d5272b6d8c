//go:build unix

package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadStreams: read prints the records of a capture that arrives
// through a pipe as they arrive (tcpdump -U -w - | rocedump read -), not
// when the input ends: the writer here holds the pipe open until the
// first line is out. Plain, and gzip-compressed with a flush after the
// records (as a compressor writing a live capture does), with one worker
// formatting and with two.
func TestReadStreams(t *testing.T) {
	data, err := os.ReadFile(captures(t, "gen", "retransmissions.pcap")[0])
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Flush() // a sync flush: the records can be inflated, the stream goes on
	gzFirst := bytes.Clone(gz.Bytes())
	zw.Close()
	gzRest := gz.Bytes()[len(gzFirst):]
	for _, tc := range []struct {
		name        string
		first, rest []byte // first written at once, then held until the first line (or the deadline)
	}{
		{"pcap", data, nil},
		{"gzip", gzFirst, gzRest},
	} {
		for _, workers := range []string{"1", "2"} {
			t.Run(tc.name+"/workers "+workers, func(t *testing.T) {
				fifo := filepath.Join(t.TempDir(), "mirror")
				if err := syscall.Mkfifo(fifo, 0o600); err != nil {
					t.Skipf("mkfifo: %v", err)
				}
				firstLine := make(chan string, 1)
				early := make(chan bool, 1)
				go func() {
					w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
					if err != nil {
						t.Error(err)
						return
					}
					defer w.Close()
					w.Write(tc.first)
					select {
					case <-firstLine:
						early <- true
					case <-time.After(20 * time.Second): // not a timing test: only so that a failure ends
						early <- false
					}
					w.Write(tc.rest)
				}()
				pr, pw := io.Pipe()
				var errOut bytes.Buffer
				done := make(chan int, 1)
				go func() {
					done <- Execute([]string{"read", "--workers", workers, fifo}, strings.NewReader(""), pw, &errOut)
					pw.Close()
				}()
				sc := bufio.NewScanner(pr)
				if !sc.Scan() {
					t.Fatalf("no output: %s", errOut.String())
				}
				firstLine <- sc.Text()
				for sc.Scan() {
				}
				if code := <-done; code != 0 {
					t.Fatalf("exit %d: %s", code, errOut.String())
				}
				if !<-early {
					t.Error("the first line came out only when the input ended")
				}
			})
		}
	}
}
