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
		data, err := os.ReadFile(filepath.Join(repoRoot, "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"text", "json"} {
			for _, verbose := range []bool{false, true} {
				opts := &ReadOptions{Filter: "udp or ip proto 47 or ip6"}
				sel, _ := newPacketSelector(nil, nil)
				printer, err := newPacketPrinter(format, "time", verbose, false)
				if err != nil {
					t.Fatal(err)
				}
				h := &packetHandler{opts: opts, sel: sel, filters: newFilterCache(opts.Filter),
					printer: printer, out: bufio.NewWriter(io.Discard), stats: &readStats{}}
				r, err := capture.NewReader(bytes.NewReader(data), name)
				if err != nil {
					t.Fatal(err)
				}
				var recs []capture.Record
				for {
					var rec capture.Record
					if err := r.Next(&rec); err != nil {
						break
					}
					rec.Data = append([]byte(nil), rec.Data...)
					recs = append(recs, rec)
				}
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
