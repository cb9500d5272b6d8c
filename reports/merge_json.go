package reports

import (
	"encoding/json"
	"fmt"
	"io"
)

// UnmarshalText reads a severity's name (JSON), as ParseSeverity.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// ReadJSON reads a report written by `rocedump report --format json` (the
// render package's WriteJSON). Fields it does not know are ignored, so a
// newer rocedump's reports read as long as their schema_version is this
// one's.
func ReadJSON(r io.Reader) (*Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a rocedump report: %w", err)
	}
	if rep.SchemaVersion == 0 {
		return nil, fmt.Errorf("not a rocedump report: no schema_version")
	}
	if rep.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("report schema_version %d; this rocedump reads %d", rep.SchemaVersion, SchemaVersion)
	}
	return &rep, nil
}
