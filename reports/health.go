package reports

// CaptureHealth is a report module (not yet written: returns no findings).
func CaptureHealth(in *Input) []Finding { return nil }
