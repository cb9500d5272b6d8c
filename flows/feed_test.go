package flows

import (
	"errors"
	"io"
	"testing"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/packet"
)

// feedFile decodes every frame of a capture file into a new, finished table.
func feedFile(t testing.TB, path string) *Table {
	t.Helper()
	tab := NewTable(Config{})
	decodeEach(t, path, func(rec *capture.Record, p *packet.Packet) {
		tab.Add(p, FrameRef{Frame: rec.Number, Time: rec.Timestamp})
	})
	tab.Finish()
	return tab
}

// decodeEach decodes every frame of a capture file it can and hands it to
// fn, up to the end of the file or the record where it was cut off.
func decodeEach(t testing.TB, path string, fn func(rec *capture.Record, p *packet.Packet)) {
	t.Helper()
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var (
		rec capture.Record
		p   packet.Packet
		dec packet.Decoder
	)
	for {
		err := r.Next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, capture.ErrCutOff) {
				break
			}
			t.Fatal(err)
		}
		if dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, &p) != nil {
			continue
		}
		fn(&rec, &p)
	}
}
