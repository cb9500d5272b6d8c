package flows

// Current returns the flow that packets with key k currently go to (the
// latest epoch of k), or nil if no packet with that key was added.
func (t *Table) Current(k Key) *Flow {
	return t.lookup(packKey(k.Src, k.Dst, k.DestQP), k.Src, k.Dst, k.DestQP)
}
