package reports

import (
	"encoding/json"
	"errors"
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
// one's. Anything but white space after the report is an error: reports
// concatenated into one file or stream would otherwise lose all but the
// first without a word.
func ReadJSON(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a rocedump report: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more data after the report (several reports concatenated?): one report per file, as rocedump report --format json writes it")
	}
	if rep.SchemaVersion == 0 {
		return nil, fmt.Errorf("not a rocedump report: no schema_version")
	}
	if rep.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("report schema_version %d; this rocedump reads %d", rep.SchemaVersion, SchemaVersion)
	}
	return &rep, nil
}
