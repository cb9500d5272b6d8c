package capture

// Compressed says whether the capture is gzip-compressed: reading it again
// means inflating it again.
func (r *Reader) Compressed() bool { return r.gz != nil }
