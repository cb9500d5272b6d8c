package capture_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/rocedump/rocedump/capture"
)

// Reading a capture: Next until io.EOF; a cut-off file still delivers every
// whole record first.
func ExampleReader() {
	var file bytes.Buffer
	w, _ := capture.NewPcapWriter(&file, capture.LinkTypeEthernet, 0)
	for i := range 3 {
		w.WritePacket(time.Unix(1700000000, int64(i)*1000).UTC(), make([]byte, 60+i), 60+i)
	}
	cut := file.Bytes()[:file.Len()-10] // lose the end of the last record

	r, err := capture.NewReader(bytes.NewReader(cut), "example.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Format(), r.LinkTypes())
	var rec capture.Record
	for {
		err := r.Next(&rec)
		if err == io.EOF {
			break
		}
		if errors.Is(err, capture.ErrCutOff) {
			fmt.Println(err)
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.Number, rec.Timestamp.Format(time.RFC3339Nano), rec.CapLen, rec.LinkType)
	}
	// Output:
	// pcap (ns) [EN10MB (1)]
	// 1 2023-11-14T22:13:20Z 60 EN10MB (1)
	// 2 2023-11-14T22:13:20.000001Z 61 EN10MB (1)
	// example.pcap: file cut off in record 3 (have 68 of 78 bytes)
}
