package reports

// Congestion is a report module (not yet written: returns no findings).
func Congestion(in *Input) []Finding { return nil }
