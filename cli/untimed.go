package cli

import (
	"time"

	"github.com/rocedump/rocedump/capture"
)

// Frames without a time. A pcapng Simple Packet Block carries no
// timestamp: its record has the zero Time (capture.Record). Left so in an
// analysis pass, such a frame made the flow it opened start in the year 1
// (a duration of 2562047h, rates and waits from year 1, rate bins at
// time 0). An analysis pass reads its input through a timedInput, which
// gives every untimed frame a time by this rule:
//
//   - an untimed frame takes the time of the frame before it in the pass
//     (the merged input, in the order the pass reads it: the Merger puts
//     an untimed frame right after the frame before it in its own file,
//     so that is the frame before it in its file, but for a file's
//     leading frames);
//   - the untimed frames before the pass's first timed frame take the
//     time of that first timed frame (they are held, copied, until it is
//     read: at most maxHeldUntimed bytes of them; past that, and in a
//     capture with no time at all, they keep the zero Time, as before);
//
// so that every module (flows, the report's collectors, the capture's
// span, the clock watch) sees times that never go back and lie within
// the capture's timed span. Only the pass sees these times: read prints
// an untimed frame with no time, as the file has it. extract, which
// writes the frames of an analysis pass, writes a borrowed time too,
// which keeps its output in time order (and analysed again, the same).
//
// A batch of a file that has given no untimed frame (capture.Merger.
// Untimed: every pcap file, most pcapng ones) costs a call and a store;
// in one that has, each timed frame costs a compare (TimeNanos against
// 0; the epoch itself, whose TimeNanos is also 0, is then told apart by
// Timestamp.IsZero).
type timedInput struct {
	m *capture.Merger

	started bool      // a timed frame was read: last is a frame's time
	last    time.Time // the time of the last frame handed out
	lastNs  int64     // last's Record.TimeNanos

	// The untimed frames read before the first timed one, copied, with
	// the file of each batch; handed out before anything else is read.
	held      []heldBatch
	heldBytes int
	gaveUp    bool  // held too much: leading untimed frames keep no time
	err       error // what ended the input while frames were held
}

// heldBatch is one batch of held frames, all of file.
type heldBatch struct {
	recs []capture.Record
	file int
}

// maxHeldUntimed bounds the bytes of leading untimed frames a pass holds
// while it looks for the first timed frame.
var maxHeldUntimed = 32 << 20

// NextBatch is capture.Merger.NextBatch with every untimed frame given a
// time (see timedInput).
func (t *timedInput) NextBatch(recs []capture.Record) (n, file int, err error) {
	if len(t.held) > 0 {
		return t.unhold(recs)
	}
	if t.err != nil {
		return 0, -1, t.err
	}
	if !t.started && !t.gaveUp {
		return t.lead(recs)
	}
	if n, file, err = t.m.NextBatch(recs); err != nil || n == 0 {
		return n, file, err
	}
	if t.m.Untimed(file) {
		t.fill(recs[:n])
	} else {
		last := &recs[n-1]
		t.last, t.lastNs = last.Timestamp, last.TimeNanos
	}
	return n, file, nil
}

// fill gives the untimed frames of recs the time of the frame before
// them and notes the time of the last.
func (t *timedInput) fill(recs []capture.Record) {
	for i := range recs {
		if recs[i].TimeNanos == 0 {
			t.borrow(recs, i)
		}
	}
	last := &recs[len(recs)-1]
	t.last, t.lastNs = last.Timestamp, last.TimeNanos
}

// borrow gives recs[i], if it has no time, the time of the frame before
// it: recs[i-1], filled already, or the last of the batch before.
func (t *timedInput) borrow(recs []capture.Record, i int) {
	rec := &recs[i]
	if !rec.Timestamp.IsZero() {
		return // the epoch itself
	}
	if i > 0 {
		rec.Timestamp, rec.TimeNanos = recs[i-1].Timestamp, recs[i-1].TimeNanos
	} else {
		rec.Timestamp, rec.TimeNanos = t.last, t.lastNs // still none if no frame before had one
	}
}

// lead reads until the first timed frame, holding the untimed frames
// before it, which then take its time.
func (t *timedInput) lead(recs []capture.Record) (int, int, error) {
	for {
		n, file, err := t.m.NextBatch(recs)
		if err != nil || n == 0 {
			if len(t.held) == 0 {
				return n, file, err
			}
			t.err, t.gaveUp = err, true
			return t.unhold(recs)
		}
		j := 0
		for j < n && recs[j].TimeNanos == 0 && recs[j].Timestamp.IsZero() {
			j++
		}
		if j == n {
			// No time yet: hold the batch (its data is valid only
			// until the next read).
			if t.hold(recs[:n], file) {
				continue
			}
			t.gaveUp = true
			return t.unhold(recs)
		}
		t.started = true
		first := &recs[j]
		for i := range t.held {
			for k := range t.held[i].recs {
				h := &t.held[i].recs[k]
				h.Timestamp, h.TimeNanos = first.Timestamp, first.TimeNanos
			}
		}
		for i := range j {
			recs[i].Timestamp, recs[i].TimeNanos = first.Timestamp, first.TimeNanos
		}
		t.fill(recs[j:n])
		if len(t.held) == 0 {
			return n, file, nil
		}
		// This batch goes out after the held ones. Its data stays valid:
		// nothing is read until every held frame is handed out.
		t.held = append(t.held, heldBatch{recs: append([]capture.Record(nil), recs[:n]...), file: file})
		return t.unhold(recs)
	}
}

// hold copies recs, all of file, to be handed out later. It says false,
// holding nothing more, when that would hold more than maxHeldUntimed
// bytes.
func (t *timedInput) hold(recs []capture.Record, file int) bool {
	size := 0
	for i := range recs {
		size += len(recs[i].Data)
	}
	t.heldBytes += size
	cp := append([]capture.Record(nil), recs...)
	buf := make([]byte, 0, size)
	for i := range cp {
		buf = append(buf, cp[i].Data...)
		cp[i].Data = buf[len(buf)-len(cp[i].Data) : len(buf) : len(buf)]
	}
	t.held = append(t.held, heldBatch{recs: cp, file: file})
	return t.heldBytes <= maxHeldUntimed
}

// unhold hands out the first held frames, as many as recs holds, all of
// one file.
func (t *timedInput) unhold(recs []capture.Record) (int, int, error) {
	b := &t.held[0]
	n := copy(recs, b.recs)
	file := b.file
	if b.recs = b.recs[n:]; len(b.recs) == 0 {
		t.held[0] = heldBatch{}
		t.held = t.held[1:]
	}
	if len(t.held) == 0 {
		t.heldBytes = 0
	}
	if n > 0 {
		last := &recs[n-1]
		t.last, t.lastNs = last.Timestamp, last.TimeNanos
	}
	return n, file, nil
}
