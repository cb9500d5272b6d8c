package capture

import (
	"bufio"
	"io"
)

// blockSize is the read size of the block path: what one read system call
// asks of a regular file, and the window the records are handed out from.
//
// It is deliberately smaller than the 4 MiB one might expect: a block that
// fits in the L2 cache is still there when the records are parsed (and when
// the caller decodes them). Measured on the benchmark machine (AMD EPYC,
// 2 M-packet, 211 MB pcap of 96-byte frames, page cache warm, one pinned
// core): reading it in 256 KiB blocks and walking the records cost 11.3 to
// 12.3 ns per record, in 4 MiB blocks 13.7 to 14.3 (dd alone, 11.1); the
// Reader itself was fastest with 128 or 256 KiB blocks, about 1 ns per
// record slower with 512 KiB to 4 MiB.
const blockSize = 256 << 10

// block is the input of the block path: a window over a source, refilled
// with reads as large as the window allows, whose unread bytes are
// buf[lo:hi]. It implements the few bufio.Reader operations the Reader uses
// (peek, discard, Read) with bufio's semantics, so that the generic parsing
// code sees the same bytes and the same errors whichever input it reads,
// and it lets the hot paths parse a record straight out of buf.
//
// Why reads, not mmap: when a mapped file shrinks (a capture rotated,
// truncated or rewritten by the program writing it), the next access to a
// page past its new end raises SIGBUS, which kills a Go program, and
// Record.Data handed to the caller would be such an access. There is no
// cheap, complete defence: checking the size first is racy,
// runtime/debug.SetPanicOnFault turns the fault into a panic only on the
// goroutine that set it and only where a recover waits (not in the
// caller's code using Data), MAP_PRIVATE does not help, and a read lease
// (F_SETLEASE) would block the writer. Reading blocks has no such failure
// mode: a file that shrinks reads as cut off, one that grows is read as far
// as it had grown when each block was read, as on the streaming path. The
// price, measured with the same hot loop over a mapping of the 211 MB
// capture above: 14.3 ns per record mapped against 17.1 read (the copy out
// of the page cache, ~11 ns per 112-byte record here, cannot overlap with
// the parsing, as a mapping's page loads can).
type block struct {
	buf    []byte // fixed size; buf[lo:hi] are the unread bytes
	lo, hi int
	base   int64 // stream offset of buf[0]
	src    io.Reader
	err    error // a read error not yet returned, as bufio keeps it
}

// maxEmptyReads bounds how often a source may return no bytes and no error
// before the read fails with io.ErrNoProgress (bufio's limit).
const maxEmptyReads = 100

func newBlock(src io.Reader, size int) block {
	return block{src: src, buf: make([]byte, size)}
}

// pos returns the stream offset of the next unread byte.
func (b *block) pos() int64 { return b.base + int64(b.lo) }

// size returns the size of the window: the largest peek that can succeed.
func (b *block) size() int { return len(b.buf) }

// readErr returns the pending read error and forgets it.
func (b *block) readErr() error {
	err := b.err
	b.err = nil
	return err
}

// fill reads until n bytes are unread or a read fails (the error is kept in
// b.err); n must not exceed the window. The unread bytes (less than n, so
// less than a record) first move to the front of the window, as bufio does,
// so that every read asks for nearly the whole window.
func (b *block) fill(n int) {
	if b.lo > 0 {
		copy(b.buf, b.buf[b.lo:b.hi])
		b.base += int64(b.lo)
		b.hi -= b.lo
		b.lo = 0
	}
	if need := n - (b.hi - b.lo); need > 0 && b.err == nil {
		m, err := readAtLeast(b.src, b.buf[b.hi:], need)
		b.hi += m
		b.err = err
	}
}

// readAtLeast reads from src into buf until it holds min bytes or src
// fails, and returns what it read with src's error as it came (io.EOF
// stays io.EOF, however much was read before it); a source that returns
// nothing maxEmptyReads times in a row fails with io.ErrNoProgress, as
// bufio's does.
func readAtLeast(src io.Reader, buf []byte, min int) (n int, err error) {
	for empty := 0; n < min && err == nil; {
		var m int
		m, err = src.Read(buf[n:])
		if m < 0 || m > len(buf)-n {
			panic("capture: source returned an impossible count from Read")
		}
		n += m
		if m > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads && err == nil {
			err = io.ErrNoProgress
		}
	}
	return n, err
}

// peek returns the next n bytes without consuming them, like
// bufio.Reader.Peek: fewer, with the error that stopped the reads, at the end
// of the input; bufio.ErrBufferFull if n exceeds the window.
func (b *block) peek(n int) ([]byte, error) {
	if n > len(b.buf) {
		p := b.buf[b.lo:b.hi]
		return p, bufio.ErrBufferFull
	}
	if b.hi-b.lo < n && b.err == nil {
		b.fill(n)
	}
	if avail := b.hi - b.lo; avail < n {
		err := b.readErr()
		if err == nil {
			err = bufio.ErrBufferFull
		}
		return b.buf[b.lo:b.hi], err
	}
	return b.buf[b.lo : b.lo+n], nil
}

// discard consumes n bytes like bufio.Reader.Discard: it returns how many it
// consumed, and the error that stopped it short.
func (b *block) discard(n int) (int, error) {
	if n <= 0 {
		return 0, nil
	}
	for remain := n; ; {
		if b.lo == b.hi && b.err == nil {
			b.fill(1)
		}
		skip := min(b.hi-b.lo, remain)
		b.lo += skip
		remain -= skip
		if remain == 0 {
			return n, nil
		}
		if b.lo == b.hi && b.err != nil {
			return n - remain, b.readErr()
		}
	}
}

// Read implements io.Reader like bufio.Reader.Read, for the copy path of
// records larger than the window and for a gzip decompressor: unread bytes
// of the window first; a read into p directly when the window is empty and
// p at least as large.
func (b *block) Read(p []byte) (int, error) {
	if len(p) == 0 {
		if b.hi > b.lo {
			return 0, nil
		}
		return 0, b.readErr()
	}
	if b.lo == b.hi {
		if b.err != nil {
			return 0, b.readErr()
		}
		if len(p) >= len(b.buf) {
			b.base += int64(b.hi)
			b.lo, b.hi = 0, 0
			n, err := b.src.Read(p)
			if n < 0 || n > len(p) {
				panic("capture: source returned an impossible count from Read")
			}
			b.base += int64(n)
			return n, err
		}
		b.fill(1)
		if b.lo == b.hi {
			return 0, b.readErr()
		}
	}
	n := copy(p, b.buf[b.lo:b.hi])
	b.lo += n
	return n, nil
}
