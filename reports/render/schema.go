package render

import _ "embed" // for the schema

//go:embed schema.json
var schema string

// Schema returns the JSON Schema (draft 2020-12) of what WriteJSON writes:
// every field of the report, its type, and which are required.
func Schema() string { return schema }
