package cli

import (
	"errors"
	"fmt"

	"github.com/rocedump/rocedump/capture"
	"github.com/rocedump/rocedump/decode/bth"
	"github.com/rocedump/rocedump/decode/packet"
	"github.com/rocedump/rocedump/flows"
)

// frameAnalyzer is the per-frame step of every analysis pass, over files
// (analyze) and live (rocedump live): decode the frame, count it in the
// capture statistics, and feed it to the sinks. Both passes go through
// this one step, which is what makes a live report equal to the offline
// report of the files it wrote.
type frameAnalyzer struct {
	st      *captureStats
	sinks   []packetSink
	dec     packet.Decoder
	pkt     packet.Packet
	skipped map[capture.LinkType]bool // link types rocedump does not decode
}

func newFrameAnalyzer(st *captureStats, sinks []packetSink) *frameAnalyzer {
	return &frameAnalyzer{st: st, sinks: sinks, skipped: map[capture.LinkType]bool{}}
}

// add decodes and accounts one frame of input file number file (an index
// into st.Files). It returns the decoded packet, valid until the next
// call, or nil when the frame's link type is one rocedump does not decode.
// It allocates nothing.
func (a *frameAnalyzer) add(rec *capture.Record, file int) *packet.Packet {
	st, pkt := a.st, &a.pkt
	st.Packets++
	if st.First.IsZero() || rec.Timestamp.Before(st.First) {
		st.First = rec.Timestamp
	}
	if rec.Timestamp.After(st.Last) {
		st.Last = rec.Timestamp
	}
	if err := a.dec.Decode(rec.LinkType, rec.Data, rec.OrigLen, pkt); err != nil {
		st.Unsupported++
		a.skipped[rec.LinkType] = true
		return nil
	}
	if pkt.Truncated {
		st.Truncated++
	}
	switch pkt.Kind {
	case packet.KindRoCE:
		st.RoCE++
		if pkt.ICRC == bth.ICRCBad {
			st.ICRCBad++
		}
	case packet.KindMalformed:
		st.Malformed++
	}
	at := flows.FrameRef{File: file, Frame: rec.Number, Time: rec.Timestamp, Seq: st.Packets - 1}
	for _, s := range a.sinks {
		s.Add(pkt, at)
	}
	return pkt
}

// finish notes the frames of link types rocedump does not decode: a
// problem when other frames were read, an input error (exit 2) when every
// frame was of such a type.
func (a *frameAnalyzer) finish() error {
	st := a.st
	if st.Unsupported == 0 {
		return nil
	}
	for lt := range a.skipped {
		msg := fmt.Sprintf("skipped %d frames: %v", st.Unsupported, &packet.LinkTypeError{LinkType: lt})
		if st.Unsupported == st.Packets {
			return &exitError{code: ExitUsage, err: errors.New(msg)}
		}
		st.Problems = append(st.Problems, msg)
		break
	}
	return nil
}
