package flowtable

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
)

// AppendFunc appends record r, the i-th of its Source, to dst with e: the
// record and whatever goes around it (a separator before it, a newline
// after it). r is valid only during the call, and it must not be changed.
// A record made from flows (a Source of FlowsOf) has its four counter
// maps (RNRTimers, Opcodes, DSCP, ECN) nil: e.AppendRecord writes their
// members from the lists of the Builder that made r (JSONEncoder.built),
// and filling maps that only that would read cost ~1,100 instructions a
// record; make the record with NewRecord, or read it through
// Source.All, to have them. EncodeRecords calls it from
// several goroutines at once, each with an e of its own: it must change
// nothing else.
type AppendFunc func(e *JSONEncoder, dst []byte, i int, r *Record) ([]byte, error)

// chunkRecords is the number of records EncodeRecords makes and encodes
// as one piece of work: about a millisecond of it, so that handing chunks
// between goroutines costs nothing next to them, and some 400 KB of
// indented JSON, so that the chunks in flight (two per P) stay small on a
// machine of many cores. Bigger chunks were no faster.
const chunkRecords = 256

// EncodeRecords writes every record of src to w in order, each as
// appendRecord appends it with a JSONEncoder set as enc. Making and
// encoding records is most of the time a big JSON output takes, and each
// record is made and encoded on its own, so with more than one P
// (runtime.GOMAXPROCS) and more than one chunk of records it spreads the
// chunks over up to GOMAXPROCS goroutines, each with its own Builder and
// encoder, and writes their bytes in order as they are done: the same
// bytes whatever the number of goroutines. It stops at the first error,
// from appendRecord or w, and returns it; its goroutines have ended when
// it returns.
func EncodeRecords(w io.Writer, src Source, enc JSONEncoder, appendRecord AppendFunc) error {
	chunks := (src.Len() + chunkRecords - 1) / chunkRecords
	if workers := min(runtime.GOMAXPROCS(0), chunks); workers > 1 {
		return encodeConcurrently(w, src, enc, appendRecord, chunks, workers)
	}
	e, b := enc.fresh(), new(Builder)
	var buf []byte
	for k := range chunks {
		var err error
		if buf, err = encodeChunk(buf[:0], src, k, &e, b, appendRecord); err != nil {
			return err
		}
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// encodeConcurrently is EncodeRecords over workers goroutines. Each takes
// the next chunk number and a buffer, and hands the chunk's bytes to the
// calling goroutine, which writes them in chunk order and gives the buffer
// back. The 2 × workers buffers bound the chunks encoded and not yet
// written, and let a goroutine run a chunk ahead while the writer waits
// for the one before.
func encodeConcurrently(w io.Writer, src Source, enc JSONEncoder, appendRecord AppendFunc, chunks, workers int) error {
	type result struct {
		b   []byte
		err error
	}
	done := make([]chan result, chunks) // one result each, so that no send waits
	for k := range done {
		done[k] = make(chan result, 1)
	}
	free := make(chan []byte, 2*workers)
	for range cap(free) {
		free <- nil
	}
	var next atomic.Int64 // the next chunk to take
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e, b := enc.fresh(), new(Builder)
			for buf := range free {
				k := int(next.Add(1) - 1)
				if k >= chunks {
					return
				}
				buf, err := encodeChunk(buf[:0], src, k, &e, b, appendRecord)
				done[k] <- result{buf, err}
			}
		}()
	}
	defer func() {
		// On an error, the goroutines take no more chunks: those at work
		// finish theirs, those waiting for a buffer stop waiting.
		next.Store(int64(chunks))
		close(free)
		wg.Wait()
	}()
	for _, c := range done {
		r := <-c
		if r.err != nil {
			return r.err
		}
		if _, err := w.Write(r.b); err != nil {
			return err
		}
		free <- r.b
	}
	return nil
}

// encodeChunk appends chunk k of src (records k×chunkRecords on) to dst,
// made by b and encoded with e.
func encodeChunk(dst []byte, src Source, k int, e *JSONEncoder, b *Builder, appendRecord AppendFunc) ([]byte, error) {
	i := k * chunkRecords
	var err error
	e.built = b
	src.Slice(i, min(i+chunkRecords, src.Len())).build(b, makeLists, func(r *Record) bool {
		dst, err = appendRecord(e, dst, i, r)
		i++
		return err == nil
	})
	e.built = nil
	return dst, err
}
