package bench

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/rocedump/rocedump/gen"
)

// Capture is a generated capture file.
type Capture struct {
	Path    string
	Packets int
	Bytes   int64 // file size
}

// Prefix asks Generate to also write the first Packets frames of the stream
// to Path: the same frames, a shorter file (for tshark, and for the memory
// check at two capture lengths).
type Prefix struct {
	Path    string
	Packets int
}

// errEnough stops the generator's stream.
var errEnough = errors.New("bench: enough packets")

// Generate writes the first packets frames of the fabric's traffic to path
// as a pcap (microsecond timestamps, Ethernet), and the prefixes beside it,
// in one pass and constant memory. It returns the main capture first, then
// the prefixes in the order given.
func Generate(f Fabric, packets int, path string, prefixes ...Prefix) ([]Capture, error) {
	if packets < 1 {
		return nil, fmt.Errorf("bench: %d packets: want at least 1", packets)
	}
	per := f.Connections() * f.FramesPerMessage()
	f.Messages = packets/per + 2
	s, err := f.Scenario()
	if err != nil {
		return nil, err
	}
	type out struct {
		file *os.File
		buf  *bufio.Writer
		pw   *gen.PcapWriter
		max  int
		cap  Capture
	}
	var outs []*out
	open := func(p string, n int) error {
		fl, err := os.Create(p)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(fl, 1<<20)
		pw, err := gen.NewPcapWriter(bw, 1, *s.Interfaces[0].Snaplen, false, false)
		if err != nil {
			fl.Close()
			return err
		}
		outs = append(outs, &out{file: fl, buf: bw, pw: pw, max: n, cap: Capture{Path: p}})
		return nil
	}
	defer func() {
		for _, o := range outs {
			o.file.Close()
		}
	}()
	if err := open(path, packets); err != nil {
		return nil, err
	}
	for _, p := range prefixes {
		if err := open(p.Path, min(p.Packets, packets)); err != nil {
			return nil, err
		}
	}
	n := 0
	err = gen.Stream(s, func(ts time.Time, frame []byte, origLen int) error {
		for _, o := range outs {
			if n < o.max {
				if err := o.pw.WriteFrame(ts, frame, origLen); err != nil {
					return err
				}
				o.cap.Packets++
			}
		}
		n++
		if n >= packets {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	caps := make([]Capture, len(outs))
	for i, o := range outs {
		if err := o.buf.Flush(); err != nil {
			return nil, err
		}
		st, err := o.file.Stat()
		if err != nil {
			return nil, err
		}
		o.cap.Bytes = st.Size()
		if err := o.file.Close(); err != nil {
			return nil, err
		}
		caps[i] = o.cap
	}
	return caps, nil
}
