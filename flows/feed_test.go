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
	r, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tab := NewTable(Config{})
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
		tab.Add(&p, FrameRef{Frame: rec.Number, Time: rec.Timestamp})
	}
	tab.Finish()
	return tab
}

func TestDump(t *testing.T) {
	for _, f := range []string{"linlinw5_rdma_cm.pcap", "linlinw5_rping.pcap", "linlinw5_rdma_read_bw.pcap", "linlinw5_nccl_tree2_node2.pcap", "linlinw5_pingpong_ud.pcap"} {
		tab := feedFile(t, "../testdata/pcaps/real/"+f)
		t.Logf("== %s", f)
		for _, fl := range tab.Flows() {
			pq, ok := fl.PartnerQPN()
			t.Logf("%d %v>%v qp %#x ep %d %v pk %d req %+v rr %+v msgs %d partner %#x %v %v naks %d cm %v", fl.ID, fl.Key.Src, fl.Key.Dst, fl.Key.DestQP, fl.Epoch, fl.Transport, fl.Packets,
				fl.Requests, fl.ReadResponses.Packets, fl.Messages, pq, ok, fl.PairedBy, fl.NAKTotal(), fl.CM != nil)
		}
	}
}
