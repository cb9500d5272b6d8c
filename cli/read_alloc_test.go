package cli

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocedump/rocedump/capture"
)

// TestReadAllocs guards the fast path of rocedump read: reading a record,
// filtering, decoding, counting and printing it (text and JSON) allocate
// nothing per packet once the buffers have grown.
func TestReadAllocs(t *testing.T) {
	for _, name := range []string{"real/linlinw5_rdma_cm.pcap", "gen/mirror_erspan3_ipv6.pcapng", "gen/congestion.pcap"} {
		recs := testRecords(t, name)
		for _, format := range []string{"text", "json"} {
			for _, verbose := range []bool{false, true} {
				opts := &ReadOptions{Filter: "udp or ip proto 47 or ip6"}
				sel, _ := newPacketSelector(nil, nil)
				printer, err := newPacketPrinter(format, "time", verbose, false)
				if err != nil {
					t.Fatal(err)
				}
				stats := &readStats{}
				h := &packetHandler{opts: opts, filters: newFilterCache(opts.Filter), out: bufio.NewWriter(io.Discard), stats: stats,
					frames: frameFormatter{sel: sel, printer: printer, stats: stats}}
				for i := range recs { // warm up: buffers grow, filters compile
					h.handle(&recs[i])
				}
				i := 0
				allocs := testing.AllocsPerRun(2*len(recs), func() {
					h.handle(&recs[i%len(recs)])
					i++
				})
				if allocs != 0 {
					t.Errorf("%s %s verbose=%v: want 0 allocs per packet, got %v", name, format, verbose, allocs)
				}
			}
		}
	}
}

// TestReadPipelineAllocs: with several goroutines formatting the packets
// (readPipeline), copying a frame into a chunk, formatting and writing it
// allocate nothing per packet either, once the chunks' buffers have grown.
// (Handing a chunk over may: the runtime's own bookkeeping when a
// goroutine waits, now and then; a pass here is a chunk.)
func TestReadPipelineAllocs(t *testing.T) {
	recs := testRecords(t, "gen/congestion.pcap")
	for len(recs) < readChunkFrames/2 {
		recs = append(recs, recs...)
	}
	for _, format := range []string{"text", "json"} {
		opts := &ReadOptions{Format: format, TimeFormat: "time"}
		sel, _ := newPacketSelector(nil, nil)
		stats := &readStats{}
		h := &packetHandler{opts: opts, filters: newFilterCache(""), out: bufio.NewWriter(io.Discard), stats: stats}
		h.pipe = newReadPipeline(3, h.out, func() frameFormatter {
			p, _ := newPacketPrinter(format, "time", false, false)
			return frameFormatter{sel: sel, printer: p}
		})
		for range 20 { // warm up: every chunk's buffers grow
			for i := range recs {
				h.handle(&recs[i])
			}
		}
		h.pipe.flush(stats)
		allocs := testing.AllocsPerRun(20, func() {
			for i := range recs {
				h.handle(&recs[i])
			}
			h.pipe.flush(stats)
		})
		h.pipe.close()
		if perPacket := allocs / float64(len(recs)); perPacket > 0.01 {
			t.Errorf("%s: %.3f allocations per packet (%v per pass of %d), want none", format, perPacket, allocs, len(recs))
		}
		if stats.packets != 41*len(recs) {
			t.Errorf("%s: %d packets counted, want %d", format, stats.packets, 41*len(recs))
		}
	}
}

// testRecords reads every record of the capture testdata/pcaps/name, each
// with its own copy of the data.
func testRecords(t *testing.T, name string) []capture.Record {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "pcaps", name))
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewReader(bytes.NewReader(data), name)
	if err != nil {
		t.Fatal(err)
	}
	var recs []capture.Record
	for {
		var rec capture.Record
		if err := r.Next(&rec); err != nil {
			return recs
		}
		rec.Data = append([]byte(nil), rec.Data...)
		recs = append(recs, rec)
	}
}
