// Package capture reads packet capture files and writes pcap and pcapng.
//
// The readers are our own, not pcapgo's: every length field in the file is
// checked before it is used, no allocation is sized from a length field
// alone, a file that is cut off mid-record delivers every whole record before
// it reports ErrCutOff, and reading a record allocates nothing.
//
// Supported input:
//
//   - pcap (LINKTYPE in the file header), microsecond (magic a1b2c3d4) and
//     nanosecond (a1b23c4d) resolution, either byte order, any snap length
//     including 0;
//   - pcapng: several sections in either byte order, several interfaces with
//     different link types, if_tsresol (powers of 10 and of 2), if_tsoffset,
//     if_fcslen, Enhanced, Simple and obsolete Packet Blocks; every other
//     block type is skipped by its length (Custom and systemd Journal
//     Export Blocks taking a frame number, as Wireshark shows them as
//     frames, so that Record.Number is Wireshark's frame number);
//   - either of them gzip-compressed (also multistream), detected from the
//     magic bytes, never from the file name; data after the last member
//     that is not another member is ignored, as gzip ignores it, and
//     noted (Reader.Trailing).
//
// Several files are read as one, in capture-time order, by a Merger. A
// merge of many files (a directory of rotated captures) holds open only
// the files whose records overlap the time being read: each file is opened
// once to check it and read its first record, then closed until that
// record is the earliest of all, so that neither the open files nor the
// read buffers grow with the number of files (see keepOpen).
//
// A regular file is read in 256 KiB blocks, and Next hands out each record
// as a slice of the block it lies in, parsed with direct loads (on the
// benchmark machine about 17 ns per 96-byte record on one core, ~11 of them
// the read system calls; see Reader and blockSize). Gzip-compressed files, standard input and
// other streams go through a bufio.Reader; both paths deliver the same
// records and errors.
//
// A Reader is not safe for concurrent use.
package capture
