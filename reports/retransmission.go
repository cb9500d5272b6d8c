package reports

// Retransmissions is a report module (not yet written: returns no findings).
func Retransmissions(in *Input) []Finding { return nil }
