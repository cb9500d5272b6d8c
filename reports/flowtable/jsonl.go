package flowtable

import (
	"encoding/json"
	"io"
)

// FormatJSONL is the JSON Lines output format: one Record per line, for
// engines that read newline-delimited JSON (DuckDB read_json_auto, Spark
// spark.read.json, ClickHouse JSONEachRow) across many captures.
const FormatJSONL = "jsonl"

// WriteJSONL writes the flows as JSON Lines: each Record as one compact
// JSON object (the fields of WriteJSON) followed by a newline.
func WriteJSONL(w io.Writer, shown []Record) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range shown {
		if err := enc.Encode(&shown[i]); err != nil {
			return err
		}
	}
	return nil
}
