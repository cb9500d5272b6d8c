package flowtable

import (
	"bufio"
	"io"
)

// FormatJSONL is the JSON Lines output format: one Record per line, for
// engines that read newline-delimited JSON (DuckDB read_json_auto, Spark
// spark.read.json, ClickHouse JSONEachRow) across many captures.
const FormatJSONL = "jsonl"

// WriteJSONL writes the flows as JSON Lines: each Record as one compact
// JSON object (the fields of WriteJSON) followed by a newline.
func WriteJSONL(w io.Writer, shown []Record) error {
	return WriteJSONLOf(w, RecordsOf(shown))
}

// WriteJSONLOf is WriteJSONL over a Source, one record at a time.
func WriteJSONLOf(w io.Writer, shown Source) error {
	var enc JSONEncoder // compact, HTML characters left alone
	bw := bufio.NewWriterSize(w, 64<<10)
	buf := make([]byte, 0, 2<<10)
	for r := range shown.All() {
		var err error
		if buf, err = enc.AppendRecord(buf[:0], r, 0); err != nil {
			return err
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}
