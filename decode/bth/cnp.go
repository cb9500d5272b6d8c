package bth

import (
	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

// CNP is the body of a RoCEv2 Congestion Notification Packet (IBTA Annex
// A17 §A17.9.2): the 16 reserved bytes after a BTH whose opcode is CNP.
// Its LayerPayload is what follows them (the ICRC, when captured).
type CNP struct {
	layers.BaseLayer

	Reserved  [CNPPayloadLen]byte
	Truncated bool // fewer than 16 bytes were captured
}

// LayerType returns LayerTypeCNP.
func (c *CNP) LayerType() gopacket.LayerType { return LayerTypeCNP }

// CanDecode returns LayerTypeCNP.
func (c *CNP) CanDecode() gopacket.LayerClass { return LayerTypeCNP }

// NextLayerType returns gopacket.LayerTypeZero: nothing but the ICRC follows.
func (c *CNP) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes copies the 16 reserved bytes. If fewer were captured it
// copies those, sets Truncated and calls df.SetTruncated.
func (c *CNP) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*c = CNP{}
	n := copy(c.Reserved[:], data)
	if n < CNPPayloadLen {
		c.Truncated = true
		if df != nil {
			df.SetTruncated()
		}
	}
	c.Contents, c.Payload = data[:n], data[n:]
	return nil
}

// SerializeTo prepends the 16 reserved bytes.
func (c *CNP) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	bytes, err := buf.PrependBytes(CNPPayloadLen)
	if err != nil {
		return err
	}
	copy(bytes, c.Reserved[:])
	return nil
}
