package packet

// Kind is what a frame is, as far as RoCE is concerned.
type Kind uint8

// Frame kinds.
const (
	// KindOther is any frame that is not RoCE: ARP, TCP, other UDP, PFC,
	// mirror traffic whose inner frame could not be reached, and so on.
	KindOther Kind = iota
	// KindRoCE is a RoCEv2 (UDP destination port 4791) or RoCEv1
	// (EtherType 0x8915) frame whose IB transport headers are valid as far
	// as they were captured.
	KindRoCE
	// KindMalformed is a frame sent to UDP port 4791 or with EtherType
	// 0x8915 whose UDP, GRH or IB transport headers are not valid.
	KindMalformed
)

// String returns "other", "RoCE" or "malformed".
func (k Kind) String() string {
	switch k {
	case KindOther:
		return "other"
	case KindRoCE:
		return "RoCE"
	case KindMalformed:
		return "malformed"
	}
	return "Kind(" + itoa(uint32(k)) + ")"
}

// itoa formats a small unsigned number without fmt.
func itoa(n uint32) string {
	var b [10]byte
	return string(appendUint(b[:0], n))
}

// appendUint appends the decimal form of n to dst.
func appendUint(dst []byte, n uint32) []byte {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(dst, b[i:]...)
}
