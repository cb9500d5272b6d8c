package reports

// NonRDMAOnCompute is a report module (not yet written: returns no findings).
func NonRDMAOnCompute(in *Input) []Finding { return nil }
