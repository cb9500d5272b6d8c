package bth

// Header sizes in bytes (IBTA vol 1 §9.2 and §9.3; Annex A17 for the CNP and ICRC).
const (
	BTHLen          = 12
	RDETHLen        = 4
	DETHLen         = 8
	XRCETHLen       = 4
	FETHLen         = 4
	RETHLen         = 16
	AtomicETHLen    = 28
	AETHLen         = 4
	AtomicAckETHLen = 8
	ImmDtLen        = 4
	IETHLen         = 4
	ICRCLen         = 4  // invariant CRC trailer (Annex A17 §A17.4.1.1)
	CNPPayloadLen   = 16 // reserved bytes after a CNP's BTH (Annex A17 §A17.9.2)
	GRHLen          = 40 // global route header (IBTA vol 1 §8.3)
	MADLen          = 256
	MADHeaderLen    = 24 // common MAD header (IBTA vol 1 §13.4.3)
)

// MaxHeaderLen is the longest BTH plus extended headers any opcode carries:
// an RD COMPARE_SWAP or FETCH_ADD (BTH, RDETH, DETH, AtomicETH).
const MaxHeaderLen = BTHLen + RDETHLen + DETHLen + AtomicETHLen

// The extended transport headers each live in their own file (reth.go,
// aeth.go, ...). Each has:
//   - decode(data []byte) error: bounds-checked, fills every field;
//   - append(dst []byte) []byte: the wire bytes, reserved bits included;
//   - LayerType, LayerContents and LayerPayload, so that gopacket.NewPacket
//     can show a copy of it as a layer of its own. LayerContents re-encodes
//     the header from its fields.
