package reports

// StorageOnCompute is a report module (not yet written: returns no findings).
func StorageOnCompute(in *Input) []Finding { return nil }
