package bth

// CMFields is a set of CM message fields: CMMAD.Captured holds those a
// MAD has (its message defines them, IBTA vol 1 §12.6.5-§12.11) and whose
// bytes were all captured. A mirror's snap length often cuts a MAD: in a
// plain Ethernet, IPv4 RoCEv2 frame the MAD starts at byte 62, so a REQ cut
// to 128 bytes keeps its LocalQPN (MAD bytes 56-58) but loses its
// StartingPSN (bytes 68-70). A field outside the set reads as zero, which
// says nothing about its value on the wire.
type CMFields uint32

// The CM message fields, one bit each. CMAttribute's constants say which
// messages have which, at what offset.
const (
	CMFieldLocalCommID CMFields = 1 << iota
	CMFieldRemoteCommID
	CMFieldServiceID
	CMFieldLocalCAGUID
	CMFieldLocalQKey
	CMFieldLocalQPN
	CMFieldStartingPSN
	CMFieldPKey
	CMFieldResponderResources
	CMFieldInitiatorDepth
	CMFieldTransportServiceType
	CMFieldRemoteQPN
	CMFieldMsgRejected
	CMFieldRejectReason
)

// Has reports whether every field of f was captured (see CMFields).
func (m *CMMAD) Has(f CMFields) bool { return m.Captured&f == f }
