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

// WriteJSONLOf is WriteJSONL over a Source, a chunk of records at a time,
// made and encoded on every P (EncodeRecords).
func WriteJSONLOf(w io.Writer, shown Source) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	// The zero JSONEncoder: compact, HTML characters left alone.
	err := EncodeRecords(bw, shown, JSONEncoder{}, func(e *JSONEncoder, dst []byte, _ int, r *Record) ([]byte, error) {
		dst, err := e.AppendRecord(dst, r, 0)
		return append(dst, '\n'), err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}
